"""Query expansion (HyDE, `--expand`): does a passage written by the local LLM for each query find the answer better,
and what does it cost a query on this CPU?

    .venv/bin/python benchmarks/retrieval/expansion.py --data ../shared/data [--sets financebench-dev,anthropic-codebase]
        [--llm qwen2.5-coder-1.5b] [--limit N]

Each set is indexed as a new user's `localcr index` does (the defaults: `--contexts auto`; the index
benchmarks/retrieval/long_documents.py leaves under --work is reused), then searched without and with expansion: the passage
joined to the query for the dense leg only (HyDE as published) and for both legs (query2doc's way). Rows give
Pass@1/5/10/20 and, for span gold, token recall@10; the LLM's seconds per query to write a passage (written side
by side, localcr.expansion.PARALLEL at a time, as an evaluation does; a single interactive query costs about its
generation alone) and the search's p50 with the passage at hand. Passages are cached under --work, so a second run
measures the search only (its seconds column then says "cached"). Table to stdout and
benchmarks/results/expansion[-SETS].md, written after every set.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_set, machine, parser, results_suffix, table  # noqa: E402

SETS = ("financebench-dev", "anthropic-codebase")
KS = (1, 5, 10, 20)


def measure(set_name: str, work: Path, data: Path, llm: str | None, limit: int | None) -> list[list]:
    from localcr import evaluation
    from localcr.expansion import Expander

    registry, index, queries = indexed_set(set_name, data, work, "long-documents", "auto")
    if limit:
        queries = replace(queries, queries=queries.queries[:limit])
    spec = registry.require("llm", llm)
    rows = []
    plain = evaluation.evaluate(index, queries, [evaluation.parse_config(c) for c in ("hybrid", "dense")], KS, progress=False)
    rows += [_row(set_name, r, "none", "") for r in plain]
    expander = Expander(spec, legs="dense")
    started = time.perf_counter()
    dense_legs = evaluation.evaluate(index, queries, [evaluation.parse_config(c) for c in ("hybrid,expand", "dense,expand")],
                                     KS, progress=False, expander=expander)
    cost = f"{expander.seconds / expander.written:.1f}" if expander.written else "cached"
    print(f"{set_name}: {expander.written} passages written in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    rows += [_row(set_name, r, "dense leg", cost) for r in dense_legs]
    both = Expander(spec, legs="both", runner=expander._runner)
    rows += [_row(set_name, r, "both legs", "")
             for r in evaluation.evaluate(index, queries, [evaluation.parse_config("hybrid,expand")], KS, progress=False, expander=both)]
    expander.close()
    return rows


def _row(set_name: str, result, expanded: str, cost: str) -> list:
    recall = result.metrics.get("token_recall@10")
    return [set_name, result.config.mode, expanded, result.n_queries, *[100 * result.metrics[f"pass@{k}"] for k in KS],
            "" if recall is None else 100 * recall, cost, f"{result.latency_ms['p50']:.0f}"]


HEAD = ["set", "mode", "expanded", "queries", *[f"P@{k}" for k in KS], "token recall@10", "LLM s per query", "search p50 ms"]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--llm", help="the LLM that writes the passages (default: models.toml's)")
    p.add_argument("--limit", type=int, help="only the first N queries of each set")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    out = ROOT / "benchmarks" / "results" / f"expansion{results_suffix(args.sets, SETS)}.md"
    rows: list[list] = []
    for set_name in args.sets.split(","):
        rows += measure(set_name, args.work, args.data, args.llm, args.limit)
        text = f"machine: {machine()}\n\n" + table(HEAD, rows)
        print(table(HEAD, rows[-4:]), file=sys.stderr)
        if not args.limit:
            out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
