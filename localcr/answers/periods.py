"""The periods a table's heads and a question name: years as reports write them in many spellings and languages.

A column headed "FY24", "Q3 2024", "H1 23", "2023/24", "2023年度" or "Geschäftsjahr 2023" is of a period as surely as
one headed "2024": the check that a computed answer's operands are of the periods its question names, and the
order of a change (the later period less the earlier), need every spelling read. A Japanese "2023年3月期" (the year
ending March 2023) is of 2023; a split fiscal year "2023/24" of both its years, ending in the later.
"""
from __future__ import annotations

import datetime
import re
from functools import lru_cache

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
# "FY24", "FY 2024", "FY'24", "F24", "fiscal 24"
_FISCAL = re.compile(r"(?<![A-Za-z])(?:FY|F|fiscal(?: year)?)\s?['’]?(\d\d)(?!\d)", re.I)
# "2023/24", "2023/2024", "2023-24", "2023–24": a fiscal year split across two calendar years
_SPLIT = re.compile(r"(?<!\d)((?:19|20)\d\d)\s?[/–-]\s?(\d\d(?:\d\d)?)(?!\d)")
# "Q3 2024", "Q3'24", "3Q24", "Q3 FY24", "H1 2023", "1H23", "Q1/2024"
_PART = re.compile(r"(?<![A-Za-z0-9])(?:([QH])([1-4])|([1-4])([QH]))(?:\s?(?:FY)?\s?['’/]?\s?(\d\d(?:\d\d)?))?(?!\d)",
                   re.I)
_JAPANESE_FISCAL = re.compile(r"((?:19|20)\d\d)年(?:(\d{1,2})月期|度)")


def years_of(text: str) -> set[int]:
    """The years a text names as periods: "2019", "FY20" (2020), "Q3'24" (2024), "2023/24" (2023 and 2024),
    "2023年度" (2023)."""
    years = {int(year) for year in _YEAR.findall(text)}
    years |= {2000 + int(short) for short in _FISCAL.findall(text)}
    for match in _PART.finditer(text):
        if match[5] and len(match[5]) == 2:
            years.add(2000 + int(match[5]))
    for first, second in _SPLIT.findall(text):
        later = _later(int(first), second)
        if later:
            years.add(later)
    return years


def _later(first: int, second: str) -> int | None:
    """The later year of a split fiscal year ("2023/24": 2024), or None where the two are not consecutive."""
    later = int(second) if len(second) == 4 else first // 100 * 100 + int(second)
    return later if later == first + 1 else None


def period_key(text: str, language: str = "en") -> tuple[int, int] | None:
    """Where a period ends, as (year, month), for ordering two of them: "Q3 2024" (2024, 9), "H1 2023" (2023, 6),
    "March 2024" (2024, 3), "2023/24" (2024, 0: a fiscal year's month is unknown), "2024" (2024, 12). None where the
    text names no period or more than one year."""
    years = years_of(text)
    split = _SPLIT.search(text)
    if split and (later := _later(int(split[1]), split[2])):
        return (later, 0) if years <= {later - 1, later} else None
    if len(years) != 1:
        return None
    (year,) = years
    japanese = _JAPANESE_FISCAL.search(text)
    if japanese:
        return year, int(japanese[2] or 3)
    part = _PART.search(text)
    if part:
        kind, number = (part[1], part[2]) if part[1] else (part[4], part[3])
        return year, int(number) * (3 if kind.upper() == "Q" else 6)
    month = _month_in(text, language)
    return year, month or 12


def _month_in(text: str, language: str) -> int:
    """The month a text names in its language or English ("März", "juin", "Dec"), 0 for none."""
    lowered = text.lower()
    for number, names in _month_names(language).items():
        if any(re.search(rf"(?<![^\W\d_]){re.escape(name)}(?![^\W\d_])", lowered) for name in names):
            return number
    return 0


@lru_cache(maxsize=16)
def _month_names(language: str) -> dict[int, set[str]]:
    """Each month's wide and abbreviated names in the language and in English, lower-cased (CLDR through Babel)."""
    from babel import Locale, UnknownLocaleError

    names: dict[int, set[str]] = {number: set() for number in range(1, 13)}
    for code in dict.fromkeys(["en", language or "en"]):
        try:
            locale = Locale.parse(code.replace("-", "_"))
        except (UnknownLocaleError, ValueError, TypeError):
            continue
        for width in ("wide", "abbreviated"):
            for number, name in locale.months["format"][width].items():
                name = name.lower().rstrip(".")
                if len(name) >= 3 or not name.isascii():
                    names[number].add(name)
    return names


_ISO_DATE = re.compile(r"((?:1|2)\d{3})-(\d{1,2})-(\d{1,2})")
_DOTTED_DATE = re.compile(r"(\d{1,2})\.\s?(\d{1,2})\.\s?((?:1|2)\d{3})")  # "17.01.1946", "17. 1. 1946"
_JAPANESE_DATE = re.compile(r"((?:1|2)\d{3})年(\d{1,2})月(?:(\d{1,2})日)?")


def date_of(text: str, language: str = "en") -> str | None:
    """A cell that is one calendar date, as ISO 8601 text that sorts and compares as the dates do: "17 January
    1946", "January 17, 1946", "17. Januar 1946", "17.01.1946", "1946-01-17" and "1946年1月17日" are "1946-01-17";
    a month alone, "November 1879", is "1879-11". None for anything else ("2011-12" may be a season, "12 May" has no
    year). Month names in the language and in English (`_month_names`)."""
    text = " ".join(text.split())
    for pattern, order in ((_ISO_DATE, "ymd"), (_DOTTED_DATE, "dmy"), (_JAPANESE_DATE, "ymd")):
        if found := pattern.fullmatch(text):
            parts = dict(zip(order, found.groups()))
            return _iso(parts["y"], parts["m"], parts["d"])
    numbers, patterns = _date_patterns(language)
    for pattern, order in patterns:
        if found := pattern.fullmatch(text):
            parts = dict(zip(order, found.groups()))
            return _iso(parts["y"], numbers[parts["m"].lower().rstrip(".")], parts.get("d"))
    return None


def _iso(year, month, day) -> str | None:
    try:
        datetime.date(int(year), int(month), int(day or 1))
    except ValueError:
        return None
    return f"{int(year):04d}-{int(month):02d}" + (f"-{int(day):02d}" if day else "")


@lru_cache(maxsize=16)
def _date_patterns(language: str) -> tuple[dict[str, int], list[tuple[re.Pattern, str]]]:
    """Each month name's number, and the patterns of a date written with one: day month year, month day year,
    month year."""
    numbers = {name: number for number, names in _month_names(language).items() for name in names}
    month = "(" + "|".join(sorted(map(re.escape, numbers), key=len, reverse=True)) + r")\.?"
    day, year = r"(\d{1,2})", r"((?:1|2)\d{3})"
    return numbers, [(re.compile(rf"{day}(?:st|nd|rd|th|er|\.)? (?:de )?{month},? (?:de )?{year}", re.I), "dmy"),
                     (re.compile(rf"{month} {day}(?:st|nd|rd|th)?,? {year}", re.I), "mdy"),
                     (re.compile(rf"{month},? {year}", re.I), "my")]
