"""An index that grows by segments: a change writes a small segment and tombstones, and searching it gives
what a build from scratch of the same files gives (BM25 scores to 1e-6, the same dense neighbours)."""
from __future__ import annotations

import os
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
    stats = store.StoreReader(grown).stats()
    assert (stats["segments"], stats["documents"]) == (3, 15) and stats["dead_chunks"] > 0
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
    "damaged store.sqlite": (lambda seg: _junk_over_start(seg / store.STORE), ("search",)),
    "missing vectors.npy": (lambda seg: (seg / store.VECTORS).unlink(), ("compact",)),
    "missing lexical file": (lambda seg: (seg / store.LEXICAL / "terms.json").unlink(), ("search", "--mode", "lexical")),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_segment_is_named_by_the_error_and_mended_by_the_command_it_names(small_corpus, tmp_path, damage):
    """The error's advice works: `localcr index --index DIR` finds the damaged segment, says so in one line and
    rebuilds its documents from the files, leaving the sound segment as it was; search gives what it gave before."""
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
