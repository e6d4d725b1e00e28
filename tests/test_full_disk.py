"""A full disk is one line: `localcr index` refuses a build its disk cannot hold before writing anything, saying how
much it needs, and a write that fails anyway ends in one line with the index its last complete generation, intact
and searchable, and nothing half-written left. End to end on a 3 MB tmpfs (mounting one needs root: skipped
otherwise, with the reason); the one line of a failed write is also checked without a mount (quick)."""
from __future__ import annotations

import errno
import os
import random
import shutil
import sqlite3
import subprocess

import pytest

from conftest import error_line, run
from localcr import store
from localcr.errors import LocalcrError

WORDS = ("revenue quarter growth plant output team quota scheduler backoff daemon journal harbour pump service hours "
         "report board spring europe asia robots welding arms freight capacity").split()


def write_documents(root, first: int, count: int) -> None:
    """Markdown documents of about 2 KB each (two chunks, two windows), their words drawn at random."""
    root.mkdir(parents=True, exist_ok=True)
    pick = random.Random(first)
    for n in range(first, first + count):
        paragraphs = [" ".join(pick.choice(WORDS) for _ in range(80)) + "." for _ in range(4)]
        (root / f"d{n:03d}.md").write_text(f"# Document {n}\n\n" + "\n\n".join(paragraphs) + "\n")


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs, as a full laptop disk is to a large corpus."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a 3 MB tmpfs needs root (and mount(8)): run the suite as root, e.g. in a container")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a 3 MB tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def hits(index, query: str = "revenue of the welding plant") -> list[str]:
    return [line for line in run("search", query, "--index", index, "-k", "5").splitlines() if line[:1].isdigit()]


def index_files(index) -> list[tuple[str, int]]:
    return sorted((p.relative_to(index).as_posix(), p.stat().st_size) for p in index.rglob("*") if p.is_file())


@pytest.mark.model
def test_a_build_its_disk_cannot_hold_is_refused_before_writing_saying_what_it_needs(small_disk, tmp_path):
    docs, index = tmp_path / "docs", small_disk / "index"
    write_documents(docs, 0, 10)
    run("index", docs, "--index", index, "--contexts", "structural", "-q")
    before, files = hits(index), index_files(index)
    write_documents(docs, 10, 290)  # about 3 MB of segments: more than the disk holds
    line = error_line("index", "--index", index, "-q")
    assert "this build needs about" in line and "nothing was written and the index is as it was" in line, line
    need, free = (float(part.split(" MB")[0].split()[-1]) for part in line.split("free on its disk and "))
    assert need > free and abs(free - store.free_bytes(small_disk) / 1e6) < 0.02
    assert index_files(index) == files and hits(index) == before


@pytest.mark.model
def test_a_write_that_fails_for_want_of_space_ends_in_one_line_the_index_intact(small_disk, tmp_path, monkeypatch):
    """The estimate passes (forced here: a disk shared with other writers fills up anyway) and the first segment's
    write fails: the half-written segment is removed, the marker still names the index as it was, and a search
    answers as before. With the space back, the same command builds."""
    import localcr.index as index_module

    docs, index = tmp_path / "docs", small_disk / "index"
    write_documents(docs, 0, 10)
    run("index", docs, "--index", index, "--contexts", "structural", "-q")
    before, files = hits(index), index_files(index)
    write_documents(docs, 10, 40)
    filler = small_disk / "filler"
    filler.write_bytes(bytes(store.free_bytes(small_disk) - 40_000))  # another program filled the disk
    monkeypatch.setattr(index_module, "build_space", lambda *args, **kwargs: (0, 0))
    line = error_line("index", "--index", index, "-q")
    assert "its disk is full" in line and "intact and searchable" in line, line
    assert index_files(index) == files and not list(index.rglob(f"{store.STAGING_PREFIX}*"))
    assert hits(index) == before
    filler.unlink()
    assert "50 documents" in run("index", "--index", index, "-q").splitlines()[0]


def test_a_write_failing_for_want_of_space_is_one_line_and_leaves_nothing_half_written(tmp_path):
    """Whatever the writer raised (ENOSPC, SQLite's SQLITE_FULL, usearch's bare RuntimeError on a full disk), the
    staging directories go and the message names the generation the index still is; other errors pass through."""
    index = tmp_path / "index"
    (index / store.SEGMENTS / f"{store.STAGING_PREFIX}half").mkdir(parents=True)
    (index / f"{store.STAGING_PREFIX}gen").mkdir()
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL
    for raised in (OSError(errno.ENOSPC, "No space left on device"), full):
        with pytest.raises(LocalcrError) as caught, store.full_disk_in_one_line(index, lambda: 3_500_000):
            raise raised
        message = str(caught.value)
        assert "\n" not in message and "its disk is full" in message and "no index was published yet" in message
        assert "needs about 3.50 MB free" in message
        assert not list(index.rglob(f"{store.STAGING_PREFIX}*"))
    with pytest.raises(RuntimeError), store.full_disk_in_one_line(index):  # a disk with room: not a full disk
        raise RuntimeError("Failed to serialize into stream")
    with pytest.raises(PermissionError), store.full_disk_in_one_line(index):
        raise PermissionError(errno.EACCES, "Permission denied")
