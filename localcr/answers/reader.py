"""Answers from the index (`localcr ask`): the local LLM reads the sentences of the best hits that bear on the
question (localcr.answers.evidence) as numbered sources and writes a short answer that cites them; the citations are then
checked (localcr.answers.check).

    import localcr

    index = localcr.open_index("my-index")
    answer = index.ask("what is the retry backoff?")
    print(answer.text, answer.unsupported, [s.hit.path for s in answer.cited_sources])

The instruction is one fixed prefix, so a process that answers many questions (a server, an evaluation) evaluates
it once: each question pays for its sources and its own words only. Grounded or silent: when the sources do not hold
the answer the model writes a fixed word, and the answer becomes one sentence in the question's language saying the
documents do not say, with the nearest sources beside it; so does an answer none of whose sentences its sources hold. Answers are cached by model, prompt version, question and
the sources' text, so asking again costs nothing (`fresh` writes it anew).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator

from localcr.answers import evidence
from localcr.answers.check import CITATION, Checked, check
from localcr.errors import LocalcrError
from localcr.llm import Completion, OnDemandLlm, load_grammar, resolved_llm
from localcr.models import Registry
from localcr.text import snippet

# Part of every answer's cache key: bump it whenever a prompt below, or how sources are shown, changes.
ANSWER_VERSION = "ask-2026.8"
ANSWER_MAX_TOKENS = 200
# The tokens an answer is estimated to take before this machine has recorded its answers' length (rates.ANSWER).
ANSWER_TOKENS = 60
# An answer estimated to take this long or longer is announced with its time. A shorter one's time turns on its
# length and on a second try: 40 fresh XQuAD-en answers of 1-3 s here came within ±30% of their estimate 27 times,
# 19 filing answers of 4-14 s (the prompt's evaluation most of it) 19 times (benchmarks/answers/answer_estimates.py;
# benchmarks/results/superseded/notebook-2026-11.md, "Answers, part eleven").
ANNOUNCED_FROM_SECONDS = 4.0
# Sources an answer reads by default: on 30 XQuAD-en questions 3 held the gold about as often as 5 (53.3% against
# 56.7%: one question), refused every question whose documents were filtered out (5: 8 of 10), and reached the first
# token in half the time (benchmarks/answers/answers.py, BENCHMARKS.md "Why the answer defaults are what they are").
DEFAULT_SOURCES = 3
# A source longer than this (a window, a long report's chunk) is cut to the part around the question's terms.
SOURCE_CHARS = 1600
CONTEXT_CHARS = 300  # of the context that situates each source
NOT_FOUND = "NOT FOUND"  # what the model writes when no source answers
# Answers are written with no repeat penalty, whatever the model's (models.toml's repeat_penalty, 1.1 by default,
# stays for contexts and cards, where a small model loops without it): an answer copies its sources' words, and
# llama.cpp weighs the penalty against the tokens the answer has written, so a name it repeats is pushed aside. Read
# from the gold sentence alone, the 1.5B answered 77 -> 79 of XQuAD-en's tune 100 without it; the default answers
# held the gold for 76 -> 76 of them, 69 -> 70 of the 100 held out, 81 -> 82 of the study set, the six other
# languages' 360 217 -> 220, with as many refusals when the gold is filtered out or more (48 of 50, 83 -> 84 of 90);
# financebench-dev's key figures stayed 33 of 59 (benchmarks/answers/reader_ceiling.py, answers.py, BENCHMARKS.md
# "Why the answer defaults are what they are").
ANSWER_REPEAT_PENALTY = 1.0
STOPS = ("\n\n\n", "\nQuestion:", "\nSources:")


@dataclass(frozen=True)
class AnswerPrompt:
    name: str
    system: str
    instruction: str  # the fixed prefix: its KV state is reused from one question to the next
    grammar: str = ""  # GBNF the answer must follow (llama.cpp's constrained sampling), or none


_SYSTEM = "You answer questions from numbered sources, and only from them: never from your own knowledge."
_RULES = ("Answer the question at the end using only the numbered sources below.\n"
          "- Write one to three short sentences, in the language of the question.\n"
          "- End each sentence with the number of the source it comes from in square brackets, like [1] or [2][3].\n"
          "- Copy names, figures and dates exactly as the source writes them.\n"
          f"- If the sources do not answer the question, write only: {NOT_FOUND}\n\n")
_EXAMPLE = ("Example:\nSources:\n[1] manual.md\nThe pump must be serviced every 500 hours. Use only grade B oil.\n\n"
            "[2] history.md\nThe company was founded in Oslo in 1921.\n\nQuestion: How often must the pump be serviced?\n"
            "Answer: The pump must be serviced every 500 hours [1].\n\nNow the real sources and question.\n\n")
_SHORT = ("Answer the question at the end using only the numbered sources below.\n"
          "- Answer in one short sentence, in the language of the question; add a second one only if the question "
          "needs it.\n"
          "- End each sentence with the number of the source it comes from in square brackets, like [1] or [2][3].\n"
          "- Copy names, figures and dates exactly as the source writes them.\n"
          "- A source that answers the question answers it, even if it says more than was asked.\n"
          f"- Only if no source answers the question, write: {NOT_FOUND}\n\n")
# Every sentence ends with a citation; or the answer is the refusal word alone.
_CITED = (f'root ::= "{NOT_FOUND}" | sentence (" " sentence){{0,2}}\n'
          'sentence ::= [^\\[\\]\\n]+ cite+ "."?\n'
          'cite ::= " [" [1-9] [0-9]? "]"\n')
# Measured by benchmarks/answers/answers.py (BENCHMARKS.md, "Tried and not adopted"): "short" refused a third as often
# as "cite" on answerable XQuAD questions (10% against 30%) and contained the gold answer more often (60% against 50%);
# the worked example drew whole paragraphs copied without citations; the grammar kept every sentence cited but answered
# as "cite" did. "Answer first, cite after" (the shortest answer on a line, then one sentence, no source numbers; the
# check attaching the citation of the source holding the answer) held the gold in 42% of 50 XQuAD-en answers against 76%
# for "short", refusing 40% against 8%: removed.
PROMPTS = {  # the default first
    "short": AnswerPrompt("short", _SYSTEM, _SHORT),
    "cite": AnswerPrompt("cite", _SYSTEM, _RULES),
    "example": AnswerPrompt("example", _SYSTEM, _RULES + _EXAMPLE),
    "grammar": AnswerPrompt("grammar", _SYSTEM, _RULES, grammar=_CITED),
}
DEFAULT_PROMPT = "short"

# Any answer but one that starts with the refusal word or with a citation or a space (given the refusal word alone
# forbidden, the 1.5B once wrote only "[1]"): the second try when the model refused though two sentences of a source
# hold most of the question's words. "NOT" is never an answer's start; "Not" and "not" are ("Not until 1990"), but
# only before a letter or figure not starting "found", or one space and such ("Not FOUND", "Not_FOUND" and, told to
# write them, "Not  found" and "Not<tab>found" each came when only some were forbidden). Forbidding only "NOT F" let
# the 1.5B write "NOTFOUND" for 13 of XQuAD-en's first 100 questions, where forbidding "NOT" had it answer.
_AFTER_NOT = '[A-EG-Za-eg-z0-9\\u00C0-\\uFFFF"\'(]'  # what may follow an answer's first "Not" or "Not ": no "found"
_NO_REFUSAL = ('root ::= ([^Nn\\[\\n\\t ] | [Nn] [^Oo\\n] | "NO" [^T\\n] | [Nn] "o" [^t\\n] '
               f'| [Nn] "ot" {_AFTER_NOT} | [Nn] "ot " {_AFTER_NOT}) [^\\n]*\n')
# A whole answer of "1" and its citation ("1 [1]", "1. [2]", "1 [SEP]") is a source's number or a list's, not an
# answer: the 1.5B wrote it for a source's year (1754, "1931年", "1936年") and for nothing else ("3 [1]" and "4 [1]"
# were counts, right 5 times of 8). Such an answer is written again starting with no figure (nor a citation, nor a
# space), so in a sentence: "德军于1936年重新占领莱茵兰。 [2]". Of XQuAD's and JSQuAD's 860 cached answers 8 were
# written again, 5 then right and 3 refused (benchmarks/results/superseded/notebook-2026-11.md, "Answers, part
# sixteen"); let go on after its "1" instead, the 1.5B wrote "1.1936年", "10年" and "1.1".
_LONE_ONE = re.compile(r"\s*1\.?\s*(?:\[[^\]\n]*\]?\s*)*\.?\s*")
_NO_LEADING_FIGURE = 'root ::= [^0-9\\[\\n\\t ] [^\\n]*\n'
# The letters of the languages written in a script of their own: an answer with none of them, to a question in one
# of these, that the check finds in no source ("Stanley Miller [1]" where the source writes スタンリー・ミラー,
# "Energyproject AB is located in Sweden" for an Arabic question) is written again made to start in that script.
_SCRIPTS = {"ar": "\u0600-\u06ff", "ru": "\u0400-\u04ff", "zh": "\u4e00-\u9fff", "ja": "\u3040-\u30ff\u4e00-\u9fff"}
# The share of the question's content words a source's sentences must hold for a refusal to be tried again.
RETRY_COVERAGE = 0.6
# The sentences read together for that share: a sentence and the next. On XQuAD-en's tune half (100 questions, every
# answer written afresh) one sentence retried no refusal the sources answered ("white" students: the academies in
# one sentence, the race in the next), two retried one (84.0% against 82.0%; held out 66.0 against 64.0), and the
# source's context added to the two changed nothing; refusals with the gold filtered out stayed 10 of 10
# (benchmarks/answers/answers.py; benchmarks/results/superseded/notebook-2026-11.md, "Answers, part ten").
RETRY_SENTENCES = 2
# Or where those two sentences are this close to the question in the index's embedding (cosine), whatever share of
# its words they hold: above every refusal of XQuAD-en's tune half asked with its gold documents filtered out
# (MiniLM: 0.52 at most; benchmarks/answers/refusal_similarity.py), and of the five XQuAD languages' (USE: 0.44).
# On XQuAD-en it changed 4 answers of the study set, all 4 refusals then right, none of the tune half or of the 50
# filtered out; on financebench-dev 2, and of its 10 filtered out none was answered, though on filings half the
# filtered-out questions come that close: there the check withdraws the second try (benchmarks/answers/
# reader_trials.py; benchmarks/results/superseded/notebook-2026-11.md, "Answers, part twelve"). Measured for these
# embedders only: another's cosines are on a scale of their own.
RETRY_SIMILARITY = {"minilm": 0.55, "use-multilingual": 0.55}
# A refusal that more of the hits may answer (Answerer.worth_reading_more) is asked again over the evidence at this
# many times its budget: 1,200 characters held XQuAD-en's gold for 98% of questions (the hits whole 99%, at 1.75
# times the characters; benchmarks/answers/evidence.py). Read again so instead of whole, XQuAD-en's answers came
# out the same (tune 76, study 81) or one better (held out 69, second study 142), the six other languages' 360 one
# better and one worse, none of the 190 questions asked with their gold filtered out answered, and the shorter prompt
# comes sooner (benchmarks/answers/reader_trials.py --trials wider-evidence; benchmarks/results/superseded/
# notebook-2026-11.md, "Answers, part fifteen").
READ_MORE_SCALE = 3
# Words that ask rather than name, where a language's stop-word list lacks them (English's has them), and the
# function words those lists lack (German's passive "wurde"; Arabic, which has no list, its commonest): a
# question's content words are what a source sentence can hold, and "¿Cuántas", "wann" or "ما" never are. In
# Chinese and Japanese, read as character bigrams, a bigram holding a question word, a particle or (Japanese) kana
# of grammar ("は何", "られ") is none either. Without them the 1.5B's refusals of XQuAD's and JSQuAD's tune halves
# were asked again 3 more times of 90 (2 then right: "25", "魚類"), held out 3 more times (1 right); none of the 180
# questions asked with their gold documents filtered out reaches the share either way (benchmarks/answers/answers.py;
# benchmarks/results/superseded/notebook-2026-11.md, "Answers in other languages").
_ASKING_WORDS = {
    "de": "wer wen wem wessen wann warum wurde wurden",
    "es": "cuál cuáles cuánto cuánta cuántos cuántas quién quiénes dónde cuándo cómo",
    "fr": "quel quelle quels quelles quoi où quand comment combien pourquoi",
    "ru": "сколько почему кем чей",
    "ar": "ما ماذا من متى أين كيف كم لماذا هل أي أية هو هي الذي التي الذين في على إلى عن تم كان كانت مع ذلك هذا هذه أن إن",
}

# The one sentence of a refusal, in the question's language (English for any other).
REFUSALS = {
    "en": "The indexed documents do not say.",
    "de": "Die indexierten Dokumente sagen dazu nichts.",
    "fr": "Les documents indexés ne le disent pas.",
    "es": "Los documentos indexados no lo dicen.",
    "ru": "В проиндексированных документах об этом не сказано.",
    "ar": "لا تذكر المستندات المفهرسة ذلك.",
    "zh": "已索引的文档中没有提到这一点。",
    "ja": "索引された文書には書かれていません。",
}
# How a model words "the sources do not say" when it forgets the fixed word or translates it ("nicht gefunden",
# "未找到"), in each language it answers in: the answer is a refusal then too.
_REFUSING = re.compile("|".join([
    r"^\W*(not[\W_]*found|the (provided |given )?(sources?|documents?|context)( provided)? (do|does) not "
    r"(say|mention|contain|provide|specify|include|state)|(there is )?no (information|mention))",
    r"^\W*((die )?(quellen|dokumente) (enthalten|sagen|nennen|erwähnen|geben) (dazu )?(nichts|keine)|"
    r"(es gibt )?keine (informationen|angaben)|nicht gefunden)",  # de
    r"^\W*(les (sources|documents) ne (disent|mentionnent|contiennent|précisent|fournissent|indiquent)|"
    r"(il n'y a )?aucune (information|mention)|non trouvé|introuvable)",  # fr
    r"^\W*((las fuentes|los documentos) no (dicen|mencionan|contienen|indican|especifican)|no hay (información|mención)|no encontrado)",
    r"^\W*((в )?(источник\w*|документ\w*) (не|нет)|нет (информации|сведений)|не найден)",  # ru
    r"^\W*(لا (تذكر|تحتوي|يذكر) (المصادر|المستندات)|المصادر لا|لا توجد معلومات|غير موجود|لم يتم العثور)",  # ar
    r"^\W*((来源|资料|文档|文件)中?(没有|未|并未)(提到|提及|说明|包含)|没有(相关)?信息|无法(回答|确定)|未找到|找不到)",  # zh
    r"^\W*((情報源|ソース|文書|資料)(に|には|では).{0,20}(記載|書かれて|言及)|情報はありません|わかりません|見つかりません)",  # ja
]), re.IGNORECASE)


@dataclass
class Source:
    """A hit as the model read it: its number in the prompt, and the passage of it that supports what cites it."""

    number: int
    hit: object  # localcr.search.Hit
    shown: str  # the text the model read (the hit's text, or the part around the question's terms)
    support: str = ""  # the sentence of the hit that best matches the sentences citing it
    support_start: int | None = None  # its offsets in the document
    support_end: int | None = None

    def to_dict(self) -> dict:
        hit = self.hit
        return {"number": self.number, "chunk_id": hit.chunk_id, "doc_id": hit.doc_id, "path": hit.path,
                "start": hit.start, "end": hit.end, "page": hit.page, "context": hit.context, "text": hit.text,
                "shown": self.shown, "support": self.support, "support_start": self.support_start,
                "support_end": self.support_end}


@dataclass
class Answer:
    question: str
    text: str  # the answer with its checked citations ([n] = sources[n - 1]); a refusal is one sentence
    refused: bool
    sources: list[Source]  # what the model read, numbered from 1 (a refusal's are the nearest ones)
    checked: Checked | None = None  # None for a refusal
    model: str = ""
    cached: bool = False
    note: str = ""  # what was left out to fit the model's window, or why nothing was read
    timings: dict = field(default_factory=dict)  # first_token_s, total_s, prompt_tokens, generated_tokens
    draft: str = ""  # what the model wrote, before the check (an evaluation sees what the check itself costs)

    @property
    def unsupported(self) -> list[str]:
        """The sentences whose figures, names or quotes no cited source holds, or that cite nothing."""
        return [] if self.checked is None else [s.text for s in self.checked.unsupported]

    @property
    def cited_sources(self) -> list[Source]:
        cited = set(self.checked.cited) if self.checked else set()
        return [s for s in self.sources if s.number in cited]

    def to_dict(self) -> dict:
        checked = self.checked
        return {"question": self.question, "answer": self.text, "refused": self.refused, "draft": self.draft, "model": self.model,
                "cached": self.cached, "note": self.note,
                "sentences": [s.to_dict() for s in checked.sentences] if checked else [],
                "citations": checked.cited if checked else [], "dropped_citations": checked.dropped if checked else [],
                "unsupported": self.unsupported, "sources": [s.to_dict() for s in self.sources], "timings": self.timings}


class Answerer(OnDemandLlm):
    """Writes answers with one LLM, loaded on first need and kept for the next question (its instruction's KV
    state with it)."""

    VERSION = ANSWER_VERSION

    def __init__(self, spec, *, prompt: str = DEFAULT_PROMPT, source_chars: int = SOURCE_CHARS,
                 evidence_chars: int = evidence.BUDGET_CHARS, runner=None, log: Callable[[str], None] | None = None):
        """evidence_chars: read only the sentences of the hits that bear on the question, this many characters in
        all (localcr.answers.evidence); 0 reads each hit whole, cut to source_chars around the question's terms."""
        if prompt not in PROMPTS:
            raise LocalcrError(f"answer prompt {prompt!r}: choose one of {', '.join(PROMPTS)}")
        super().__init__(spec, runner=runner, log=log)
        self.prompt, self.source_chars, self.evidence_chars = PROMPTS[prompt], source_chars, evidence_chars

    def loading(self) -> str:
        return f"answering with {self.spec.name} (loaded once per process)"

    def _grammar(self):
        return load_grammar(self.prompt.grammar) if self.prompt.grammar else None

    def stream(self, question: str, hits: list, *, matches: list[dict] | None = None, fresh: bool = False,
               note: str = "", topic: list[str] | tuple = (), embedder: Callable[[], object] | None = None
               ) -> Iterator[tuple[str, object]]:
        """The answer as it is written: ("sources", [Source]) first, ("estimate", "reading 5 sources (1,204
        tokens), about 9 s here") before a generation, then ("text", piece) as the model writes, ("withdrawn", why)
        where the check takes streamed text back (the refusal's text follows), then ("answer", Answer). A refusal
        over the question's evidence is asked again over more of it where the hits seem to hold the answer
        (worth_reading_more): ("note", why) or a "withdrawn", then "sources" and "estimate" again. topic: the
        question's rare terms in the index (Index.rare_terms), its subject where no name gives one. `matches`:
        where the question's terms occur in each hit (Index.matches), for cutting long sources around them.
        embedder: gives the index's embedder, called only where a refusal may be asked again (worth_asking_again).
        With no hits the answer is a refusal and no model is loaded."""
        started = time.perf_counter()
        matches = matches or [{}] * len(hits)
        sources = self._sources(question, hits, matches)
        if not sources:
            yield "sources", []
            yield "answer", self._refusal(question, [], note or "no passage of the index matches the question", cached=False,
                                          timings={"first_token_s": 0.0, "total_s": round(time.perf_counter() - started, 3)})
            return
        answer, raw, shown = yield from self._attempt(question, sources, started, fresh, note, topic, embedder)
        if answer.refused and (more := self.worth_reading_more(question, hits, matches, sources, embedder)):
            wider, why = more
            if shown:
                yield "withdrawn", f"{_withdrawal(raw)}; reading more of the sources"
            else:
                yield "note", f"no answer from the question's sentences, but {why} in the sources whole: reading more of them"
            answer, raw, shown = yield from self._attempt(question, wider, started, fresh, note, topic, embedder,
                                                          budget=self._wider_budget(), why_again=why)
            answer.note = " ".join(filter(None, [answer.note, f"over the question's sentences the answer was a refusal, "
                                                              f"but {why} in the sources whole: read more of them"]))
        body = answer_part(raw)
        if answer.refused and shown:  # the text streamed so far is taken back, on a line of its own
            yield "withdrawn", _withdrawal(raw)
            yield "text", answer.text
        elif answer.refused or not shown:
            yield "text", answer.text if answer.refused else body
        elif len(body) > shown:  # what was held back as the possible start of a refusal's word
            yield "text", body[shown:]
        yield "answer", answer

    def worth_reading_more(self, question: str, hits: list, matches: list[dict], read: list[Source],
                           embedder: Callable[[], object] | None = None) -> tuple[list[Source], str] | None:
        """The hits' evidence at READ_MORE_SCALE times the budget as sources, and why they are worth reading, where
        that holds more than the model read (`read`) and the hits whole pass the second try's test
        (worth_asking_again): the evidence's 400 characters hold the gold for 92-95% of XQuAD-en questions, the
        hits whole for 99%. Asked again over the hits whole, 8 refusals of XQuAD-en's 500 questions became right
        answers (1 of the 100 held out), 12 of the six other languages' 360, and none of the 190 questions asked
        with their gold documents filtered out was answered (asked again after every refusal, 6 more of XQuAD-en's
        100 were; benchmarks/results/superseded/notebook-2026-11.md, "Answers, part fourteen"); over the wider
        evidence as many, sooner. None where nothing more is there to read, and for long filings, whose evidence
        keeps most of each hit already (evidence.LONG_PROSE_BUDGET_CHARS): read again whole there, a refusal of
        financebench-dev's 74 became a wrong answer."""
        structures = [hit.structure for hit in hits if not hit.is_code]  # of the prose hits, as _sources budgets
        if not self.evidence_chars or evidence.budget_for(structures, self.evidence_chars) != self.evidence_chars:
            return None
        wider = self._sources(question, hits, matches, self._wider_budget())
        if [s.shown for s in wider] == [s.shown for s in read]:
            return None
        why = worth_asking_again(question, self._whole(hits, matches), embedder)
        return (wider, why) if why else None

    def _wider_budget(self) -> int:
        """The evidence budget a refusal is read again at (a budget of 0 would read the hits whole)."""
        return self.evidence_chars * READ_MORE_SCALE

    def _attempt(self, question: str, sources: list[Source], started: float, fresh: bool, note: str,
                 topic: list[str] | tuple, embedder, budget: int | None = None, why_again: str = ""
                 ) -> Iterator[tuple[str, object]]:
        """One answer over these sources (chosen at an evidence budget of `budget` characters, default
        evidence_chars), from the cache or written: yields ("sources", ...), ("estimate", ...) and ("text", piece)
        as the model writes; returns (Answer, what the model wrote, how much of it was streamed). why_again:
        worth_asking_again where the caller has it already (more is read because the hits whole pass it)."""
        from localcr.cache import open_cache

        with open_cache("answers") as cache:
            entry_key = self._key(question, sources, budget)
            entry = None if fresh else cache.get(entry_key)
        if isinstance(entry, dict) and isinstance(entry.get("text"), str):
            read = sources[:entry.get("sources", len(sources))]
            if entry.get("again") or not self._written_again(question, entry["text"], read, topic):
                yield "sources", read
                answer = self._finish(question, entry["text"], read, note=entry.get("note", note), cached=True,
                                      topic=topic, timings={"first_token_s": 0.0,
                                                            "total_s": round(time.perf_counter() - started, 3)})
                return answer, entry["text"], 0
        set_up, loading = time.perf_counter(), self._runner is None
        runner = self.runner
        prefix, suffixes, dropped = self._fit(question, sources)
        sources = sources[:len(sources) - dropped]
        if dropped:
            note = " ".join(filter(None, [note, f"read {len(sources)} of {len(sources) + dropped} sources: the others do "
                                          f"not fit {self.spec.name}'s window of {runner.n_ctx} tokens"]))
        yield "sources", sources
        held = runner.keep_prefix(prefix, "answers", self._tag(), "answer-instruction", ANSWER_VERSION, self.prompt.name)
        # what loading the model and its instruction's state took, where this answer paid for it (once a process)
        setup = time.perf_counter() - set_up if loading or held != "kept" else 0.0
        estimated, estimate_at = self.seconds_for(runner, prefix, suffixes), time.perf_counter() - started
        yield "estimate", _estimate(len(sources), len(prefix) + len(suffixes), estimated)
        first, shown = None, 0

        def written(grammar):
            """One generation, its text streamed as it comes (never a refusal's word, nor a lone "1"); returns its
            Completion. A second try follows a first that showed nothing, so it streams from its start."""
            nonlocal first, shown
            text, shown = "", 0
            for piece in runner.stream(prefix, suffixes, max_tokens=ANSWER_MAX_TOKENS, stops=STOPS, grammar=grammar,
                                       repeat_penalty=ANSWER_REPEAT_PENALTY):
                if isinstance(piece, Completion):
                    self._record(runner, piece)
                    return piece
                first = first if first is not None else time.perf_counter() - started
                text += piece
                showable = _showable(text)
                if showable > shown:
                    yield "text", text[shown:showable]
                    shown = showable
            raise AssertionError("the stream ended without its completion")

        completion = yield from written(self._grammar())
        raw, evaluated, generated = completion.text, completion.evaluated, completion.tokens
        if is_refusal(answer_part(raw)) and (why := why_again or worth_asking_again(question, sources, embedder)):
            # the prompt's evaluation is kept (its logits too), so the second try costs its generation alone; the
            # first estimate counted an answer's length where the refusal took a few tokens
            more = self.seconds_for(runner, prefix, suffixes)
            estimated = max(estimated, time.perf_counter() - started - estimate_at + more)
            if estimated >= ANNOUNCED_FROM_SECONDS:
                yield "estimate", f"asking again with refusing forbidden, about {more:.0f} s more"
            completion = yield from written(load_grammar(_NO_REFUSAL))
            raw = completion.text
            evaluated, generated = evaluated + completion.evaluated, generated + completion.tokens
            note = " ".join(filter(None, [note, f"the model refused at first, but {why}: asked again with refusing "
                                                "forbidden"]))
        if again := self._written_again(question, raw, sources, topic):
            grammar, why = again
            if shown:  # a lone "1" never is
                yield "withdrawn", f"{_withdrawal(raw)}; writing it again"
            completion = yield from written(load_grammar(grammar))
            raw = completion.text
            evaluated, generated = evaluated + completion.evaluated, generated + completion.tokens
            note = " ".join(filter(None, [note, why]))
        timings = {"first_token_s": round(first if first is not None else time.perf_counter() - started, 3),
                   "total_s": round(time.perf_counter() - started, 3),
                   "prompt_tokens": len(prefix) + len(suffixes), "evaluated_tokens": evaluated,
                   "generated_tokens": generated, "estimated_s": round(estimated, 3), "estimate_at_s": round(estimate_at, 3),
                   "announced": estimated >= ANNOUNCED_FROM_SECONDS, "setup_s": round(setup, 3)}
        with open_cache("answers") as cache:  # only a whole answer is stored: an interrupted one is written again
            cache.set(entry_key, {"text": raw, "sources": len(sources), "note": note, "again": bool(again)}, self._tag())
        return self._finish(question, raw, sources, note=note, cached=False, timings=timings, topic=topic), raw, shown

    def _written_again(self, question: str, raw: str, sources: list[Source], topic) -> tuple[str, str] | None:
        """The grammar the answer is written again under, and why, where what the model wrote is no answer to keep: a
        lone "1" (_LONE_ONE), or, to a question in a language of its own script (_SCRIPTS), an answer in another that
        no source holds. None for any other answer (and a cached one written before this was asked is asked now)."""
        if _LONE_ONE.fullmatch(raw):
            return _NO_LEADING_FIGURE, "the model wrote only \"1\", a source's number: asked again for an answer that " \
                                       "starts with words"
        language = _language(question)
        script = _SCRIPTS.get(language)
        body = answer_part(raw)
        if script and not is_refusal(body) and _in_another_script(body, script) and self._finish(
                question, raw, sources, note="", cached=False, timings={}, topic=topic).refused:
            return (f'root ::= "{NOT_FOUND}" | [{script}] [^\\n]*\n', f"the model wrote in another script what no "
                    f"source holds: asked again to write in {LANGUAGE_NAMES[language]}")
        return None

    @staticmethod
    def _record(runner, completion: Completion) -> None:
        """This machine's LLM rates for answers, for the next answer's estimate (a refusal's length is no answer's)."""
        from localcr.contexts.rates import ANSWER, record_work

        record_work(runner, ANSWER, completion.evaluated, completion.prompt_seconds, completion.tokens,
                    completion.generate_seconds, outputs=0 if is_refusal(completion.text) else 1)

    # -- the prompt ------------------------------------------------------------------------------------------
    def _sources(self, question: str, hits: list, matches: list[dict], budget: int | None = None) -> list[Source]:
        """The hits as the model reads them, numbered from 1: the sentences of prose hits that bear on the question
        (localcr.answers.evidence, `budget` characters of them, default evidence_chars; a hit with none is not read), code
        hits whole (a function is no row of sentences), or every hit whole for a budget of 0."""
        budget = self.evidence_chars if budget is None else budget
        if not budget:
            return self._whole(hits, matches)
        prose = [hit for hit in hits if not hit.is_code]
        texts = [(hit.window_text or hit.text).strip() for hit in prose]
        chosen = evidence.select(question, texts, languages=[_language(text) for text in texts],
                                 budget=evidence.budget_for([hit.structure for hit in prose], budget))
        kept = {id(hit): evidence.render(text, sentences) for hit, text, sentences in zip(prose, texts, chosen) if sentences}
        read = [(hit, kept[id(hit)] if not hit.is_code else self._shown(hit, found)) for hit, found in zip(hits, matches)
                if hit.is_code or id(hit) in kept]
        return [Source(n, hit, shown) for n, (hit, shown) in enumerate(read, start=1)]

    def _whole(self, hits: list, matches: list[dict]) -> list[Source]:
        """Every hit as a source, read whole (cut to source_chars around the question's terms if long)."""
        return [Source(n, hit, self._shown(hit, found)) for n, (hit, found) in enumerate(zip(hits, matches), start=1)]

    def _shown(self, hit, found: dict) -> str:
        """The text of a hit the model reads: its window or chunk, cut around the question's terms if long."""
        field_name = "window_text" if hit.window_text else "text"
        text = getattr(hit, field_name).strip()
        if len(text) <= self.source_chars:
            return text
        pieces = snippet(text, found.get(field_name, []), self.source_chars, prose=not hit.is_code)
        return "".join(piece for piece, _ in pieces)

    def _source_block(self, source: Source) -> str:
        hit = source.hit
        where = hit.doc_id + (f", page {hit.page}" if hit.page else "")  # the id, not where this machine keeps it
        context = " ".join(hit.context.split())
        if len(context) > CONTEXT_CHARS:
            context = context[:CONTEXT_CHARS].rsplit(" ", 1)[0] + " …"
        return f"[{source.number}] {where}" + (f" ({context})" if context else "") + f"\n{source.shown}\n\n"

    def _fit(self, question: str, sources: list[Source]) -> tuple[list[int], list[int], int]:
        """The prompt's fixed prefix and its question part, with as many sources (best first) as fit the model's
        window with room for the answer; and how many were left out. A window too small for one source is an error."""
        runner = self.runner
        for keep in range(len(sources), 0, -1):
            prefix, suffix = runner.render(self.prompt.instruction, self._body(question, sources[:keep]), self.prompt.system)
            if len(prefix) + len(suffix) + ANSWER_MAX_TOKENS <= runner.n_ctx:
                return prefix, suffix, len(sources) - keep
        raise LocalcrError(f"{self.spec.name}'s window of {runner.n_ctx} tokens is too small for the question and one "
                           "source with room for an answer: raise its n_ctx in models.toml, or ask with a shorter question")

    def _body(self, question: str, sources: list[Source]) -> str:
        """What follows the instruction: the numbered sources, then the question."""
        return ("Sources:\n" + "".join(self._source_block(s) for s in sources) + f"Question: {question}\n"
                + _in_language(question) + "Answer:")

    def seconds_for(self, runner, prefix: list[int], suffix: list[int]) -> float:
        """About how long answering this prompt takes: the tokens its evaluation does not take from the KV cache at
        the prompt rate, then an answer's tokens, at the rates and the length of this machine's last answers
        (ANSWER_TOKENS before one is recorded)."""
        from localcr.contexts.rates import ANSWER, recorded_rates, typical_rates

        rates = recorded_rates(self.spec, runner.threads, 1, ANSWER) or typical_rates(self.spec)
        evaluate = len(prefix) + len(suffix) - runner.reused(prefix + suffix, len(prefix))
        return evaluate / rates.prompt + (rates.tokens_per_context or ANSWER_TOKENS) / rates.generate

    # -- the result --------------------------------------------------------------------------------------------
    def _finish(self, question: str, raw: str, sources: list[Source], *, note: str, cached: bool, timings: dict,
                topic: list[str] | tuple = ()) -> Answer:
        body = answer_part(raw)
        if is_refusal(body):
            return self._refusal(question, sources, note, cached=cached, timings=timings, draft=raw)
        # Checked against the whole passage each source is (its window or chunk), not only the evidence the model
        # read from it: a sentence the passage holds is grounded in it ("the early part, from 1519 to 1520", where
        # the evidence kept 1519 and the passage says what was published in 1520).
        whole = [f"{s.hit.path}\n{s.hit.context}\n{s.hit.window_text or s.hit.text}" for s in sources]
        body = figures_closed_up(body, whole)
        language = _language(question)
        checked = check(body, whole, names=language != "de", question=question,  # German capitalises every noun
                        code=[s.hit.is_code for s in sources], language=language, about=whole, topic=topic)
        if not any(s.supported for s in checked.sentences):  # nothing of it is in the sources: grounded or silent
            why = "the model's answer had no sentence its sources hold, so it is not shown"
            return self._refusal(question, sources, " ".join(filter(None, [note, why])), cached=cached, timings=timings,
                                 draft=raw)
        for source in sources:
            citing = [s.text for s in checked.sentences if source.number in s.citations]
            if citing:
                _attach_support(source, " ".join(citing))
        return Answer(question, checked.text, False, sources, checked, model=self.spec.name, cached=cached, note=note,
                      timings=timings, draft=raw)

    def _refusal(self, question: str, sources: list[Source], note: str, *, cached: bool, timings: dict,
                 draft: str = "") -> Answer:
        return Answer(question, REFUSALS.get(_language(question), REFUSALS["en"]), True, sources, None,
                      model=self.spec.name, cached=cached, note=note, timings=timings, draft=draft)

    def _key(self, question: str, sources: list[Source], budget: int | None = None) -> str:
        """The cache key of an answer over these sources, chosen at an evidence budget of `budget` characters
        (default evidence_chars; 0: the hits whole)."""
        from localcr.cache import key
        from localcr.contexts.keys import settings_signature

        return key("answer", self.spec.fingerprint(), ANSWER_VERSION, self.prompt.name,
                   settings_signature(self.spec, ANSWER_REPEAT_PENALTY),
                   str(self.source_chars), str(self.evidence_chars if budget is None else budget), question,
                   *filter(None, [_in_language(question)]),
                   *(f"{s.hit.chunk_id}\x1e{s.hit.context}\x1e{s.shown}" for s in sources))


