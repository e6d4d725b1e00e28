"""Fusion rules on every kind of corpus: the default has to hold on code, prose and long filings at once.

    .venv/bin/python benchmarks/retrieval/fusion.py --data ../shared/data [--sets anthropic-codebase,xquad-en,jsquad-ja,financebench-dev]
        [--fusions auto,dynamic,weighted,rrf] [--alphas 0.3,0.5,0.7] [--held-out]

Each set is indexed as a user indexes it (localcr's defaults: `--contexts auto`, so long filings get cards and
code and prose keep their structural contexts), in the directory benchmarks/retrieval/long_documents.py uses for its "auto"
variant (an index either script left under --work is reused). Every query runs under each rule: `auto` (the
default: each query fused by what its candidates are, localcr.search.fusion_of), `dynamic` (the dense share set per
query from how far each retriever's best score stands out, localcr.search.dynamic_alpha), `weighted` at each
--alphas, and `rrf`. Rows give hybrid Pass@1/5/10/20 per set and rule (span gold for
financebench-dev); the table goes to stdout and benchmarks/results/fusion[-SETS].md, written after every set.

With --held-out, a set whose documents.json names each document's company (financebench-dev) is also scored as a
user would meet it: leave one company out. For each company the rule with the best Pass@10 on the others' questions
is chosen (a rule within one question of the best ties, and the tie goes to the rule with fewer free choices:
rrf and dynamic none, weighted its alpha) and scored on that company's questions; the held-out Pass@5/10/20 is the
mean over every question of its fold's choice, beside the in-sample figure of the rule chosen on all questions.
Results: benchmarks/results/fusion-held-out.md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, sources, table  # noqa: E402

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


def measure(set_name: str, data: Path, work: Path, written: list[str], held_out: list | None = None) -> list[list]:
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
    companies = _companies(set_directory(data, set_name), queries)
    if held_out is not None and companies:
        held_out += leave_one_company_out(set_name, results, companies)
    default = f"{DEFAULT_FUSION}" if DEFAULT_FUSION != "weighted" else f"weighted α {DEFAULT_ALPHA:g}"
    return [[set_name, len(queries.queries), r.config.name + (" (default)" if r.config.name == default else ""),
             *[100 * r.metrics[f"pass@{k}"] for k in KS]] for r in results]


def _companies(set_dir: Path, queries) -> dict[str, str]:
    """Query id -> the company of its gold documents, for a set whose documents.json names them; {} otherwise."""
    import json

    listing = set_dir / "documents.json"
    if not listing.is_file():
        return {}
    company = {d["id"]: d["company"] for d in json.loads(listing.read_text())["documents"]}
    return {q.qid: company[q.targets[0].id] for q in queries.queries if q.targets and q.targets[0].id in company}


FREE_CHOICES = {"rrf": 0, "dynamic": 0}  # weighted fusion has one: its alpha


def _choose(rules: dict[str, dict[str, dict]], questions: list[str]) -> str:
    """The rule with the best mean Pass@10 over these questions; rules within one question of the best tie, and
    the tie goes to the one with fewer free choices, then to the better score."""
    means = {name: sum(per[q]["pass@10"] for q in questions) / len(questions) for name, per in rules.items()}
    best = max(means.values())
    tied = [name for name, m in means.items() if m >= best - 1 / len(questions) + 1e-9]
    return min(tied, key=lambda name: (FREE_CHOICES.get(name.split()[0], 1), -means[name]))


def leave_one_company_out(set_name: str, results, companies: dict[str, str]) -> list[list]:
    """Rows of the held-out study: each rule's in-sample Pass@5/10/20 and how many folds chose it, then the
    held-out figure of choosing by folds against the in-sample figure of the rule chosen on every question."""
    rules = {r.config.name: {row["query_id"]: row for row in r.per_query} for r in results}
    questions = [q for q in next(iter(rules.values())) if q in companies]
    folds = sorted(set(companies[q] for q in questions))
    chosen = {}
    for company in folds:
        chosen[company] = _choose(rules, [q for q in questions if companies[q] != company])
    mean = lambda name, k, qs: 100 * sum(rules[name][q][f"pass@{k}"] for q in qs) / len(qs)
    rows = [[set_name, name, *[mean(name, k, questions) for k in KS[1:]],
             sum(c == name for c in chosen.values())] for name in rules]
    overall = _choose(rules, questions)
    held = [100 * sum(rules[chosen[companies[q]]][q][f"pass@{k}"] for q in questions) / len(questions) for k in KS[1:]]
    rows.append([set_name, f"chosen on all questions: {overall} (in-sample)", *[mean(overall, k, questions) for k in KS[1:]], ""])
    rows.append([set_name, f"chosen by leave-one-company-out ({len(folds)} folds, held-out)", *held, ""])
    return rows


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--fusions", default="auto,dynamic,weighted,rrf", help="rules to compare: auto, dynamic, weighted, rrf")
    p.add_argument("--alphas", default="0.3,0.5,0.7", help="dense shares for weighted fusion")
    p.add_argument("--held-out", action="store_true", help="also choose the rule by leave-one-company-out where "
                   "documents.json names companies (results/fusion-held-out.md)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    written = configs(args.fusions.split(","), [float(a) for a in args.alphas.split(",")])
    head = ["set", "queries", "fusion", *[f"hybrid P@{k}" for k in KS]]
    rows: list[list] = []
    out = ROOT / "benchmarks" / "results" / f"fusion{results_suffix(args.sets, SETS)}.md"
    held_out: list | None = [] if args.held_out else None
    held_head = ["set", "rule", *[f"P@{k}" for k in KS[1:]], "folds choosing it"]
    for set_name in args.sets.split(","):
        rows += measure(set_name, args.data, args.work, written, held_out)
        text = f"machine: {machine()}\n\n" + table(head, rows)
        out.write_text(text + "\n")
        print(table(head, rows[-len(written):]), file=sys.stderr)
    if held_out:
        held_text = table(held_head, held_out)
        (ROOT / "benchmarks" / "results" / "fusion-held-out.md").write_text(f"machine: {machine()}\n\n{held_text}\n")
        text += "\n\n" + held_text
    print(text)


if __name__ == "__main__":
    main()
