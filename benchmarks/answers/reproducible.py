"""Reproducible answers: do the same questions, written afresh in another order, get the same answers word for word?

    .venv/bin/python benchmarks/answers/reproducible.py --data ../shared/data [--sets xquad-en,financebench-dev]
        [--limit 20]

The model decodes greedily, so an answer can differ only by how its prompt was evaluated: llama.cpp's arithmetic
depends on where a prompt is cut into batches, and a KV cache reused wherever two prompts agree cut each prompt
where the one before it diverged. Each set's seeded sample (as benchmarks/answers/answers.py draws it, on its
structural index under --work) is asked twice in one process, in order then in reverse, every answer written
afresh (no answer cache): the first question asked becomes the last. Rows: questions, answers the same in both
orders (the model's text, before the check), and the first that differ. Table to stdout and
benchmarks/results/reproducible[-SETS].md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_sample, machine, parser, results_suffix, table  # noqa: E402

SETS = ("xquad-en", "financebench-dev")


def asked(index, answerer, questions: list[str]) -> dict[str, str]:
    """Each question's answer as the model wrote it (the draft; a refusal's word included), written afresh."""
    return {q: index.ask(q, answerer=answerer, fresh=True).draft for q in questions}


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--limit", type=int, default=20, help="questions per set (the first of answers.py's sample)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr.answers.reader import Answerer

    rows = []
    for set_name in args.sets.split(","):
        registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, args.limit)
        questions = [q.text for q in sampled]
        answerer = Answerer(registry.require("llm"))
        try:
            forward = asked(index, answerer, questions)
            backward = asked(index, answerer, questions[::-1])
        finally:
            answerer.close()
        differ = [q for q in questions if forward[q] != backward[q]]
        for q in differ:
            print(f"{set_name}: {q!r}\n  in order:   {forward[q][:200]!r}\n  in reverse: {backward[q][:200]!r}",
                  file=sys.stderr)
        rows.append([set_name, len(questions), len(questions) - len(differ),
                     "; ".join(q[:60] for q in differ[:3]) or "-"])
    text = f"machine: {machine()}\n\n" + table(["set", "questions", "the same in both orders", "first that differ"], rows)
    (ROOT / "benchmarks" / "results" / f"reproducible{results_suffix(args.sets, SETS)}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
