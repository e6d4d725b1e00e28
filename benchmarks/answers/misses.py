"""Where answers miss (issue 58; benchmarks/results/superseded/notebook-2026-11.md, "Answers, part thirteen"): each
answer of an answers.py --answers file sorted into right, gold not in what the model read, refused by the model,
withdrawn by the check, or wrong. No LLM: it reads the file.

    .venv/bin/python benchmarks/answers/answers.py --data ../shared/data --sets xquad-en --limit 500 --refusals 0 --answers F
    .venv/bin/python benchmarks/answers/misses.py F [--ranges 0-99,100-199,200-299,300-499]

A row per set and range of places in the sample (0-based, inclusive). "Gold not in what the model read": no source,
as the model read it, holds the normalised gold. XQuAD and JSQuAD only (short gold answers). "Refused by the model": it wrote the
refusal word; "withdrawn": the check turned its answer into a refusal. Table to stdout.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import table  # noqa: E402

KINDS = ("right", "gold not in what the model read", "refused by the model", "withdrawn by the check", "wrong or partial")


def kind(answer: dict, language: str) -> str:
    """What became of one answer (a JSON line of answers.py --answers)."""
    from localcr.answers.reader import answer_part, is_refusal
    from localcr.evaluation.answers import contains

    if answer["scores"]["contains"]:
        return "right"
    if not any(contains(source, answer["gold"], language) for source in answer["sources"]):
        return "gold not in what the model read"
    if answer["refused"]:
        return "refused by the model" if is_refusal(answer_part(answer["draft"])) else "withdrawn by the check"
    return "wrong or partial"


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("answers", type=Path, help="a file answers.py --answers wrote")
    p.add_argument("--ranges", default="0-99,100-199,200-299,300-499", help="places in the sample, 0-based, inclusive")
    args = p.parse_args()
    ranges = [tuple(map(int, r.split("-"))) for r in args.ranges.split(",")]
    counts: dict[tuple[str, str], dict[str, int]] = {}
    with open(args.answers, encoding="utf-8") as lines:
        for answer in map(json.loads, filter(str.strip, lines)):
            if not answer["set"].startswith(("xquad", "jsquad")) or "sources" not in answer:
                continue  # a set without short gold answers, or a file from before answers.py recorded the sources
            language = "ja" if answer["set"].startswith("jsquad") else answer["set"].split("-")[-1]
            for lo, hi in ranges:
                if lo <= answer["place"] <= hi:
                    row = counts.setdefault((answer["set"], f"{lo + 1}-{hi + 1}"), dict.fromkeys(KINDS, 0))
                    row[kind(answer, language)] += 1
    print(table(["set", "questions (1-based)", *KINDS], [[*key, *row.values()] for key, row in counts.items()]))


if __name__ == "__main__":
    main()
