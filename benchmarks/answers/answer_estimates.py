"""The time `localcr ask` estimates for an answer against the time that followed it, for every answer written
afresh, whether the time is said or not (localcr.answers.reader.ANNOUNCED_FROM_SECONDS: said from 4 s): why short
answers say none (issue 58; benchmarks/results/superseded/notebook-2026-11.md, "Answers, part eleven").

    .venv/bin/python benchmarks/answers/answer_estimates.py --data ../shared/data [--sets xquad-en,financebench-dev]
        [--first 0] [--count 40]

Questions --first to --first + --count of each set's seeded sample (answers.py's), each answered with --fresh in
one process (the model loaded once); an answer the figures path computes says no estimate and is left out. Per set,
and per side of the 4 s line: the answers, how many came within ±30% of their estimate (the time from the estimate
to the answer, against the unrounded figure), the median of took / estimated, and how many were asked again after
a refusal (a second generation the first estimate does not count). Table to stdout and
benchmarks/results/answer_estimates.md.
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_sample, machine, parser, table  # noqa: E402


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default="xquad-en,financebench-dev")
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--count", type=int, default=40)
    args = p.parse_args()
    from localcr.answers.reader import ANNOUNCED_FROM_SECONDS, Answerer
    from localcr.evaluation.answers import ESTIMATE_TOLERANCE

    rows = []
    for set_name in args.sets.split(","):
        registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, args.first + args.count)
        answerer = Answerer(registry.require("llm", None))
        sides: dict[str, list[tuple[float, bool]]] = {}
        for query in sampled[args.first:]:
            answer = index.ask(query.text, 3, answerer=answerer, fresh=True)
            timings = answer.timings
            if not timings.get("estimated_s"):
                continue
            said = "said (from 4 s)" if timings["estimated_s"] >= ANNOUNCED_FROM_SECONDS else "not said (under 4 s)"
            ratio = (timings["total_s"] - timings["estimate_at_s"]) / timings["estimated_s"]
            sides.setdefault(said, []).append((ratio, "asked again" in answer.note))
        answerer.close()
        for said, measured in sorted(sides.items()):
            ratios = [ratio for ratio, _ in measured]
            rows.append([set_name, said, len(measured), sum(abs(r - 1) <= ESTIMATE_TOLERANCE for r in ratios),
                         f"{statistics.median(ratios):.2f}", sum(again for _, again in measured)])
    head = ["set", "estimate", "answers", "within ±30%", "took / estimated (median)", "asked again"]
    out = f"machine: {machine()}\n\n{table(head, rows)}"
    print(out)
    (ROOT / "benchmarks" / "results" / "answer_estimates.md").write_text(out + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
