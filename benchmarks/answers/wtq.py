"""Questions over whole tables in SQL (wtq-dev: WikiTableQuestions' Wikipedia tables as CSV files): how often
`localcr.answers.sql.sql_answer` alone, the bundled 1.5B writing one SELECT over the question's whole table, is right,
by kind of question (count; comparison or superlative; lookup), on a tune half and a held-out half of the tables.

    .venv/bin/python benchmarks/answers/wtq.py --data ../shared/data [--limit 40] [--halves tune,held-out]

The set's docs/ folder is indexed once under --work (structural contexts, no LLM at index time) and reused. The
tables are split in two halves by a hash of their file name (blake2b: an even first byte tunes, an odd one is held
out); every rule is chosen on the tune half alone, the held-out half is only reported. From each half a seeded sample
of --limit questions is asked, each kept to its own table: the search's hits over that file (`--glob`), then
sql_answer over the first that is a sheet. The kind of a question is read from its words ("how many" a count, unless
"how many more/less"; a superlative, "more", "than", "before", "after", "first", "last" ... a comparison; anything
else a lookup).

Scored as the set's README says, on the result the answer states (what comes before the SQL, not the rows listed
after it; before a table plan's formula, not its operands: `_common.stated`): right when every gold item is in it
(a number as an equal number, thousands separators ignored; text lower-cased, without diacritics, punctuation or a
trailing parenthesis); no answer is wrong. Also counted: `exact`, where the result's values are the gold items and
nothing more. Table to stdout and benchmarks/results/wtq.md; each answer on stderr, and with --answers FILE as a
JSON line; the seconds a question are those of the queries written afresh (a cached one takes only the search).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import statistics
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import ANSWERS_SEED, append_answer, machine, parser, stated, table, write_results

KINDS = ("count", "comparison", "lookup")
HALVES = ("tune", "held-out")
_COMPARISON = re.compile(
    r"\b(most|least|highest|lowest|largest|smallest|biggest|greatest|longest|shortest|best|worst|top|bottom|"
    r"first|last|more|less|fewer|than|before|after|previous|next|above|below|earliest|latest|oldest|newest|"
    r"maximum|minimum|max|min|difference|same|compared?|higher|lower|larger|smaller|longer|shorter|older|younger|"
    r"\w{3,}est)\b", re.IGNORECASE)
_NOT_SUPERLATIVE = {"interest", "west", "contest", "forest", "test", "honest", "request", "guest", "harvest", "nest",
                    "protest", "suggest", "midwest", "southwest", "northwest", "modest", "arrest", "manifest"}
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def half_of(doc: str) -> str:
    """The half a table is in: the first byte of a blake2b hash of its file name, even to tune, odd held out."""
    return HALVES[hashlib.blake2b(Path(doc).name.encode()).digest()[0] % 2]


def kind_of(question: str) -> str:
    """count, comparison (superlatives too) or lookup, by the question's words."""
    text = question.lower()
    if re.search(r"\bhow many (more|less|fewer)\b|\bdifference\b", text):
        return "comparison"
    if re.search(r"\bhow many\b|^(what|which) (is|was|were|are) the (total )?number of\b", text):
        return "count"
    words = [w for w in _COMPARISON.findall(text) if w not in _NOT_SUPERLATIVE]
    return "comparison" if words else "lookup"


def normalised(text: str) -> str:
    """Text as the set's evaluator compares it: lower-cased, no diacritics, no punctuation or trailing parenthesis."""
    text = unicodedata.normalize("NFKD", str(text).lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"\s*\([^)]*\)\s*$", "", text.strip())
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def number_of(text: str) -> float | None:
    text = str(text).strip()
    if not re.fullmatch(r"-?\d[\d,]*(?:\.\d+)?", text):
        return None
    return float(text.replace(",", ""))


def numbers_in(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in _NUMBER.findall(text) if m.strip(",")]


def holds(said: str, gold: str) -> bool:
    """Whether the stated result holds one gold item: an equal number, or its normalised text."""
    value = number_of(gold)
    if value is not None:
        return any(abs(n - value) < 1e-6 for n in numbers_in(said))
    return bool(normalised(gold)) and f" {normalised(gold)} " in f" {normalised(said)} "


def exact(values: list, answers: list[str]) -> bool:
    """The result's values are the gold items, and nothing more (as multisets, numbers compared as numbers)."""
    def key(item) -> str:
        number = item if isinstance(item, (int, float)) and not isinstance(item, bool) else number_of(str(item))
        return f"{float(number):g}" if number is not None else normalised(item)

    return sorted(key(v) for v in values) == sorted(key(a) for a in answers)


def result_said(answer) -> str:
    """The result an answer states: its first sentence before the SQL, without what it says was done."""
    first = answer.checked.sentences[0].text
    before = first.split(f" by: {answer.draft}")[0]
    return before.rsplit(", ", 1)[0]


class Counted:
    """The answerer's runner, counting the generations it runs (a query the cache held runs none)."""

    def __init__(self, runner):
        self.runner, self.generations = runner, 0

    def complete(self, *args, **kwargs):
        self.generations += 1
        return self.runner.complete(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.runner, name)


