"""Prompts: the two layouts of a chunk's request, document markers, and rendering for one loaded model.

"marked" (the default) shows the document once with `<chunk N>` where each chunk begins and asks for each chunk by
its marker; "published" repeats each chunk after the document, as Anthropic's published prompt does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from localcr.errors import LocalcrError

if TYPE_CHECKING:  # for annotations only: the model registry reads PROMPTS, and a search imports no LLM runtime
    from localcr.documents import Chunk, Document
    from localcr.llm import LlamaRunner


# The published Contextual Retrieval instruction.
_PUBLISHED_INSTRUCTION = (
    "Please give a short succinct context to situate this chunk within the overall document for the purposes "
    "of improving search retrieval of the chunk. Answer only with the succinct context and nothing else."
)


@dataclass(frozen=True)
class PromptLayout:
    """How a chunk's prompt is laid out: the shared document part and the per-chunk request."""

    name: str
    version: str  # part of every cache key: bump it whenever any text here changes
    document: str  # the shared prefix, with {document}
    request: str  # the per-chunk part, with {chunk} (published) or {marker} and {begins} (marked)
    marked: bool  # whether the document shows a marker where each chunk begins
    system: str = ""


PROMPTS = {  # the default first
    # The published instruction, its "this chunk" replaced by the chunk's marker and its first words (so the
    # model finds the right place); the system message keeps small models from restating the task instead of
    # doing it (measured on Qwen2.5-Coder 0.5B and 1.5B: without it they echo the request or copy the chunk).
    # An imperative only: a request that said "This chunk is the part of the document that begins at <chunk 7>
    # (...)" (version marked-2026.1) had 122 of the 1.5B's 737 answers on the code set restate that sentence.
    "marked": PromptLayout(
        name="marked", version="marked-2026.2", marked=True,
        system="You write search-index contexts. Given a document and one of its chunks, you answer with one or two "
        "sentences that situate the chunk: what the whole document is about and what this chunk covers within it.",
        document="<document>\n{document}\n</document>\n",
        request=_PUBLISHED_INSTRUCTION.replace("this chunk", "<chunk {marker}> (\"{begins}\")", 1),
    ),
    "published": PromptLayout(
        name="published", version="cr-2025.1", marked=False,
        document="<document>\n{document}\n</document>\n",
        request="Here is the chunk we want to situate within the whole document\n<chunk>\n{chunk}\n</chunk>\n"
        + _PUBLISHED_INSTRUCTION,
    ),
}
DEFAULT_PROMPT = "marked"
# Appended to the request of a document not in English when the llm's context_language is on: an English
# instruction draws an English answer. Off by default: with Qwen2.5-Coder-1.5B on German and Chinese prose the
# answers came in the document's language but retrieval was no better (benchmarks/retrieval/context_language.py).
# English prompts stay unchanged either way, and so do their cache keys.
LANGUAGE_REQUEST = " Write the context in the language of the document ({language})."
BEGINS_WORDS = 12  # words of the chunk quoted in a marked request, so the model finds the right marker

# A base model has no template: the prompt ends where the answer should begin, and the answer ends at the
# first line break once some text is written (a context is one short paragraph). The answer is started for
# the model ("prefilled"): a base model then writes prose about the chunk instead of copying code or echoing
# the instruction. The prefill is part of the returned context.
COMPLETION_ANSWER = "\n\nSuccinct context:"
# Measured with Gemma 3 270M base: " defines" makes it name the code's types and functions; prose gets " is about".
COMPLETION_PREFILL = {"code": " This chunk defines", "text": " This chunk is about"}
COMPLETION_STOPS = ("\n", "</", "<chunk", "<document")
CHAT_STOPS = ("\n\n\n", "</context>")

def layout_of(spec) -> PromptLayout:
    return PROMPTS[spec.prompt]


