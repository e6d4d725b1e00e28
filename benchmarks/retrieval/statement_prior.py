"""The statement prior (localcr.statements) on financebench-dev, chosen by leave-one-company-out.

    .venv/bin/python benchmarks/retrieval/statement_prior.py --data ../shared/data [--index DIR] [--lifts 0.5,1,2,4]
        [--documents 1,2] [--check-sets anthropic-codebase,xquad-en]

The index is financebench-dev as a user indexes it (the defaults, in the directory benchmarks/retrieval/long_documents.py
and navigation.py use; an index either left under --work is reused), or the one --index names (e.g. a structural
"sections" index long_documents.py left: the prior works on any index whose contexts carry recognised sections).
Each question is searched with the default hybrid search and no prior, then with the prior at every lift, number
of documents and with or without the line items' row labels. Leave-one-company-out: for each of the 18
companies, the setting with the best mean P@10 on the other companies' questions (ties to the smaller lift) is
scored on that company's questions; the held-out row is the mean over all questions so scored, beside the
in-sample best and no prior, each with P@5/10/20, token recall@10 and the same search restricted to the gold
filing (the oracle router of long_documents.py). With --check-sets, how many queries of those sets the prior
could touch: those that ask for a statement, and whose set has chunks in a statement's section (structural
contexts computed without an index; none: their results are unchanged by construction). Tables go to stdout and
benchmarks/results/statement_prior.md (statement_prior-NAME.md for an --index whose folder is NAME).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, sources, table  # noqa: E402

KS = (5, 10, 20)


def settings(lifts: list[float], documents: list[int]):
    from localcr.statements import StatementPrior

    found = [None]
    for lift in lifts:
        for n in documents:
            for row_words in (True, False):
                found.append(StatementPrior(lift=lift, documents=n, row_words=row_words))
    return found


def name_of(prior) -> str:
    if prior is None:
        return "no prior"
    return f"lift {prior.lift:g}, {prior.documents} document{'s' if prior.documents > 1 else ''}" + \
        (", row labels" if prior.row_words else "")


def scores_of(index, queries, prior, restrict: bool) -> list[dict]:
    from localcr.evaluation.metrics import score_ranking

    out = []
    for q in queries:
        glob = sorted({t.id for t in q.targets}) if restrict else None
        out.append(score_ranking(index.search(q.text, k=KS[-1], glob=glob, prior=prior), q.targets, KS))
    return out


def mean(rows: list[dict], key: str) -> float:
    return 100 * sum(r[key] for r in rows) / len(rows) if rows else 0.0


def leave_one_company_out(per_setting: dict, companies: list[str]) -> tuple[list[dict], dict[str, str]]:
    """Each question scored by the setting chosen on the other companies' questions (best mean P@10, ties to the
    order of `per_setting`: no prior first, smaller lifts first); and which setting each company's fold chose."""
    held_out: list[dict | None] = [None] * len(companies)
    chosen = {}
    for company in sorted(set(companies)):
        others = [i for i, c in enumerate(companies) if c != company]
        best = max(per_setting, key=lambda s: (sum(per_setting[s][i]["pass@10"] for i in others), -list(per_setting).index(s)))
        chosen[company] = best
        for i, c in enumerate(companies):
            if c == company:
                held_out[i] = per_setting[best][i]
    return held_out, chosen


def build_structural(set_dir: Path, directory: Path) -> None:
    """financebench-dev with structural contexts as before cover lines (localcr.parsing.cover): the contexts of
    long_documents.py's "sections" variant, so its cached embeddings serve (an index left here is only updated)."""
    from localcr import structure
    from localcr.index import build_index
    from localcr.models import load_registry

    kept = structure.cover.cover_line
    structure.cover.cover_line = lambda text: ""
    try:
        build_index([str(set_dir / "docs")], directory, load_registry(), contexts="structural", progress=False,
                    log=lambda message: print(message, file=sys.stderr))
    finally:
        structure.cover.cover_line = kept


