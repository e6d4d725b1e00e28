"""Where the counts over rows reach (localcr.answers.route): of each set's questions, how many name no row of their
hits' tables but a period one of its columns is (`route.counted_tables`: the gate), and of those how many the
bundled 1.5B calls a count (`route.count_margin` above ROUTE_MARGIN), so that their plan is asked for; and how many
name a heading or a total of those tables (`route.part_asked`: no period, no sheet's) and of those how many it finds
ask how many rows it holds (`route.parts_margin` above PARTS_MARGIN), counted where a plan counts no periods or rows
above a value. A misfire is a question that is no count and passes a gate and its decision (for the second an upper
bound: no plan is made here); a count plan is then kept only if it counts.

    .venv/bin/python benchmarks/answers/count_gate.py --data ../shared/data [--sets tatqa-dev,wtq-dev,...]
    .venv/bin/python benchmarks/answers/count_gate.py --data ../shared/data --sets wtq-dev --as-pages --label pages

Sets: tatqa-dev (every Markdown question, by answer type), wtq-dev (every question), XQuAD-en (those naming a
year), localcr's ordinary-en and ordinary-world, and world-tables (written by benchmarks/data/world_tables.py
where it is missing). Each set is indexed with structural contexts (no LLM at index time) under --work; each
question is searched as `localcr ask` searches it, kept to its document where it has one. Table to stdout and
benchmarks/results/count_gate.md; each gated question with its margin on stderr.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, sources, table, write_results  # noqa: E402

SETS = ("tatqa-dev", "wtq-dev", "xquad-en", "ordinary-en", "ordinary-world", "world-tables")
WORLD_TABLES = ROOT / "benchmarks" / "data" / "world-tables"
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]|20)\d\d(?!\d)")


def questions(set_name: str, data: Path) -> tuple[str, list[dict]]:
    """(what to index, the questions: each with "query", its "doc" where it has one, and its "type")."""
    if set_name == "world-tables":
        if not (WORLD_TABLES / "questions.jsonl").exists():
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "data" / "world_tables.py")], check=True,
                           stdout=subprocess.DEVNULL)
        rows = [json.loads(line) for line in (WORLD_TABLES / "questions.jsonl").open()]
        return str(WORLD_TABLES / "docs"), [{"query": r["question"], "doc": r["file"], "type": r["kind"]} for r in rows]
    folder = data / "tatqa-dev" / "md" if set_name == "tatqa-dev" else set_directory(data, set_name)
    documents, queries_file = sources(folder)
    rows = [json.loads(line) for line in queries_file.open() if line.strip()]
    rows = [{"query": r.get("query") or r["question"], "doc": r.get("doc"), "type": r.get("answer_type", "")}
            for r in rows]
    return documents, [r for r in rows if set_name != "xquad-en" or _YEAR.search(r["query"])]


def measure(set_name: str, args, registry) -> list:
    from localcr.answers import compute, route
    from localcr.answers.reader import DEFAULT_SOURCES, load_answerer
    from localcr.index import build_index
    from localcr.search import Index

    documents, asked = questions(set_name, args.data)
    directory = args.work / "count-gate" / f"index-{set_name}"
    build_index([documents], directory, registry, contexts="structural", progress=False, log=lambda message: None)
    index = Index(directory, registry)
    answerer = load_answerer(registry, None)
    ids = {Path(doc_id).name: doc_id for doc_id in index.store.doc_ids()}
    named = gated = counted = counts_counted = parted = parts_counted = parts_counts = 0
    for row in asked:
        glob = ids.get(Path(row["doc"]).name) if row["doc"] else None
        tables = compute.sources_tables(index, index.search(row["query"], DEFAULT_SOURCES, glob=glob))
        paged = [(table, []) for table, _ in tables] if args.as_pages else tables  # no chunk: no sheet's
        if part := route.part_asked(row["query"], paged):
            parted += 1
            margin = route.parts_margin(answerer, row["query"], *part[:2])
            parts_counted += margin > route.PARTS_MARGIN
            parts_counts += margin > route.PARTS_MARGIN and row["type"] == "count"
            print(f"{set_name} parts: {margin:+.2f} {row['type'] or '-'} {row['query']!r} ({part[0]})", file=sys.stderr,
                  flush=True)
        if compute.named_tables(row["query"], tables):
            named += 1
            continue
        if not (counted_tables := route.counted_tables(row["query"], tables)):
            continue
        gated += 1
        margin = route.count_margin(answerer, row["query"], counted_tables)
        counted += margin > route.ROUTE_MARGIN
        counts_counted += margin > route.ROUTE_MARGIN and row["type"] == "count"
        print(f"{set_name}: {margin:+.2f} {row['type'] or '-'} {row['query']!r}", file=sys.stderr, flush=True)
    typed = any(row["type"] for row in asked)
    return [set_name, len(asked), named, gated, counted, counts_counted if typed else "-", parted, parts_counted,
            parts_counts if typed else "-"]


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--label", default="", help="a suffix for the results file")
    p.add_argument("--as-pages", action="store_true",
                   help="the heading gate over each hit's table as a page's, not a sheet's: a sheet's records as "
                        "a Markdown or HTML table of them (wtq-dev's medal tables pasted into a page)")
    args = p.parse_args()
    from localcr.models import load_registry

    registry = load_registry()
    rows = [measure(name, args, registry) for name in args.sets.split(",")]
    head = ["set", "questions", "name a row", "gated: no row, a period column", "called a count",
            "of them counts (by the set's type)", "name a heading or total, no period", "called a count of its rows",
            "of them counts"]
    as_pages = "; each table as a page's, not a sheet's (--as-pages)" if args.as_pages else ""
    text = (f"# The count over rows: where it reaches (benchmarks/answers/count_gate.py)\n\n{table(head, rows)}\n\n"
            f"{machine()}; qwen2.5-coder-1.5b's margins, cached by the index's answers cache{as_pages}\n")
    print(text)
    write_results("count_gate", args.label, text)


if __name__ == "__main__":
    main()
