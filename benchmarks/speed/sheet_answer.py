"""How long `localcr ask` takes over a 1,000-row sheet, the route's decision and the SQL the bundled 1.5B writes
included (issue #86's target: 5 s on an AVX-512 pair), on a CSV this script writes (sales: region, product, month,
units, revenue). Each question is asked afresh (no cached decision or query) with the model loaded once; the
table gives each answer's seconds, its route and its result.

    .venv/bin/python benchmarks/speed/sheet_answer.py [--rows 1000] [--work /tmp/localcr-bench]

Table to stdout and benchmarks/results/sheet_answer.md, with the LLM's prompt rate measured on one answer's prompt.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, table, write_results  # noqa: E402

QUESTIONS = ("How many sales were in the North region?", "What is the total revenue of the product Bolts?",
             "Which product sold the most units in a single sale?", "What is the average revenue of sales in March?",
             "How many sales had more than 90 units?")


def write_sheet(folder: Path, rows: int) -> Path:
    draw = random.Random(86)
    lines = ["Region,Product,Month,Units,Revenue"]
    for _ in range(rows):
        units = draw.randint(1, 100)
        lines.append(f"{draw.choice(['North', 'South', 'East', 'West'])},{draw.choice(['Bolts', 'Nuts', 'Screws', 'Gears'])},"
                     f"{draw.choice(['January', 'February', 'March', 'April'])},{units},{units * draw.randint(3, 9)}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sales.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    from localcr.answers.reader import load_answerer
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory")
    args = p.parse_args()
    work = args.work / "sheet_answer"
    write_sheet(work / "docs", args.rows)
    registry = load_registry()
    build_index([str(work / "docs")], work / "index", registry, contexts="structural", progress=False,
                log=lambda message: None)
    index = Index(work / "index", registry)
    answerer = load_answerer(index.registry)
    rows, seconds = [], []
    try:
        for question in QUESTIONS:
            started = time.perf_counter()
            answer = index.ask(question, answerer=answerer, fresh=True)
            took = time.perf_counter() - started
            seconds.append(took)
            route = "SQL" if answer.note.startswith("computed in SQL") else "reader"
            rows.append([question, f"{took:.1f}", route, answer.text.split(" by: ")[0][:60]])
    finally:
        answerer.close()
    text = (f"`localcr ask` over a {args.rows}-row CSV, each question afresh (decision, query, answer), the bundled "
            f"{answerer.spec.name} loaded once\n\n{table(['question', 's', 'route', 'result'], rows)}\n\n"
            f"median {statistics.median(seconds):.1f} s, most {max(seconds):.1f} s; {machine()}\n")
    print(text)
    write_results("sheet_answer", "", text)


if __name__ == "__main__":
    main()
