"""Indexing and search speed on the codebase corpus: embeddings/s, hybrid latency p50/p95, search-process memory.

    .venv/bin/python benchmarks/search_speed.py --data ../shared/data/anthropic-codebase

Indexing runs with an empty embedding cache (every window is embedded), then into a new index with the
cache warm (what rebuilding costs), then once more over the first index with nothing changed (what a re-index
of an unchanged corpus costs). Search latency is measured in a separate process that opens the index,
warms up with one query, then runs all 248 queries; its peak resident memory is reported too.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import corpus_files, machine, parser, peak_rss_mb, table  # noqa: E402


def search_process(index: str, queries: str, mode: str) -> None:
    """Run inside the child: open, warm up, time every query, report latency and peak RSS as JSON."""
    from localcr.search import open_index

    texts = [json.loads(line)["query"] for line in open(queries) if line.strip()]
    started = time.perf_counter()
    idx = open_index(index)
    idx.search(texts[0], 20, mode=mode)
    first = time.perf_counter() - started
    idx.clear_query_cache()
    latencies = []
    for text in texts:
        t = time.perf_counter()
        idx.search(text, 20, mode=mode)
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    print(json.dumps({"open_and_first_s": first, "p50": latencies[len(latencies) // 2],
                      "p95": latencies[int(len(latencies) * 0.95)], "rss_mb": peak_rss_mb()}))


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--search-child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.search_child:
        return search_process(*args.search_child)
    chunks, queries = corpus_files(args.data)
    work = args.work / "search_speed"  # its own: --work is shared with the other benchmarks' (slow) context caches
    shutil.rmtree(work, ignore_errors=True)
    os.environ["LOCALCR_CACHE_DIR"] = str(work / "cache")
    from localcr.index import build_index
    from localcr.models import load_registry

    registry = load_registry()
    index = work / "index"
    rows = []
    builds = (("cold cache", index), ("warm cache, new index", work / "index-warm"), ("re-index, nothing changed", index))
    for label, directory in builds:
        started = time.perf_counter()
        summary = build_index([str(chunks)], directory, registry, progress=False, log=lambda m: None)
        seconds = time.perf_counter() - started
        rows.append([label, summary.chunks, summary.windows, summary.embedded, f"{seconds:.1f}",
                     f"{summary.embedded / seconds:.1f}" if summary.embedded else "-"])
    search_rows = []
    for mode in ("hybrid", "dense", "lexical"):
        child = subprocess.run([sys.executable, __file__, "--data", str(args.data), "--search-child", str(index), str(queries), mode],
                               capture_output=True, text=True, check=True)
        r = json.loads(child.stdout.strip().splitlines()[-1])
        search_rows.append([mode, f"{r['p50']:.1f}", f"{r['p95']:.1f}", f"{r['open_and_first_s']:.1f}", f"{r['rss_mb']:.0f}"])
    text = "\n\n".join([f"machine: {machine()}",
                         table(["indexing", "chunks", "windows", "embedded", "seconds", "embeddings/s"], rows),
                         table(["search (k=20, 248 queries)", "p50 ms", "p95 ms", "open + first query s", "peak RSS MB"], search_rows)])
    print(text)
    (Path(__file__).parent / "results" / "search_speed.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
