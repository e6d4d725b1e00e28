"""An index that grows by segments: a change writes a small segment and tombstones, and searching it gives
what a build from scratch of the same files gives (BM25 scores to 1e-6, the same dense neighbours)."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import GUIDE, SCHEDULER, error_line, run
from localcr import store
from localcr.search import Index

pytestmark = pytest.mark.model

QUERIES = ["retry backoff", "quota reset at midnight", "fair scheduler heap", "journal replay", "tide gate harbour",
           "daemon port"]


def index(corpus, directory, *extra):
    return run("index", corpus, "--index", directory, "--contexts", "structural", "--chunk-tokens", "48", "-q", *extra)


def results(directory):
    """Per query and mode: the hits' chunk ids and scores, and every chunk's BM25 score by chunk id."""
    idx = Index(directory)
    out = {}
    for query in QUERIES:
        scores = idx.store.lexical_index.scores(query)
        by_id = {r["chunk_id"]: float(scores[r["row"]]) for r in idx.store.hit_records(
            np.flatnonzero(idx.store.live).tolist())}
        hits = {mode: [(h.chunk_id, h.score) for h in idx.search(query, 8, mode=mode)] for mode in ("dense", "lexical", "hybrid")}
        out[query] = (by_id, hits)
    return out


def assert_same(got, expected):
    for query in QUERIES:
        (bm25, hits), (bm25_expected, hits_expected) = got[query], expected[query]
        assert bm25.keys() == bm25_expected.keys()
        for chunk_id, score in bm25_expected.items():
            assert bm25[chunk_id] == pytest.approx(score, rel=1e-6, abs=1e-6), (query, chunk_id)
        for mode in hits:
            assert [c for c, _ in hits[mode]] == [c for c, _ in hits_expected[mode]], (query, mode)
            np.testing.assert_allclose([s for _, s in hits[mode]], [s for _, s in hits_expected[mode]], rtol=1e-5, atol=1e-6)


def test_add_change_delete_through_segments_equal_a_build_from_scratch(small_corpus, tmp_path):
    """Enough other notes that no change tombstones 30% of the rows (the policy would compact at once)."""
    for n in range(12):
        (small_corpus / "docs" / f"note{n}.md").write_text(f"# Note {n}\n\nTeam {n} runs nightly jobs on node {n * 7}.\n")
    grown = tmp_path / "grown"
    index(small_corpus, grown)
    (small_corpus / "docs" / "tides.md").write_text("# Tides\n\nThe harbour gate closes two hours before the neap tide.\n")
    out = index(small_corpus, grown)
    assert "1 new, 0 changed, 0 removed, 15 unchanged" in out
    (small_corpus / "docs" / "guide.md").write_text(GUIDE.replace("three times", "five times"))
    assert "0 new, 1 changed, 0 removed, 15 unchanged" in index(small_corpus, grown)
    (small_corpus / "src" / "journal.rs").unlink()
    assert "0 new, 0 changed, 1 removed, 15 unchanged" in index(small_corpus, grown)
    reader = store.StoreReader(grown)
    stats = reader.stats()
    assert (stats["segments"], stats["documents"]) == (3, 15) and stats["dead_chunks"] > 0
    assert reader.live_chunks == stats["chunks"] < reader.n_chunks  # what `localcr mcp` and `serve` say they serve
    # Counted by SQLite minus the tombstoned documents: every live chunk and document once, no dead one.
    assert sum(stats["context_sources"].values()) == stats["chunks"] and sum(stats["languages"].values()) == 15

    scratch = tmp_path / "scratch"
    index(small_corpus, scratch)
    expected = results(scratch)
    assert_same(results(grown), expected)
    run("compact", "--index", grown)
    assert store.StoreReader(grown).stats()["segments"] == 1
    assert_same(results(grown), expected)


def test_nothing_changed_writes_nothing_and_unchanged_files_are_not_read(small_corpus, tmp_path):
    directory = tmp_path / "i"
    index(small_corpus, directory)
    generation = store.read_marker(directory)["current"]
    assert "(nothing to do)" in index(small_corpus, directory)
    assert store.read_marker(directory)["current"] == generation
    # the same size and modification time: localcr does not read the file, so it cannot see this edit
    guide = small_corpus / "docs" / "guide.md"
    stat = guide.stat()
    guide.write_text(GUIDE.replace("three", "seven"))
    os.utime(guide, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "(nothing to do)" in index(small_corpus, directory)
    # a newer modification time: read again, and compared by content
    os.utime(guide, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert "1 changed" in index(small_corpus, directory)


def test_a_file_touched_without_changing_is_read_once_then_known_by_its_new_stats(small_corpus, tmp_path):
    directory = tmp_path / "i"
    index(small_corpus, directory)
    guide = small_corpus / "docs" / "guide.md"
    touched = guide.stat().st_mtime_ns + 10**9
    os.utime(guide, ns=(touched, touched))
    assert "(nothing to do)" in index(small_corpus, directory)  # read and compared: the same content
    # Proof it is not read again: an edit of the same size under the recorded mtime goes unseen.
    guide.write_text(GUIDE.replace("three", "seven"))
    os.utime(guide, ns=(touched, touched))
    assert "(nothing to do)" in index(small_corpus, directory)
    run("compact", "--index", directory)  # the new stats are folded into the merged segment
    manifest = store.current_manifest(directory, store.read_marker(directory))
    assert manifest[store.FILE_STATS] == {}
    assert store.live_documents(directory, manifest)["orbit/docs/guide.md"].mtime == touched
    assert "(nothing to do)" in index(small_corpus, directory)


def test_the_policy_compacts_when_tombstones_pile_up(small_corpus, tmp_path):
    directory = tmp_path / "i"
    index(small_corpus, directory)
    for n in range(2):
        (small_corpus / "docs" / "guide.md").write_text(GUIDE + f"\nRevision {n}.\n")
        (small_corpus / "src" / "scheduler.py").write_text(SCHEDULER + f"\n# revision {n}\n")
        index(small_corpus, directory)
    stats = store.StoreReader(directory).stats()
    assert stats["segments"] == 1 and stats["dead_chunks"] == 0  # more than 30% of rows were dead: compacted


def test_a_compaction_killed_halfway_leaves_a_readable_index(small_corpus, tmp_path):
    directory = tmp_path / "i"
    index(small_corpus, directory)
    (small_corpus / "docs" / "tides.md").write_text("# Tides\n\nThe harbour gate closes two hours before the neap tide.\n")
    index(small_corpus, directory)
    before = results(directory)
    process = subprocess.Popen([sys.executable, "-m", "localcr", "compact", "--index", str(directory)],
                               env={**os.environ}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list((directory / store.SEGMENTS).glob(".building-*")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL  # killed while writing the merged segment, not after
    assert list((directory / store.SEGMENTS).glob(".building-*"))
    assert_same(results(directory), before)  # the previous generation, untouched
    run("compact", "--index", directory)
    assert not list((directory / store.SEGMENTS).glob(".building-*"))
    assert_same(results(directory), before)


def _junk_over_start(path):
    with open(path, "r+b") as f:
        f.write(b"\xff" * 64)


DAMAGE = {  # what is done to the older segment's files, and the command that shows it
    "junk over dense.usearch": (lambda seg: (seg / store.DENSE).write_bytes(b"junk" * 8), ("search", "--mode", "dense")),
    "junk over vectors.npy": (lambda seg: (seg / store.VECTORS).write_bytes(b"junk" * 8), ("search", "--mode", "dense")),
    "damaged store.sqlite": (lambda seg: _junk_over_start(seg / store.STORE), ("search",)),
    "missing vectors.npy": (lambda seg: (seg / store.VECTORS).unlink(), ("compact",)),
    "missing lexical file": (lambda seg: (seg / store.LEXICAL / "terms.json").unlink(), ("search", "--mode", "lexical")),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_segment_is_named_by_the_error_and_mended_by_the_command_it_names(small_corpus, tmp_path, damage,
                                                                                    monkeypatch):
    """The error's advice works: `localcr index --index DIR` finds the damaged segment, says so in one line and
    rebuilds its documents from the files, leaving the sound segment as it was; search gives what it gave before."""
    if damage == "junk over dense.usearch":  # a graph is opened only for a large segment: these are searched as one
        monkeypatch.setattr(store, "DENSE_EXACT_UP_TO", 0)
    directory = tmp_path / "i"
    index(small_corpus, directory)
    older = store.current_manifest(directory, store.read_marker(directory))["segments"][0]["name"]
    (small_corpus / "docs" / "tides.md").write_text("# Tides\n\nThe harbour gate closes two hours before the neap tide.\n")
    index(small_corpus, directory)
    newer = store.current_manifest(directory, store.read_marker(directory))["segments"][1]
    before = results(directory)
    plant, command = DAMAGE[damage]
    plant(directory / store.SEGMENTS / older)

    if command[0] == "search":
        line = error_line("search", "retry backoff", "--index", directory, *command[1:])
    else:
        line = error_line(command[0], "--index", directory)
    advice = f"; `localcr index --index {directory}` rebuilds the damaged segment from the sources"
    assert str(directory / store.SEGMENTS / older) in line and advice in line
    out = run("index", "--index", directory, "-q")  # the command the error names, as it names it
    (warning,) = [line for line in out.splitlines() if older in line]
    assert warning.startswith(f"warning: segment {older} is damaged (") and warning.endswith("rebuilding its documents from the sources")
    assert "0 new, 0 changed, 0 removed, 1 unchanged, 3 restored" in out
    segments = store.current_manifest(directory, store.read_marker(directory))["segments"]
    assert older not in [s["name"] for s in segments] and segments[0] == newer  # the sound one kept as it was
    assert_same(results(directory), before)
    run("compact", "--index", directory)
    assert_same(results(directory), before)
    assert "(nothing to do)" in index(small_corpus, directory)


def test_rebuild_mends_what_the_check_cannot_see(small_corpus, tmp_path):
    """Bytes that rot on disk keep the file's size and time, so the re-index's check takes them as written;
    `--rebuild` (which the error names for this case) builds every segment again."""
    directory = tmp_path / "i"
    index(small_corpus, directory)
    before = results(directory)
    (small_corpus / "docs" / "tides.md").write_text("# Tides\n\nThe harbour gate closes two hours before the neap tide.\n")
    index(small_corpus, directory)
    (small_corpus / "docs" / "tides.md").unlink()
    segment = store.current_manifest(directory, store.read_marker(directory))["segments"][0]["name"]
    windows = directory / store.SEGMENTS / segment / store.WINDOWS
    stat = windows.stat()
    _junk_over_start(windows)
    os.utime(windows, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "(nothing to do)" not in index(small_corpus, directory)  # tides.md removed, the rot unseen
    assert "add --rebuild if it finds no damage" in error_line("search", "retry backoff", "--index", directory)
    out = index(small_corpus, directory, "--rebuild")
    assert "3 new" in out and "damaged" not in out
    (rebuilt,) = store.current_manifest(directory, store.read_marker(directory))["segments"]
    assert rebuilt["name"] != segment and rebuilt["dead"] == []
    assert_same(results(directory), before)


PAGE = 4096  # SQLite's page size, so the damage is one whole page, as a bad sector or rotted block leaves it
PLACES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.95)  # where in store.sqlite the damaged page lies


def _readers(queries):
    """The commands that read a segment's store, by name."""
    return {"search": ["search", "retry backoff"], "lexical": ["search", "quota reset at midnight", "--mode", "lexical"],
            "dense, full": ["search", "journal replay", "--mode", "dense", "--full"], "stats": ["stats"],
            "eval": ["eval", "--queries", queries], "compact": ["compact"]}


