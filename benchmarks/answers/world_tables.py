"""Answers over tables as people have them (issue 84): reports, sheets, web pages and lab notes in eight languages and
every reader's format, by format, language and kind of question: does `localcr ask` read "45.210" in Mio. € as
forty-five thousand million, a margin's change in points, and leave an n/a cell uncomputed?

    .venv/bin/python benchmarks/answers/world_tables.py [--out benchmarks/data/world-tables] [--work DIR]
        [--limit N] [--no-compute] [--answers FILE] [--label LABEL]

The set is written by benchmarks/data/world_tables.py (run here when --out holds no questions.jsonl), indexed with
structural contexts (no LLM at index time) under --work, and each question is asked as `localcr ask` asks it, kept
to its document (`--glob DOC`). --limit asks a seeded sample of N. Scored as tables.py scores: a number of the
answer within 1% of the gold, in the table's scale or the plain amount (3334 or 3,334,000,000), each number read
in both conventions ("3.334" is 3.334 or 3334; "0,7" is 0.7; space, no-break space and apostrophe thousands); a
ratio may be said as a share or in percent. The sign is not scored: a loss or a fall is said in words as often as
with a minus. A percentage-point question is right with the number however the unit is worded. A refusal is wrong,
except for a "refuse" question (an operand is n/a, n.m., k. A. ...), which is right when nothing was computed in
Python: refused, or read by the model. Counted as well: answers computed from the tables, and those of them that
are wrong. Tables to stdout and benchmarks/results/world-tables[-LABEL].md; each answer on stderr, and with
--answers FILE as a JSON line.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import ANSWERS_SEED, append_answer, machine, table, write_results

COMPUTED = "computed in Python"  # the note of an answer computed from the tables (localcr.answers.route)
KINDS = ("lookup", "change", "percent-change", "points", "ratio", "sum", "average", "difference", "refuse")
# A number as answers write it, its thousands joined by a dot, comma, apostrophe or a space before three digits.
_NUMBER = re.compile(r"\d+(?:(?:[.,'’]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d+)*")
_CITATION = re.compile(r"\[\d+(?:,\s*\d+)*\]")


def generator():
    """benchmarks/data/world_tables.py, loaded by its path: this script has the same module name."""
    spec = importlib.util.spec_from_file_location("world_tables_data", ROOT / "benchmarks" / "data" / "world_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def readings(text: str) -> set[float]:
    """Every value the numbers of an answer may stand for, read with a decimal point and with a decimal comma
    ("3.334" is 3.334 or 3334, "1,234.5" only 1234.5, "12 345,6" only 12345.6); citations ([2]) are no number."""
    values = set()
    for match in _NUMBER.finditer(_CITATION.sub(" ", text)):
        token = re.sub(r"[ \u00a0\u202f'’]", "", match[0])
        for group, decimal in ((",", "."), (".", ",")):
            whole, _, fraction = token.partition(decimal)
            if decimal in fraction or group in fraction:
                continue
            if group in whole and not re.fullmatch(rf"\d{{1,3}}(?:{re.escape(group)}\d{{3}})+", whole):
                continue
            values.add(float(whole.replace(group, "") + "." + (fraction or "0")))
    return values


def right(question: dict, answer) -> bool:
    computed = COMPUTED in answer.note
    if question["kind"] == "refuse":
        return answer.refused or not computed
    if answer.refused:
        return False
    gold = abs(question["answer"])
    golds = {gold, gold * question["scale"]}
    if question["kind"] == "ratio" and question["unit"] in ("", "%"):  # a share said in percent, or the other way
        golds |= {g * (0.01 if question["unit"] else 100) for g in golds}
    return any(abs(value - g) <= 0.01 * g + 1e-9 for value in readings(answer.text) for g in golds)


def indexed(docs: Path, work: Path):
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    directory = work / "world-tables" / f"index-{docs.parent.name}"
    build_index([str(docs)], directory, registry, contexts="structural", progress=False, log=lambda message: None)
    return Index(directory, registry)


def summary(records: list[dict], key: str, order) -> str:
    """One row per value of `key` (format, language or kind) and one for all: right of asked, computed, computed
    and wrong, refused."""
    groups = [(value, [r for r in records if r[key] == value]) for value in order]
    rows = []
    for value, of in [group for group in groups if group[1]] + [("all", records)]:
        ok = sum(r["right"] for r in of)
        rows.append([value, f"{ok}/{len(of)}", 100 * ok / len(of), sum(r["computed"] for r in of),
                     sum(r["computed"] and not r["right"] for r in of), sum(r["refused"] for r in of)])
    return table([key, "right", "right %", "computed", "computed, wrong", "refused"], rows)


def main() -> None:
    world = generator()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=world.DEFAULT_OUT,
                   help="the set's folder (the set is written there if it holds no questions.jsonl)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory for the index")
    p.add_argument("--limit", type=int, help="ask a seeded sample of this many questions")
    p.add_argument("--no-compute", action="store_true", help="ask with compute=False: the reader alone")
    p.add_argument("--answers", type=Path, help="append each answer to this file as a JSON line")
    p.add_argument("--label", default="", help="a suffix for the results file (e.g. before)")
    args = p.parse_args()
    if not (args.out / "questions.jsonl").is_file():
        world.generate(args.out)
    questions = [json.loads(line) for line in (args.out / "questions.jsonl").open(encoding="utf-8")]
    if args.limit is not None:
        random.Random(ANSWERS_SEED).shuffle(questions)
        questions = questions[:args.limit]
    index = indexed(args.out / "docs", args.work)
    doc_ids = {Path(d).name: d for d in index.store.doc_ids()}
    options = {"compute": False} if args.no_compute else {}
    records, timings, rates = [], [], []
    for question in questions:
        name = Path(question["file"]).name
        started = time.perf_counter()
        answer = index.ask(question["question"], glob=doc_ids.get(name, "*" + name), **options)
        took = time.perf_counter() - started
        ok = right(question, answer)
        computed = COMPUTED in answer.note
        records.append({**question, "right": ok, "computed": computed, "refused": answer.refused})
        if not answer.cached:
            timings.append(took)
            if answer.timings.get("prompt_tokens") and answer.timings.get("first_token_s"):
                rates.append(answer.timings["prompt_tokens"] / answer.timings["first_token_s"])
        print(f"{question['id']} {question['kind']}: {question['question']!r} gold {question['answer']!r} "
              f"{question['unit']} -> {' '.join(answer.text.split())[:160]!r} {'RIGHT' if ok else 'wrong'}"
              f"{' computed' if computed else ''} {took:.1f}s", file=sys.stderr, flush=True)
        append_answer(args.answers, {**question, "said": answer.text, "refused": answer.refused, "note": answer.note,
                                     "right": ok, "seconds": round(took, 2)})
    documents = len({q["file"] for q in questions})
    seconds = f"median {statistics.median(timings):.1f} s a question" if timings else "all cached"
    rate = f"; prompt {statistics.median(rates):.0f} tokens/s (median)" if rates else ""
    command = " ".join(["benchmarks/answers/world_tables.py", *sys.argv[1:]])
    text = (f"world tables (issue 84), {'--no-compute' if args.no_compute else 'defaults'}: {len(records)} questions "
            f"over {documents} documents; `.venv/bin/python {command}`\n\n"
            f"{summary(records, 'format', world.FORMATS.values())}\n\n"
            f"{summary(records, 'language', sorted({q['language'] for q in records}))}\n\n"
            f"{summary(records, 'kind', KINDS)}\n\n{machine()}; {seconds}{rate}\n")
    print(text)
    write_results("world-tables", args.label, text)


if __name__ == "__main__":
    main()
