"""Where the suite's CPU goes: the core-seconds each test costs, its own process and the children it reaped
(a server stopped at the end of its module counts in that module's last test), beside pytest's wall-clock durations.

    rm -rf /tmp/cpu && LOCALCR_CPU_DIR=/tmp/cpu .venv/bin/python -m pytest -p benchmarks.speed.suite_cpu
    .venv/bin/python benchmarks/speed/suite_cpu.py /tmp/cpu

As a pytest plugin it appends one JSON line a test to LOCALCR_CPU_DIR/<worker>.jsonl; as a script it prints the
files and tests that cost most, and the sum.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
from collections import Counter
from pathlib import Path

import pytest


def _core_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _core_seconds()
    yield
    folder = Path(os.environ.get("LOCALCR_CPU_DIR", "cpu-per-test"))
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as out:
        out.write(json.dumps({"test": item.nodeid, "core_seconds": _core_seconds() - before}) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path, help="the LOCALCR_CPU_DIR the plugin wrote, one JSON line a test")
    folder = p.parse_args().folder
    rows = [json.loads(line) for path in folder.glob("*.jsonl") for line in path.open()]
    by_file = Counter()
    for row in rows:
        by_file[row["test"].split("::")[0]] += row["core_seconds"]
    print(f"{len(rows)} tests, {sum(by_file.values()):.0f} core-seconds in all\n\n| file | core-seconds |\n|---|---|")
    for name, seconds in by_file.most_common(15):
        print(f"| {name} | {seconds:.1f} |")
    print("\n| test | core-seconds |\n|---|---|")
    for row in sorted(rows, key=lambda r: -r["core_seconds"])[:20]:
        print(f"| {row['test']} | {row['core_seconds']:.1f} |")


if __name__ == "__main__":
    main()