def worth_asking_again(question: str, sources: list[Source], embedder: Callable[[], object] | None = None) -> str:
    """Why a refusal is asked again with refusing forbidden ("" where it is not): two sentences in a row of a source
    hold RETRY_COVERAGE of the question's content words (answering_window), or are as close to it as
    RETRY_SIMILARITY in the index's embedding (closest_window), where that embedder's scale was measured."""
    share = answering_window(question, sources)[0]
    if share >= RETRY_COVERAGE:
        return f"two sentences of a source hold {share:.0%} of the question's words"
    try:
        model = embedder() if embedder is not None else None
        least = RETRY_SIMILARITY.get(getattr(getattr(model, "spec", None), "name", ""))
        close = closest_window(question, sources, model) if least is not None else 0.0
    except LocalcrError:  # the index's embedder is gone or changed (a lexical search needs none): the words decide
        return ""
    if least is not None and close >= least:
        return f"two sentences of a source are close to the question (cosine {close:.2f})"
    return ""


def closest_window(question: str, sources: list[Source], embedder) -> float:
    """The cosine, in the embedder's space, between the question and its closest two sentences in a row of a
    source (the windows answering_window counts words in)."""
    import numpy as np

    language, vector, best = _language(question), np.asarray(embedder.embed_query(question)), 0.0
    for source in sources:
        windows = [source.shown[start:end] for start, end in _windows(evidence.sentence_spans(source.shown, language))]
        if windows:
            best = max(best, float((embedder.encode(windows) @ vector).max()))
    return best


