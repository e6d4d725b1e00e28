"""Words and identifiers in text, as both retrievers see them.

A *word* is a run of letters and digits, underscores inside it included (`run_target`, `DiffExecutor`,
`_private`); its *parts* are the words an identifier is made of (`run`, `target`; `Diff`, `Executor`;
`HTTP`, `Server`). The lexical side indexes words whole and by their parts; the dense side embeds
identifiers spelled out as their parts. A soft hyphen inside a word (a hyphenation point: see SOFT_HYPHEN) leaves
it one word.
"""
from __future__ import annotations

import re
from bisect import bisect_left

# Where a word was broken at a line's end. PDFium marks the hyphen it joins such a line at with U+FFFE (a Unicode
# noncharacter, `dan\ufffegerous`); a document's text carries every U+FFFE as U+00AD, the soft hyphen, which keeps
# the text's length and offsets (chunks, span gold and cached entries line up) and which words, embedders, language
# models and displays pass over, so the word is whole for each of them.
HYPHENATION_POINT = "\ufffe"
SOFT_HYPHEN = "\u00ad"
_WORD = re.compile(r"[^\W_](?:[\w\u00ad]*[^\W_])?|_+\w+", re.UNICODE)
_PART = re.compile(r"[A-Z]+(?=[A-Z][^\W\d_A-Z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


def joined_chunks(pieces: list[tuple[str, int, int]]) -> str:
    """Consecutive chunks' texts, each with its (start, end) offsets in the document, as one passage: where two
    overlap (their offsets say so) the overlap appears once."""
    text, end = pieces[0][0], pieces[0][2]
    for piece, start, stop in pieces[1:]:
        text += piece[end - start:] if 0 <= start < end else "\n" + piece
        end = max(end, stop)
    return text


def hyphenation_marked(text: str) -> str:
    """A reader's text with its hyphenation points as soft hyphens (the same length)."""
    return text.replace(HYPHENATION_POINT, SOFT_HYPHEN)


def without_soft_hyphens(text: str) -> str:
    """Text as a model or a person reads it: the words a soft hyphen splits joined."""
    return text.replace(SOFT_HYPHEN, "")


def words(text: str) -> list[str]:
    """The words and identifiers of a text, in order (a word a soft hyphen splits, whole)."""
    found = _WORD.findall(text)
    return [without_soft_hyphens(word) for word in found] if SOFT_HYPHEN in text else found


def word_spans(text: str):
    """The words and identifiers of a text as regex matches (with their offsets, a word's soft hyphens within its
    match), in order."""
    return _WORD.finditer(text)


def identifier_parts(word: str) -> list[str]:
    """`DiffExecutor` -> [Diff, Executor], `run_target` -> [run, target], `HTTPServer` -> [HTTP, Server]."""
    return _PART.findall(word)


def spell_out_identifiers(text: str) -> str:
    """`DiffExecutor.run_target()` -> `Diff Executor.run target()`: code identifiers as the words they are made of,
    for embedders whose word-piece vocabularies know words, not identifiers; words a soft hyphen splits joined."""
    text = without_soft_hyphens(text)

    def spell(match: re.Match) -> str:
        parts = identifier_parts(match.group(0))
        return " ".join(parts) if len(parts) > 1 else match.group(0)

    return _WORD.sub(spell, text)


# C0 and C1 control characters and DEL, except newline and tab, as visible escapes; soft hyphens left out.
_VISIBLE = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c not in (0x09, 0x0A)} | {ord(SOFT_HYPHEN): None}


def printable(text: str) -> str:
    """Text safe for a terminal. Document text is untrusted: `ESC ] 0 ;` retitles a window and `ESC ] 52`
    writes the clipboard, so every control character but newline and tab is shown as a `\\xNN` escape; soft hyphens
    are left out (a terminal may show them as hyphens)."""
    return text.translate(_VISIBLE)


SNIPPET_CHARS = 300  # about three lines of a terminal
_SPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n\s*\n")


