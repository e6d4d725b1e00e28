"""Builds `tatqa-dev` (tables with the text around them, read by benchmarks/answers/tables.py and routing.py) from a
snapshot of TAT-QA.

    .venv/bin/python benchmarks/data/convert_tatqa.py SNAPSHOT OUT

SNAPSHOT is a checkout (or unpacked archive) of github.com/NExTplusplus/TAT-QA, commit
870accc41953dcde885aabeb963d94aabdc0fbc3 (its dev split dates from ec12a30c, May 2021); the script reads only
`dataset_raw/tatqa_dataset_dev.json` and downloads nothing. It writes OUT/tatqa-dev/, one document a passage
(`report-NNN`, NNN its place in the file from 000):

- `md/docs/report-NNN.md`: the paragraphs in their `order`, a blank line apart, the table as a pipe table (cells
  stripped, a `|---|` line after the first row) after the first paragraph that ends with ":", else after the last;
- `txt/docs/report-NNN.txt`: the same with the table as a PDF's text layer gives it, a row's non-empty cells
  separated by a space, rows with no text left out;
- `md/queries.jsonl`, `txt/queries.jsonl`: each passage's questions in their `order`, `{"id", "query", "doc",
  "answer", "answer_type", "answer_from", "scale", "derivation"}` (`doc` ending in .md or .txt), ASCII-escaped JSON.

From that commit the output is byte for byte the `tatqa-dev` of ../shared/data (278 passages, 1,668 questions), less
its README.md (the set's description, which no benchmark reads). Licence of the data: CC BY 4.0.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from _snapshot import snapshot_parser

DEV = "dataset_raw/tatqa_dataset_dev.json"
NAME = "tatqa-dev"


def markdown_table(rows: list[list[str]]) -> str:
    width = max(len(row) for row in rows)
    lines = ["| " + " | ".join(cell.strip() for cell in row) + " |" for row in rows]
    lines.insert(1, "|" + "|".join(["---"] * width) + "|")
    return "\n".join(lines)


def text_layer_table(rows: list[list[str]]) -> str:
    cells = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    return "\n".join(" ".join(row) for row in cells if row)


def passage(item: dict, table: str) -> str:
    """The paragraphs with the table after the one that introduces it (ends with ":"), else after them all."""
    parts, placed = [], False
    for paragraph in sorted(item["paragraphs"], key=lambda p: p["order"]):
        parts.append(paragraph["text"])
        if not placed and paragraph["text"].rstrip().endswith(":"):
            parts.append(table)
            placed = True
    if not placed:
        parts.append(table)
    return "\n\n".join(parts) + "\n"


def convert(snapshot: Path, out: Path) -> Path:
    items = json.loads((snapshot / DEV).read_text(encoding="utf-8"))
    target = out / NAME
    for kind, render in (("md", markdown_table), ("txt", text_layer_table)):
        (target / kind / "docs").mkdir(parents=True, exist_ok=True)
        lines = []
        for number, item in enumerate(items):
            doc = f"docs/report-{number:03d}.{kind}"
            (target / kind / doc).write_text(passage(item, render(item["table"]["table"])), encoding="utf-8",
                                             newline="")
            for question in sorted(item["questions"], key=lambda q: q["order"]):
                lines.append(json.dumps({"id": question["uid"], "query": question["question"], "doc": doc,
                                         "answer": question["answer"], "answer_type": question["answer_type"],
                                         "answer_from": question["answer_from"], "scale": question["scale"],
                                         "derivation": question["derivation"]}) + "\n")
        (target / kind / "queries.jsonl").write_text("".join(lines), encoding="utf-8", newline="")
    return target


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "NExTplusplus/TAT-QA", "the set is written to OUT/tatqa-dev")
    args = parser.parse_args(argv)
    if not (args.snapshot / DEV).is_file():
        sys.exit(f"{args.snapshot}: no {DEV}; give a checkout of github.com/NExTplusplus/TAT-QA")
    print(convert(args.snapshot, args.out))


if __name__ == "__main__":
    main()