def _windows(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Where each sentence and the next RETRY_SENTENCES - 1 run, from each sentence's span."""
    return [(start, spans[min(i + RETRY_SENTENCES, len(spans)) - 1][1]) for i, (start, _) in enumerate(spans)]


def answering_window(question: str, sources: list[Source]) -> tuple[float, Source | None, str]:
    """The RETRY_SENTENCES sentences in a row of a source that hold the largest share of the question's content
    words (content_terms: the index's analysis, the words that ask left out): that share, the source and those
    sentences; (0.0, None, "") for a question of fewer than two such words."""
    language = _language(question)
    wanted = content_terms(question, language)
    best: tuple[float, Source | None, str] = (0.0, None, "")
    if len(wanted) < 2:
        return best
    for source in sources:
        spans = evidence.sentence_spans(source.shown, language)
        terms = [content_terms(source.shown[start:end], language) for start, end in spans]  # each sentence's, once
        for i, (start, end) in enumerate(_windows(spans)):
            share = len(wanted & set().union(*terms[i:i + RETRY_SENTENCES])) / len(wanted)
            if share > best[0]:
                best = (share, source, source.shown[start:end])
    return best


# A figure with a space after each thousands comma, as the 1.5B sometimes writes one ("17, 786, 419").
_SPACED_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:, \d{3})+(?![\d,])")