def mark_document(text: str, chunks: list[Chunk]) -> tuple[str, Callable[[int], int]]:
    """The document with `<chunk N>` (N = the chunk's 1-based position) inserted where each chunk begins, on
    a line of its own when the chunk starts a line; and a function mapping an offset in `text` to the marked
    text (a chunk's start maps to its marker). Chunks whose offsets are unknown are not marked."""
    starts = sorted({(c.start, c.position) for c in chunks if 0 <= c.start <= len(text)})
    out, cursor, inserted = [], 0, []  # inserted: (offset in text, total marker length up to and including it)
    total = 0
    for start, position in starts:
        out.append(text[cursor:start])
        at_line_start = start == 0 or text[start - 1] == "\n"
        marker = f"<chunk {position + 1}>" + ("\n" if at_line_start else " ")
        out.append(marker)
        total += len(marker)
        inserted.append((start, total))
        cursor = start
    out.append(text[cursor:])

    def shift(offset: int) -> int:
        before = [t for at, t in inserted if at < offset]
        return offset + (before[-1] if before else 0)

    return "".join(out), shift


def marked_view(doc: Document, all_chunks: list[Chunk], chunks: list[Chunk]) -> tuple[Document, list[Chunk]]:
    """The document with every chunk marked, and copies of `chunks` whose offsets point into it (at their markers)."""
    from dataclasses import replace

    text, shift = mark_document(doc.text, all_chunks)
    moved = [replace(c, start=shift(c.start), end=shift(c.end)) if c.start >= 0 else replace(c) for c in chunks]
    return replace(doc, text=text), moved


def begins(chunk: Chunk, n_words: int = BEGINS_WORDS) -> str:
    """The chunk's first words on one line, quoted in a marked request."""
    first = chunk.text.split()[:n_words]
    return " ".join(first).replace('"', "'") + (" ..." if len(chunk.text.split()) > n_words else "")


@dataclass
class Group:
    """Consecutive chunks of one document that share one prompt prefix."""

    doc_text: str  # the document as the prompt shows it (whole, or head + window), markers included
    chunks: list[Chunk]
    windowed: bool
    code: bool = False
    language: str = ""  # the document's (ISO 639-1), for the language clause of its requests


class Prompter:
    """Renders the prompts of one llm spec (its layout and language setting) for one loaded model."""

    def __init__(self, runner: LlamaRunner, spec):
        self.runner, self.spec, self.layout = runner, spec, layout_of(spec)

    def prefill(self, code: bool) -> str:
        """Text the prompt puts at the start of the answer (completion style only)."""
        return "" if self.runner.is_chat else COMPLETION_PREFILL["code" if code else "text"]

    @property
    def stops(self) -> tuple[str, ...]:
        return CHAT_STOPS if self.runner.is_chat else COMPLETION_STOPS

    def prefix(self, doc_text: str) -> list[int]:
        return self.runner.render(self.layout.document.format(document=doc_text), "", self.layout.system)[0]

    def request_text(self, group: Group, chunk: Chunk) -> str:
        marker = f"<chunk {chunk.position + 1}>"
        if self.layout.marked and marker in group.doc_text:
            text = self.layout.request.format(marker=chunk.position + 1, begins=begins(chunk))
        else:  # published layout, or a chunk that no window could show: the chunk itself goes in the request
            text = PROMPTS["published"].request.format(chunk=chunk.text)
        return text + language_clause(self.spec, group.language)

    def suffix(self, group: Group, chunk: Chunk) -> list[int]:
        text = self.request_text(group, chunk)
        if not self.runner.is_chat:
            text += COMPLETION_ANSWER + self.prefill(group.code)
        return self.runner.render("", text, self.layout.system)[1]

    def overhead(self) -> int:
        """Tokens of the prompt around an empty document and an empty chunk."""
        head = self.runner.render(self.layout.document.format(document=""), "", self.layout.system)[0]
        tail = self.runner.render("", PROMPTS["published"].request.format(chunk="") + COMPLETION_ANSWER, self.layout.system)[1]
        return len(head) + len(tail)


def language_clause(spec, language: str) -> str:
    """What a request adds to ask for the context in the document's language ("" for English or when off)."""
    if not spec.context_language or language in ("", "en"):
        return ""
    return LANGUAGE_REQUEST.format(language=language)



def check_room(prompter: Prompter, spec) -> None:
    need = prompter.overhead() + spec.max_tokens + 8
    if need > prompter.runner.n_ctx:
        raise LocalcrError(
            f"{spec.where}: n_ctx = {prompter.runner.n_ctx} leaves no room for a chunk: the prompt alone takes "
            f"{need - spec.max_tokens - 8} tokens and max_tokens = {spec.max_tokens}; raise n_ctx or lower max_tokens"
        )
