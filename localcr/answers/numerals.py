"""Numbers written in words, as digits: "fifty thousand men" and "50,000 men" state the same figure.

The answer check (localcr.answers.check) compares an answer's figures with its sources'; a source that spells a number
out ("fifty thousand", "fünfzigtausend", "五万", "пятьдесят тысяч") and an answer that writes it in digits must
agree. Each language's words are read by a library that knows its grammar: text2num for English, German, French,
Spanish (and Portuguese, Italian, Dutch, Danish), number-parser for Russian, cn2an for Chinese and the kanji
numerals of Japanese. Digits of other scripts (Arabic-Indic ٥٠, full-width ５０) are read as ASCII digits. No library
reads Arabic number words, so `_arabic` does: cardinals joined by "و" ("خمسة وعشرون" is 25, "ثلاثة آلاف" 3000).
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_TEXT2NUM = {"en", "de", "fr", "es", "pt", "it", "nl", "da"}
# A figure and the word after it ("2.5 million", "3 Millionen"): kept as written, since the readers would turn the
# scale word alone into a number of its own ("2.5 1000000"); the answer check reads scale words itself.
_FIGURE_AND_WORD = re.compile(r"(\d[\d,.]*\s*[^\W\d]+)")
_HAN_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿兆壹贰叁肆伍陆柒捌玖拾佰仟萬億]")


@lru_cache(maxsize=4096)
def as_digits(text: str, language: str = "en") -> str:
    """The text with its number words written as digits (figures matched, never shown: the text a user reads
    is unchanged). A language no reader covers gets only its digits normalised."""
    text = ascii_digits(text)
    if language in _TEXT2NUM or language == "ru":
        pieces = _FIGURE_AND_WORD.split(text)  # odd places hold the figures with their words
        return "".join(piece if i % 2 else _words_as_digits(piece, language) for i, piece in enumerate(pieces))
    return _words_as_digits(text, language)


def _words_as_digits(text: str, language: str) -> str:
    stripped = text.strip()
    if not stripped:
        return text
    lead, trail = text[:len(text) - len(text.lstrip())], text[len(text.rstrip()):]  # readers may drop them
    return lead + _read(stripped, language) + trail


def _read(text: str, language: str) -> str:
    try:
        if language in _TEXT2NUM:
            from text_to_num import alpha2digit

            return alpha2digit(text, language)
        if language == "ru":
            from number_parser import parse

            return parse(text, language="ru")
        if language == "ar":
            return _arabic(text)
        if language in ("zh", "ja") and _HAN_NUMERAL.search(text):
            import warnings

            import cn2an

            with warnings.catch_warnings():  # it warns of each numeral it leaves as written ("百万" alone)
                warnings.simplefilter("ignore")
                return cn2an.transform(text, "cn2an")
    except (ValueError, KeyError, IndexError, TypeError):  # a reader that trips over odd text leaves it as written
        return text
    return text


def ascii_digits(text: str) -> str:
    """Decimal digits of any script (Arabic-Indic, Devanagari, full-width) as 0-9, and Arabic script's separators
    between them as "," and ".": its thousands sign and its comma between groups of three ("22،338،618", as
    XQuAD's Arabic writes 22,338,618), its decimal sign ("3٫5")."""
    if text.isascii():
        return text
    text = "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in text)
    return _ARABIC_DECIMAL.sub(".", _ARABIC_GROUP.sub(",", text))


_ARABIC_GROUP = re.compile(r"(?<=\d)[\u060c\u066c](?=\d{3}(?!\d))")
_ARABIC_DECIMAL = re.compile(r"(?<=\d)\u066b(?=\d)")


# Arabic cardinals by their written forms (masculine and feminine, nominative and oblique; hamza folded: أ إ آ as ا).
# "أحد" and "إحدى" are left out: alone they mean "one of" far more often than "one".
_ARABIC_UNITS = {"صفر": 0, "واحد": 1, "واحدة": 1, "اثنان": 2, "اثنين": 2, "اثنتان": 2, "اثنتين": 2, "اثنا": 2, "اثنتا": 2,
                 "ثلاثة": 3, "ثلاث": 3, "اربعة": 4, "اربع": 4, "خمسة": 5, "خمس": 5, "ستة": 6, "ست": 6, "سبعة": 7,
                 "سبع": 7, "ثمانية": 8, "ثماني": 8, "ثمان": 8, "تسعة": 9, "تسع": 9, "عشرة": 10, "عشر": 10,
                 "عشرون": 20, "عشرين": 20, "ثلاثون": 30, "ثلاثين": 30, "اربعون": 40, "اربعين": 40, "خمسون": 50,
                 "خمسين": 50, "ستون": 60, "ستين": 60, "سبعون": 70, "سبعين": 70, "ثمانون": 80, "ثمانين": 80,
                 "تسعون": 90, "تسعين": 90, "مائة": 100, "مئة": 100, "مائتان": 200, "مائتين": 200, "مئتان": 200,
                 "مئتين": 200}
_ARABIC_HUNDREDS = {f"{unit}{hundred}": 100 * n for unit, n in (("ثلاث", 3), ("اربع", 4), ("خمس", 5), ("ست", 6),
                    ("سبع", 7), ("ثمان", 8), ("تسع", 9)) for hundred in ("مائة", "مئة")}
_ARABIC_SCALES = {"الف": 1e3, "الاف": 1e3, "الفا": 1e3, "مليون": 1e6, "ملايين": 1e6, "مليار": 1e9, "مليارات": 1e9}
_ARABIC_DUALS = {"الفان": 2e3, "الفين": 2e3, "مليونان": 2e6, "مليونين": 2e6}
_ARABIC_WORD = re.compile(r"[\u0621-\u064a\u0671-\u06d3]+")
_HAMZA_ALEF = str.maketrans("أإآ", "ااا")


def _arabic_value(word: str, first: bool) -> tuple[str, float] | None:
    """(kind, value) of one Arabic word of a number: "unit" (to add), "scale" (to multiply by) or "dual" (a scale
    counted twice). After a run's first word a unit is joined by "و" ("وعشرون"), but for the ten of a teen
    ("ثلاثة عشر"); a scale follows as written ("ثلاثة آلاف")."""
    folded = word.translate(_HAMZA_ALEF)
    joined = folded[1:] if folded.startswith("و") else None
    if first or folded in ("عشر", "عشرة"):
        joined = joined or folded
        units = (folded, joined)
    else:
        units = (joined,)
    for candidate in filter(None, units):
        if candidate in _ARABIC_UNITS or candidate in _ARABIC_HUNDREDS:
            return "unit", _ARABIC_UNITS.get(candidate) or _ARABIC_HUNDREDS.get(candidate, 0)
    for candidate in filter(None, (folded, joined)):
        if candidate in _ARABIC_SCALES:
            return "scale", _ARABIC_SCALES[candidate]
        if candidate in _ARABIC_DUALS:
            return "dual", _ARABIC_DUALS[candidate]
    return None


def _arabic(text: str) -> str:
    """Runs of Arabic number words as digits: a run's units and tens added, each scale word multiplying what came
    before it ("مائة وخمسون ألف" is 150000); a scale word with no number before it is left as written ("ألف" is
    also "he wrote")."""
    out, at = [], 0
    words = list(_ARABIC_WORD.finditer(text))
    i = 0
    while i < len(words):
        total, current, end, j, numeric = 0.0, 0.0, 0, i, False
        while j < len(words) and (j == i or text[words[j - 1].end():words[j].start()].strip() == ""):
            found = _arabic_value(words[j][0], j == i)
            if found is None:
                break
            kind, value = found
            if kind == "unit":
                current, numeric = current + value, True
            elif kind == "dual":
                total, current, numeric = total + current + value, 0.0, True
            elif numeric:
                total, current = total + current * value, 0.0
            else:
                break
            end, j = words[j].end(), j + 1
        if not numeric:
            i += 1
            continue
        out.append(text[at:words[i].start()] + str(int(total + current)))
        at, i = end, j
    return "".join(out) + text[at:]