def figures_closed_up(answer: str, sources: list[str]) -> str:
    """The answer with each figure written "17, 786, 419" closed up to "17,786,419" where a source writes it so:
    otherwise the check reads three numbers no source holds and withdraws a right answer. Where no source writes
    the figure it stays as written, so a list of numbers ("100, 200, 300") stays a list."""
    def closed(found: re.Match) -> str:
        figure = found[0].replace(", ", ",")
        held = re.compile(rf"(?<![\d.,]){re.escape(figure)}(?![\d]|[.,]\d)")
        return figure if any(held.search(source) for source in sources) else found[0]

    return _SPACED_GROUPS.sub(closed, answer)


def _withdrawal(raw: str) -> str:
    """What is said where streamed text became a refusal, and why: the model said so after it, or the check found
    none of it in the sources."""
    why = "the model then wrote that the sources do not answer" if is_refusal(answer_part(raw)) else \
        "no sentence of it is in its sources"
    return f"withdrawn: the text above is not an answer ({why})"


def _estimate(sources: int, tokens: int, seconds: float) -> str:
    """'reading 5 sources (1,204 tokens), about 9 s here'; the time only from ANNOUNCED_FROM_SECONDS."""
    time_said = f", about {seconds:.0f} s here" if seconds >= ANNOUNCED_FROM_SECONDS else ""
    return f"reading {sources} source{'s' if sources != 1 else ''} ({tokens:,} tokens){time_said}"


