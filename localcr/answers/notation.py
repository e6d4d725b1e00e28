"""How a document writes its figures: the decimal mark and the grouping of its digits, signs, currencies, scales
and the words for a figure that is not there.

"45.210" is forty-five thousand in a German table and forty-five in an English one: a figure's digits do not say
which. So the convention is decided per table, from all its cells ("1.234,5", "11,8" and "1.234.567" each settle it)
and, where no cell does, from the document's language as CLDR writes its numbers (Babel); a cell is never read
alone. Everything else a cell may carry is read around its digits: a leading, trailing or Unicode minus, a plus,
parentheses, a currency symbol or ISO code before or after, a percent sign, a footnote mark. The words for scales,
currencies and missing figures in every language localcr indexes are data (vocabulary.toml), not patterns here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Iterable

from localcr.answers.vocabulary import vocabulary

SPACES = "\u00a0\u202f\u2009 "  # no-break, narrow no-break and thin spaces group digits as a plain one does
_MARKS = ".,'’"
_SYMBOLS = "$€£¥₹₩₽₺₪₫฿¢"
# A footnote mark after a figure: "1,234(1)", "12*", "(a)", "[a]", a superscript.
_NOTE = r"(?:\*+|\(\w\)|\[\w\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+)"
_DASH = re.compile(r"^[$€£¥]?\s*[-−–—]+$")
_SIGNS = "-−–+"


@dataclass(frozen=True)
class Notation:
    """A table's convention: its decimal mark ("." or ","); every other mark and space groups digits."""

    decimal: str = "."


@dataclass(frozen=True)
class Reading:
    """What a cell says: its value as written, signed (None: the cell says the figure is not there), whether it is
    a percentage, and the currency it shows ("€", "CHF", or "")."""

    value: float | None
    percent: bool = False
    currency: str = ""


@lru_cache(maxsize=64)
def language_decimal(language: str) -> str:
    """The decimal mark CLDR gives the language ("," for de, fr, es, it, nl; "." for en, ja, zh), "." for none."""
    from babel import Locale, UnknownLocaleError
    from babel.numbers import get_decimal_symbol

    try:
        mark = get_decimal_symbol(Locale.parse(language.replace("-", "_"))) if language else "."
    except (UnknownLocaleError, ValueError, TypeError):
        return "."
    return mark if mark in ".," else "."


_BODY = re.compile(rf"\d(?:[\d{_MARKS}]|[{SPACES}](?=\d{{3}}(?!\d)))*")
_FRACTION_ALONE = re.compile(r"(?P<sign>[-−+]?)(?P<mark>[.,])(?P<digits>\d{1,15})")  # ".449", a batting average


def _decided_by(body: str) -> str | None:
    """The decimal mark a figure's digits settle, or None where they leave it open ("45.210", "1,234", "120")."""
    marks = [c for c in body if c in ".,"]
    if not marks:
        return None
    if len(set(marks)) == 2:
        return marks[-1]  # "1.234,5", "1,234.5": the last mark is the decimal one
    mark = marks[0]
    if len(marks) > 1:
        return "," if mark == "." else "."  # "1.234.567": a mark used twice groups
    integer, fraction = body.split(mark)
    if len(fraction) != 3 or integer.strip(SPACES + "'’") in ("0", ""):
        return mark  # "11,8", "12.34", "0.125": a group is three digits after one to three
    return None


def notation_of(written: Iterable[str], language: str = "") -> Notation:
    """The convention a table's cells are written in: what most of its cells that settle it say, else the
    document language's."""
    votes = {".": 0, ",": 0}
    for text in written:
        for body in _BODY.findall(text):
            mark = _decided_by(body)
            if mark:
                votes[mark] += 1
    if votes["."] != votes[","]:
        return Notation("." if votes["."] > votes[","] else ",")
    return Notation(language_decimal(language))


def number(body: str, notation: Notation) -> float | None:
    """The digits of a figure as a number under the table's convention; None where its marks cannot be read so
    (groups not of three digits, or two decimal marks). A mark the digits settle otherwise wins ("11,8" in an
    English table is 11.8: no group has one digit)."""
    body = body.strip()
    decimal = _decided_by(body) or notation.decimal
    integer, _, fraction = body.partition(decimal) if decimal in body else (body, "", "")
    if any(c in fraction for c in _MARKS + SPACES):
        return None
    groups = re.split(rf"[{re.escape(_MARKS + SPACES)}]", integer)
    if len(groups) > 1 and not _grouped(groups):
        return None
    return float("".join(groups) + ("." + fraction if fraction else ""))


def _grouped(groups: list[str]) -> bool:
    """Digits grouped by three ("45", "210"), or as India writes lakhs and crores ("12", "34", "567")."""
    if not 1 <= len(groups[0]) <= 3 or len(groups[-1]) != 3:
        return False
    middle = groups[1:-1]
    return all(len(g) == 3 for g in middle) or all(len(g) == 2 for g in middle)


@cache
def _currency_pattern() -> re.Pattern:
    """A currency as a cell shows it: a symbol, an ISO 4217 code CLDR lists, or a word the vocabulary names."""
    from babel.numbers import list_currencies

    words = [w for names in vocabulary()["currencies"].values() for w in names] + ["US$", "CN¥", "HK$", "A$", "C$"]
    words = sorted(set(words) | set(list_currencies()), key=len, reverse=True)
    alternatives = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?:{alternatives})(?![A-Za-z])|[{_SYMBOLS}]")


