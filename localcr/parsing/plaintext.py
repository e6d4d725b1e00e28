"""Headings of text that has no markup: a PDF's text layer, a plain-text file.

A long report read from a PDF is one run of lines, but a person still sees its sections: numbered parts and
items ("PART II", "Item 7. Management's Discussion and Analysis ..."), and short title-case lines that stand
between paragraphs ("Liquidity and Capital Resources"). A PDF's bookmarks, where it has them, say the same
with the author's own levels and win. Lines that repeat on many pages (running headers such as "Table of
Contents") and table-of-contents entries (a line ending in a page number) are no headings.

Financial statements and other titled tables are headings too, though no sentence follows them: a title block
("AMAZON.COM, INC." / "CONSOLIDATED STATEMENTS OF CASH FLOWS") stands over a units line ("(in millions)") and the
row that says which periods the columns hold ("Year Ended December 31," / "2017 2018 2019"). The heading carries
both, so every chunk of a statement that runs over several chunks is told what it is and which years its
columns are.
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
# A table's units line: "(in millions)", "(In thousands, except per share data)", "(Dollars in millions)", and as
# Pfizer's and Best Buy's statements write it, "(MILLIONS, EXCEPT PER COMMON SHARE DATA)", "$ in millions, except ...".
_UNITS = re.compile(r"^(?:\((?:in|dollars in|amounts in|\$ in|u\.s\. dollars in)\b[^)]*\)"
                    r"|\((?:\$\s*)?(?:millions|thousands|billions)\b[^)]*\)"
                    r"|\$\s*in\s+(?:millions|thousands|billions)\b[^\d]*)", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_PERIOD_WORDS = re.compile(r"\b(?:ended|ending|fiscal|as of|quarter|months|weeks|year|january|february|march|april|may|"
                           r"june|july|august|september|october|november|december)\b", re.IGNORECASE)
_TABLE_TITLE_CHARACTERS = re.compile(r"[^\W\d_](?:[^\W\d_]|[ &,.'’/()\-–—])*")
_RUNNING_HEADER = re.compile(r"^table of contents$", re.IGNORECASE)
_SENTENCE_TAIL = re.compile(r"(?<!\bInc)(?<!\bCo)(?<!\bCorp)(?<!\bLtd)(?<!\bN\.A)\.$")  # "Mexico and China." ends a sentence
MAX_TABLE_TITLE_LINES = 3
MAX_PERIOD_LINES = 3
MAX_PERIOD_WORDS = 12


@dataclass(frozen=True)
class TextHeading:
    level: int
    title: str
    line: int
    table: bool = False  # the title of a table or statement (table_titles)


@functools.lru_cache(maxsize=8)  # chunking and structural contexts both ask for the same document's headings
def headings(text: str, bookmarks: tuple[tuple[int, str, int], ...] = ()) -> tuple[TextHeading, ...]:
    """The headings of unmarked text, in order. bookmarks: (level, title, offset) from the file (a PDF's
    outline); when there are any, they are the headings."""
    lines = text.split("\n")
    if bookmarks:
        starts = line_starts(text)
        return tuple(TextHeading(level, " ".join(title.split()), bisect.bisect_right(starts, offset) - 1)
                     for level, title, offset in bookmarks if title.strip())
    counts = Counter(line.strip() for line in lines)
    tables = table_titles(lines)
    found = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if i in tables:
            found.append(tables[i])
            continue
        if not stripped or counts[stripped] >= REPEATED or _ENDS_WITH_PAGE.search(stripped):
            continue
        if _PART.match(stripped):
            found.append(TextHeading(1, stripped, i))
        elif _ITEM.match(stripped) or _CHAPTER.match(stripped):
            found.append(TextHeading(2, stripped, i))
        elif _is_title_line(stripped, lines[i - 1].strip() if i else "", lines[i + 1].strip() if i + 1 < len(lines) else "",
                            bool(found) and found[-1].line == i - 1):
            found.append(TextHeading(3, stripped, i))
    return tuple(found)


def table_titles(lines: list[str]) -> dict[int, TextHeading]:
    """The titled tables of unmarked text, by the line their title starts on: each units line with the title
    lines just above it (over the period lines, if those come first) and the period lines around it; the
    heading reads "TITLE — TITLE, PERIOD (units)". A units line with no title above is a table inside prose."""
    found: dict[int, TextHeading] = {}
    for i, line in enumerate(lines):
        units = _UNITS.match(line.strip())
        if not units:
            continue
        above = i - 1
        periods_above = []
        while above >= 0 and len(periods_above) < MAX_PERIOD_LINES and (period := _period(lines[above])):
            periods_above.insert(0, period)
            above -= 1
        titles = []
        while above >= 0 and len(titles) < MAX_TABLE_TITLE_LINES and _is_table_title(lines[above].strip()):
            titles.insert(0, " ".join(lines[above].split()))
            above -= 1
        if not titles:
            continue
        periods = periods_above or _periods_below(lines, i, units.end())
        title = " — ".join(titles) + (f", {' '.join(periods)}" if periods else "") + f" {units.group(0).lower()}"
        found[above + 1] = TextHeading(3, title, above + 1, table=True)
    return found


def _periods_below(lines: list[str], units_line: int, units_end: int) -> list[str]:
    """The period lines after a units line (its own rest first: "(in millions) Year Ended December 31,")."""
    periods = []
    rest = [lines[units_line].strip()[units_end:]] + lines[units_line + 1: units_line + 1 + MAX_PERIOD_LINES]
    for line in rest:
        if not line.strip() and not periods:
            continue
        period = _period(line)
        if not period:
            break
        periods.append(period)
        if _YEAR.search(period):  # the row of years ends the header
            break
    return periods


def _period(line: str) -> str:
    """The part of a table's header line that says which periods its columns hold ("Year Ended December 31,
    2020 2019 2018", cut after its last year), or "" when the line is no such header."""
    years = list(_YEAR.finditer(line))
    head = " ".join((line[: years[-1].end()] if years else line).split())
    if not head or len(head.split()) > MAX_PERIOD_WORDS or not (years or _PERIOD_WORDS.search(head)):
        return ""
    return head if years or len(head.split()) <= 6 else ""