def content_terms(text: str, language: str) -> set[str]:
    """The terms of a text as the index analyses them (stemmed, stop words out), less the words that ask
    (_ASKING_WORDS, and CJK bigrams of grammar: localcr.lexical.grammatical): what a question names, for telling
    whether a source sentence holds it."""
    from localcr.lexical import grammatical, tokenize

    return {term for term in tokenize(text, language, _stop_and_asking_words(language)) if not grammatical(term, language)}


@lru_cache(maxsize=None)
def _stop_and_asking_words(language: str) -> frozenset[str]:
    from localcr.lexical import stopwords_of

    return stopwords_of([language]) | frozenset(_ASKING_WORDS.get(language, "").split())


def is_refusal(raw: str) -> bool:
    """Whether the model said the sources do not answer (its fixed word, the usual ways of saying it, or a word
    for nothing alone), or said nothing: no word but its citations ("[1]", as the 1.5B answered a German question
    whose source held it)."""
    text = raw.strip()
    said = CITATION.sub("", text)
    return (not any(c.isalnum() for c in said) or bool(_REFUSAL_WORD.search(text)) or bool(_REFUSING.match(text))
            or bool(_NOTHING.fullmatch(said)))


# An answer that is only a word for "nothing" ("NotHING [1]", written by the 1.5B with the refusal word forbidden)
# says the sources do not answer; "Nothing was found there" is an answer.
_NOTHING = re.compile(r"\W*(nothing|none|unknown|nichts|keine|rien|aucun|nada|ninguno|ничего|无|なし)\W*", re.IGNORECASE)


