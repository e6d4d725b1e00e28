"""Helpers shared by the benchmark scripts: the corpus location, the machine, and markdown tables."""
from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", required=True, type=Path,
                   help="a public set: ../shared/data/anthropic-codebase (code) or ../shared/data/xquad-en etc. (prose)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory for indexes and caches")
    return p


# The two layouts of the public sets: the codebase set's published file names, and the prose sets'.
CORPUS_NAMES = (("codebase_chunks.json", "evaluation_set.jsonl"), ("corpus.json", "queries.jsonl"))


def corpus_files(data: Path) -> tuple[Path, Path]:
    """(pre-chunked corpus, queries) of a public set directory."""
    for chunks, queries in CORPUS_NAMES:
        if (data / chunks).is_file() and (data / queries).is_file():
            return data / chunks, data / queries
    raise SystemExit(f"{data}: no corpus found; pass --data DIR holding codebase_chunks.json + evaluation_set.jsonl "
                     "or corpus.json + queries.jsonl")


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def table(head: list[str], rows: list[list]) -> str:
    cells = [head] + [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cells[1:]])
