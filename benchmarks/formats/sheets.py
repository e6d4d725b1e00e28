"""Row questions on spreadsheets: Pass@k with and without the sheet's header row carried into every chunk's context.

    .venv/bin/python benchmarks/formats/sheets.py [--work /tmp/localcr-bench] [--questions 90]

The benchmark writes its own tables, with known answers: three workbooks with opaque names (book-a.xlsx ...), one
per year, each with a sheet per region of 12 branches x 6 metrics, one row per (branch, metric) and a column per
quarter ("Q1 2023" ... "Q4 2023"): the year is said only by the header row. Questions name branch, metric, quarter
and year ("What was the Q3 2023 revenue of the Lisbon branch?"); a hit is right when it holds the row in the right
workbook. Both indexes are built with structural contexts by localcr's own build_index; "without" has
localcr.structure's header rows switched off (as before spreadsheets carried them). Hybrid Pass@1/5/10, to stdout
and benchmarks/results/sheets.md.
"""
from __future__ import annotations

import argparse
import random
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from _common import machine, table  # noqa: E402

YEARS = (2022, 2023, 2024)
REGIONS = {"Iberia": ["Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao", "Faro", "Braga", "Malaga", "Zaragoza",
                      "Coimbra", "Granada"],
           "Central": ["Berlin", "Hamburg", "Munich", "Vienna", "Zurich", "Prague", "Leipzig", "Graz", "Basel", "Brno",
                       "Dresden", "Linz"]}
METRICS = ("revenue", "costs", "headcount", "new customers", "returns", "inventory")
KS = (1, 5, 10)


def workbooks(folder: Path, rng: random.Random) -> dict[tuple, tuple[str, str]]:
    """Write the workbooks; the (file, row line) of each (year, region, branch, metric)."""
    import made_files

    rows = {}
    for book, year in zip("abc", YEARS):
        sheets = {}
        for region, branches in REGIONS.items():
            sheet = [["Branch", "Metric", *(f"Q{q} {year}" for q in range(1, 5))]]
            for branch in branches:
                for metric in METRICS:
                    sheet.append([branch, metric.capitalize(), *(rng.randrange(100, 99_999) for _ in range(4))])
                    rows[(year, branch, metric)] = (f"book-{book}.xlsx", " | ".join(map(str, sheet[-1])))
            sheets[region] = sheet
        (folder / f"book-{book}.xlsx").write_bytes(made_files.xlsx(sheets))
    return rows


@contextmanager
def header_rows(on: bool):
    from localcr import structure

    kept = structure._sheet_headers
    if not on:
        structure._sheet_headers = lambda text, sections, line_starts: [None] * len(sections)
    try:
        yield
    finally:
        structure._sheet_headers = kept


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    p.add_argument("--questions", type=int, default=90)
    args = p.parse_args()
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import open_index

    rng = random.Random(51)
    folder = args.work / "sheets" / "books"
    folder.mkdir(parents=True, exist_ok=True)
    rows = workbooks(folder, rng)
    asked = rng.sample(sorted(rows), args.questions)
    questions = [(f"What was the Q{rng.randint(1, 4)} {year} {metric} of the {branch} branch?", rows[(year, branch, metric)])
                 for year, branch, metric in asked]
    registry = load_registry()
    results = []
    for label, on in (("header row carried (now)", True), ("without the header row", False)):
        directory = args.work / "sheets" / f"index-{on}"
        with header_rows(on):
            build_index([str(folder)], directory, registry, contexts="structural", progress=False, rebuild=True, log=lambda m: None)
        index = open_index(directory)
        found = {k: 0 for k in KS}
        for query, (book, row) in questions:
            ranks = [n for n, h in enumerate(index.search(query, k=max(KS))) if h.doc_id.endswith(book) and row in h.text]
            for k in KS:
                found[k] += bool(ranks) and ranks[0] < k
        results.append([label, *(100 * found[k] / len(questions) for k in KS)])
    out = (f"# Row questions on spreadsheets ({len(questions)} questions, {len(rows)} rows in {len(YEARS)} workbooks)\n\n"
           f"{machine()}\n\n" + table(["contexts", *(f"hybrid Pass@{k}" for k in KS)], results) + "\n")
    print(out)
    (ROOT / "benchmarks" / "results" / "sheets.md").write_text(out)


if __name__ == "__main__":
    main()
