"""Answers from tables and the text around them (tatqa-dev: passages of real annual reports), by answer type and
rendering: is `localcr ask` right where a question needs arithmetic, and does it still read spans well?

    .venv/bin/python benchmarks/answers/tables.py --data ../shared/data [--renderings md,txt] [--halves tune,held-out]
        [--per-type arithmetic=30,span=15,multi-span=8,count=4] [--no-compute] [--answers FILE]
    .venv/bin/python benchmarks/answers/tables.py --data ../shared/data --reading

With --reading no question is asked: the table shows how many passages of each rendering the table reader
(localcr.answers.tables) finds a table in, and how many of those tables keep a column whose head it did not find.

Each rendering (`md/`: pipe tables; `txt/`: a PDF's text layer, a row's label then its cells) is indexed with
structural contexts (no LLM at index time) under --work and reused. The documents are split in two halves by their
number: even ones are the "tune" half (where rules and defaults are chosen), odd ones the "held-out" half (reported
beside it). From each half a seeded sample of each answer type is asked, each question kept to its document
(`--glob DOC`), as `localcr ask` asks it. Scored as the set's README says: a number of the answer within 1% of the
gold (with or without its scale), or every gold span inside the answer (lower-cased, `$`, commas and punctuation
dropped); a refusal is wrong. A computed answer is scored on the result it states, not on the work it shows after
it (its formula's figures, its SQL, the rows it lists: `stated`). Also counted: answers computed from the tables,
and computed answers the check withdrew. Table to stdout and benchmarks/results/tables[-SUFFIX].md; each answer on stderr, and with --answers FILE
as a JSON line.
"""
from __future__ import annotations

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

from _common import ANSWERS_SEED, append_answer, machine, parser, stated, table, write_results  # noqa: E402

TYPES = ("arithmetic", "span", "multi-span", "count")
HALVES = ("tune", "held-out")
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "percent": 1.0, "": 1.0}
_NUMBER = re.compile(r"\(?-?[$€£]?\s?\d[\d,]*(?:\.\d+)?\)?")


def half_of(doc: str) -> str:
    """The half a document is in: even report numbers tune, odd ones are held out."""
    return HALVES[int(re.search(r"(\d+)", Path(doc).name)[1]) % 2]


def numbers_in(text: str) -> list[float]:
    """The numbers an answer writes, a parenthesised or minus-signed one negative; citations ([2]) are no number."""
    text = re.sub(r"\[\d+(?:,\s*\d+)*\]", " ", text)
    found = []
    for match in _NUMBER.finditer(text):
        shown = match[0]
        digits = re.sub(r"[^\d.]", "", shown).rstrip(".")
        if not digits or digits.count(".") > 1:
            continue
        value = float(digits)
        found.append(-value if shown.lstrip("$€£ ").startswith(("-", "(")) else value)
    return found


def normalised(text: str) -> str:
    text = re.sub(r"\[\d+(?:,\s*\d+)*\]", " ", text.lower()).replace("$", "").replace(",", "")
    text = re.sub(r"[^\w\s.%-]|(?<!\d)\.|\.(?!\d)", " ", text)
    return " ".join(text.split())


def right(query: dict, answer) -> bool:
    if answer.refused:
        return False
    text = stated(answer.text, answer.note)
    if query["answer_type"] in ("arithmetic", "count"):
        gold = float(query["answer"])
        scaled = gold * SCALES.get(query["scale"], 1.0)
        return any(abs(n - g) <= 0.01 * abs(g) + 1e-9 for n in numbers_in(text) for g in (gold, scaled))
    said = normalised(text)
    return all(normalised(str(span)) in said for span in query["answer"])


def indexed(data: Path, work: Path, rendering: str):
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    directory = work / "tables" / f"index-tatqa-{rendering}"
    build_index([str(data / "tatqa-dev" / rendering / "docs")], directory, registry, contexts="structural",
                progress=False, log=lambda message: None)
    return Index(directory, registry)


def sample(queries: list[dict], half: str, per_type: dict[str, int]) -> list[dict]:
    chosen = []
    for kind in TYPES:
        of_kind = [q for q in queries if q["answer_type"] == kind and half_of(q["doc"]) == half]
        random.Random(ANSWERS_SEED).shuffle(of_kind)
        chosen += of_kind[:per_type.get(kind, 0)]
    return chosen