# The languages answers are checked in, by name: a question in one of them is told which language to answer in
# (the 1.5B answered German questions half in English when told only "in the language of the question").
LANGUAGE_NAMES = {"de": "German", "fr": "French", "es": "Spanish", "ru": "Russian", "ar": "Arabic", "zh": "Chinese",
                  "ja": "Japanese"}


def _in_language(question: str) -> str:
    """The line after a question not in English that names the language of the answer; "" for English."""
    name = LANGUAGE_NAMES.get(_language(question))
    return f"Write the answer in {name}.\n" if name else ""


# The refusal word written after an answer, as the prompt writes it (in capitals) or joined otherwise ("NOT_FOUND");
# "not found" in an answer's words is no refusal ("The file is not found in the archive").
_REFUSAL_WORD = re.compile(r"NOT[\W_]*FOUND")


def answer_part(raw: str) -> str:
    """The model's answer without the refusal word it wrote after it ("... a strange odor in their spacesuits. NOT
    FOUND", where another evaluation of the same prompt wrote "[1]"): checked like any answer, its sentences kept only
    where a source holds them. A text that is the refusal word, or starts with it, is left whole (a refusal)."""
    found = _REFUSAL_WORD.search(raw)
    if found is None or not any(c.isalnum() for c in CITATION.sub("", raw[:found.start()])):
        return raw
    return raw[:found.start()].rstrip()


