"""Changes to how the 1.5B reads its sources, tried against the defaults and not adopted (issue 58;
BENCHMARKS.md "Tried and not adopted"; the runs: benchmarks/results/superseded/notebook-2026-11.md, "Answers, part
eleven" to "Answers, part eighteen", the parts named below): each is scored against the default answer to the same
question.

    .venv/bin/python benchmarks/answers/reader_trials.py --data ../shared/data [--sets xquad-en] [--limit 300]
        [--ranges 0-99,200-299] [--refusals 50] [--trials lower,focused,one,twice,reversed,wider,whole,...]

- lower: a refusal is asked again (refusing forbidden) also where a sentence of a source and the next hold 50% of
  the question's content words, not only RETRY_COVERAGE (60%);
- focused: the refusals the default asks again are asked with only those two sentences as their one source;
- one: every question answered from the best hit alone, not the three best (XQuAD's top hit is its gold paragraph
  for most questions, so the other two might only distract);
- twice: the question also before the sources, not only after them (a small model reads the sources knowing what
  it looks for: "query-aware contextualization", Liu et al., Lost in the Middle, arXiv 2307.03172);
- reversed: the sources in the prompt best last, nearest the question (numbers kept: [1] is still the best hit);
- wider: a refusal (the model's, or the check's) is asked again over the hits whole (each cut to SOURCE_CHARS
  around the question's terms), not the 400 characters of evidence: those hold the gold for 92-95% of XQuAD-en
  questions, the hits whole for 99% (evidence.py);
- wider-gated (the default in part fourteen): as wider, only where the hits whole pass the second try's test (two
  sentences in a row hold 60% of the question's content words, or come within cosine 0.55 of it);
- wider-evidence (adopted in part fifteen: the default now, localcr.answers.reader.Answerer.worth_reading_more): as
  wider-gated, but what is read again is the hits' evidence at three times the budget (1,200 characters), not the
  hits whole: the evidence at 400 characters was the better reader wherever the two answers differed, and a
  shorter prompt comes sooner; run against part fourteen's default, so "--trials wider-gated" now measures the
  change back;
- own-system: no system turn of localcr's, so the chat template puts in the model's own (Qwen2.5's "You are Qwen,
  created by Alibaba Cloud. You are a helpful assistant.", the turn it was tuned under), the rules unchanged;
- rules-last: the sources first, then the rules, then the question, so the rules are read last, nearest the
  answer (the rules' tokens are then evaluated for every question, not kept from the last);
- closer: a refusal is asked again also where a sentence of a source and the next come within --similarity
  (default 0.45) of the question in the index's embedding, not only RETRY_SIMILARITY's 0.55: in the five XQuAD
  languages no question asked with its gold documents filtered out came within 0.45 (USE: 0.44 at most;
  refusal_similarity.py), and about twice as many whose sources hold the gold did as came within 0.55;
- phrase: the model answers with only the source's words that answer (a name, a number, a date or a short phrase)
  and the source's number, not a sentence: the restated question the 1.5B wraps an answer in is where it may name
  the wrong thing ("The Broncos won Super Bowl XLIX [1]" from "They then beat the defending Super Bowl XLIX champion
  New England Patriots");
- vote: the evidence's sentences ranked with the index's embedder voting too (its cosine to the question, fused by
  RRF with BM25 and the hit's rank): without the LLM it kept the gold for 1.5 points more of German's 595 tune
  questions at the same 400 characters (evidence.py --embedder on), and the embedder is loaded for the search
  already;
- shots: three worked examples as earlier turns of the chat, before the question's (localcr's own, not from any
  data set: the right one of several names in a sentence, the figure asked among others, a refusal), so the 1.5B
  sees picking what the question asks done before it answers; they are part of the instruction's prefix, whose KV
  state is kept from one question to the next, so they cost no time a question (the "example" prompt put one
  example inside the instruction, and drew whole paragraphs copied);
- whole: the copy rule asks for the words of the source that answer exactly and whole, with the words that qualify
  them, not only names, figures and dates (the 1.5B's answers that miss the gold by a word drop one that qualifies:
  "separate companies" where the source writes "entirely separate companies", "High" for "extremely high");
- penalty (adopted in part eighteen: the default now, localcr.answers.reader.ANSWER_REPEAT_PENALTY): every question
  was answered with no repeat penalty, not the model's 1.1 (llama.cpp weighs it against the tokens the answer has
  written, not the prompt's, as parts eleven and sixteen said);
- similar (adopted in part twelve: the default now, localcr.answers.reader.RETRY_SIMILARITY): a refusal was asked
  again (refusing forbidden) also where a sentence of a source and the next are close to the question in the index's
  embedding.

The default answers are answers.py's (cached; asked here where missing). --ranges: which of the seeded sample's
questions are asked (rows "tune": those of answers.py's tune half, the first --limit/2; "other": the rest, such as
part ten's study set, 200-299); --refusals: of the first questions, how many are asked again with their gold
documents filtered out (an answer there is wrong). Table to stdout and
benchmarks/results/reader_trials.md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import gold_documents, indexed_sample, machine, parser, table  # noqa: E402

LOWER_COVERAGE = 0.5
# The phrase trial's bullets in place of the default's first three (one short sentence, each cited, copied exactly).
PHRASE = ["- Answer with only the words of a source that answer it: a name, a number, a date or a short phrase, copied "
          "exactly as the source writes them. Do not write a sentence.",
          "- End with the number of the source they come from in square brackets, like [1]."]

# The whole trial's copy rule in place of the default's.
COPY_RULE = "- Copy names, figures and dates exactly as the source writes them."
WHOLE_RULE = ("- Copy the words of the source that answer exactly and whole, with the words that qualify them; copy "
              "names, figures and dates exactly as the source writes them.")


def arranged_answerer(spec, arrangement: str):
    """An Answerer whose prompt sets the sources and the question out otherwise (cached apart from the default's)."""
    from localcr.answers.reader import Answerer

    class Arranged(Answerer):
        def _body(self, question, sources):
            if arrangement == "reversed":
                return super()._body(question, sources[::-1])
            return f"Question: {question}\n\n" + super()._body(question, sources)

        def _key(self, question, sources, budget=None):
            return super()._key(question, sources, budget) + f"-{arrangement}"

    return Arranged(spec)


def rearranged_prompt_answerer(spec, trial: str):
    """An Answerer with its own system turn left out (own-system), its rules after the sources (rules-last), asked
    for the answering words alone (phrase), or told to copy them whole (whole)."""
    from localcr.answers import reader as A

    class Rearranged(A.Answerer):
        def __init__(self, spec):
            super().__init__(spec)
            rules = self.prompt.instruction
            if trial == "own-system":
                self.prompt = A.AnswerPrompt(trial, "", rules)
            elif trial == "phrase":
                lead, *bullets = rules.split("\n")
                self.prompt = A.AnswerPrompt(trial, self.prompt.system, "\n".join([lead, *PHRASE, *bullets[3:]]))
            elif trial == "whole":
                assert COPY_RULE in rules
                self.prompt = A.AnswerPrompt(trial, self.prompt.system, rules.replace(COPY_RULE, WHOLE_RULE))
            else:
                lead, _, self.rest = rules.partition("\n")
                self.prompt = A.AnswerPrompt(trial, self.prompt.system, lead + "\n\n")

        def _body(self, question, sources):
            body = super()._body(question, sources)
            if trial != "rules-last":
                return body
            at = body.index("Question: ")
            return body[:at] + self.rest.lstrip("\n") + body[at:]

        def _key(self, question, sources, budget=None):
            return super()._key(question, sources, budget) + f"-{trial}"

    return Rearranged(spec)


# The shots trial's worked examples: a question's sources as the prompt sets them out, and the answer written.
SHOTS = [
    ("Sources:\n[1] orla-lighthouse.md (The history of the Orla lighthouse.)\nThe Orla lighthouse was first lit in "
     "1874. Mara Lind kept it until 1902, when her nephew Tomas Berg took over; the harbour master, Erik Sand, had "
     "wanted it closed.\n\n[2] orla-harbour.md (Trade through Orla harbour.)\nBy 1900 the harbour shipped 40,000 "
     "tonnes of timber a year, most of it to Hamburg.\n\nQuestion: Who kept the Orla lighthouse after 1902?\nAnswer:",
     "Tomas Berg, Mara Lind's nephew, kept it after 1902 [1]."),
    ("Sources:\n[1] vell-expedition.md (The 1911 survey expedition to the Vell pass.)\nThe expedition left Dunmore "
     "with 120 porters and 16 mules. Forty soldiers were sent two days ahead to clear the pass, and 12 of the porters "
     "turned back at the first camp.\n\n[2] vell-pass.md (The Vell pass.)\nThe pass lies at 3,200 metres and is "
     "closed by snow from November to May.\n\nQuestion: How many soldiers were sent ahead of the expedition?\n"
     "Answer:", "Forty soldiers were sent ahead to clear the pass [1]."),
    ("Sources:\n[1] vell-pass.md (The Vell pass.)\nThe pass lies at 3,200 metres and is closed by snow from November "
     "to May.\n\n[2] orla-harbour.md (Trade through Orla harbour.)\nBy 1900 the harbour shipped 40,000 tonnes of "
     "timber a year, most of it to Hamburg.\n\nQuestion: Who built the first road over the Vell pass?\nAnswer:",
     "NOT FOUND"),
]


def shots_answerer(spec):
    """An Answerer whose prompt holds SHOTS as earlier turns of the chat (Qwen2.5's ChatML, as its template writes
    it), in the prefix whose KV state is kept."""
    from localcr.answers import reader as A

    class Shots(A.Answerer):
        def __init__(self, spec):
            super().__init__(spec)
            self.prompt = A.AnswerPrompt("shots", self.prompt.system, self.prompt.instruction)

        def _fit(self, question, sources):
            runner, rules = self.runner, self.prompt.instruction
            turns = "".join(f"<|im_start|>user\n{rules}{body}<|im_end|>\n<|im_start|>assistant\n{answer}<|im_end|>\n"
                            for body, answer in SHOTS)
            prefix = runner.tokenize(f"<|im_start|>system\n{self.prompt.system}<|im_end|>\n{turns}<|im_start|>user\n"
                                     + rules)
            suffix = runner.tokenize(self._body(question, sources) + "<|im_end|>\n<|im_start|>assistant\n")
            return prefix, suffix, 0

        def _key(self, question, sources, budget=None):
            return super()._key(question, sources, budget) + "-shots"

    return Shots(spec)


def whole_again_answerer(spec):
    """An Answerer whose gated re-read of a refusal reads the hits whole (a budget of 0), as part fourteen's default
    did, not the evidence at three times its budget."""
    from localcr.answers import reader as A

    class WholeAgain(A.Answerer):
        def _wider_budget(self):
            return 0

    return WholeAgain(spec)


def voting_answerer(spec, embedder):
    """An Answerer whose evidence is ranked with `embedder` voting (localcr.answers.evidence.select's embedder)."""
    from functools import partial

    from localcr.answers import reader as A

    class Voting(A.Answerer):
        def _sources(self, question, hits, matches, budget=None):
            select = A.evidence.select
            A.evidence.select = partial(select, embedder=embedder)  # this trial's ranking, for this call only
            try:
                return super()._sources(question, hits, matches, budget)
            finally:
                A.evidence.select = select

        def _key(self, question, sources, budget=None):
            return super()._key(question, sources, budget) + "-vote"

    return Voting(spec)


def asked_again(answerer, question: str, sources, topic=()):
    """The answer written with refusing forbidden over these sources, as the default's second try writes it
    (topic: the question's rare terms, Index.rare_terms, which the check reads as the ask does)."""
    from localcr.answers import reader as A
    from localcr.llm import load_grammar

    prefix, suffixes, _ = answerer._fit(question, sources)
    answerer.runner.keep_prefix(prefix, "answers", answerer._tag(), "answer-instruction", A.ANSWER_VERSION,
                                answerer.prompt.name)
    raw = answerer.runner.complete(prefix, suffixes, max_tokens=A.ANSWER_MAX_TOKENS, stops=A.STOPS,
                                   repeat_penalty=A.ANSWER_REPEAT_PENALTY,
                                   grammar=load_grammar(A._NO_REFUSAL)).text
    return answerer._finish(question, raw, sources, note="", cached=False, timings={}, topic=topic)


def trial_answer(trial: str, answerer, variants: dict, index, question: str, default, glob, similarity: float):
    """The trial's answer to a question whose default answer is `default` (the default itself where the trial
    does not touch it)."""
    from localcr.answers import reader as A

    if trial == "wider":  # its answerer reads the hits whole, asked only where the default refused
        return index.ask(question, 3, answerer=variants[trial], glob=glob) if default.refused else default
    if trial in variants:
        return index.ask(question, 3, answerer=variants[trial], glob=glob)
    if trial == "one":
        return index.ask(question, 1, answerer=answerer, glob=glob)
    share, source, window = A.answering_window(question, default.sources)
    retried = "asked again" in (default.note or "")
    if trial == "lower" and default.refused and not retried and LOWER_COVERAGE <= share < A.RETRY_COVERAGE:
        return asked_again(answerer, question, default.sources, index.rare_terms(question))
    if trial == "closer" and default.refused and not retried and A.is_refusal(A.answer_part(default.draft)) \
            and default.sources and A.closest_window(question, default.sources, index.embedder) >= similarity:
        return asked_again(answerer, question, default.sources, index.rare_terms(question))
    if trial == "focused" and retried and source is not None:
        return asked_again(answerer, question, [A.Source(1, source.hit, window)], index.rare_terms(question))
    return default


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default="xquad-en")
    p.add_argument("--limit", type=int, default=300)
    p.add_argument("--ranges", default="0-99,200-299", help="which sampled questions to ask (0-based, inclusive)")
    p.add_argument("--refusals", type=int, default=50)
    p.add_argument("--trials", default="lower,focused,one,twice,reversed")
    p.add_argument("--llm", default="qwen2.5-coder-1.5b")
    p.add_argument("--similarity", type=float, default=0.45, help="the closer trial's cosine (default 0.45)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))  # answers.py's answers are the defaults
    from localcr.answers.reader import Answerer
    from localcr.evaluation.answers import contains

    ranges = [tuple(map(int, r.split("-"))) for r in args.ranges.split(",")]
    rows = []
    for set_name in args.sets.split(","):
        registry, index, _, sampled = indexed_sample(set_name, args.data, args.work, args.limit)
        spec = registry.require("llm", args.llm)
        answerer = Answerer(spec)
        variants = {"twice": arranged_answerer(spec, "twice"), "reversed": arranged_answerer(spec, "reversed"),
                    **{trial: rearranged_prompt_answerer(spec, trial) for trial in ("own-system", "rules-last", "phrase", "whole")},
                    "wider": Answerer(spec, evidence_chars=0), "wider-gated": whole_again_answerer(spec),
                    "vote": voting_answerer(spec, index.embedder), "shots": shots_answerer(spec)}
        language = set_name.split("-")[1] if "-" in set_name else "en"
        asked = [(i, q, None) for i, q in enumerate(sampled) if any(lo <= i <= hi for lo, hi in ranges)]
        asked += [("filtered", q, [f"!{d}" for d in gold_documents(index, q)]) for q in sampled[:args.refusals]]
        for trial in args.trials.split(","):
            tally: dict[str, list[int]] = {}
            for i, query, glob in asked:
                default = index.ask(query.text, 3, answerer=answerer, glob=glob)
                answer = trial_answer(trial, answerer, variants, index, query.text, default, glob, args.similarity)
                if i == "filtered":
                    half, right = "filtered out: answered", lambda a: not a.refused
                else:
                    half = "tune" if i < args.limit // 2 else "other"
                    right = lambda a: not a.refused and contains(a.text, query.answer, language)  # noqa: E731
                counts = tally.setdefault(half, [0, 0, 0, 0])
                counts[0] += 1
                counts[1] += right(default)
                counts[2] += right(answer)
                counts[3] += answer is not default and answer.text != default.text
            rows += [[set_name, trial, half, *counts] for half, counts in tally.items()]
        for each in (answerer, *variants.values()):
            each.close()
    head = ["set", "trial", "half", "questions", "default right (or answered)", "trial right (or answered)", "answers the trial changed"]
    out = f"machine: {machine()}\n\n{table(head, rows)}"
    print(out)
    (ROOT / "benchmarks" / "results" / "reader_trials.md").write_text(out + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