def _rot_page(path, share):
    """Random bytes over the page at `share` of the file, its size and modification time kept (as rot leaves
    them: a re-index's size-and-time check sees nothing)."""
    stat = path.stat()
    page = int(stat.st_size * share) // PAGE
    with open(path, "r+b") as f:
        f.seek(page * PAGE)
        f.write(random.Random(page).randbytes(PAGE))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return page


def _reads_or_names_the_fix(args, directory):
    """Run a command that reads the index: it answers (exit 0: the damaged page is one it never reads), or it
    fails with the one line that names the segment's store and the commands that mend it; never a traceback."""
    from click.testing import CliRunner

    from localcr.cli import cli

    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info  # no traceback
    if result.exit_code == 0:
        return "answered"
    assert result.exit_code == 1, result.output
    *before, line = result.output.strip().splitlines()  # eval says first what it read of the query file
    assert not any("error" in earlier for earlier in before), result.output
    assert line.startswith("localcr: error: ") and f"{store.STORE}: corrupt" in line
    assert f"`localcr index --index {directory}`" in line and "--rebuild" in line
    return "named the fix"


def test_one_damaged_page_of_a_store_never_tracebacks_and_a_reindex_finds_it(small_corpus, tmp_path):
    """One 4 KB page rotted at several places of a real segment's store.sqlite. Every command that reads the store
    (search in every mode, its full text, stats, eval, compact, the served index's search) either answers, because
    SQLite never reads that page for it (so search alone cannot be trusted to notice), or fails with one line naming
    `localcr index` (and --rebuild); the re-index's SQLite quick_check finds the damage wherever it lies, so the plain
    re-index mends it, `--rebuild` too, and both give the top hits of before."""
    from localcr.serve.service import SearchRequest, Service

    for n in range(40):  # a store of some 20 pages, so the places are distinct pages
        (small_corpus / "docs" / f"note{n}.md").write_text(f"# Note {n}\n\nTeam {n} runs nightly jobs on node {n * 7}; "
                                                          f"its retry budget is {n} attempts.\n")
    pristine = tmp_path / "pristine"
    index(small_corpus, pristine)
    before = results(pristine)
    (segment,) = store.current_manifest(pristine, store.read_marker(pristine))["segments"]
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "retry backoff", "relevant": ["orbit/docs/guide.md"]}) + "\n")
    pages, met = set(), set()
    for share in PLACES:
        directory = tmp_path / f"at{share}"
        shutil.copytree(pristine, directory)
        pages.add(_rot_page(directory / store.SEGMENTS / segment["name"] / store.STORE, share))
        outcome = {name: _reads_or_names_the_fix([*command, "--index", directory], directory)
                   for name, command in _readers(queries).items()}
        # Which command meets the damage depends on the page: a search reads only the pages of its hits' rows, stats
        # and eval whole tables but not the chunk-id index's pages (run to run the rows' layout moves a little, and
        # the damaged page with it). Every one of them has met it somewhere; none ever printed a traceback.
        met.update(name for name, said in outcome.items() if said == "named the fix")
        try:
            Service(directory).search(SearchRequest(query="retry backoff"))
        except store.DamagedSegment as exc:  # the server answers it as {"error": this line}
            assert "\n" not in str(exc) and "--rebuild" in str(exc)
        mended = tmp_path / f"mended{share}"
        shutil.copytree(directory, mended)
        out = run("index", "--index", mended, "-q")
        (warning,) = [line for line in out.splitlines() if segment["name"] in line]
        assert warning.startswith(f"warning: segment {segment['name']} is damaged ({store.STORE}: ")
        assert_same(results(mended), before)
        index(small_corpus, directory, "--rebuild")
        assert_same(results(directory), before)
    assert len(pages) == len(PLACES) and met == set(_readers(queries))