def _in_another_script(answer: str, script: str) -> bool:
    """Whether an answer has letters and none of them in the script (a character class's ranges) of its question."""
    text = CITATION.sub(" ", answer)
    return bool(re.search(r"[^\W\d_]", text)) and not re.search(f"[{script}]", text)


def _showable(written: str) -> int:
    """How much of the text written so far may be streamed: nothing while it may still become a refusal's word,
    then not a refusal's word written after it, nor an end that may still become one."""
    if _may_refuse(written) or _LONE_ONE.fullmatch(written):  # may still be a refusal, or a source's number alone
        return 0
    found = _REFUSAL_WORD.search(written)
    if found is not None:
        return len(written[:found.start()].rstrip())
    for n in range(min(len(NOT_FOUND) - 1, len(written)), 0, -1):
        if written[-n:].upper() == NOT_FOUND[:n]:
            return len(written) - n
    return len(written)


def _may_refuse(written: str) -> bool:
    """Whether the text so far may still become the fixed word of a refusal (so it is held back)."""
    text = written.strip().upper()
    return NOT_FOUND.startswith(text) or text.startswith(NOT_FOUND)


@lru_cache(maxsize=256)
def _language(text: str) -> str:
    """The question's language (asked for the check and again for a refusal's sentence: detected once)."""
    from localcr.language import detect_within

    return detect_within(text)


