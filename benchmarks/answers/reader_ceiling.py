"""How right the 1.5B's answers could be if search and evidence were perfect: the same questions answered over the
gold passage alone, and over the gold sentence alone, beside the default answer (issue 58). Where even the gold
sentence read alone is answered below a target, no better search or evidence step reaches that target with this
reader: what is left is the reader.

    .venv/bin/python benchmarks/answers/reader_ceiling.py --data ../shared/data [--sets xquad-en] [--limit 300]
        [--ranges 0-99,100-199,200-299]

Rows, each over the same questions (short-answer sets: XQuAD, JSQuAD), scored by answers.py's `contains`:
- default: `localcr ask`'s answer (search, 3 sources, 400 characters of evidence; answers.py's, from the cache);
- gold passage, whole: the search kept to the gold document alone (1 source), read whole (its window or chunk);
- gold sentence: only the sentence of the gold passage that holds the answer and the sentence before it (the
  company localcr.answers.evidence keeps), one source: what a perfect evidence step would give the model.
Each --ranges range is a row group; counts only are reported, no answer is printed. Table to stdout and
benchmarks/results/reader_ceiling[-SETS].md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import gold_documents, indexed_sample, machine, parser, results_suffix, table  # noqa: E402

SETS = ("xquad-en",)


def gold_sentence(text: str, gold: str, language: str) -> str | None:
    """The shortest run of the text's sentences that holds the gold answer, with the sentence before it; None where
    no run does."""
    from localcr.evaluation.answers import contains
    from localcr.answers.evidence import sentence_spans

    spans = sentence_spans(text, language)
    for length in range(1, len(spans) + 1):
        for first in range(len(spans) - length + 1):
            if contains(text[spans[first][0]:spans[first + length - 1][1]], gold, language):
                return text[spans[max(first - 1, 0)][0]:spans[first + length - 1][1]]
    return None


def oracle_answerer(spec):
    """An Answerer that reads, of its hits, only the sentence holding `gold` (set before each question)."""
    from localcr.answers import reader as A

    class GoldSentence(A.Answerer):
        gold, language = "", "en"

        def _sources(self, question, hits, matches, budget=None):
            for hit in hits:
                if shown := gold_sentence((hit.window_text or hit.text).strip(), self.gold, self.language):
                    return [A.Source(1, hit, shown)]
            return []

        def _key(self, question, sources, budget=None):
            return super()._key(question, sources, budget) + "-gold-sentence"

    return GoldSentence(spec)


def main() -> None:
    from localcr.answers.reader import Answerer
    from localcr.evaluation.answers import contains
    from localcr.filters import exact_glob

    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--limit", type=int, default=300, help="the seeded sample answers.py draws from (default 300)")
    p.add_argument("--ranges", default="0-99,100-199,200-299", help="row groups of sampled questions (0-based, inclusive)")
    p.add_argument("--llm", default="qwen2.5-coder-1.5b")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))  # answers.py's answers are the defaults
    ranges = [tuple(map(int, r.split("-"))) for r in args.ranges.split(",")]
    rows = []
    for set_name in args.sets.split(","):
        language = set_name.split("-")[1] if "-" in set_name else "en"
        registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, args.limit)
        spec = registry.require("llm", args.llm)
        default, whole, oracle = Answerer(spec), Answerer(spec, evidence_chars=0), oracle_answerer(spec)
        oracle.language = language
        for lo, hi in ranges:
            right = {"default": 0, "gold passage, whole": 0, "gold sentence": 0}
            no_sentence = 0
            for query in sampled[lo:hi + 1]:
                gold = [exact_glob(d) for d in gold_documents(index, query)]
                oracle.gold = query.answer
                answers = {"default": index.ask(query.text, 3, answerer=default),
                           "gold passage, whole": index.ask(query.text, 1, answerer=whole, glob=gold),
                           "gold sentence": index.ask(query.text, 1, answerer=oracle, glob=gold)}
                no_sentence += not answers["gold sentence"].sources
                for name, answer in answers.items():
                    right[name] += not answer.refused and contains(answer.text, query.answer, language)
            n = hi - lo + 1
            rows += [[set_name, f"{lo}-{hi}", n, name, f"{100 * count / n:.1f}"] for name, count in right.items()]
            rows[-1][-1] += f" ({no_sentence} with no sentence holding the gold)" if no_sentence else ""
        for each in (default, whole, oracle):
            each.close()
    out = f"machine: {machine()}\n\n" + table(["set", "questions (sampled places)", "n", "what the 1.5B reads",
                                               "answer holds the gold %"], rows)
    print(out)
    out_file = ROOT / "benchmarks" / "results" / f"reader_ceiling{results_suffix(args.sets, SETS)}.md"
    out_file.write_text(out + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
