"""Document cards: one line per document saying what the document is, joined to every chunk's context.

Page 48 of an annual report says "net revenue increased 3%" and names neither the company nor the year; the
question names both. A per-chunk LLM context carries them, but costs every token of the corpus (hours for a few
long reports on a laptop). A card costs one read of the document's *opening* (where a report, a manual or a paper
says who wrote it, about what, for which period or version) and three short fields: seconds a document. The
fields are asked for one by one (subject, kind, period) because a company's filings differ only in kind and
period: a free sentence named the company and often neither of the others. It fills the slot a title fills in
structural contexts (`localcr.structure`), for documents that have no title.

Cards are cached by model fingerprint, card prompt version, how much of the opening was read, the document's
text and, where it has them, its title and metadata (`document_header`), each as soon as it is written (a killed
run resumes); the guard (`localcr.guard.guard_card`) runs on the cached raw output every time, so tightening it
never needs the model.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from localcr.documents import Document
from localcr.errors import LocalcrError
from localcr.guard import guard_card

# Version of the prompt below: part of every card's cache key, bumped whenever its text changes.
CARD_VERSION = "card-2026.3"
# How much of a document's opening the model reads, in its tokens: a cover page says what the document is. 500 named
# the company in 15 of 15 filings' cards where 1,000 cost twice the time (benchmarks/results/superseded/
# notebook-2026-11.md, "Long documents: document cards and recognised sections"); 350 keeps as many cards of every
# kind (filings 45 of 45, the same companies; Node.js pages 44 of 46 against 43; mail and e-books all) and the
# filings' P@10 (64.2 against 62.2 held out), at 4.0 s a card against 4.6 (BENCHMARKS.md, "Why the retrieval defaults
# are what they are"; the run: the notebook's "Cards at a shorter opening"). Placing the request before the document,
# so that consecutive cards share it, cost 3 of 45 filings' cards: the 1.5B wrote "Company:" for "Subject:".
OPENING_TOKENS = 350
OUTLINE_ITEMS = 24  # headings (or definitions) listed after the opening, so the card sees the whole document's shape
CARD_MAX_TOKENS = 96
HEADER_CHARS = 300  # of a title or a message's metadata shown before the opening (a mail to fifty people is cut)
# A card run whose estimate reaches this many seconds is announced ("about N min"), and so measured first.
ANNOUNCED_FROM_SECONDS = 30

CARD_SYSTEM = ("You fill in index cards that say what a document is, so that any passage taken from it can be "
               "placed: who or what it is by or about, what kind of document it is, and which period it covers.")
# The subject may be a product or a project (a manual's, a library's): asked for an organisation only, the 1.5B
# named a documentation page's publisher, which the page never writes, and the card fell back. A period is asked
# for only where the opening states one: asked always, it wrote a year for a manual from nowhere.
CARD_REQUEST = (
    "Above is the opening of a document{pages}. Fill in its card from what the opening says, with names and dates "
    "as the document writes them, one line each:\n"
    "Subject: the company, organisation, product or project the document is by or about, named as the document names it\n"
    "Kind: what kind of document it is (its form or type as the document calls itself: annual report, user guide, "
    "paper, letter ...)\n"
    "Period: the fiscal year, quarter, date or version it covers, if the opening states one, else none\n"
    "Answer with the three lines only."
)
COMPLETION_ANSWER = "\n\nCard:\nSubject:"
STOPS = ("\n\n", "</document>")


@dataclass
class CardStats:
    documents: int = 0
    cached: int = 0  # served from the cache without running the model
    written: int = 0  # generated now
    fallbacks: int = 0  # rejected by the guard: the document's chunks keep their structural context alone
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    fell_back: dict[str, str] = field(default_factory=dict)  # doc_id -> the guard's reason, for `localcr stats`
    judged: set[str] = field(default_factory=set)  # every document judged here, carded or not (not recorded)
    prompt_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0

    def count_fallback(self, reason: str, doc_id: str) -> None:
        self.fallbacks += 1
        self.fallback_reasons[reason] = self.fallback_reasons.get(reason, 0) + 1
        self.fell_back[doc_id] = reason

    def summary(self) -> str:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.fallback_reasons.items())) or "none"
        per_doc = f", {self.seconds / self.written:.1f} s a document written" if self.written else ""
        documents = f"{self.documents} document{'' if self.documents == 1 else 's'}"
        return (f"cards: {documents}: {self.cached} from cache, {self.written} written, "
                f"{self.fallbacks} fell back ({reasons}); {self.seconds:.1f} s{per_doc}")

    def meta(self) -> dict:
        """What the index's manifest keeps (and `localcr stats` shows)."""
        return {"documents": self.documents, "cached": self.cached, "written": self.written,
                "fallbacks": self.fallbacks, "fallback_reasons": dict(self.fallback_reasons),
                "fell_back": dict(sorted(self.fell_back.items()))}


