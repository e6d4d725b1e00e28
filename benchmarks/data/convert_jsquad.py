"""Builds `jsquad-ja` (Japanese prose, read by the retrieval and answer benchmarks) from a snapshot of JGLUE.

    .venv/bin/python benchmarks/data/convert_jsquad.py SNAPSHOT OUT

SNAPSHOT is a checkout (or unpacked archive) of github.com/yahoojapan/JGLUE, commit
6f071c09316baae89c3d083a90985b4b1cb9968c (its `datasets/jsquad-v1.3/valid-v1.3.json` dates from 58f0e426, March
2025); the script reads only that file and downloads nothing. It writes OUT/jsquad-ja/ from the file's first 8
articles exactly as benchmarks/data/convert_xquad.py writes an XQuAD language (same corpus.json and queries.jsonl;
a paragraph keeps JSQuAD's "TITLE [SEP] " opening; a question's `answer` is its first), with the ids of
benchmarks/data/squad_ids.json. From that commit the output is byte for byte the `jsquad-ja` of ../shared/data
(8 articles, 416 paragraphs, 1,687 questions). Licence of the data: CC BY-SA 4.0.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _snapshot import snapshot_parser  # noqa: E402
from convert_xquad import build, write  # noqa: E402

VALID = "datasets/jsquad-v1.3/valid-v1.3.json"
NAME = "jsquad-ja"
ARTICLES = 8


def convert(snapshot: Path, out: Path, articles: int = ARTICLES) -> Path:
    squad = json.loads((snapshot / VALID).read_text(encoding="utf-8"))
    return write(out / NAME, *build(squad, NAME, articles))


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "yahoojapan/JGLUE", "the set is written to OUT/jsquad-ja")
    args = parser.parse_args(argv)
    if not (args.snapshot / VALID).is_file():
        sys.exit(f"{args.snapshot}: no {VALID}; give a checkout of github.com/yahoojapan/JGLUE")
    print(convert(args.snapshot, args.out))


if __name__ == "__main__":
    main()