def touched(set_name: str, data: Path) -> str:
    """"asking N of M queries; K chunks in statements" for a set, from structural contexts computed here."""

    from localcr.chunking import chunk_document
    from localcr.documents import load_paths
    from localcr.navigation import section_path
    from localcr.statements import asked, statement_of
    from localcr.structure import structural_contexts

    source, queries_file = sources(set_directory(data, set_name))
    questions = [json.loads(line) for line in queries_file.read_text().splitlines() if line.strip()]
    asking = sum(bool(asked(q["query"]).statements) for q in questions)
    in_statements = 0
    for doc in load_paths([Path(source)]).documents:
        chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 190, 20)
        structural_contexts(doc, chunks)
        in_statements += sum(statement_of(section_path(c.context)) is not None for c in chunks)
    return f"{asking} of {len(questions)} queries ask for a statement; {in_statements} chunks in a statement's section"


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--index", type=Path, help="an index of financebench-dev to search (default: the defaults' index under --work)")
    p.add_argument("--structural", action="store_true",
                   help="build and search a structural index instead (recognised sections, no cards, and no cover lines: "
                        "the contexts of long_documents.py's 'sections' variant, whose cached embeddings it reuses)")
    p.add_argument("--lifts", default="0.5,1,2,4")
    p.add_argument("--documents", default="1,2")
    p.add_argument("--check-sets", default="", help="comma-separated sets whose queries the prior could touch, counted")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr import evaluation
    from localcr.models import load_registry
    from localcr.search import Index

    set_dir = set_directory(args.data, "financebench-dev")
    if args.index or args.structural:
        directory = args.index or args.work / "long-documents" / "index-financebench-dev-sections-nocover"
        if args.structural:
            build_structural(set_dir, directory)
        index = Index(directory, load_registry())
        queries_file = set_dir / "queries.jsonl"
    else:
        from retrieval.navigation import index_of

        index, queries_file = index_of(args.data, args.work)
    queries = evaluation.load_queries(queries_file, index).queries
    company_of = {d["id"]: d["company"] for d in json.loads((set_dir / "documents.json").read_text())["documents"]}
    companies = [company_of[q.targets[0].id] for q in queries]
    every = settings([float(x) for x in args.lifts.split(",")], [int(x) for x in args.documents.split(",")])
    per_setting = {name_of(s): scores_of(index, queries, s, False) for s in every}
    print(f"scored {len(every)} settings on {len(queries)} questions", file=sys.stderr)
    held_out, chosen = leave_one_company_out(per_setting, companies)
    in_sample = max(per_setting, key=lambda s: (sum(r["pass@10"] for r in per_setting[s]), -list(per_setting).index(s)))
    by_name = {name_of(s): s for s in every}
    oracle = {name: scores_of(index, queries, by_name[name], True) for name in dict.fromkeys(["no prior", in_sample])}
    head = ["financebench-dev", *[f"P@{k}" for k in KS], "token recall@10", "searching the gold filing alone: P@5 / 10 / 20"]

    def row(label: str, rows: list[dict], gold: list[dict] | None) -> list:
        return [label, *[f"{mean(rows, f'pass@{k}'):.1f}" for k in KS], f"{mean(rows, 'token_recall@10'):.1f}",
                " / ".join(f"{mean(gold, f'pass@{k}'):.1f}" for k in KS) if gold else ""]

    rows = [row("no prior", per_setting["no prior"], oracle["no prior"]),
            row("statement prior, held out by company (leave-one-company-out)", held_out, None),
            row(f"statement prior, in-sample best ({in_sample})", per_setting[in_sample], oracle[in_sample])]
    folds: dict[str, list[str]] = {}
    for company, name in chosen.items():
        folds.setdefault(name, []).append(company)
    every_row = [[name, *[f"{mean(per_setting[name], f'pass@{k}'):.1f}" for k in KS], len(folds.get(name, []))]
                 for name in per_setting]
    text = (f"machine: {machine()}\nindex: {index.store.location}\n\n" + table(head, rows) + "\n\n"
            + table(["setting", *[f"P@{k}" for k in KS], "folds choosing it"], every_row))
    checks = [[name, touched(name, args.data)] for name in args.check_sets.split(",") if name]
    if checks:
        text += "\n\n" + table(["set", "what the prior could touch"], checks)
    suffix = f"-{args.index.name}" if args.index else ""  # each index its own results file
    (ROOT / "benchmarks" / "results" / f"statement_prior{suffix}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