def reading(data: Path, rendering: str) -> list:
    """[rendering, passages, passages with a table, tables, tables with a column of no head] of the whole set."""
    from localcr.answers.tables import tables_in

    files = sorted((data / "tatqa-dev" / rendering / "docs").iterdir())
    found = [tables_in(path.read_text(encoding="utf-8")) for path in files]
    tables = [table for each in found for table in each]
    headless = sum(not all(cell.headed for cell in table.cells()) for table in tables)
    return [rendering, len(files), sum(bool(each) for each in found), len(tables), headless]


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--renderings", default="md,txt")
    p.add_argument("--halves", default=",".join(HALVES))
    p.add_argument("--per-type", default="arithmetic=30,span=15,multi-span=8,count=4",
                   help="questions of each answer type asked from each half")
    p.add_argument("--no-compute", action="store_true", help="ask with compute=False: the reader alone")
    p.add_argument("--answers", type=Path, help="append each answer to this file as a JSON line")
    p.add_argument("--label", default="", help="a suffix for the results file (e.g. before)")
    p.add_argument("--reading", action="store_true", help="only count the tables the reader finds; ask nothing")
    args = p.parse_args()
    if args.reading:
        head = ["rendering", "passages", "with a table", "tables", "with a column of no head"]
        print(table(head, [reading(args.data, rendering) for rendering in args.renderings.split(",")]))
        return
    per_type = {k: int(v) for k, v in (item.split("=") for item in args.per_type.split(","))}
    options = {"compute": False} if args.no_compute else {}
    rows, timings, rates = [], [], []
    for rendering in args.renderings.split(","):
        index = indexed(args.data, args.work, rendering)
        queries = [json.loads(line) for line in (args.data / "tatqa-dev" / rendering / "queries.jsonl").open()]
        doc_ids = {Path(d).name: d for d in index.store.doc_ids()}
        for half in args.halves.split(","):
            scores: dict[str, list[bool]] = {kind: [] for kind in TYPES}
            computed = withdrawn = 0
            for query in sample(queries, half, per_type):
                glob = doc_ids.get(Path(query["doc"]).name, "*" + Path(query["doc"]).name)
                started = time.perf_counter()
                answer = index.ask(query["query"], glob=glob, **options)
                took = time.perf_counter() - started
                ok = right(query, answer)
                scores[query["answer_type"]].append(ok)
                is_computed = "computed in Python" in answer.note
                computed += is_computed
                withdrawn += "a computed answer was withdrawn" in answer.note
                if not answer.cached:
                    timings.append(took)
                    if answer.timings.get("prompt_tokens") and answer.timings.get("total_s"):
                        rates.append(answer.timings["prompt_tokens"] / answer.timings["total_s"])
                print(f"{rendering}/{half} {query['answer_type']}: {query['query']!r} gold {query['answer']!r} -> "
                      f"{' '.join(answer.text.split())[:160]!r} {'RIGHT' if ok else 'wrong'}"
                      f"{' computed' if is_computed else ''} {took:.1f}s", file=sys.stderr, flush=True)
                append_answer(args.answers, {"rendering": rendering, "half": half, **query, "said": answer.text,
                                             "refused": answer.refused, "note": answer.note, "right": ok,
                                             "seconds": round(took, 2)})
            every = [ok for kind in TYPES for ok in scores[kind]]
            rows.append([rendering, half] + [f"{sum(scores[k])}/{len(scores[k])}" for k in TYPES]
                        + [f"{100 * sum(every) / max(1, len(every)):.1f}", computed, withdrawn])
    head = ["rendering", "half", *TYPES, "all %", "computed", "withdrawn"]
    out = table(head, rows)
    seconds = f"median {statistics.median(timings):.1f} s a question" if timings else "all cached"
    text = (f"tatqa-dev, {'--no-compute' if args.no_compute else 'defaults'}, per type per half: {args.per_type}\n\n"
            f"{out}\n\n{machine()}; {seconds}\n")
    print(text)
    write_results("tables", args.label, text)


if __name__ == "__main__":
    main()
