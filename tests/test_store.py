"""The on-disk format without any model: a generation written, switched to, and read back by column name."""
from __future__ import annotations

import json
import os
import re
import sqlite3

import numpy as np
import pytest

from localcr import store
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.lexical import LexicalIndex


def corpus():
    guide = Document(doc_id="guide.md", path="/d/guide.md", kind="markdown", text="# Guide\n\nalpha\n\nbeta\n", size=22,
                     pages=[0, 16])
    code = Document(doc_id="u.json#x", path="u.json#x", kind="code", text="fn a() {}", size=9, external_id="U1")
    chunks = {
        "guide.md": [Chunk("guide.md#0", "guide.md", 0, 0, 14, "# Guide\n\nalpha", "File guide.md.", "structural", kind="markdown"),
                     Chunk("guide.md#1", "guide.md", 1, 16, 20, "beta", "", "", kind="markdown")],
        "u.json#x": [Chunk("x_0", "u.json#x", 0, 0, 9, "fn a() {}", "Defines a.", "imported", external_index=3, kind="code")],
    }
    return [guide, code], chunks


def write(directory, marker=None):
    docs, chunks = corpus()
    rows = [c for d in docs for c in chunks[d.doc_id]]
    vectors = np.eye(len(rows), 4, dtype=np.float32) + 0.01
    lexical = LexicalIndex.build([f"{c.context}\n{c.text}" for c in rows])
    manifest = {"localcr": "test", "created": "today", "sources": [], "embedder": {"dimension": 4}, "chunking": {},
                "contexts": {"mode": "structural"}, "documents": 2, "chunks": 3, "windows": 3}
    directory.mkdir(exist_ok=True)
    return store.write_generation(directory, marker, manifest, docs, chunks, vectors, np.arange(len(rows)), lexical)


def test_a_written_generation_reads_back(tmp_path):
    generation = write(tmp_path / "i")
    assert store.read_marker(tmp_path / "i") == {"format": store.FORMAT, "version": store.FORMAT_VERSION, "current": generation}
    reader = store.StoreReader(tmp_path / "i")
    docs, chunks = reader.stored_documents()
    assert [(d.doc_id, d.kind, d.external_id, d.text) for d in docs] == [
        ("guide.md", "markdown", None, ""), ("u.json#x", "code", "U1", "")]
    assert chunks == corpus()[1]  # every field, the chunk's kind taken from its document
    assert [reader.doc_of_row(row) for row in range(reader.n_chunks)] == ["guide.md", "guide.md", "u.json#x"]
    assert reader.chunk_id_set() == {"guide.md#0", "guide.md#1", "x_0"}
    assert reader.doc_ids() == {"guide.md", "u.json#x"}
    assert reader.chunk_ids_for_external() == {("U1", 3): "x_0"}
    assert [r["chunk_id"] for r in reader.hit_records([2, 0])] == ["x_0", "guide.md#0"]
    assert reader.hit_records([2])[0]["path"] == "u.json#x"
    labels, _ = reader.dense().knn_query(np.eye(3, 4, dtype=np.float32)[1], k=1)
    assert labels[0][0] == 1
    assert reader.lexical().scores("beta").argmax() == 1
    assert reader.stats()["context_sources"] == {"": 1, "imported": 1, "structural": 1}


def test_reading_goes_by_column_name(tmp_path):
    """A store whose tables list their columns in another order reads the same."""
    write(tmp_path / "i")
    reader = store.StoreReader(tmp_path / "i")
    expected = reader.stored_documents()
    (segment,) = reader.segments
    segment.db.close()
    with sqlite3.connect(segment.path / store.STORE) as db:
        for table, columns in (("chunks", store.CHUNK_COLUMNS), ("documents", store.DOCUMENT_COLUMNS)):
            shuffled = ", ".join(reversed(columns))
            db.executescript(f"CREATE TABLE t AS SELECT {shuffled} FROM {table}; DROP TABLE {table}; ALTER TABLE t RENAME TO {table};")
    assert store.StoreReader(tmp_path / "i").stored_documents() == expected


def test_chunk_rows_that_their_documents_do_not_account_for_are_a_corrupt_index(tmp_path):
    """Which document a row belongs to comes from the documents' chunk counts: a store where they disagree
    with the chunk rows is refused, not misread."""
    write(tmp_path / "i")
    (segment,) = store.StoreReader(tmp_path / "i").segments
    with sqlite3.connect(segment.path / store.STORE) as db:
        db.execute("DELETE FROM chunks WHERE row = 1")
    with pytest.raises(LocalcrError, match="corrupt: 2 chunk rows where its documents count 3"):
        store.StoreReader(tmp_path / "i")


def test_page_starts_reach_the_hits(tmp_path):
    write(tmp_path / "i")
    reader = store.StoreReader(tmp_path / "i")
    assert [r["pages"] for r in reader.hit_records([1, 2])] == [[0, 16], []]


