"""What reading files in worker processes costs or saves: files/s in one process versus localcr's pool.

    .venv/bin/python benchmarks/speed/read_speed.py [--dir DIR] [--repeat 3]

DIR (default: this Python's standard library, a few thousand source files) is read twice, each way timed
--repeat times (best kept): "one process" walks, names and reads every file in this process, one after
another (how localcr read before worker processes); "workers" is `localcr.documents.load_paths`, which does
the same with the reading in a pool of worker processes on every core, in batches, with time and memory limits. The table goes to stdout and
benchmarks/results/read_speed.md.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, table  # noqa: E402


def in_one_process(root: Path) -> int:
    """What load_paths does (walk, kinds, ids, every file through its reader), all in this process, one file
    after another; the number of files read."""
    from localcr.documents import _walk
    from localcr.readers import ReaderError, kind_of, reader_for

    base, done = root.resolve().parent, 0
    for path in _walk(root):
        if (kind := kind_of(path)) is None:
            continue
        path.resolve().relative_to(base)
        module, _, name = reader_for(kind).partition(":")
        try:
            getattr(importlib.import_module(module), name)(path.read_bytes())
            done += 1
        except (ReaderError, OSError):
            pass
    return done


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from localcr.documents import _walk, load_paths
    from localcr.readers import kind_of, reader_for

    files = [(f, reader_for(kind)) for f in _walk(args.dir) if (kind := kind_of(f))]
    megabytes = sum(f.stat().st_size for f, _ in files) / 1e6
    one = best(lambda: in_one_process(args.dir), args.repeat)
    pooled = best(lambda: load_paths([args.dir]), args.repeat)
    rows = [["one process, one file after another", f"{one:.2f}", f"{len(files) / one:.0f}", f"{megabytes / one:.1f}"],
            [f"workers ({len(os.sched_getaffinity(0))} processes, limits)", f"{pooled:.2f}", f"{len(files) / pooled:.0f}",
             f"{megabytes / pooled:.1f}"]]
    text = (f"# Reading files: one process vs worker processes\n\n{len(files)} files, {megabytes:.1f} MB under {args.dir}; "
            f"{machine()}; best of {args.repeat}\n\n" + table(["how", "seconds", "files/s", "MB/s"], rows) + "\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "read_speed.md").write_text(text)


if __name__ == "__main__":
    main()