@cache
def _cell_pattern() -> re.Pattern:
    currency = _currency_pattern().pattern
    return re.compile(
        rf"^(?P<open>\()?\s*(?P<sign>[{_SIGNS}])?\s*(?P<pre>{currency})?\s*(?P<open2>\()?\s*(?P<sign2>[-−+])?\s*"
        rf"(?P<body>{_BODY.pattern})\s*(?P<percent>%|％|pp)?\s*(?P<post>{currency})?\s*(?P<trail>[-−])?\s*"
        rf"(?P<close>\))?\s*{_NOTE}?$")


@cache
def _missing_words() -> frozenset[str]:
    return frozenset(" ".join(w.lower().split()) for w in vocabulary()["missing"]["words"])


def is_missing(text: str) -> bool:
    """Whether a cell says its figure is not there ("n/a", "n.m.", "k. A.", "n.d.", "該当なし")."""
    return " ".join(text.lower().split()).strip("()") in _missing_words()


def read(text: str, notation: Notation = Notation()) -> Reading | None:
    """A cell's figure under the table's convention; Reading(None) for a cell that says it has none; None for a
    cell that holds no figure ("Total", "", "(12")."""
    text = " ".join(text.split())  # every space folded to one: a no-break one groups digits as a plain one
    if not text:
        return None
    if is_missing(text):
        return Reading(None)
    if _DASH.match(text):
        return Reading(0.0)
    alone = _FRACTION_ALONE.fullmatch(text)
    if alone and alone["mark"] == notation.decimal:  # no digit before the decimal mark: ".449" is 0.449
        value = float("0." + alone["digits"])
        return Reading(-value if alone["sign"] in ("-", "−") else value)
    match = _cell_pattern().match(text)
    if not match or bool(match["open"] or match["open2"]) != bool(match["close"]):
        return None
    value = number(match["body"], notation)
    if value is None:
        return None
    negative = match["open"] or match["open2"] or match["trail"] or \
        any(sign and sign != "+" for sign in (match["sign"], match["sign2"]))
    return Reading(-value if negative else value, bool(match["percent"]), currency_shown(match["pre"] or match["post"] or ""))


def currency_shown(written: str) -> str:
    """A currency as an answer shows it: "€" for "EUR" or "euros", an ISO code no word names as itself."""
    for symbol, names in vocabulary()["currencies"].items():
        if written in names or written.lower() in (n.lower() for n in names if len(n) > 3):
            return symbol
    return written


def currency_in(text: str) -> str:
    """The currency a heading or label names ("in Mio. €", "(Millions of yen)", "USD m"), or "". ISO codes count
    here only beside a scale or a figure, where a word of capitals ("ALL", "TOP") is none."""
    for match in _currency_pattern().finditer(text):
        written = match[0]
        if re.fullmatch(r"[A-Z]{3}", written) and written not in _named_codes():
            rest = text[match.end():match.end() + 12] + " " + text[max(0, match.start() - 12):match.start()]
            if not (scale_in(rest) or re.search(r"\d", rest)):
                continue
        if re.fullmatch(r"[A-Za-z.]+", written) and not re.search(rf"(?<![A-Za-z]){re.escape(written)}", text):
            continue
        return currency_shown(written)
    return ""


@cache
def _named_codes() -> frozenset[str]:
    return frozenset(w for names in vocabulary()["currencies"].values() for w in names if re.fullmatch(r"[A-Z]{3}", w))


@cache
def _scale_patterns() -> list[tuple[str, re.Pattern]]:
    """Each scale's phrases as one pattern: Latin words whole and in any case, CJK phrases as written; "m", "k",
    "bn", "million" beside a currency ("€m", "$k", "m€", "EUR million", "in € thousands")."""
    currency = r"(?:[$€£¥₹]|US\$|EUR|USD|GBP|CHF|JPY|euros?|dollars?)"
    short = {"thousand": r"k|thousands?|000", "million": r"m|mn|millions?", "billion": r"bn|b|billions?"}
    patterns = []
    for name, scale in vocabulary()["scales"].items():
        phrases = sorted(scale["phrases"], key=len, reverse=True)
        alternatives = [rf"(?<![\w,.]){re.escape(p)}(?![A-Za-z])" if re.match(r"[\w(']", p) and p.isascii()
                        else re.escape(p) for p in phrases]
        if name in short:
            alternatives.append(rf"{currency}\s?['’]?(?:{short[name]})(?![A-Za-z])")
            alternatives.append(rf"(?<![A-Za-z])(?:{short[name]})\s?{currency}")
            alternatives.append(rf"(?<![A-Za-z])in\s+{currency}\s?(?:{short[name]})(?![A-Za-z])")
        patterns.append((name, re.compile("|".join(alternatives), re.I)))
    return patterns


def scale_in(text: str) -> str:
    """The scale a heading, caption, column head or row label states, by its name ("thousand", "million",
    "lakh", ...): the one stated first; "" where none is."""
    found = [(match.start(), name) for name, pattern in _scale_patterns() if (match := pattern.search(text))]
    return min(found)[1] if found else ""


def factor(scale: str) -> float:
    """What a scale multiplies by: 1e6 for "million"; 1 for none."""
    return vocabulary()["scales"].get(scale, {}).get("factor", 1.0)


@cache
def _percent_pattern() -> re.Pattern:
    words = sorted(vocabulary()["percent"]["words"], key=len, reverse=True)
    return re.compile("|".join(re.escape(w) if not w.isalpha() else rf"(?<![A-Za-z]){w}(?![A-Za-z])" for w in words),
                      re.I)


def says_percent(text: str) -> bool:
    """Whether a column head or row label says its figures are percentages ("Margin (%)", "in %", "Prozent")."""
    return bool(_percent_pattern().search(text))
