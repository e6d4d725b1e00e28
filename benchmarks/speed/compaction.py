"""Compaction's BM25 step merged from the segments' postings against analysed again from the texts (issue 60): for
each index given (copied first, never changed), the seconds of each way, whether the two score alike, and the
seconds of the whole compaction of the copy, then of compacting it again.

    .venv/bin/python benchmarks/speed/compaction.py --index /tmp/localcr-bench/fb-defaults --index /tmp/s6/tix-postings

"analyse" is what compaction did before: Postings.build over every live chunk's "context + text". "merge" is
Postings.merged over the segments' postings, possible where they recorded the stop words they were analysed with
(an index written before the record is analysed again by its first compaction, and merged from then on: the second
compaction of the copy). The two agree when every query's top 10 rows and all their scores are equal.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, table  # noqa: E402

QUERIES = ["total revenue for the fiscal year", "net income per diluted share", "cash flow from operating activities",
           "goodwill impairment", "risk factors competition", "dividends paid to shareholders"]


def timed(work):
    """What work returns, and the seconds it took."""
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def compacted(directory: Path) -> float:
    """`localcr compact` in a process of its own (no word analysed before in its caches): the seconds it says."""
    out = subprocess.run([sys.executable, "-m", "localcr", "compact", "--index", str(directory)], check=True,
                         capture_output=True, text=True).stdout
    return float(re.search(r" in ([\d.]+) s", out).group(1))


def postings_both_ways(directory: Path) -> tuple[float, float | None, bool | None]:
    """Seconds to analyse the live chunks, to merge the segments' postings (None where a segment has no record of
    its stop words), and whether the two give the same top 10 and scores for every query."""
    from localcr.index import _analysed
    from localcr.lexical import LexicalIndex, Postings, stopwords_of
    from localcr.store import StoreReader

    reader = StoreReader(directory)
    docs, chunks_by_doc = reader.stored_documents()
    stopwords = stopwords_of(reader.manifest.get("languages", ["en"]))
    analysed, analyse_seconds = timed(lambda: _analysed(docs, chunks_by_doc, stopwords))
    picks = list(reader.document_postings([d.doc_id for d in docs]).values())
    if not all(part.analysed_with(stopwords) for part, _ in picks):
        return analyse_seconds, None, None
    merged, merge_seconds = timed(lambda: Postings.merged(picks, [d.language for d in docs], stopwords))
    same = True
    for query in QUERIES:
        a, m = LexicalIndex([analysed]).scores(query), LexicalIndex([merged]).scores(query)
        same &= bool(np.array_equal(np.argsort(-a, kind="stable")[:10], np.argsort(-m, kind="stable")[:10])
                     and np.array_equal(a, m))
    return analyse_seconds, merge_seconds, same


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--index", type=Path, action="append", required=True, help="a local index (copied, not changed); repeat")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench/compaction"), help="where the copies go")
    args = p.parse_args()
    from localcr.store import StoreReader

    rows = []
    for source in args.index:
        copy = args.work / source.name
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".lock"))
        stats = StoreReader(copy).stats()
        analyse, merge, same = postings_both_ways(copy)
        first = compacted(copy)
        again = compacted(copy)  # its postings recorded their stop words in the first
        rows.append([source.name, stats["segments"], stats["chunks"], stats["dead_chunks"], f"{analyse:.2f}",
                     "-" if merge is None else f"{merge:.2f}", "-" if same is None else "yes" if same else "NO",
                     first, "merged" if merge is not None else "analysed", again])
    print(f"Machine: {machine()}\n")
    print(table(["index", "segments", "live chunks", "dead chunks", "analyse s", "merge s", "same top 10 and scores",
                 "compact s", "its BM25 step", "compact again s (merged)"], rows))


if __name__ == "__main__":
    main()
