"""Estimates that hold (issue 60): what `localcr index` says a cards stage will take and what `localcr ask` says an
answer will take, against what followed, before this machine has measured anything (typical rates) and after.

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/estimates.py \\
        --data /work/shared/data/financebench-dev/docs --docs 6

In a cache of its own (nothing measured yet): the cards of the first half of the filings are estimated and written
(they measure the card rates), then those of the second half; then four questions about the filings are answered from
passages of them, each estimate read from the answer's "estimate" event and set against its time to the answer.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser, table  # noqa: E402

QUESTIONS = ("What was the company's total revenue for the fiscal year?", "What were the main risk factors?",
             "How much cash did operating activities provide?", "Who audited the financial statements?")


def cards(docs, spec, rows) -> None:
    from localcr.contexts.cards import CardWriter, write_cards
    from localcr.llm import LlamaRunner

    runner = LlamaRunner(spec)
    try:
        half = len(docs) // 2
        for label, part in (("cards, nothing measured", docs[:half]), ("cards, measured", docs[half:])):
            estimate = CardWriter(runner).seconds_for(part)
            began = time.perf_counter()
            write_cards(part, spec, runner=runner, progress=False, log=lambda m: None)
            rows.append([label, len(part), estimate, time.perf_counter() - began])
    finally:
        runner.close()


def answers(docs, registry, rows) -> None:
    from localcr.answers import load_answerer
    from localcr.search import Hit

    answerer = load_answerer(registry, log=lambda m: None)
    try:
        for n, question in enumerate(QUESTIONS):
            doc = docs[n % len(docs)]
            hits = [Hit(f"{doc.doc_id}#{i}", doc.doc_id, doc.path, i, 3000 * i, 3000 * i + 1500, 1.0, {}, "",
                        doc.text[3000 * i:3000 * i + 1500]) for i in range(3)]
            began, said = time.perf_counter(), None
            for event, value in answerer.stream(question, hits, fresh=True):
                if event == "estimate":
                    said = float(re.search(r"about (\d+) s", value).group(1))
            rows.append([f"answer {n + 1}" + (", nothing measured" if n == 0 else ", measured"), 1, said,
                         time.perf_counter() - began])
    finally:
        answerer.close()


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=6, help="how many filings (the first, by name)")
    args = p.parse_args()
    os.environ["LOCALCR_CACHE_DIR"] = tempfile.mkdtemp(prefix="estimates-cache-")  # nothing measured yet
    from localcr.documents import load_paths
    from localcr.models import load_registry

    docs = load_paths([str(path) for path in sorted(args.data.glob("*.txt"))[: args.docs]]).documents
    registry = load_registry()
    rows: list[list] = []
    cards(docs, registry.require("llm"), rows)
    answers(docs, registry, rows)
    print(f"machine: {machine()}; load average {os.getloadavg()}")
    print(table(["work", "items", "estimated s", "took s", "took / estimated"],
                [row + [f"{row[3] / row[2]:.2f}" if row[2] else "-"] for row in rows]))


if __name__ == "__main__":
    main()
