"""Navigation by the outline: the local LLM reads a long document's outline and names the section that would
hold the answer; its chunks (and those of the sections under it) rank first.

Search finds the filing (the gold one is among the top three for every financebench-dev question) but not the
passage inside it: "What was the capital expenditure in FY2022?" is answered by a cash-flow statement's
"Purchases of property, plant and equipment", which neither retriever ties to the question. A reader who knows
what a cash-flow statement holds turns to it from the table of contents. The outline is what the index already
knows of each document: the section path every chunk's structural context carries ("Section: PART II > Item 8 >
Consolidated Statements of Cash Flows ..."), listed once per section in document order with its pages.

Cost: the outline (a 10-K's runs to 540-1,070 tokens) is evaluated once per document and model; its KV state is
kept in the cache (`LlamaRunner.keep_prefix`), so a later question, in this process or another, evaluates only its
own tokens. The model's reply is cached per model, prompt version, question and outline.

Worth: only as much as the model's choice. With the bundled 1.5B it lowers financebench-dev P@10 (41.9 -> 17.6:
it names a section holding the answer for 16 of 74 questions), where naming the right section gives 70.3
(BENCHMARKS.md, "Tried and not adopted" and "Why the search defaults are what they are"); so it is an option for
stronger models, off by default.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from localcr.documents import page_at
from localcr.llm import OnDemandLlm, resolved_llm
from localcr.models import Registry

# Version of the prompt below: part of every cached navigation's key, bumped whenever its text changes.
NAVIGATION_VERSION = "navigate-2026.1"
# Documents navigated per search: the first ones of the fused ranking. Chosen by benchmarks/retrieval/navigation.py on
# financebench-dev (benchmarks/results/superseded/notebook-2026-11.md, "Long documents, part four").
DOCUMENTS = 1
MAX_ENTRIES = 160  # an outline longer than this keeps its shallower entries: the model must read it whole
ENTRY_WORDS = 14  # a heading is cut after this many words (a statement's carries its title block and periods)
MIN_ENTRIES = 3  # a document with fewer sections has nothing to navigate
# The model names one section by its title: the bundled 1.5B wrote "1, 2" for most questions when asked for entry
# numbers, and a sensible title when asked for one (a title is matched back to the outline, localcr.navigation.named).
SYSTEM = "You know where long reports write each kind of fact, and find the section of a report that answers a question."
REQUEST = ("Question: {question}\nWhich section above reports the answer? Reply with the section's title exactly as "
           "the list gives it, and nothing else.")
COMPLETION_ANSWER = "\n\nSection:"
MAX_TOKENS = 40
MIN_OVERLAP = 0.5  # a reply that is no title of the outline names the entry holding this share of its words ...
MIN_SHARED = 2  # ... and at least this many of them

_SECTION = re.compile(r"(?:^|\s)Section: (.+)$", re.DOTALL)
# A heading's label, whose period ends no sentence: "Item 7", "Note 12", "PART II", "Item 1A", "3".
_LABEL = re.compile(r"(?:^|\s)(?:[A-Z][A-Za-z]{0,9}\s+)?[0-9IVXL]{1,5}[A-Z]?$")


@dataclass
class Entry:
    """One section of a document's outline: its heading path, and the rows of the chunks it begins in."""

    path: tuple[str, ...]
    rows: list = field(default_factory=list)
    pages: list[int] = field(default_factory=list)

    @property
    def title(self) -> str:
        words = self.path[-1].split()
        return " ".join(words[:ENTRY_WORDS]) + (" ..." if len(words) > ENTRY_WORDS else "")


def section_path(context: str) -> tuple[str, ...]:
    """The heading path a chunk's structural context gives ("Section: A > B."), outermost first; () for none.
    A lead sentence the context may add after the path is left out: the path ends at the first sentence end
    that is not a heading's label ("Item 7. Management's ..." keeps its label) nor inside a table's title block
    ("Walmart Inc. — Consolidated Statements of Cash Flows")."""
    found = _SECTION.search(context)
    if not found:
        return ()
    parts = found.group(1).strip().split(" > ")
    last = parts[-1]
    for end in re.finditer(r"\.(?:\s+(?!—)|$)", last):
        if not _LABEL.search(last[: end.start()]):
            last = last[: end.start()]
            break
    parts[-1] = last
    return tuple(p.strip().rstrip(".") for p in parts if p.strip().rstrip("."))