def _is_table_title(line: str) -> bool:
    """A line of a table's title block: a few capitalised words (a company's name may hold "Inc."), not a
    running header, not a contents entry."""
    words = line.split()
    if not 1 <= len(words) <= MAX_TITLE_WORDS + 3 or len(line) > MAX_TITLE_CHARS + 20 or not line[0].isupper():
        return False
    if _RUNNING_HEADER.match(line) or _ENDS_WITH_PAGE.search(line) or _SENTENCE_TAIL.search(line):
        return False
    if not _TABLE_TITLE_CHARACTERS.fullmatch(line):
        return False
    return all(w[0].isupper() or w.lower() in _SMALL_WORDS or not w[0].isalpha() for w in words)


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


MAX_FIRST_LINE_TITLE_WORDS = 12
_NOT_A_TITLE = re.compile(r"^(?:[-*+#>|!\[{<]|\d+[.)]\s|```|~~~)")


def first_line_title(text: str) -> str:
    """The title a text writes on its first line without marking it (a documentation page exported as a record:
    "Get started with tool use", then its first paragraph), or "": a short line of words that ends no sentence,
    followed by a sentence of six words or more, at once or after a blank line (and after a page's notes set off
    as quotes or badges: "> Stability: 2 - Stable"). A filing's cover ("UNITED STATES" over "SECURITIES AND
    EXCHANGE COMMISSION"), a release's headline over its bullet points and a numbered division ("Item 1.
    Business": a section) are no such title."""
    lines = [line.strip() for line in text[:4000].split("\n")]
    first = " ".join(lines[0].split()) if lines else ""
    if not first or len(first.split()) > MAX_FIRST_LINE_TITLE_WORDS or len(first) > MAX_TITLE_CHARS + 20 \
            or first[-1] in ".,;:!?" or _NOT_A_TITLE.match(first) or not (first[0].isupper() or first[0].isdigit()) \
            or any(division.match(first) for division in (_PART, _ITEM, _CHAPTER)) \
            or not re.search(r"[^\W\d_]{2}", first):
        return ""
    if len(lines) > 1 and lines[1]:
        return first if _opens_a_sentence(lines[1]) else ""
    blocks = [block.strip() for block in "\n".join(lines[1:]).split("\n\n") if block.strip()]
    for block in blocks[:MAX_NOTES_AFTER_TITLE + 1]:
        if not _NOTE.match(block):
            return first if _opens_a_sentence(block.split("\n")[0]) else ""
    return ""


MAX_NOTES_AFTER_TITLE = 2
_NOTE = re.compile(r"^(?:>|\[!\[|!\[|<)")  # a quoted note, a badge, an HTML tag: between a page's title and its text
_SENTENCE_IN_LINE = re.compile(r"[.!?:)](?:\s|$)")


def _opens_a_sentence(line: str) -> bool:
    """Whether a line begins prose: six words or more, a third of them in lower case (a cover's "SECURITIES AND
    EXCHANGE COMMISSION Washington, D.C. 20549" is none), a sentence's end in it or at its end (a wrapped
    paragraph's first line ends mid-sentence)."""
    words = line.split()
    return len(words) >= 6 and (line[0].isalnum() or line[0] in "`*_\"'“") \
        and 3 * sum(w[0].islower() for w in words) >= len(words) and _SENTENCE_IN_LINE.search(line) is not None


@functools.lru_cache(maxsize=8)  # structural contexts, outlines, the guard: each asks for the same document's
def heading_paths(text: str, bookmarks: tuple[tuple[int, str, int], ...] = ()) -> list[list[tuple[str, int]]]:
    """For each line, the headings above it, outermost first, as (title, line of the heading): the shape
    `localcr.parsing.markdown.heading_paths` gives for Markdown."""
    return nested(headings(text, bookmarks), text.count("\n") + 1)


