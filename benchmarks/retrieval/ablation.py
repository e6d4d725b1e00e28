"""localcr's version of the published contextual-retrieval ablation, on a public set (code or prose).

    .venv/bin/python benchmarks/retrieval/ablation.py --data ../shared/data/anthropic-codebase [--llm NAME] [--rerank NAME]
    .venv/bin/python benchmarks/retrieval/ablation.py --data ../shared/data/xquad-en --llm NAME --ks 1,5,20

Builds one index per context mode over the set's published chunks: none, structural, and with --llm the
contexts written by that LLM from models.toml, once per composition (the LLM's context alone, and after the
structural one; cached, so only the first run is slow and an interrupted one resumes). Then evaluates dense,
lexical and hybrid retrieval (RRF and weighted fusion; plus hybrid + rerank with --rerank) on each, and
prints Pass@k, MRR and nDCG at the largest k and latency, next to the published anchors for the codebase set.
The table is also written to benchmarks/results/ablation-<set>[-<llm>].md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, parser, table  # noqa: E402

PUBLISHED = [  # ../shared/README.md: cloud models, codebase set, Pass@5 / @10 / @20
    ("published: dense (Voyage voyage-2)", 80.92, 87.15, 90.06),
    ("published: contextual dense (Claude 3 Haiku contexts)", 86.37, 92.81, 93.78),
    ("published: contextual dense + contextual BM25", 86.43, 93.21, 94.99),
    ("published: contextual dense + Cohere rerank", 91.24, 94.79, 96.30),
]
CONFIGS = ("dense", "lexical", "hybrid,fusion=rrf", "hybrid,fusion=weighted,alpha=0.3")


def variants(llm: str | None) -> list[tuple[str, str, str | None]]:
    """(label, context mode, composition) of every index the ablation builds."""
    rows = [("no contexts", "none", None), ("structural contexts", "structural", None)]
    if llm:
        rows += [(f"{llm} contexts", "llm", "llm"), (f"structural + {llm} contexts", "llm", "structural+llm")]
    return rows


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--llm", help="also build indexes with contexts written by this LLM from models.toml")
    p.add_argument("--rerank", metavar="NAME", help="also evaluate hybrid + this reranker from models.toml")
    p.add_argument("--ks", default="5,10,20", help="cut-offs (default 5,10,20)")
    args = p.parse_args()
    chunks, queries_file = corpus_files(args.data)
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.rerankers import load_reranker
    from localcr.search import Index

    registry = load_registry()
    ks = evaluation.parse_ks(args.ks)
    reranker = load_reranker(registry, args.rerank) if args.rerank else None
    configs = [evaluation.parse_config(c) for c in CONFIGS + (("hybrid,rerank",) if reranker else ())]
    name = args.data.name
    rows = []
    for label, mode, composition in variants(args.llm):
        directory = args.work / (f"ablation-{name}-{mode}" + (f"-{args.llm}-{composition}" if composition else ""))
        started = time.perf_counter()
        summary = build_index([str(chunks)], directory, registry, contexts=mode, llm=args.llm, composition=composition,
                              progress=sys.stderr.isatty(), log=lambda m: print(m, file=sys.stderr))
        print(f"built {directory} ({label}) in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if summary.context_summary:
            print(summary.context_summary, file=sys.stderr)
        index = Index(directory, registry)
        queries = evaluation.load_queries(queries_file, index)
        for result in evaluation.evaluate(index, queries, configs, ks, reranker=reranker, progress=False):
            m = result.metrics
            rows.append([f"{result.config.name}, {label}", *(100 * m[f"pass@{k}"] for k in ks),
                         f"{m[f'mrr@{ks[-1]}']:.3f}", f"{m[f'ndcg@{ks[-1]}']:.3f}", f"{result.latency_ms['p50']:.1f}"])
    if name == "anthropic-codebase" and ks == (5, 10, 20):
        rows += [[label, p5, p10, p20, "", "", ""] for label, p5, p10, p20 in PUBLISHED]
    head = ["pipeline", *(f"Pass@{k}" for k in ks), f"MRR@{ks[-1]}", f"nDCG@{ks[-1]}", "p50 ms"]
    text = f"set: {name} ({len(queries)} queries); machine: {machine()}\n\n" + table(head, rows)
    print(text)
    out = Path(__file__).resolve().parents[1] / "results" / (f"ablation-{name}" + (f"-{args.llm}" if args.llm else "") + ".md")
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
