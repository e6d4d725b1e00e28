"""Fusion rules on every kind of corpus: the default has to hold on code, prose and long filings at once.

    .venv/bin/python benchmarks/fusion.py --data ../shared/data [--sets anthropic-codebase,xquad-en,jsquad-ja,financebench-dev]
        [--fusions dynamic,weighted,rrf] [--alphas 0.3,0.5,0.7]

Each set is indexed as a user indexes it (localcr's defaults: `--contexts auto`, so long filings get cards and
code and prose keep their structural contexts), in the directory benchmarks/long_documents.py uses for its "auto"
variant (an index either script left under --work is reused). Every query runs under each rule: `dynamic` (the
dense share set per query from how far each retriever's best score stands out, localcr.search.dynamic_alpha),
`weighted` at each --alphas, and `rrf`. Rows give hybrid Pass@1/5/10/20 per set and rule (span gold for
financebench-dev); the table goes to stdout and benchmarks/results/fusion[-SETS].md, written after every set.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, table  # noqa: E402
from long_documents import sources  # noqa: E402

SETS = ("anthropic-codebase", "xquad-en", "xquad-de", "xquad-zh", "jsquad-ja", "financebench-dev")
KS = (1, 5, 10, 20)


def configs(fusions: list[str], alphas: list[float]) -> list[str]:
    """Evaluation configurations: each fusion rule, weighted once per alpha."""
    out = []
    for fusion in fusions:
        if fusion == "weighted":
            out += [f"hybrid,fusion=weighted,alpha={a:g},name=weighted α {a:g}" for a in alphas]
        else:
            out.append(f"hybrid,fusion={fusion},name={fusion}")
    return out


def measure(set_name: str, data: Path, work: Path, written: list[str]) -> list[list]:
    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import DEFAULT_ALPHA, DEFAULT_FUSION, Index

    source, queries_file = sources(set_directory(data, set_name))
    registry = load_registry()
    directory = work / "long-documents" / f"index-{set_name}-auto-default"
    build_index([source], directory, registry, progress=False, log=lambda message: None)
    index = Index(directory, registry)
    queries = evaluation.load_queries(queries_file, index)
    results = evaluation.evaluate(index, queries, [evaluation.parse_config(c) for c in written], KS, progress=False)
    default = f"{DEFAULT_FUSION}" if DEFAULT_FUSION != "weighted" else f"weighted α {DEFAULT_ALPHA:g}"
    return [[set_name, len(queries.queries), r.config.name + (" (default)" if r.config.name == default else ""),
             *[100 * r.metrics[f"pass@{k}"] for k in KS]] for r in results]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--fusions", default="dynamic,weighted,rrf", help="rules to compare: dynamic, weighted, rrf")
    p.add_argument("--alphas", default="0.3,0.5,0.7", help="dense shares for weighted fusion")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    written = configs(args.fusions.split(","), [float(a) for a in args.alphas.split(",")])
    head = ["set", "queries", "fusion", *[f"hybrid P@{k}" for k in KS]]
    rows: list[list] = []
    out = ROOT / "benchmarks" / "results" / f"fusion{results_suffix(args.sets, SETS)}.md"
    for set_name in args.sets.split(","):
        rows += measure(set_name, args.data, args.work, written)
        text = f"machine: {machine()}\n\n" + table(head, rows)
        out.write_text(text + "\n")
        print(table(head, rows[-len(written):]), file=sys.stderr)
    print(text)


if __name__ == "__main__":
    main()