def _attach_support(source: Source, citing: str) -> None:
    """The sentence (or line) of the source's chunk that shares the most terms with the sentences citing it (stop
    words out, numbers in words read as figures: "3 times" is supported by "retried three times", not by "the backoff
    ... and"): a whole sentence, never cut at a decimal point, an abbreviation or a host name
    (localcr.answers.evidence.sentence_spans)."""
    from localcr.answers.numerals import as_digits

    hit = source.hit
    language = _language(hit.text[:400])
    wanted = content_terms(as_digits(CITATION.sub(" ", citing), language), language)
    best, best_score = None, 0
    for start, end in evidence.sentence_spans(hit.text, language):
        score = len(wanted & content_terms(as_digits(hit.text[start:end], language), language))
        if score > best_score:
            best, best_score = (start, end), score
    if best is None:
        return
    source.support = hit.text[best[0]:best[1]]
    if hit.start >= 0:
        source.support_start = hit.start + best[0]
        source.support_end = hit.start + best[1]


def load_answerer(registry: Registry, name: str | None = None, *, log: Callable[[str], None] | None = None,
                  **options) -> Answerer:
    """An answerer with the named LLM, or the registry's default one (its file is checked now, loaded on first use)."""
    return Answerer(resolved_llm(registry, name), log=log, **options)

