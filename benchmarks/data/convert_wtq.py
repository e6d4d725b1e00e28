"""Builds `wtq-dev` (the whole-table set benchmarks/answers/wtq.py reads) from a snapshot of WikiTableQuestions.

    .venv/bin/python benchmarks/data/convert_wtq.py SNAPSHOT OUT

SNAPSHOT is a checkout (or unpacked archive) of github.com/ppasupat/WikiTableQuestions, commit
7d455a5a707b96341ef72aff9428749d443d8aa9 (the first with `misc/table-metadata.tsv`); the script reads only
`data/random-split-1-dev.tsv`, the tables it names under `csv/` and `misc/table-metadata.tsv`, and downloads nothing.
It writes OUT/wtq-dev/:

- `docs/t-GROUP-N.csv`: `csv/GROUP-csv/N.csv` byte for byte, for each table a question names;
- `queries.jsonl`: one question a line in the TSV's order, `{"id", "question", "doc", "answers"}`, the answer list
  being the TSV's `targetValue` split on `|` with its escapes (`\\n`, `\\p`, `\\\\`) undone;
- `tables.jsonl`: `{"doc", "title", "section"}` for each table in the order questions first name it, the title and
  the section headings (joined by " > ") from `misc/table-metadata.tsv`.

From that commit the output is byte for byte the `wtq-dev` of ../shared/data (346 tables, 2,831 questions), less its
README.md (the set's description, which no benchmark reads). Licence of the data: CC BY-SA 4.0.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from _snapshot import snapshot_parser

SPLIT = "data/random-split-1-dev.tsv"
METADATA = "misc/table-metadata.tsv"
NAME = "wtq-dev"


def unescaped(field: str) -> str:
    """A TSV field of the dataset as it was written: `\\n` a newline, `\\p` a pipe, `\\\\` a backslash."""
    return re.sub(r"\\([np\\])", lambda m: {"n": "\n", "p": "|", "\\": "\\"}[m.group(1)], field)


def tsv(path: Path) -> list[dict[str, str]]:
    """A TSV file of the dataset, one dict a line by the header's names (fields still escaped)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"))) for line in lines[1:] if line]


def doc_name(context: str) -> str:
    """csv/204-csv/772.csv -> docs/t-204-772.csv"""
    match = re.fullmatch(r"csv/(\d+)-csv/(\d+)\.csv", context)
    if not match:
        raise SystemExit(f"unexpected table path in {SPLIT}: {context!r}")
    return f"docs/t-{match.group(1)}-{match.group(2)}.csv"


def line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def convert(snapshot: Path, out: Path) -> Path:
    target = out / NAME
    (target / "docs").mkdir(parents=True, exist_ok=True)
    examples = tsv(snapshot / SPLIT)
    metadata = {row["contextId"]: row for row in tsv(snapshot / METADATA)}
    queries, tables = [], {}
    for example in examples:
        doc = doc_name(example["context"])
        queries.append({"id": example["id"], "question": unescaped(example["utterance"]), "doc": doc,
                        "answers": [unescaped(item) for item in example["targetValue"].split("|")]})
        if doc not in tables:
            tables[doc] = example["context"]
    rows = []
    for doc, context in tables.items():
        shutil.copyfile(snapshot / context, target / doc)
        meta = metadata[context]
        headers = [unescaped(item) for item in meta["headers"].split("|")] if meta["headers"] else []
        rows.append({"doc": doc, "title": unescaped(meta["title"]), "section": " > ".join(headers)})
    (target / "queries.jsonl").write_text("".join(map(line, queries)), encoding="utf-8", newline="")
    (target / "tables.jsonl").write_text("".join(map(line, rows)), encoding="utf-8", newline="")
    return target


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "ppasupat/WikiTableQuestions", "the set is written to OUT/wtq-dev")
    args = parser.parse_args(argv)
    if not (args.snapshot / SPLIT).is_file():
        sys.exit(f"{args.snapshot}: no {SPLIT}; give a checkout of github.com/ppasupat/WikiTableQuestions")
    print(convert(args.snapshot, args.out))


if __name__ == "__main__":
    main()
