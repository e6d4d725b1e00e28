"""Two answer prompts tried against the default on XQuAD-en and not adopted (issue 58; BENCHMARKS.md "Tried and not
adopted"; the run: benchmarks/results/superseded/notebook-2026-11.md, "Answers, part ten"): each reads the same
sources as the default answer and is scored on what the model wrote.

    .venv/bin/python benchmarks/answers/prompt_trials.py --data ../shared/data [--limit 100] [--trials shots,quote]

- shots: the default ("short") rules, then four worked questions over two made-up sources (a province picked over
  a county, a count written as its source writes it, a share, a refusal);
- quote: the model first copies one sentence of its sources after "Quote:" (a grammar allows only their
  sentences), then answers after "Answer:", refusing forbidden: the reader alone, given its own pick of evidence.

The default's text is its cached answer (answers.py writes it; asked here where missing). Rows per half of the
sample, as answers.py splits it (tune: the first half). Table to stdout and benchmarks/results/prompt_trials.md.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_sample, machine, parser, table  # noqa: E402

SHOTS = ("Examples:\nSources:\n[1] lindby.md (The port of Lindby.)\nLindby lies in the county of Holm, in the province "
         "of Vastra. The harbour opened in 1874; in 1902 the town sent 300 workers to enlarge it, and twelve of them "
         "stayed on as pilots.\n\n[2] trade.md (Lindby's trade.)\nSome 2 million tonnes of goods pass through the "
         "harbour each year, about 40% of the region's exports.\n\n"
         "Question: In what province is Lindby?\nAnswer: Vastra [1].\n\n"
         "Question: How many workers stayed on as pilots?\nAnswer: Twelve [1].\n\n"
         "Question: What share of the region's exports passes through the harbour?\nAnswer: About 40% [2].\n\n"
         "Question: Who is the mayor of Lindby?\nAnswer: NOT FOUND\n\nNow the real sources and question.\n\n")
QUOTE = ("Answer the question at the end using only the numbered sources below.\n"
         "- First, after \"Quote:\", copy the one sentence of the sources that answers the question.\n"
         "- Then, after \"Answer:\", answer in one short sentence, in the language of the question, ending with the "
         "number of the source in square brackets, like [1].\n"
         "- Copy names, figures and dates exactly as the source writes them.\n\n")


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def trial_text(answerer, trial: str, question: str, sources) -> str:
    """What the model writes for one trial prompt over the default answer's sources (the answer part only)."""
    from localcr.answers import reader as A
    from localcr.answers import evidence
    from localcr.llm import Completion, load_grammar

    runner = answerer.runner
    body = "Sources:\n" + "".join(answerer._source_block(s) for s in sources) + f"Question: {question}\n"
    if trial == "shots":
        prefix, suffix = runner.render(A.PROMPTS["short"].instruction + SHOTS, body + "Answer:", A.PROMPTS["short"].system)
        grammar = None
    else:
        sentences = list(dict.fromkeys(
            s.shown[start:end].strip().strip("… ").strip() for s in sources
            for start, end in evidence.sentence_spans(s.shown, "en")))
        prefix, suffix = runner.render(QUOTE, body, A.PROMPTS["short"].system)
        refusing = A._NO_REFUSAL.split("::=", 1)[1].strip()
        grammar = load_grammar(f'root ::= "Quote: " q "\\nAnswer: " {refusing}\nq ::= '
                               + " | ".join(_literal(t) for t in sentences if t) + "\n")
    for piece in runner.stream(prefix, suffix, max_tokens=300, stops=A.STOPS, grammar=grammar):
        if isinstance(piece, Completion):
            return piece.text.split("Answer:", 1)[-1].strip()
    raise AssertionError("the stream ended without its completion")


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--trials", default="shots,quote")
    p.add_argument("--llm", default="qwen2.5-coder-1.5b")
    args = p.parse_args()
    from localcr.answers.reader import Answerer
    from localcr.evaluation.answers import contains

    registry, index, _, sampled = indexed_sample("xquad-en", args.data, args.work, args.limit)
    answerer = Answerer(registry.require("llm", args.llm))
    trials = args.trials.split(",")
    hits = {trial: [] for trial in ["short (default)", *trials]}
    for query in sampled:
        answer = index.ask(query.text, 3, answerer=answerer)
        hits["short (default)"].append(contains(answer.draft, query.answer))
        for trial in trials:
            hits[trial].append(contains(trial_text(answerer, trial, query.text, answer.sources), query.answer))
    half = len(sampled) // 2
    rows = [[trial, name, len(part), 100.0 * sum(part) / max(len(part), 1)]
            for trial, found in hits.items() for name, part in (("tune", found[:half]), ("held out", found[half:]))]
    out = (f"machine: {machine()}\n\n"
           + table(["prompt", "half", "questions", "the model's text contains gold %"], rows) + "\n")
    print(out)
    (ROOT / "benchmarks" / "results" / "prompt_trials.md").write_text(out)


if __name__ == "__main__":
    main()