def test_schema_and_column_lists_agree(tmp_path):
    db = sqlite3.connect(":memory:")
    db.executescript(store.SCHEMA)
    for table, columns in (("documents", store.DOCUMENT_COLUMNS), ("chunks", store.CHUNK_COLUMNS)):
        assert tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})")) == columns


def test_a_new_generation_replaces_all_but_the_one_before(tmp_path):
    directory = tmp_path / "i"
    first = write(directory)
    second = write(directory, store.read_marker(directory))
    third = write(directory, store.read_marker(directory))
    assert sorted(p.name for p in directory.glob("gen-*")) == sorted([second, third])
    assert first not in {second, third}
    assert len(list((directory / store.SEGMENTS).glob("seg-*"))) == 2  # the first generation's segment went with it
    (directory / ".building-dead").mkdir()
    store.remove_stale_builds(directory)
    assert not list(directory.glob(".building-*"))


def test_markers_that_are_not_ours(tmp_path):
    assert store.read_marker(tmp_path / "absent") is None
    (tmp_path / "lock-only").mkdir()
    (tmp_path / "lock-only" / store.LOCK).write_text("")
    assert store.read_marker(tmp_path / "lock-only") is None
    old = tmp_path / "old"
    old.mkdir()
    (old / store.MARKER).write_text(json.dumps({"format": store.FORMAT, "version": 0, "current": "gen-x"}))
    with pytest.raises(LocalcrError, match=f"index format 0 is not {store.FORMAT_VERSION}: rebuild it"):
        store.StoreReader(old)
    with pytest.raises(LocalcrError, match="not an index yet"):
        store.StoreReader(tmp_path / "lock-only")


@pytest.mark.parametrize("exact_up_to", [0, 10_000])  # the graph, as in a large segment; exhaustive, as in a small one
def test_dense_search_returns_only_live_windows_even_when_most_are_dead(tmp_path, monkeypatch, exact_up_to):
    """The mapped graph keeps the windows of tombstoned chunks: a search asks for more than k, and for twice as
    many again while fewer than k live ones come back (here 2% of the windows live)."""
    monkeypatch.setattr(store, "DENSE_EXACT_UP_TO", exact_up_to)
    vectors = np.random.default_rng(3).standard_normal((2000, 16)).astype(np.float32)
    store._write_dense(tmp_path, vectors, np.arange(2000))
    graph = store._dense_index(16)
    graph.view(str(tmp_path / store.DENSE))
    dead = np.ones(2000, dtype=bool)
    dead[::50] = False
    labels, distances = store.DenseSegment(vectors, dead, graph if exact_up_to == 0 else None).knn(vectors[100], 10)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    live = np.flatnonzero(~dead)
    nearest = live[np.argsort(-(unit[live] @ unit[100]))[:10]]
    assert len(labels) == 10 and not dead[labels].any() and (np.diff(distances) >= 0).all()
    assert len(set(labels.tolist()) & set(nearest.tolist())) >= 9


def _segment_check(directory):
    return store.check_segments(directory, store.current_manifest(directory, store.read_marker(directory)))


@pytest.mark.parametrize("damage, problem", [
    (lambda seg: (seg / store.DENSE).write_bytes(b"junk"), "dense.usearch: 4 bytes where"),
    (lambda seg: (seg / store.VECTORS).unlink(), "vectors.npy: missing"),
    (lambda seg: (seg / store.LEXICAL / "terms.json").unlink(), "lexical/terms.json: missing"),
    (lambda seg: _overwrite_start(seg / store.STORE), "store.sqlite: not the bytes that were written"),
])
def test_a_damaged_segment_is_found_by_its_recorded_files(tmp_path, damage, problem):
    directory = tmp_path / "i"
    write(directory)
    (entry,), damaged = _segment_check(directory)
    assert damaged == {} and set(entry["files"]) >= {store.STORE, store.DENSE, store.VECTORS, store.WINDOWS, "lexical/terms.json"}
    damage(directory / store.SEGMENTS / entry["name"])
    sound, damaged = _segment_check(directory)
    assert sound == [] and damaged[entry["name"]].startswith(problem)


def _overwrite_start(path):
    """Junk over the first bytes, in place: the size stays, the modification time moves."""
    with open(path, "r+b") as f:
        f.write(b"\xff" * 100)


def test_a_segment_copied_or_touched_but_unchanged_is_sound_and_its_times_recorded_anew(tmp_path):
    directory = tmp_path / "i"
    write(directory)
    manifest = store.current_manifest(directory, store.read_marker(directory))
    (entry,) = manifest["segments"]
    path = directory / store.SEGMENTS / entry["name"] / store.DENSE
    os.utime(path, ns=(0, 10**9))
    (checked,), damaged = store.check_segments(directory, manifest)
    assert damaged == {} and checked["files"][store.DENSE][1] == 10**9
    assert {k: v for k, v in checked["files"].items() if k != store.DENSE} == \
        {k: v for k, v in entry["files"].items() if k != store.DENSE}


