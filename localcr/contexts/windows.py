"""Windows: a document too long for the context window is never cut silently. The prompt keeps its head and a
window around a group of consecutive chunks (`[...]` marks what is left out); the chunks of a group share it."""
from __future__ import annotations

from dataclasses import dataclass

from localcr.contexts.prompts import Group, Prompter
from localcr.documents import Chunk, Document


ELISION = "\n[...]\n"

def _spans(doc: Document, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Character span of every chunk in the document; chunks not found verbatim sit after their predecessor."""
    spans, cursor = [], 0
    for chunk in chunks:
        if chunk.start >= 0 and chunk.end >= chunk.start:
            spans.append((chunk.start, chunk.end))
            cursor = chunk.end
        else:
            start = min(cursor, len(doc.text))
            spans.append((start, min(len(doc.text), start + len(chunk.text))))
            cursor = spans[-1][1]
    return spans


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """Move window edges to line boundaries when that costs little."""
    if start > 0:
        nl = text.find("\n", start, start + 200)
        if nl >= 0:
            start = nl + 1
    if end < len(text):
        nl = text.rfind("\n", max(start, end - 200), end)
        if nl > start:
            end = nl
    return start, end


@dataclass
class _Window:
    """A view of a long document: its head, then text[start:end]; the chunks it serves."""

    head_end: int
    start: int
    end: int
    chunks: list[Chunk]


def plan_windows(doc: Document, chunks: list[Chunk], doc_budget_chars: int, head_chars: int,
                 group_share: float = 0.6) -> list[Group]:
    """Split the chunks of a document too long for the prompt into groups of consecutive chunks, each with a
    view of the document of at most doc_budget_chars: its head, then a window around the group.

    A group spans at most group_share of the window, so every chunk keeps some text on both sides,
    while consecutive chunks still share one evaluated prefix."""
    text = doc.text
    if len(text) <= doc_budget_chars:
        return [Group(text, list(chunks), False)]
    return [Group(_window_text(text, w), w.chunks, True) for w in _windows(doc, chunks, doc_budget_chars, head_chars, group_share)]


def _windows(doc: Document, chunks: list[Chunk], budget: int, head_chars: int, group_share: float) -> list[_Window]:
    text = doc.text
    head_chars = min(head_chars, budget // 4)
    window = max(1, budget - head_chars - len(ELISION) * 2)
    spans = _spans(doc, chunks)
    out: list[_Window] = []
    i = 0
    while i < len(chunks):
        first = spans[i][0]
        j = i + 1
        while j < len(chunks) and spans[j][1] - first <= window * group_share:
            j += 1
        last = max(end for _, end in spans[i:j])
        pad = max(0, (window - (last - first)) // 2)
        start = max(0, first - pad)
        end = min(len(text), start + window)
        start = max(0, end - window)
        if start <= head_chars:
            out.append(_Window(0, 0, min(len(text), budget), list(chunks[i:j])))
        else:
            start, end = _snap(text, start, end)
            out.append(_Window(_snap(text, 0, head_chars)[1], start, end, list(chunks[i:j])))
        i = j
    return out


def _window_text(text: str, w: _Window) -> str:
    body = text[: w.end] if w.start == 0 else text[: w.head_end] + ELISION + text[w.start : w.end]
    return body + (ELISION.rstrip("\n") if w.end < len(text) else "")


def groups_for(prompter: Prompter, spec, doc: Document, chunks: list[Chunk]) -> list[Group]:
    """The whole document as one prefix if it fits beside the chunks' requests, else windows."""
    runner = prompter.runner
    group = Group("", list(chunks), False, doc.is_code, doc.language)
    requests = [len(prompter.suffix(Group(doc.text, chunks, False, doc.is_code, doc.language), c)) for c in chunks]
    if prompter.layout.marked:
        # Requests are short, and those generated side by side share the context with the document: reserve room
        # for all of them, but never more than a quarter of n_ctx (then fewer run side by side in a long document).
        longest = sorted(requests, reverse=True)
        side_by_side = sum(longest[: runner.parallel]) + spec.max_tokens * min(runner.parallel, len(chunks))
        side_by_side = min(side_by_side, max(longest[0] + spec.max_tokens, runner.n_ctx // 4))
        room = runner.n_ctx - len(prompter.prefix("")) - side_by_side - 8
    else:
        room = runner.n_ctx - spec.max_tokens - len(prompter.prefix("")) - max(requests) - 8
    doc_tokens = runner.count(doc.text)
    if doc_tokens <= room:
        group.doc_text = doc.text
        return [group]
    room = max(room, 0)
    chars_per_token = len(doc.text) / max(1, doc_tokens)
    share = 0.8 if prompter.layout.marked else 0.6  # marked chunks need no text around them in the request
    for shrink in (0.95, 0.85, 0.7, 0.5, 0.3):
        budget = int(room * chars_per_token * shrink)
        groups = plan_windows(doc, chunks, budget, head_chars=int(256 * chars_per_token), group_share=share)
        if all(runner.count(g.doc_text) <= room for g in groups):
            for g in groups:
                g.code, g.language = doc.is_code, doc.language
            return groups
    return [Group("", list(chunks), True, doc.is_code, doc.language)]