def wants_card(doc: Document) -> bool:
    """Whether the "auto" mode gives a document a card: long prose without a title of its own (see
    Document.is_long_untitled_prose), whose pages do not say what the document is."""
    return doc.is_long_untitled_prose


def document_header(doc: Document) -> str:
    """What the reader knows of a document that its opening may not show, as lines before the opening: its title (an
    EPUB's dc:title, a message's subject, a record's title) and what its metadata says besides (a message's sender,
    recipients and date). Without them the 1.5B copied the request's placeholder where the opening shows no name it
    can read (braille, an anthology opening on a bibliography). "" for a document with neither (a filing, an untitled
    page): its prompt, and so its cached card, stay as they were."""
    return "".join(f"{label}: {' '.join(value.split())[:HEADER_CHARS]}\n"
                   for label, value in (("Title", doc.title), ("About", doc.about)) if value)


def card_key(fingerprint: str, spec, doc: Document, opening_tokens: int) -> str:
    from localcr.cache import key

    parts = ["card", fingerprint, CARD_VERSION, f"{spec.prompt_style}|{spec.chat_format}|{spec.temperature}|"
             f"{spec.repeat_penalty}", str(opening_tokens), doc.sha]
    if header := document_header(doc):
        parts.append(header)  # only then: the keys of documents with neither stay what they were
    return key(*parts)


def card_tag(spec) -> str:
    """The label of a card in the cache: the LLM and the card prompt's version, by which `localcr cache` lists and prunes."""
    from localcr.cache import tag

    return tag(spec.name, f"fingerprint {spec.fingerprint()}", CARD_VERSION)