def indexed(data: Path, work: Path):
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    directory = work / "wtq" / "index-wtq-dev"
    build_index([str(data / "wtq-dev" / "docs")], directory, registry, contexts="structural", progress=False,
                log=lambda message: None)
    return Index(directory, registry)


def sample(queries: list[dict], half: str, limit: int) -> list[dict]:
    chosen = [q for q in queries if half_of(q["doc"]) == half]
    random.Random(ANSWERS_SEED).shuffle(chosen)
    return chosen[:limit]


def main() -> None:
    from localcr.answers import route, sql
    from localcr.answers.reader import load_answerer

    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=40, help="questions asked from each half")
    p.add_argument("--halves", default=",".join(HALVES))
    p.add_argument("--fresh", action="store_true", help="write every query again, not from the cache")
    p.add_argument("--answers", type=Path, help="append each answer to this file as a JSON line")
    p.add_argument("--label", default="", help="a suffix for the results file (e.g. before)")
    p.add_argument("--route", action="store_true",
                   help="ask as `localcr ask --glob` does (the route's decision, SQL or the reader), not SQL alone")
    args = p.parse_args()
    index = indexed(args.data, args.work)
    answerer = load_answerer(index.registry)
    queries = [json.loads(line) for line in (args.data / "wtq-dev" / "queries.jsonl").open(encoding="utf-8")]
    doc_ids = {Path(d).name: d for d in index.store.doc_ids()}
    rows, timings, runner = [], [], Counted(answerer.runner)
    routed: dict[bool, list[bool]] = {True: [], False: []}  # by SQL or not: whether each answer was right
    try:
        for half in args.halves.split(","):
            scores: dict[str, list[bool]] = {kind: [] for kind in KINDS}
            exacts, answered = 0, 0
            for query in sample(queries, half, args.limit):
                kind = kind_of(query["question"])
                doc = doc_ids.get(Path(query["doc"]).name, query["doc"])
                started, written = time.perf_counter(), runner.generations
                hits = index.search(query["question"], k=3, glob=doc)
                margin = None
                if args.route:
                    whole, _ = sql.whole_table(index, hits)
                    margin = route.whole_table_margin(answerer, query["question"], whole) if whole else None
                    answer = index.ask(query["question"], k=3, glob=doc, answerer=answerer, fresh=args.fresh)
                    answer = answer if not answer.refused else None
                    why = "" if answer else "refused"
                else:
                    answer, why = sql.sql_answer(index, query["question"], hits, runner,
                                                 model_name=answerer.spec.name, fresh=args.fresh)
                took = time.perf_counter() - started
                by_sql = bool(answer) and answer.note.startswith("computed in SQL")
                said = (result_said(answer) if by_sql else stated(answer.text, answer.note)) if answer else ""
                ok = bool(answer) and all(holds(said, gold) for gold in query["answers"])
                values = []
                if by_sql:
                    answered += 1
                    hit = next(h for h in hits if h.kind in ("csv", "tsv", "xlsx", "ods"))
                    found = sql.run_query(sql.sheet_table(index, hit.doc_id, (hit.start, hit.end)), answer.draft)[1]
                    values = [v for row in found for v in row]
                    exacts += exact(values, query["answers"])
                scores[kind].append(ok)
                if runner.generations > written or args.route:
                    timings.append(took)
                routed[by_sql].append(ok)
                print(f"{half} {kind}: {query['question']!r} gold {query['answers']!r} -> "
                      f"{said[:120] if answer else why[:160]!r} {'RIGHT' if ok else 'wrong'} {took:.1f}s"
                      f"{' | ' + answer.draft if answer else ''}", file=sys.stderr, flush=True)
                append_answer(args.answers, {"half": half, "kind": kind, **query, "said": said,
                                             "sql": answer.draft if by_sql else "", "why": why, "right": ok,
                                             "margin": margin, "by": "sql" if by_sql else "reader" if answer else "",
                                             "seconds": round(took, 2)})
            every = [ok for kind in KINDS for ok in scores[kind]]
            rows.append([half] + [f"{sum(scores[k])}/{len(scores[k])}" for k in KINDS]
                        + [f"{sum(every)}/{len(every)}", f"{100 * sum(every) / max(1, len(every)):.1f}",
                           f"{exacts}/{len(every)}", f"{answered}/{len(every)}"])
    finally:
        answerer.close()
    head = ["half", *KINDS, "right", "right %", "exact", "answered"]
    asked = sum(int(row[4].split("/")[1]) for row in rows)
    seconds = (f"{len(timings)} queries written afresh, median {statistics.median(timings):.1f} s a question"
               if timings else "no query written afresh") + f", {asked - len(timings)} from the cache"
    how = ("as `localcr ask --glob` asks (the route's decision, then SQL or the reader): "
           f"{sum(routed[True])}/{len(routed[True])} right in SQL, {sum(routed[False])}/{len(routed[False])} "
           "by the reader" if args.route else "sql_answer alone")
    text = (f"wtq-dev, {how} (the bundled {answerer.spec.name}, one SELECT under the table's grammar), "
            f"{args.limit} questions a half\n\n{table(head, rows)}\n\n{machine()}; {seconds}\n")
    print(text)
    write_results("wtq", args.label, text)


if __name__ == "__main__":
    main()