def test_a_segment_written_before_files_were_recorded_is_opened_to_check_it(tmp_path):
    directory = tmp_path / "i"
    write(directory)
    manifest = store.current_manifest(directory, store.read_marker(directory))
    older = {**manifest, "segments": [{k: v for k, v in s.items() if k != "files"} for s in manifest["segments"]]}
    (checked,), damaged = store.check_segments(directory, older)
    assert damaged == {} and checked["files"].keys() == manifest["segments"][0]["files"].keys()
    (directory / store.SEGMENTS / checked["name"] / store.DENSE).write_bytes(b"junk")
    sound, damaged = store.check_segments(directory, older)
    assert sound == [] and damaged[checked["name"]].startswith("dense.usearch: unreadable")


def test_a_search_over_a_damaged_segment_names_the_command_that_mends_it(tmp_path):
    directory = tmp_path / "i"
    write(directory)
    (segment,) = (directory / store.SEGMENTS).glob("seg-*")
    (segment / store.LEXICAL / "terms.json").unlink()
    advice = re.escape(f"; `localcr index --index {directory}` rebuilds the damaged segment")
    with pytest.raises(LocalcrError, match=f"lexical: unreadable .*{advice}"):
        store.StoreReader(directory).lexical()
    _overwrite_start(segment / store.STORE)
    with pytest.raises(LocalcrError, match=f"store.sqlite: corrupt .*{advice}"):
        store.StoreReader(directory)


# Two segments of documents (doc_id, language, chunk texts); the second document of the first is tombstoned.
COMPACTED = [[("a", "en", ["The worker may die at night.", "Retries back off."]), ("b", "en", ["A dead document."]),
              ("c", "de", ["Die Schleuse am Hafen schließt vor der Flut."])],
             [("d", "ja", ["東京タワーは港区にある電波塔です。"]), ("e", "en", ["The harbour gate closes at the neap tide."])]]


def write_segments(directory, stopwords, languages):
    """COMPACTED as one generation whose index languages are `languages`, its postings analysed with `stopwords`."""
    from localcr.lexical import Postings

    entries = []
    for documents in COMPACTED:
        docs = [Document(doc_id=i, path=f"/d/{i}", kind="text", text="", size=1, language=lang) for i, lang, _ in documents]
        chunks = {i: [Chunk(f"{i}#{n}", i, n, 0, 1, text) for n, text in enumerate(texts)] for i, _, texts in documents}
        pairs = [(f"\n{text}", lang) for _, lang, texts in documents for text in texts]
        postings = Postings.build([t for t, _ in pairs], [lang for _, lang in pairs], stopwords)
        entries.append(store.write_segment(directory, docs, chunks, np.eye(len(pairs), 4, dtype=np.float32) + 0.01,
                                           np.arange(len(pairs)), postings))
    entries[0] = {**entries[0], "dead": ["b"], "dead_chunks": 1}
    store.publish(directory, None, {"localcr": "test", "created": "today", "sources": [], "embedder": {"dimension": 4},
                                    "chunking": {}, "contexts": {"mode": "structural"}, "languages": languages,
                                    "segments": entries})


@pytest.mark.parametrize("analysed_in", [["en", "de", "ja"], ["en"]])
def test_compaction_merges_postings_analysed_with_the_index_s_stop_words_and_analyses_the_others_again(
        tmp_path, monkeypatch, analysed_in):
    """Segments analysed with the stop words of the index's languages are merged without tokenizing a text (most of
    what compaction cost); those analysed with others (the languages changed since: "die", a German stop word, is
    an English term until then) are analysed again. Either way BM25 scores as an index built of the live chunks."""
    from localcr.index import compact
    from localcr.lexical import LexicalIndex, Postings, stopwords_of

    directory = tmp_path / "i"
    directory.mkdir()
    languages = ["de", "en", "ja"]
    write_segments(directory, stopwords_of(analysed_in), languages)
    if analysed_in == languages:
        monkeypatch.setattr(Postings, "build", None)  # compaction must not call it
    compact(directory)
    reader = store.StoreReader(directory)
    (merged,) = reader.lexical().parts
    assert merged.analysed_with(stopwords_of(languages)) and "die" not in merged.terms and "dead" not in merged.terms
    live = [(f"\n{text}", lang) for documents in COMPACTED for doc_id, lang, texts in documents if doc_id != "b" for text in texts]
    monkeypatch.undo()
    built = LexicalIndex.build([t for t, _ in live], [lang for _, lang in live], stopwords_of(languages))
    for query in ("worker die", "Schleuse Hafen", "東京タワー", "harbour tide", "retries"):
        np.testing.assert_array_equal(reader.lexical().scores(query), built.scores(query))
