"""How close the sources `localcr ask` reads come to the question in the index's embedding (the cosine of its
closest two sentences in a row, localcr.answers.reader.closest_window), for questions asked with their gold
documents filtered out and for the same questions as asked: what RETRY_SIMILARITY was chosen from (issue 58;
BENCHMARKS.md "Why the answer defaults are what they are"; the run: benchmarks/results/superseded/notebook-2026-11.md,
"Answers, part twelve"). No LLM: the sources are those the answer would read.

    .venv/bin/python benchmarks/answers/refusal_similarity.py --data ../shared/data [--sets xquad-en,financebench-dev]
        [--limit 100] [--questions 50]

The first --questions of each set's seeded sample (answers.py's, whose --refusals are the same first questions),
from a sample of --limit. Per set: the filtered-out questions' highest, 90th-percentile and median cosine, and how
many reach each threshold; the same for the questions as asked whose sources hold the gold answer word for word.
Table to stdout and benchmarks/results/refusal_similarity.md.
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import gold_documents, indexed_sample, machine, parser, table  # noqa: E402

THRESHOLDS = (0.45, 0.5, 0.55, 0.6)


def closeness(index, answerer, question: str, glob) -> tuple[float, list]:
    """The closest window's cosine over the sources the answer would read, and those sources."""
    from localcr.answers.reader import DEFAULT_SOURCES, closest_window

    hits = index.search(question, DEFAULT_SOURCES, glob=glob)
    sources = answerer._sources(question, hits, index.matches(question, hits))
    return (closest_window(question, sources, index.embedder) if sources else 0.0), sources


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default="xquad-en,financebench-dev")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--questions", type=int, default=50)
    args = p.parse_args()
    from localcr.answers.reader import Answerer
    from localcr.evaluation.answers import contains

    rows = []
    for set_name in args.sets.split(","):
        registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, args.limit)
        language = set_name.split("-")[1] if set_name.startswith(("xquad-", "jsquad-")) else "en"
        answerer = Answerer(registry.require("llm", None))  # its sources only: no model is loaded
        filtered, held = [], []
        for query in sampled[:args.questions]:
            filtered.append(closeness(index, answerer, query.text, [f"!{d}" for d in gold_documents(index, query)])[0])
            close, sources = closeness(index, answerer, query.text, None)
            if query.answer and any(contains(s.shown, query.answer, language) for s in sources):
                held.append(close)
        for label, values in (("gold filtered out", filtered), ("as asked, gold in the sources", held)):
            ranked = sorted(values)
            rows.append([set_name, index.embedder.spec.name, label, len(values), f"{ranked[-1]:.3f}",
                         f"{ranked[int(0.9 * (len(ranked) - 1))]:.3f}", f"{statistics.median(ranked):.3f}",
                         *(sum(v >= t for v in values) for t in THRESHOLDS)])
    head = ["set", "embedder", "questions", "n", "highest", "90th percentile", "median",
            *(f">= {t}" for t in THRESHOLDS)]
    out = f"machine: {machine()}\n\n{table(head, rows)}"
    print(out)
    (ROOT / "benchmarks" / "results" / "refusal_similarity.md").write_text(out + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
