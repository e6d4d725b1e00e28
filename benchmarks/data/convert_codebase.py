"""Builds `anthropic-codebase` (the codebase set of the contextual-retrieval benchmarks) from a snapshot of
Anthropic's cookbook.

    .venv/bin/python benchmarks/data/convert_codebase.py SNAPSHOT OUT

SNAPSHOT is a checkout (or unpacked archive) of github.com/anthropics/anthropic-cookbook, commit
4b36a1e1f64361397f4cbe4fbc7cdace338f16f8 (its data dates from 0284cf06, September 2024); the script downloads
nothing. The set is the cookbook's own files, unchanged: it copies `skills/contextual-embeddings/data/`'s
`codebase_chunks.json` (90 files, 737 chunks) and `evaluation_set.jsonl` (248 queries) to OUT/anthropic-codebase/,
after checking each parses and every gold chunk a query names is in the corpus. From that commit the output is byte
for byte the `anthropic-codebase` of ../shared/data. Licence: MIT.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from _snapshot import snapshot_parser

DATA = "skills/contextual-embeddings/data"
FILES = ("codebase_chunks.json", "evaluation_set.jsonl")
NAME = "anthropic-codebase"


def convert(snapshot: Path, out: Path) -> Path:
    source = snapshot / DATA
    corpus = json.loads((source / FILES[0]).read_text(encoding="utf-8"))
    chunks = {(doc["original_uuid"], chunk["original_index"]) for doc in corpus for chunk in doc["chunks"]}
    for number, text in enumerate((source / FILES[1]).read_text(encoding="utf-8").splitlines(), 1):
        if text.strip():
            unknown = [pair for pair in json.loads(text)["golden_chunk_uuids"] if tuple(pair) not in chunks]
            if unknown:
                sys.exit(f"{FILES[1]} line {number}: gold chunks not in {FILES[0]}: {unknown}")
    target = out / NAME
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(source / name, target / name)
    return target


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "anthropics/anthropic-cookbook", "the set is written to OUT/anthropic-codebase")
    args = parser.parse_args(argv)
    if not all((args.snapshot / DATA / name).is_file() for name in FILES):
        sys.exit(f"{args.snapshot}: no {DATA}/{FILES[0]}; give a checkout of github.com/anthropics/anthropic-cookbook")
    print(convert(args.snapshot, args.out))


if __name__ == "__main__":
    main()