class CardWriter:
    """Writes the cards of documents with one loaded model."""

    def __init__(self, runner, opening_tokens: int = OPENING_TOKENS):
        self.runner, self.spec, self.opening_tokens = runner, runner.spec, opening_tokens
        # What the cards written on a warm model cost (prompt tokens evaluated, their seconds, tokens generated,
        # theirs, cards): the first after a model is loaded pays for reading its weights (39 s against 5 here).
        self.work = [0, 0.0, 0, 0.0, 0]
        if opening_tokens + 400 + CARD_MAX_TOKENS > runner.n_ctx:
            raise LocalcrError(f"{self.spec.where}: n_ctx = {runner.n_ctx} is too small for a card's "
                               f"{opening_tokens}-token opening; raise n_ctx")

    def opening_chars(self, doc: Document) -> int:
        """How many characters of the document its first `opening_tokens` tokens are (cut at a line end where one
        is near): what the model reads, and what the guard checks the card's period and kind against."""
        head = doc.text[: self.opening_tokens * 8]
        tokens = self.runner.tokenize(head)
        if len(tokens) <= self.opening_tokens:
            return len(head)
        head = self.runner.detokenize(tokens[: self.opening_tokens])
        line_end = head.rfind("\n", len(head) // 2)
        return line_end if line_end > 0 else len(head)

    def prompt(self, doc: Document, opening_chars: int) -> tuple[list[int], list[int]]:
        pages = f" of {len(doc.pages)} pages" if len(doc.pages) > 1 else ""
        request = CARD_REQUEST.format(pages=pages)
        if not self.runner.is_chat:
            request += COMPLETION_ANSWER
        head = document_header(doc) + doc.text[:opening_chars] + ("\n[...]" if opening_chars < len(doc.text) else "")
        outline = document_outline(doc)
        opening = head + (f"\n\nOutline of the whole document: {'; '.join(outline)}" if outline else "")
        return self.runner.render(f"<document>\n{opening}\n</document>\n", request, CARD_SYSTEM)

    def write(self, doc: Document) -> dict:
        """The cache entry of one document's card: the raw output (the three fields), whether it ended by itself,
        its tokens, and how much of the document's opening the model read."""
        opening_chars = self.opening_chars(doc)
        prefix, suffix = self.prompt(doc, opening_chars)
        out = self.runner.complete(prefix, suffix, max_tokens=CARD_MAX_TOKENS, stops=STOPS)
        if out.reused:  # its prompt began as one before it did: the model had run, its weights were read
            for i, value in enumerate((out.evaluated, out.prompt_seconds, out.tokens, out.generate_seconds, 1)):
                self.work[i] += value
        prefill = "" if self.runner.is_chat else "Subject:"
        return {"raw": (prefill + out.text).strip(), "finished": out.finished, "tokens": out.tokens,
                "prompt_tokens": out.evaluated, "seconds": out.prompt_seconds + out.generate_seconds,
                "opening_chars": opening_chars}

    def seconds_for(self, docs: list[Document], log: Callable[[str], None] | None = None) -> float:
        """About how long writing these cards takes: their prompts (counted) at the prompt rate, a card's tokens at
        the generation rate of one sequence, as this machine's last cards ran (record_rates). Before any, a run
        long enough to be announced (ANNOUNCED_FROM_SECONDS at typical rates) measures this machine's rates first
        (once, a few seconds): typical rates put 10 cards at 3 min on a pair of cores that wrote them in 53 s,
        and a pair of another kind of CPU can be as much slower. A shorter run takes typical rates for the
        model's size, a card's 40 tokens at half the rate eight sequences reach side by side."""
        from localcr.contexts.rates import CARD, llm_rates, machine_rates, typical_rates

        prompt = evaluated_tokens([sum(self.prompt(d, self.opening_chars(d)), []) for d in docs])
        rates = llm_rates(self.runner, CARD)
        if rates is not None and rates.tokens_per_context:
            return prompt / rates.prompt + len(docs) * rates.tokens_per_context / rates.generate
        typical = typical_rates(self.spec)
        seconds = prompt / typical.prompt + len(docs) * 40 / (typical.generate / 2)
        measured = machine_rates(self.runner, docs, seconds >= ANNOUNCED_FROM_SECONDS, "cards", log)
        return seconds if measured is None else prompt / measured.prompt + len(docs) * 40 / measured.generate

    def record_rates(self) -> None:
        """Remember the rates of the cards written so far, for the next estimate (CARD)."""
        from localcr.contexts.rates import CARD, record_work

        evaluated, prompt_seconds, generated, generate_seconds, cards = self.work
        record_work(self.runner, CARD, evaluated, prompt_seconds, generated, generate_seconds, cards)


def evaluated_tokens(prompts: list[list[int]]) -> int:
    """The prompt tokens the model evaluates for these prompts run one after another: each reuses the start it shares
    with the one before (LlamaRunner.complete keeps its KV cache), which the measured prompt rate leaves out too."""
    from os.path import commonprefix

    return sum(len(now) - len(commonprefix([before, now])) for before, now in zip([[]] + prompts, prompts))


def document_outline(doc: Document) -> list[str]:
    """The headings a reader of the whole document would skim (Markdown, reST, recognised headings of plain
    text and PDFs, a PDF's bookmarks), or a code file's top-level definitions; at most OUTLINE_ITEMS."""
    from localcr.structure import outline_items

    items = outline_items(doc)
    return items[:OUTLINE_ITEMS] + (["..."] if len(items) > OUTLINE_ITEMS else [])


def cached_cards(documents: list[Document], spec, *, opening_tokens: int = OPENING_TOKENS,
                 stats: CardStats | None = None) -> tuple[dict[str, str], list[Document]]:
    """The cards the cache already holds for these documents (judged by the guard, counted in `stats`) and the
    documents it holds none for; loads no model, so a build can situate chunks with them before any card is written."""
    from localcr.cache import open_cache

    stats = stats if stats is not None else CardStats()
    cards: dict[str, str] = {}
    todo = []
    fingerprint = spec.fingerprint()
    with open_cache("contexts") as cache:
        for doc in documents:
            entry = cache.get(card_key(fingerprint, spec, doc, opening_tokens))
            if isinstance(entry, dict):
                stats.documents += 1
                stats.cached += 1
                _judge(doc, entry, cards, stats)
            else:
                todo.append(doc)
    return cards, todo


def write_cards(documents: list[Document], spec, *, progress: bool = True, runner=None, use_cache: bool = True,
                opening_tokens: int = OPENING_TOKENS, log: Callable[[str], None] | None = None,
                stats: CardStats | None = None,
                on_card: Callable[[Document, str | None], None] | None = None) -> dict[str, str]:
    """The card of every document (doc_id -> sentence; a document whose card the guard rejects has none, and
    its reason is counted in `stats`). Cached cards are used first; the model is loaded only for the rest, each
    stored as soon as it is written. runner: an already loaded model (not closed here); on_card: called with
    each document and its card (None when the guard rejected it) as soon as it is judged, cached or written, so a
    build can commit each document's improved chunks while the next card is written."""
    from localcr.cache import open_cache
    from localcr.contexts.run import _duration
    from localcr.llm import LlamaRunner

    started = time.perf_counter()
    stats = stats if stats is not None else CardStats()
    log = log or (lambda message: print(message, file=sys.stderr))
    cards: dict[str, str] = {}
    todo = documents
    if use_cache:
        cards, todo = cached_cards(documents, spec, opening_tokens=opening_tokens, stats=stats)
        missing = {d.doc_id for d in todo}
        for doc in documents:
            if on_card is not None and doc.doc_id not in missing:
                on_card(doc, cards.get(doc.doc_id))
    stats.documents += len(todo)
    cache = open_cache("contexts") if use_cache and todo else None
    own_runner = False
    try:
        if todo:
            own_runner = runner is None
            runner = runner or LlamaRunner(spec)
            writer = CardWriter(runner, opening_tokens)
            estimate = writer.seconds_for(todo, log)
            if estimate >= ANNOUNCED_FROM_SECONDS:
                log(f"cards: {len(todo)} documents to describe with {spec.name}, about {_duration(estimate)} on "
                    f"{runner.threads} threads; an interrupted run resumes where it stopped")
            try:
                _write_all(writer, todo, cache, card_tag(spec), cards, stats, progress, on_card)
            finally:  # a killed run's cards measure the rates too
                writer.record_rates()
    finally:
        if own_runner and runner is not None:
            runner.close()
        if cache is not None:
            cache.close()
        stats.seconds += time.perf_counter() - started
    return cards


def _write_all(writer: CardWriter, todo: list[Document], cache, cache_tag: str, cards: dict[str, str],
               stats: CardStats, progress: bool, on_card) -> None:
    from tqdm import tqdm

    with tqdm(todo, unit="doc", desc="cards", file=sys.stderr, disable=not progress, dynamic_ncols=True) as bar:
        for doc in bar:
            entry = writer.write(doc)
            if cache is not None:
                cache.set(card_key(writer.spec.fingerprint(), writer.spec, doc, writer.opening_tokens), entry, cache_tag)
            stats.written += 1
            stats.prompt_tokens += entry["prompt_tokens"]
            stats.generated_tokens += entry["tokens"]
            _judge(doc, entry, cards, stats)
            if on_card is not None:
                on_card(doc, cards.get(doc.doc_id))


def _judge(doc: Document, entry: dict, cards: dict[str, str], stats: CardStats) -> None:
    """Judge a card against what the model read: the title and metadata shown before the opening count as the
    document's text (a subject named only by an e-book's title, a year only in a message's date), and the title is
    a name the card may give, not an outline it copied ("महाभारत, literary work." for the e-book of that title, whose
    first heading it also is, was a "copy")."""
    header = document_header(doc)
    opening = header + doc.text[: entry.get("opening_chars", 0)]
    outline = document_outline(doc)
    if doc.title:
        title = " ".join(doc.title.split()).casefold()
        outline = [item for item in outline if " ".join(item.split()).casefold() != title]
    card, reason = guard_card(entry.get("raw", ""), header + doc.text, opening, outline="; ".join(outline))
    stats.judged.add(doc.doc_id)
    if card is None:
        stats.count_fallback(reason, doc.doc_id)
    else:
        cards[doc.doc_id] = card


