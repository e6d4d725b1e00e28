"""Which questions `localcr ask` would compute rather than read (localcr.answers.route), and what deciding costs:
ordinary questions that name a year (XQuAD-en's, and localcr's own questions over a manual, a mail, a paper,
release notes and a weather note, several of which hold tables) must all go to the reader, with no plan and no
added wait; tatqa-dev's arithmetic questions should be computed. No LLM runs: the route is decided before any plan.

    .venv/bin/python benchmarks/answers/routing.py --data ../shared/data [--sets xquad-en,ordinary-en,tatqa-dev]

A question is routed to computing when the sources its search finds (k = `localcr ask`'s default, kept to its own
document where the set names one) hold a table with a row the question names and the question asks for arithmetic,
or when it asks for a filing's figure about documents that hold a table (the figures path then makes its plan);
the table prints how many were, and the time the decision took on top of the search (median and most). Table to stdout and
benchmarks/results/routing.md.
"""
from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, sources, table  # noqa: E402

SETS = ("xquad-en", "ordinary-en", "tatqa-dev")
_YEAR = re.compile(r"\b(?:1[5-9]|20)\d\d\b")


def questions(set_name: str, data: Path) -> tuple[str, list[dict]]:
    """(what to index, the questions asked): XQuAD-en's that name a year; all of ordinary-en's; tatqa-dev's
    arithmetic ones (Markdown rendering)."""
    if set_name == "tatqa-dev":
        folder = data / "tatqa-dev" / "md"
        rows = [json.loads(line) for line in (folder / "queries.jsonl").open()]
        return str(folder / "docs"), [row for row in rows if row["answer_type"] == "arithmetic"]
    documents, queries_file = sources(set_directory(data, set_name))
    rows = [json.loads(line) for line in queries_file.open() if line.strip()]
    return documents, [row for row in rows if set_name != "xquad-en" or _YEAR.search(row["query"])]


def measure(set_name: str, args) -> list:
    from localcr.answers import compute, figures
    from localcr.answers.reader import DEFAULT_SOURCES
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    documents, asked = questions(set_name, args.data)
    registry = load_registry()
    directory = args.work / "routing" / f"index-{set_name}"
    build_index([documents], directory, registry, contexts="structural", progress=False, log=lambda message: None)
    index = Index(directory, registry)
    ids = {Path(doc_id).name: doc_id for doc_id in index.store.doc_ids()}
    routed, costs = [], []
    for row in asked:
        glob = ids.get(Path(row["doc"]).name) if "doc" in row else None
        hits = index.search(row["query"], DEFAULT_SOURCES, glob=glob)
        started = time.perf_counter()
        tables = compute.sources_tables(index, hits)
        to_compute = bool(tables and compute.asks_for_computation(row["query"])
                          and compute.named_tables(row["query"], tables)) \
            or bool(figures.subject_documents(index, row["query"], hits, glob=glob)[1])
        costs.append(time.perf_counter() - started)
        if to_compute:
            routed.append(row["query"])
        if args.verbose:
            print(f"{set_name}: {'computed' if to_compute else 'read'}: {row['query']!r}", file=sys.stderr)
    return [set_name, len(asked), len(routed), f"{1000 * statistics.median(costs):.1f} / {1000 * max(costs):.1f}"]


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("-v", "--verbose", action="store_true", help="each question's route on stderr")
    args = p.parse_args()
    rows = [measure(name, args) for name in args.sets.split(",")]
    text = (table(["set", "questions", "routed to computing", "deciding, ms (median / most)"], rows)
            + f"\n\n{machine()}\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "routing.md").write_text(text)


if __name__ == "__main__":
    main()
