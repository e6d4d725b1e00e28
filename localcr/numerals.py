"""Numbers written in words, as digits: "fifty thousand men" and "50,000 men" state the same figure.

The answer check (localcr.citations) compares an answer's figures with its sources'; a source that spells a number
out ("fifty thousand", "fünfzigtausend", "五万", "пятьдесят тысяч") and an answer that writes it in digits must
agree. Each language's words are read by a library that knows its grammar: text2num for English, German, French,
Spanish (and Portuguese, Italian, Dutch, Danish), number-parser for Russian, cn2an for Chinese and the kanji
numerals of Japanese. Digits of other scripts (Arabic-Indic ٥٠, full-width ５０) are read as ASCII digits; Arabic
number words are left as written (no library reads them).
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
    text = _ascii_digits(text)
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
        if language in ("zh", "ja") and _HAN_NUMERAL.search(text):
            import warnings

            import cn2an

            with warnings.catch_warnings():  # it warns of each numeral it leaves as written ("百万" alone)
                warnings.simplefilter("ignore")
                return cn2an.transform(text, "cn2an")
    except (ValueError, KeyError, IndexError, TypeError):  # a reader that trips over odd text leaves it as written
        return text
    return text


def _ascii_digits(text: str) -> str:
    """Decimal digits of any script (Arabic-Indic, Devanagari, full-width) as 0-9."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in text)