def document_head(context: str) -> str:
    """What a chunk's structural context says of its document after its file and before its section: the title a
    cover gives, its kind and period, a card ("WALMART INC., Annual report (Form 10-K), fiscal year ended January
    31, 2018."); "" where it names nothing but the file."""
    found = re.match(r"File \S+?\.(?=\s)", context)
    if not found:
        return ""
    section = _SECTION.search(context, found.end())
    return context[found.end():section.start() if section else len(context)].strip()


def outline(records: list[dict]) -> list[Entry]:
    """A document's outline from its chunks' records (in document order): one entry per heading path, in the
    order the document reaches them, each holding the rows whose section it is (a chunk under "A > B" is in
    entry "A > B"; naming "A" takes "A > B" too). Parents a path implies are listed even where no chunk starts in
    them, so the outline reads as a tree."""
    entries: dict[tuple[str, ...], Entry] = {}
    for record in records:
        path = section_path(record["context"])
        for depth in range(1, len(path) + 1):
            entries.setdefault(path[:depth], Entry(path[:depth]))
        if path:
            entry = entries[path]
            entry.rows.append(record["row"])
            page = page_at(record["pages"], record["start"])
            if page is not None:
                entry.pages.append(page)
    listed = list(entries.values())
    roots = {e.path[0] for e in listed}
    if len(roots) == 1 and len(listed) > 1:  # a title above every section (a Markdown file's "# Report") names nothing
        listed = [Entry(e.path[1:], e.rows, e.pages) for e in listed[1:]]
    depth = max((len(e.path) for e in listed), default=0)
    while len(listed) > MAX_ENTRIES and depth > 1:  # keep the shallower levels of a very long outline
        depth -= 1
        listed = [e for e in listed if len(e.path) <= depth]
    return listed


def about(records: list[dict]) -> str:
    """What a document is, for its outline's first line: its id and what its first chunk's context says before
    the section (its title or card)."""
    context = " ".join(records[0]["context"].split()) if records else ""
    about = context.split("Section: ")[0].strip()
    return about or (records[0]["doc_id"] if records else "")


def render_outline(about: str, entries: list[Entry]) -> str:
    """The outline as the model reads it: the sections' titles, indented by depth, with their pages."""
    lines = [f"Sections of {about}" if about else "Sections of the document"]
    for entry in entries:
        pages = sorted(set(entry.pages))
        where = "" if not pages else f" (page {pages[0]})" if len(pages) == 1 else f" (pages {pages[0]}-{pages[-1]})"
        lines.append(f"{'  ' * (len(entry.path) - 1)}- {entry.title}{where}")
    return "\n".join(lines)


def rows_of(entries: list[Entry], named: list[int]) -> list:
    """The rows of the named entries (indexes into entries) and of the sections under them, each row once."""
    rows: dict = {}
    for index in named:
        path = entries[index].path
        for entry in entries:
            if entry.path[: len(path)] == path:
                rows.update(dict.fromkeys(entry.rows))
    return list(rows)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def named(reply: str, entries: list[Entry]) -> list[int]:
    """The entries (indexes) a reply names: those whose title it gives (case, punctuation and a page range
    aside; every entry of that title where several share it), else the entry holding most of the reply's words
    (at least MIN_SHARED of them, and MIN_OVERLAP of the reply: a small model shortens a statement's long title),
    the closest title first among equals; [] for a reply that names none."""
    reply = re.sub(r"\s*\((?:page|pages) [\d-]+\)\s*$", "", reply.strip().strip("-*").strip()).removesuffix("...")
    wanted = _words(reply)
    if not wanted:
        return []
    titles = [_words(entry.title.removesuffix(" ...")) for entry in entries]
    exact = [i for i, title in enumerate(titles) if title == wanted]
    if exact:
        return exact
    def overlap(title: list[str]) -> tuple[float, float]:  # the share of the reply in the title, then of the title
        shared = len(set(title) & set(wanted))
        return (shared / len(set(wanted)), shared / len(set(title))) if shared >= MIN_SHARED else (0.0, 0.0)
    scores = [overlap(title) for title in titles]
    best = max(scores, default=(0.0, 0.0))
    return [i for i, score in enumerate(scores) if score == best] if best[0] >= MIN_OVERLAP else []


