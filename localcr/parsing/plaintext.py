"""Headings of text that has no markup: a PDF's text layer, a plain-text file.

A long report read from a PDF is one run of lines, but a person still sees its sections: numbered parts and
items ("PART II", "Item 7. Management's Discussion and Analysis ..."), and short title-case lines that stand
between paragraphs ("Liquidity and Capital Resources"). A PDF's bookmarks, where it has them, say the same
with the author's own levels and win. Lines that repeat on many pages (running headers such as "Table of
Contents") and table-of-contents entries (a line ending in a page number) are no headings.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from dataclasses import dataclass

from localcr.parsing.markdown import line_starts, nested

# Numbered divisions of filings, statutes and manuals: their level comes from the word.
_PART = re.compile(r"^(?:PART|Part)\s+(?:[IVX]+|\d+)\b[.:]?(?:\s+\S.*)?$")
_ITEM = re.compile(r"^(?:ITEM|Item)\s+\d+[A-Z]?\s*[.:]\s*\S.*$")
_CHAPTER = re.compile(r"^(?:CHAPTER|Chapter|SECTION|Section)\s+(?:\d+|[IVX]+)\b[.:]?(?:\s+\S.*)?$")
_ENDS_WITH_PAGE = re.compile(r"(?:\.{2,}|\s)\s*\d{1,4}$")
_TITLE_CHARACTERS = re.compile(r"[^\W\d_](?:[^\W\d_]|[ &,'’/()\-])*")  # letters, spaces and a few marks
_SMALL_WORDS = frozenset("a an and as at by for from in of on or the to with vs via per".split())
MAX_TITLE_WORDS = 9
MAX_TITLE_CHARS = 80
REPEATED = 3  # a line seen this many times or more is a running header or a table row label, not a heading


@dataclass(frozen=True)
class TextHeading:
    level: int
    title: str
    line: int


def headings(text: str, bookmarks: list[tuple[int, str, int]] | None = None) -> list[TextHeading]:
    """The headings of unmarked text, in order. bookmarks: (level, title, offset) from the file (a PDF's
    outline); when there are any, they are the headings."""
    lines = text.split("\n")
    if bookmarks:
        starts = line_starts(text)
        return [TextHeading(level, " ".join(title.split()), bisect.bisect_right(starts, offset) - 1)
                for level, title, offset in bookmarks if title.strip()]
    counts = Counter(line.strip() for line in lines)
    found = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or counts[stripped] >= REPEATED or _ENDS_WITH_PAGE.search(stripped):
            continue
        if _PART.match(stripped):
            found.append(TextHeading(1, stripped, i))
        elif _ITEM.match(stripped) or _CHAPTER.match(stripped):
            found.append(TextHeading(2, stripped, i))
        elif _is_title_line(stripped, lines[i - 1].strip() if i else "", lines[i + 1].strip() if i + 1 < len(lines) else "",
                            bool(found) and found[-1].line == i - 1):
            found.append(TextHeading(3, stripped, i))
    return found


def _is_title_line(line: str, before: str, after: str, after_heading: bool) -> bool:
    """A short line in title case (or upper case) that stands between paragraphs: what comes before it has
    ended (a blank line, a sentence's end, a heading) and what follows is a sentence."""
    words = line.split()
    if not 1 <= len(words) <= MAX_TITLE_WORDS or len(line) > MAX_TITLE_CHARS or line[-1] in ".,;:)-–—" or not line[0].isupper():
        return False
    if not _TITLE_CHARACTERS.fullmatch(line):
        return False  # digits, currency, check boxes: a table's row, a figure's label, a form's field
    if not all(w[0].isupper() or w.lower() in _SMALL_WORDS or not w[0].isalpha() for w in words):
        return False
    ended = after_heading or not before or before[-1] in ".:!?" or before.isupper()
    sentence_follows = len(after.split()) >= 6 and after[0].isupper()
    return ended and sentence_follows


@functools.lru_cache(maxsize=8)  # structural contexts, outlines, the guard: each asks for the same document's
def heading_paths(text: str, bookmarks: tuple[tuple[int, str, int], ...] = ()) -> list[list[tuple[str, int]]]:
    """For each line, the headings above it, outermost first, as (title, line of the heading): the shape
    `localcr.parsing.markdown.heading_paths` gives for Markdown."""
    return nested(headings(text, bookmarks), text.count("\n") + 1)