def snippet(text: str, spans: list[tuple[int, int]], width: int = SNIPPET_CHARS, *, prose: bool = False) -> list[tuple[str, bool]]:
    """The part of a text worth showing for a hit: about `width` characters around where the most of the query's
    terms occur (`spans`, in order; the start of the text when there are none), cut between words, with its lines
    (code stays code) but no blank ones, and "…" where text is left out. As (piece, is a match) pairs, for
    marking the matches. `prose`: the text's hard-wrapped lines are rejoined first (reflow), so a terminal wraps
    whole sentences instead of breaking the document's own short lines again."""
    if prose:
        text, spans = reflow(text, spans)
    start, end = 0, len(text)
    if len(text) > width:
        first, last = _densest(spans, width) if spans else (0, 0)
        start = max(0, min(first - (width - (last - first)) // 2, len(text) - width))
        end = min(len(text), start + width)
        if start > 0 and (space := _SPACE.search(text, start, min(first, start + 20))):
            start = space.end()
        if end < len(text) and (spaces := list(_SPACE.finditer(text, max(last, end - 20), end))):
            end = spaces[-1].start()
    cut_start, cut_end = start > 0, end < len(text)
    start += len(text[start:end]) - len(text[start:end].lstrip())
    end = start + len(text[start:end].rstrip())
    pieces, at = [("… ", False)] if cut_start else [], start
    for a, b in spans:
        a, b = max(a, start), min(b, end)
        if a < b:
            pieces += [(text[at:a], False), (text[a:b], True)]
            at = b
    pieces += [(text[at:end], False)] + ([(" …", False)] if cut_end else [])
    return [(_BLANK_LINES.sub("\n", piece), marked) for piece, marked in pieces if piece]


def _densest(spans: list[tuple[int, int]], width: int) -> tuple[int, int]:
    """Where the most spans (in order, not overlapping) fit in `width` characters: from the start of the first
    of them to the end of the last."""
    best, found = 0, spans[0]
    for i, (first, _) in enumerate(spans):
        fitting = [end for _, end in spans[i:] if end - first <= width]
        if len(fitting) > best:
            best, found = len(fitting), (first, fitting[-1])
    return found


_FENCE = re.compile(r"[ \t]*(```|~~~)")
# A heading, quote, table row (a spreadsheet's rows have no outer pipes, as GFM allows) or list item.
_OWN_LINE = re.compile(r"[ \t]*(?:#{1,6}(?:[ \t]|$)|>|\||[^\n]*\S[ \t]\|[ \t]\S|[-*+][ \t]|\d{1,9}[.)][ \t])")
_INDENTED_CODE = re.compile(r"(?: {4}|\t)")


def reflow(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Prose with its hard line breaks taken out: a break inside a paragraph or a list item (Markdown sources, PDF
    pages and plain text are wrapped at some width) becomes one space, the whitespace around it dropped. Code
    (fenced or indented), headings, quotes and table rows keep their lines, each list item starts its own line,
    paragraphs stay apart, and a Markdown hard break (two spaces or a backslash at the end) stays. `spans` are
    moved with the text."""
    lines = text.split("\n")
    joins = [False] * len(lines)  # whether line i's break is taken out
    in_fence, code = False, False
    for i, line in enumerate(lines):
        fence = bool(_FENCE.match(line))
        blank = not line.strip()
        code = not in_fence and not fence and _INDENTED_CODE.match(line) is not None and not blank \
            and (i == 0 or not lines[i - 1].strip() or code)
        if fence:
            in_fence = not in_fence
        if i + 1 == len(lines) or in_fence or fence or blank or code or _OWN_LINE.match(line) and not _list_item(line):
            continue
        following = lines[i + 1]
        hard_break = line.endswith("  ") or line.endswith("\\")
        joins[i] = not hard_break and bool(following.strip()) and not _FENCE.match(following) \
            and not _OWN_LINE.match(following)
    out, dropped, at = [], [], 0
    for i, line in enumerate(lines):
        kept = line
        if i > 0 and joins[i - 1]:
            lead = len(line) - len(line.lstrip())
            dropped.extend(range(at, at + lead))
            kept = kept[lead:]
        if joins[i]:
            trail = len(kept) - len(kept.rstrip())
            end = at + len(line)
            dropped.extend(range(end - trail, end))
            kept = kept[:len(kept) - trail] + " "
        elif i + 1 < len(lines):
            kept += "\n"
        out.append(kept)
        at += len(line) + 1
    moved = [(a - bisect_left(dropped, a), b - bisect_left(dropped, b)) for a, b in spans]
    return "".join(out), moved


def _list_item(line: str) -> bool:
    """A list item's first line: it may go on over the lines that follow (its own continuation)."""
    return re.match(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]", line) is not None

