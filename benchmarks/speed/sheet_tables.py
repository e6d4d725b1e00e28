"""A sheet's typed table stored at index time (issue #86, localcr.sheet_tables) against one rebuilt at question time:
a CSV of --rows rows and 6 columns written to a scratch directory, read by localcr's CSV reader, its table written
to a tables.sqlite as a segment's is (write_tables: the sheet cut from its chunks, typed by table_of, inserted), and
SELECTs of the kinds the grammar writes run through run_query on the stored file, each the best of three after a
first run. No model is loaded: a full `localcr index` of a million rows would spend its hours embedding them, so
this times the reader and the table's part of a segment only (the chunks are the reader's text cut every
CHUNK_LINES lines, as a chunker of rows cuts a sheet, without overlap).

    .venv/bin/python benchmarks/speed/sheet_tables.py            # 1,000,000 rows
    .venv/bin/python benchmarks/speed/sheet_tables.py --rows 100000 --label 100k

Before, every question over a sheet rebuilt its table from all its chunks and loaded it into an in-memory SQLite
database: "rebuilt and loaded" is what that costs a question, once per question.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, peak_rss_mb, table, write_results  # noqa: E402

CHUNK_LINES = 40
REGIONS = ["North", "South", "East", "West", "Central"]
QUERIES = [
    ("COUNT with WHERE", "SELECT COUNT(*) FROM t WHERE \"Region\" = 'North' AND \"Amount\" > 500"),
    ("SUM GROUP BY", 'SELECT "Region", SUM("Amount") FROM t GROUP BY "Region" ORDER BY SUM("Amount") DESC'),
    ("ORDER BY LIMIT", 'SELECT "Item", "Amount" FROM t ORDER BY "Amount" DESC LIMIT 5'),
    ("AVG over a range", 'SELECT AVG("Quantity") FROM t WHERE "Day" LIKE \'%2024-03%\' AND "Id" > 1000'),
    ("MAX of a difference", 'SELECT MAX("Amount" - "Quantity") FROM t'),
]


def csv_text(rows: int) -> str:
    draw = random.Random(86)
    lines = ["Id,Item,Region,Amount,Day,Quantity"]
    for n in range(1, rows + 1):
        lines.append(f"{n},item {draw.randint(1, 5000)},{draw.choice(REGIONS)},{draw.randint(0, 99999) / 100:.2f},"
                     f"2024-{draw.randint(1, 12):02d}-{draw.randint(1, 28):02d},{draw.randint(0, 500)}")
    return "\n".join(lines) + "\n"


def chunks_of(doc_id: str, text: str, kind: str) -> list:
    from localcr.documents import Chunk

    chunks, start, position = [], 0, 0
    lines = text.split("\n")
    for at in range(0, len(lines), CHUNK_LINES):
        piece = "\n".join(lines[at:at + CHUNK_LINES])
        if piece:
            chunks.append(Chunk(f"{doc_id}#{position}", doc_id, position, start, start + len(piece), piece, kind=kind))
            position += 1
        start += len(piece) + 1
    return chunks


def best(work, times: int = 3) -> tuple[float, float, object]:
    """(the first run's seconds, the best of `times` more, what it returned)."""
    began = time.perf_counter()
    result = work()
    first = time.perf_counter() - began
    runs = []
    for _ in range(times):
        began = time.perf_counter()
        work()
        runs.append(time.perf_counter() - began)
    return first, min(runs), result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--label", default="", help="results file suffix (benchmarks/results/sheet_tables-LABEL.md)")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    args = p.parse_args()

    from localcr import sheet_tables
    from localcr.answers import sql
    from localcr.documents import Document
    from localcr.readers.sheets import read_csv

    spent: dict[str, float] = {}
    load = os.getloadavg()[0]

    def timed(owner, name, part):
        original = getattr(owner, name)

        def run(*a, **k):
            began = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent[part] = spent.get(part, 0.0) + time.perf_counter() - began
        setattr(owner, name, run)

    timed(sql, "table_of", "table_of")
    timed(sheet_tables, "_write_table", "insert")
    timed(sql, "_sheets", "sheet cut from its chunks")

    with tempfile.TemporaryDirectory(prefix="sheet-tables-") as scratch:
        work = Path(scratch)
        csv = work / "sales.csv"
        csv.write_text(csv_text(args.rows))
        began = time.perf_counter()
        text = read_csv(csv.read_bytes()).text
        read_s = time.perf_counter() - began
        doc = Document("sales.csv", str(csv), "csv", text, csv.stat().st_size, language="en")
        chunks = {doc.doc_id: chunks_of(doc.doc_id, text, "csv")}
        segment = work / "seg-1"
        segment.mkdir()
        began = time.perf_counter()
        sheet_tables.write_tables(segment / sheet_tables.TABLES, [doc], chunks)
        write_s = time.perf_counter() - began
        stored_bytes = (segment / sheet_tables.TABLES).stat().st_size
        copy = work / "seg-2"
        copy.mkdir()
        began = time.perf_counter()
        sheet_tables.write_tables(copy / sheet_tables.TABLES, [doc], chunks, donors=[segment])
        copy_s = time.perf_counter() - began

        tables = sheet_tables.SheetTables(segment / sheet_tables.TABLES)
        began = time.perf_counter()
        stored = tables.sheet(doc.doc_id)
        stored.connection()
        open_s = time.perf_counter() - began
        assert len(stored.rows) == args.rows, len(stored.rows)

        rows = [["stored", "read the CSV (localcr's reader)", f"{read_s:.2f} s", ""],
                ["stored", "write_tables, all", f"{write_s:.2f} s",
                 f"{stored_bytes / 1e6:.1f} MB tables.sqlite ({stored_bytes / csv.stat().st_size:.2f}x the CSV's "
                 f"{csv.stat().st_size / 1e6:.1f} MB)"]]
        rows += [["stored", f"  of which {part}", f"{seconds:.2f} s", ""] for part, seconds in spent.items()]
        rows += [["stored", "copied to the next segment (unchanged chunks)", f"{copy_s:.2f} s", ""],
                 ["question", "open the stored table (catalog, file, view)", f"{open_s * 1000:.1f} ms", ""]]
        results = {}
        for name, query in QUERIES:
            first, fastest, (_, result) = best(lambda: sql.run_query(stored, query))
            results[name] = result
            rows.append(["question", f"{name}: `{query}`", f"{fastest * 1000:.0f} ms (first {first * 1000:.0f})",
                         sql.result_shown(result)[:60]])
        first, fastest, grammar = best(lambda: sql.sql_grammar(stored), times=1)
        rows.append(["question", "sql_grammar (3 text columns' values from the catalog)",
                     f"{fastest * 1000:.0f} ms (first {first * 1000:.0f})", f"{len(grammar) / 1000:.0f} K chars"])
        first, fastest, _ = best(lambda: {line: i for i, line in enumerate(stored.lines)}, times=1)
        rows.append(["question", "every row's line read (sql_answer's map of the lines it names)",
                     f"{fastest * 1000:.0f} ms (first {first * 1000:.0f})", ""])
        counted = QUERIES[0][1]
        first, fastest, _ = best(lambda: sql.behind_rows(stored, counted, results[QUERIES[0][0]]), times=1)
        rows.append(["question", "behind_rows of the COUNT", f"{fastest * 1000:.0f} ms (first {first * 1000:.0f})", ""])

        began = time.perf_counter()
        rebuilt = sql.table_of(sql._sheets(chunks[doc.doc_id], "csv")[0][3])
        rebuild_s = time.perf_counter() - began
        began = time.perf_counter()
        rebuilt.connection()
        load_s = time.perf_counter() - began
        for name, query in QUERIES:
            assert sql.run_query(rebuilt, query)[1] == results[name], name  # the same answers either way
        rows.append(["before", "rebuilt from the chunks and loaded in memory, every question",
                     f"{rebuild_s + load_s:.2f} s ({rebuild_s:.2f} + {load_s:.2f})", ""])

    out = "\n".join([
        f"# A sheet's table stored at index time: {args.rows:,} rows, 6 columns (benchmarks/speed/sheet_tables.py)",
        "",
        f"Machine: {machine()}; CPU model name (lscpu): {cpu_name()}; load average {load:.1f} when it started (a"
        f" shared machine). Peak memory {peak_rss_mb():.0f} MB (the"
        " reader's text, its chunks and the typed table in memory at once, then the table rebuilt to compare).",
        "Timed: localcr's CSV reader and the table's part of writing a segment (`write_tables`: the sheet cut from"
        f" its chunks, {CHUNK_LINES} lines a chunk, typed by `table_of`, inserted), not a full `localcr index` (its"
        " embedding of a million rows takes hours here). Queries run through `run_query` on the stored file, opened"
        " read-only and immutable, nothing loaded; each the best of 3 after a first run; the rebuilt in-memory table"
        " gives every one the same result.",
        "",
        table(["when", "what", "time", "size / result"], rows),
        "",
    ])
    print(out)
    if not args.no_write:
        write_results("sheet_tables", args.label, out)


def cpu_name() -> str:
    import subprocess

    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "unknown")


if __name__ == "__main__":
    main()