class Navigator(OnDemandLlm):
    """Names the section of a document's outline that would answer a question, with one LLM loaded on first need."""

    VERSION = NAVIGATION_VERSION

    def __init__(self, spec, *, documents: int = DOCUMENTS, runner=None, log: Callable[[str], None] | None = None):
        super().__init__(spec, runner=runner, log=log)
        self.documents = documents
        self.written = 0  # navigations generated by this navigator (the rest came from the cache)
        self.seconds = 0.0  # LLM seconds spent on them
        self.outlines_evaluated = 0  # outlines whose KV state was computed here (not restored from the cache)
        self.notes: list[str] = []  # why a document was not navigated, for the user (the search goes on without)
        self.last_reply = ""  # the model's reply to the last question (cached or written): "" when the outline did not fit

    def sections(self, question: str, about: str, entries: list[Entry]) -> list[int]:
        """The entries (indexes into entries) of the section the model names for the question; its reply is
        cached, and matched to the outline each time."""
        from localcr.cache import key, open_cache
        from localcr.contexts.keys import settings_signature

        text = render_outline(about, entries)
        entry_key = key("navigation", self.spec.fingerprint(), NAVIGATION_VERSION, settings_signature(self.spec),
                        question, text)
        with open_cache("navigation") as cache:
            reply = cache.get(entry_key)
            if not isinstance(reply, str):
                reply = self._write(question, text)
                cache.set(entry_key, reply, self._tag())
        self.last_reply = reply
        return named(reply, entries)

    def _write(self, question: str, text: str) -> str:
        runner = self.runner
        request = REQUEST.format(question=" ".join(question.split())[:1000])
        if not runner.is_chat:
            request += COMPLETION_ANSWER
        prefix, suffix = runner.render(f"{text}\n", request, SYSTEM)
        if len(prefix) + len(suffix) + MAX_TOKENS > runner.n_ctx:
            return ""  # an outline longer than the model's window: the search goes on without navigation
        if runner.keep_prefix(prefix, "navigation", self._tag(), "navigation-outline", NAVIGATION_VERSION,
                              before_evaluating=self._say_cost) == "evaluated":
            self.outlines_evaluated += 1
        out = runner.complete(prefix, suffix, max_tokens=MAX_TOKENS, stops=("\n",))
        self.written += 1
        self.seconds += out.prompt_seconds + out.generate_seconds
        return out.text.strip()

    def _say_cost(self, tokens: int) -> None:
        """One line before an outline is first read: its tokens, and the seconds they take at this machine's rate."""
        from localcr.contexts.rates import ANSWER, recorded_rates, typical_rates

        if self._log is not None:  # an answer's prompt rate: one sequence reading sources
            rates = recorded_rates(self.spec, self.runner.threads, 1, ANSWER) or typical_rates(self.spec)
            self._say(f"navigating: reading an outline of {tokens:,} tokens once (its state is then cached), about "
                      f"{tokens / rates.prompt:.0f} s here")

    def loading(self) -> str:
        which = "document" if self.documents == 1 else f"{self.documents} documents"
        return (f"navigating: {self.spec.name} reads the outline of the first {which} found (loaded once per process; "
                "cached per question)")


def load_navigator(registry: Registry, name: str | None = None, *, documents: int = DOCUMENTS,
                   log: Callable[[str], None] | None = None) -> Navigator:
    """A navigator with the named LLM, or the registry's default one (the file is checked now, loaded on first use)."""
    return Navigator(resolved_llm(registry, name), documents=documents, log=log)
