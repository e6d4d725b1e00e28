"""localcr's version of the published contextual-retrieval ablation, on the codebase corpus and its 248 queries.

    .venv/bin/python benchmarks/ablation.py --data ../shared/data/anthropic-codebase [--llm] [--rerank NAME]

Builds one index per context mode (none, structural, and llm with --llm: the default LLM writes a
context for each of the 737 chunks, appended to its structural one; cached, so only the first run is
slow) over the published chunks,
then evaluates dense, lexical and hybrid retrieval on each (plus hybrid + rerank with --rerank), and
prints Pass@5/10/20, MRR@20, nDCG@20 and latency next to the published anchors. The table is also
written to benchmarks/results/ablation.md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import corpus_files, machine, parser, table  # noqa: E402

PUBLISHED = [  # ../shared/README.md: cloud models, Pass@5 / @10 / @20
    ("published: dense (Voyage voyage-2)", 80.92, 87.15, 90.06),
    ("published: contextual dense (Claude 3 Haiku contexts)", 86.37, 92.81, 93.78),
    ("published: contextual dense + contextual BM25", 86.43, 93.21, 94.99),
    ("published: contextual dense + Cohere rerank", 91.24, 94.79, 96.30),
]
LABELS = {"none": "no contexts", "structural": "structural contexts", "llm": "structural + LLM contexts"}
CONFIGS = ("dense", "lexical", "hybrid", "hybrid,fusion=weighted,alpha=0.3")


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--llm", action="store_true", help="also build an index with contexts written by the default LLM")
    p.add_argument("--rerank", metavar="NAME", help="also evaluate hybrid + this reranker from models.toml")
    args = p.parse_args()
    chunks, queries_file = corpus_files(args.data)
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.rerank import load_reranker
    from localcr.search import Index

    registry = load_registry()
    reranker = load_reranker(registry, args.rerank) if args.rerank else None
    configs = [evaluation.parse_config(c) for c in CONFIGS + (("hybrid,rerank",) if reranker else ())]
    rows = []
    for mode in ("none", "structural") + (("llm",) if args.llm else ()):
        directory = args.work / f"ablation-{mode}"
        started = time.perf_counter()
        summary = build_index([str(chunks)], directory, registry, contexts=mode, progress=sys.stderr.isatty(), log=lambda m: None)
        print(f"built {directory} ({mode} contexts) in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if summary.context_summary:
            print(summary.context_summary, file=sys.stderr)
        index = Index(directory, registry)
        queries = evaluation.load_queries(queries_file, index)
        for result in evaluation.evaluate(index, queries, configs, (5, 10, 20), reranker=reranker, progress=False):
            m = result.metrics
            rows.append([f"{result.config.name}, {LABELS[mode]}", 100 * m["pass@5"], 100 * m["pass@10"], 100 * m["pass@20"],
                         f"{m['mrr@20']:.3f}", f"{m['ndcg@20']:.3f}", f"{result.latency_ms['p50']:.1f}"])
    rows += [[name, p5, p10, p20, "", "", ""] for name, p5, p10, p20 in PUBLISHED]
    text = (f"machine: {machine()}\n\n"
            + table(["pipeline", "Pass@5", "Pass@10", "Pass@20", "MRR@20", "nDCG@20", "p50 ms"], rows))
    print(text)
    out = Path(__file__).parent / "results" / "ablation.md"
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
