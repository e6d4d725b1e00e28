"""How deep each retriever's candidate list should be before fusion: hybrid Pass@k by candidate depth.

    .venv/bin/python benchmarks/retrieval/depth.py --data ../shared/data/anthropic-codebase --data ../shared/data/xquad-en ...

For every set: one index with structural contexts (built once, cached), then hybrid search (RRF and weighted
fusion) with each retriever's list cut at each depth, fused, and cut at k. A search's top k must not depend
on the k asked for, so the depth is a setting of its own (`candidates`); this table is how its default was
chosen. Output: stdout and benchmarks/results/depth.md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, table  # noqa: E402

DEPTHS = (20, 50, 100, 150, 300)
KS = (1, 5, 10, 20)


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, type=Path, action="append", help="a public set directory (repeatable)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    rows = []
    for data in args.data:
        chunks, queries_file = corpus_files(data)
        directory = args.work / f"depth-{data.name}"
        build_index([str(chunks)], directory, registry, contexts="structural", progress=False, log=lambda m: None)
        index = Index(directory, registry)
        queries = evaluation.load_queries(queries_file, index)
        for fusion in ("rrf", "weighted"):
            spec = "hybrid,fusion=rrf" if fusion == "rrf" else "hybrid,fusion=weighted,alpha=0.5"
            configs = [evaluation.parse_config(f"{spec},candidates={d},name={d}") for d in DEPTHS]
            for result in evaluation.evaluate(index, queries, configs, KS, progress=False):
                rows.append([data.name, fusion, result.config.candidates, *(100 * result.metrics[f"pass@{k}"] for k in KS)])
    text = f"machine: {machine()}\n\n" + table(["set", "fusion", "depth", *(f"Pass@{k}" for k in KS)], rows)
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / "depth.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
