"""The computing route of `localcr ask` alone (localcr.answers.route: arithmetic over the hits' tables, then a filing's
figure by localcr.answers.figures, each checked): for each question whose reference states a figure, is its key
figure what the computed answer says, is the answer wrong, was it withdrawn by the check, or does the route give
none (in the last two cases the reader answers)? A diagnostic of the path's table reading: the plans are the LLM's (cached after the first run, so a rerun
loads no model and takes seconds), every operand is read and computed in Python.

    .venv/bin/python benchmarks/answers/figures_path.py --data ../shared/data [--sets financebench-dev,financebench-heldout] [-v]

Questions, indexes and cache as benchmarks/answers/answers.py has them (structural contexts, the index and the
plans reused from --work). Table to stdout and benchmarks/results/figures_path[-SETS].md; with -v each question's mark on stderr.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_sample, machine, parser, results_suffix, table  # noqa: E402

SETS = ("financebench-dev", "financebench-heldout")
HEAD = ["set", "questions with a key figure", "right", "wrong", "withdrawn", "none (the reader answers)"]


def measure(set_name: str, args) -> list:
    from localcr.answers.reader import DEFAULT_SOURCES, load_answerer
    from localcr.answers.route import computed_answer
    from localcr.evaluation.answers import key_figure, states_figure

    registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, None)
    answerer = load_answerer(registry, args.llm)
    marks = {"right": 0, "wrong": 0, "withdrawn": 0, "none": 0}
    for query in sorted(sampled, key=lambda q: q.qid):
        figure = key_figure(str(query.answer))
        if figure is None:
            continue
        answer, withdrawn = computed_answer(index, query.text, index.search(query.text, DEFAULT_SOURCES), answerer,
                                            search_options={})
        mark = ("withdrawn" if withdrawn else "none") if answer is None else \
            "right" if states_figure(answer.text, figure) else "wrong"
        marks[mark] += 1
        if args.verbose:
            print(f"{set_name} {query.qid} {mark}: {query.text[:90]!r} -> {answer.text[:160] if answer else withdrawn!r}",
                  file=sys.stderr)
    answerer.close()
    return [set_name, sum(marks.values()), *marks.values()]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--llm", help="the LLM that plans (default: models.toml's)")
    p.add_argument("-v", "--verbose", action="store_true", help="each question's mark on stderr")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))  # answers.py's: its plans are reused
    rows = [measure(name, args) for name in args.sets.split(",")]
    text = f"machine: {machine()}\n\n" + table(HEAD, rows)
    print(text)
    out = ROOT / "benchmarks" / "results" / f"figures_path{results_suffix(args.sets, SETS)}.md"
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
