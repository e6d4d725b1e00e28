"""Helpers shared by the benchmark scripts: the corpus location, the machine, and markdown tables."""
from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", required=True, type=Path,
                   help="directory with codebase_chunks.json and evaluation_set.jsonl (e.g. ../shared/data/anthropic-codebase)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory for indexes and caches")
    return p


def corpus_files(data: Path) -> tuple[Path, Path]:
    chunks, queries = data / "codebase_chunks.json", data / "evaluation_set.jsonl"
    for path in (chunks, queries):
        if not path.is_file():
            raise SystemExit(f"{path}: not found; pass --data DIR holding codebase_chunks.json and evaluation_set.jsonl")
    return chunks, queries


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def table(head: list[str], rows: list[list]) -> str:
    cells = [head] + [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cells[1:]])
