"""Which questions `localcr ask` would compute rather than read (localcr.answers.route), and what deciding costs:
ordinary questions that name a year (XQuAD-en's, localcr's own over a manual, a mail, a paper, release notes and a
weather note with tables, and the same kinds in German, French, Spanish, Japanese and Chinese) must all go to the
reader; tatqa-dev's arithmetic questions should be computed and its span, multi-span and count questions read.

    .venv/bin/python benchmarks/answers/routing.py --data ../shared/data [--sets xquad-en,ordinary-en,tatqa-dev]
        [--per-type arithmetic=100,span=100,multi-span=60,count=32] [--halves tune,held-out] [--plans] [-v]

A question goes near computing when the sources its search finds (k = `localcr ask`'s default, kept to its own
document where the set names one) hold a table with a row or column the question names and the bundled model, shown
those tables' heads, names a kind of answer that is worked out past route.ROUTE_MARGIN (`route.arithmetic_margin`:
no model runs where no table is named); before that, a question whose hits lie in a long table of records (a sheet,
or a table of a document's text that is no statement, of more than sql.LONG_TABLE_ROWS rows) goes to SQL where
`route.whole_table_margin` passes route.SHEET_ROUTE_MARGIN, and after it, one the plans and the figures path leave
whose hits lie in a short sheet, where it passes route.SHORT_SHEET_MARGIN ("to SQL"), as `ask` routes them; the plan
is then made as `ask` makes it, and a plan of one cell is a lookup, read from that cell. A question that asks how
many rows a heading or a total of those tables holds (`route.counted_part`) is answered by counting them ("rows
counted"), where its plan (with --plans) counts no periods or rows above a value. A question that asks for a
filing's figure about documents that hold a table goes to the figures path instead. tatqa-dev is sampled per answer
type from each half (its documents split by number: even tune, odd held out), with ANSWERS_SEED. The table prints,
by set and group, how many were computed (a plan over two or more cells), read from one cell, sent to the figures
path, how many needed the model's word, and the time the decision took on top of the search (median and most, the
model's word included where one ran; the plan not). Without --plans no plan is made: "computed" counts the questions
the model's word sends to planning (an upper bound: a plan of one cell is read), and lookups stay 0. With -v each
question's route, margin and plan on stderr. Table to stdout and benchmarks/results/routing.md.
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

SETS = ("xquad-en", "ordinary-en", "ordinary-world", "tatqa-dev")
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]|20)\d\d(?!\d)")


def questions(set_name: str, args) -> tuple[str, list[dict]]:
    """(what to index, the questions asked, each with its "group"): XQuAD-en's that name a year; all of the own
    sets' ("ordinary"); tatqa-dev's sampled by half and answer type (Markdown rendering)."""
    if set_name == "tatqa-dev":
        from tables import half_of, sample

        folder = args.data / "tatqa-dev" / "md"
        rows = [json.loads(line) for line in (folder / "queries.jsonl").open()]
        per_type = {kind: int(n) for kind, n in (item.split("=") for item in args.per_type.split(","))}
        asked = []
        for half in args.halves.split(","):
            for row in sample(rows, half, per_type):
                asked.append({**row, "group": f"{half_of(row['doc'])} {row['answer_type']}"})
        return str(folder / "docs"), asked
    documents, queries_file = sources(set_directory(args.data, set_name))
    rows = [json.loads(line) for line in queries_file.open() if line.strip()]
    return documents, [{**row, "group": row.get("language", "ordinary")} for row in rows
                       if set_name != "xquad-en" or _YEAR.search(row["query"])]


def measure(set_name: str, args, registry, answerer) -> list[list]:
    from localcr.answers import compute, figures, route, sql
    from localcr.answers.reader import DEFAULT_SOURCES
    from localcr.index import build_index
    from localcr.search import Index

    documents, asked = questions(set_name, args)
    directory = args.work / "routing" / f"index-{set_name}"
    build_index([documents], directory, registry, contexts="structural", progress=False,
                log=lambda message: None)
    index = Index(directory, registry)
    ids = {Path(doc_id).name: doc_id for doc_id in index.store.doc_ids()}
    by_group: dict[str, dict] = {}
    for row in asked:
        glob = ids.get(Path(row["doc"]).name) if "doc" in row else None
        hits = index.search(row["query"], DEFAULT_SOURCES, glob=glob)
        started = time.perf_counter()
        long, _ = route.long_records(index, hits)
        to_sql = long is not None and route.whole_table_margin(answerer, row["query"], long) > route.SHEET_ROUTE_MARGIN
        tables = compute.sources_tables(index, hits)
        named = compute.named_tables(row["query"], tables)
        margin = route.arithmetic_margin(answerer, row["query"], named) if named else None
        counted = not to_sql and route.counted_part(answerer, row["query"], tables) is not None
        decided = time.perf_counter() - started
        to_plan = args.plans and margin is not None and margin > route.ROUTE_MARGIN
        formula, cells = route.table_plan(row["query"], tables, answerer) if to_plan else ("", {})
        counted = counted and not compute.is_tally(formula)  # a plan that counts periods or rows comes first
        formula = "" if counted else formula
        looked_up = bool(formula) and compute.lookup(formula, cells) is not None
        to_compute = bool(formula) and not looked_up if args.plans else \
            not counted and margin is not None and margin > route.ROUTE_MARGIN
        filing = not to_compute and bool(figures.subject_documents(index, row["query"], hits, glob=glob)[1])
        whole_margin = None
        if not (to_sql or counted or to_compute or looked_up or filing):  # what the plans leave: a short sheet
            sheet, _ = sql.whole_table(index, hits, sheets_only=True)
            whole_margin = route.whole_table_margin(answerer, row["query"], sheet) if sheet else None
            to_sql = whole_margin is not None and whole_margin > route.SHORT_SHEET_MARGIN
        group = by_group.setdefault(row["group"], {"asked": 0, "sql": 0, "counted": 0, "routed": 0, "lookups": 0,
                                                   "filing": 0, "decided": 0, "costs": []})
        group["asked"] += 1
        group["sql"] += to_sql
        group["counted"] += counted
        group["routed"] += to_compute
        group["lookups"] += looked_up
        group["filing"] += filing
        group["decided"] += bool(named) or counted
        group["costs"].append(decided)
        if args.verbose:
            route_taken = "SQL" if to_sql else "rows counted" if counted else "computed" if to_compute else \
                "a cell" if looked_up else "filing" if filing else "read"
            print(f"{set_name} {row['group']}: {route_taken}{'' if named else ' (no table named)'} margin "
                  f"{margin if margin is None else round(margin, 2)}, whole table "
                  f"{whole_margin if whole_margin is None else round(whole_margin, 2)}: {row['query']!r} {formula}",
                  file=sys.stderr)
    return [[set_name, name, g["asked"], g["sql"], g["counted"], g["routed"], g["lookups"], g["filing"], g["decided"],
             f"{1000 * statistics.median(g['costs']):.1f} / {1000 * max(g['costs']):.1f}"]
            for name, g in sorted(by_group.items())]


def main() -> None:
    from localcr.answers.reader import load_answerer
    from localcr.models import load_registry

    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--per-type", default="arithmetic=100,span=100,multi-span=60,count=16")
    p.add_argument("--halves", default="tune,held-out")
    p.add_argument("--plans", action="store_true",
                   help="make the plan of each question routed to computing, to tell lookups (a plan of one cell) apart")
    p.add_argument("-v", "--verbose", action="store_true", help="each question's route on stderr")
    args = p.parse_args()
    registry = load_registry()
    answerer = load_answerer(registry)
    rows = [row for name in args.sets.split(",") for row in measure(name, args, registry, answerer)]
    text = (table(["set", "questions", "asked", "to SQL (a whole table)", "rows counted (a heading's or total's)",
                   "computed (a plan of two or more cells)", "read from one cell",
                   "to the figures path", "model asked", "deciding, ms (median / most)"],
                  rows) + f"\n\n{machine()}, LLM {answerer.spec.name}\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "routing.md").write_text(text)


if __name__ == "__main__":
    main()
