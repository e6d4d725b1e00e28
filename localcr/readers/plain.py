"""Plain text, Markdown, reST and source code: bytes decoded in whatever encoding they were written."""
from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from localcr.readers import Read, ReaderError

_BOMS = [  # UTF-32 first: its little-endian BOM begins with UTF-16's
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
]
_DETECT_BYTES = 1 << 16  # enough text to recognise an encoding; detection time grows with the sample
MIXED_WORDS = 0.1  # the share of a decoded text's non-ASCII words that may mix scripts (see _fits)
MOSTLY_ASCII = 0.75  # a file this much ASCII is Latin-script text: one a legacy guess reads as junk is damaged UTF-8
NO_ENCODING = "no text encoding fits its bytes; undecodable bytes replaced with U+FFFD"
_LETTERS = re.compile(r"[^\W\d_]+")
# The scripts a word is not expected to mix, by the first word of a letter's Unicode name; other letters (µ, ª) and
# the scripts written without spaces (Han, kana, hangul: `JISです` is one run of letters) belong to none.
_SCRIPT_OF = {"LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "ARABIC": "Arabic", "HEBREW": "Hebrew",
              "THAI": "Thai", "DEVANAGARI": "Devanagari", "ARMENIAN": "Armenian", "GEORGIAN": "Georgian"}


@dataclass
class Decoded:
    text: str
    encoding: str  # a Python codec name
    lossy: bool = False  # undecodable bytes were replaced with U+FFFD
    warning: str = ""  # what to say of the decoding: bytes replaced, or an encoding guessed that some words do not fit


def decode(data: bytes) -> Decoded:
    """The text of a file's bytes: by its BOM, else UTF-8, else the encoding chardet recognises (measured on
    legacy-encoded prose in seven languages against charset-normalizer: benchmarks/formats/encodings.py), else UTF-8
    with replacement. A guess is checked by what it reads: a word of letters of two scripts (`cafй`, Latin and
    Cyrillic, from cp1251) or a control character means it does not fit; UTF-8 with a few stray bytes (valid
    multi-byte characters as many as the bytes that are not) is read as UTF-8, its stray bytes replaced, with a
    warning. Where a guess does not fit a mostly ASCII file (Latin-script text), Windows-1252 (the commonest legacy
    encoding: chardet reads short French as Windows-1251, `Dйjа vu`) is read where it fits, with a warning naming it,
    else the file is damaged UTF-8 as above; any other file keeps the guess, with a warning naming it. chardet's own
    confidence says nothing here (13% for a clean Latin-1 line). UTF-16 written without a BOM is recognised by its
    NUL bytes."""
    if encoding := _utf16_without_bom(data):
        return Decoded(data.decode(encoding, errors="replace"), encoding)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode(encoding), encoding)
            except UnicodeDecodeError:
                return Decoded(data[len(bom):].decode(encoding, errors="replace"), encoding, lossy=True, warning=NO_ENCODING)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    replaced = data.decode("utf-8", errors="replace")
    stray = replaced.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    damaged_utf8 = Decoded(replaced, "utf-8", lossy=True,
                           warning=f"not valid UTF-8: {stray} stray byte{'s' * (stray > 1)} replaced with U+FFFD")
    if len(replaced) - len(replaced.encode("ascii", "ignore")) - replaced.count("\ufffd") >= stray:  # valid non-ASCII
        return damaged_utf8
    guessed = _guessed(data)
    if guessed is None:
        return Decoded(replaced, "utf-8", lossy=True, warning=NO_ENCODING)
    if _fits(guessed.text[:_DETECT_BYTES]):
        return guessed
    sample = data[:_DETECT_BYTES]
    if len(sample.decode("ascii", "ignore")) >= MOSTLY_ASCII * len(sample):
        try:
            latin = data.decode("cp1252")
            if _fits(latin[:_DETECT_BYTES]):
                return Decoded(latin, "cp1252", warning="not UTF-8, and its encoding is a guess (cp1252)")
        except UnicodeDecodeError:
            pass
        return damaged_utf8
    guessed.warning = f"not UTF-8, and its encoding is a guess ({guessed.encoding}) that some of its words do not fit"
    return guessed


def _utf16_without_bom(data: bytes) -> str | None:
    """The UTF-16 codec of text written without a BOM (git's tests hold some): a NUL in nearly every other byte (the
    high byte of Latin text), in the first of each pair (big-endian) or the second (little-endian), and printable ASCII
    in nearly all the others."""
    sample = data[:4096] if len(data) % 2 == 0 else b""
    first, second = sample[0::2], sample[1::2]
    for nuls, others, codec in ((first, second, "utf-16-be"), (second, first, "utf-16-le")):
        text = sum(1 for b in others if 32 <= b < 127 or b in (9, 10, 13))
        if len(nuls) >= 4 and nuls.count(0) >= 0.9 * len(nuls) and text >= 0.9 * len(others):
            return codec
    return None


def _guessed(data: bytes) -> Decoded | None:
    """The bytes in the legacy encoding chardet recognises; None when it names none that decodes them."""
    import chardet

    # The encodings of today's systems (Windows code pages, Shift_JIS, GBK, EUC-KR, KOI8 ...): allowing
    # Mac and DOS ones too turned short German text into MacTurkish.
    guess = chardet.detect(data[:_DETECT_BYTES], encoding_era=chardet.EncodingEra.MODERN_WEB, prefer_superset=True)["encoding"]
    try:
        return Decoded(data.decode(guess), codecs.lookup(guess).name) if guess else None
    except (LookupError, UnicodeDecodeError):
        return None


def _fits(text: str) -> bool:
    """Whether decoded text reads as text: no control character but white space, and few of its words that are not
    ASCII mix letters of two scripts (real text has a few: `cредние`, a Latin c typed in a Russian word)."""
    if any(unicodedata.category(c) == "Cc" and not c.isspace() for c in text if not c.isascii() or c < " "):
        return False
    foreign = [word for word in _LETTERS.findall(text) if not word.isascii()]
    mixed = sum(1 for word in foreign if len({_SCRIPT_OF.get(unicodedata.name(c, "").split(" ")[0]) for c in word} - {None}) > 1)
    return mixed <= MIXED_WORDS * len(foreign)


def is_binary(data: bytes) -> bool:
    """NUL bytes near the start mean binary, unless a BOM or their places say UTF-16/32 (whose text is full of them)."""
    return b"\0" in data[:8192] and not data.startswith(tuple(bom for bom, _ in _BOMS)) and not _utf16_without_bom(data)


def read(data: bytes) -> Read:
    if is_binary(data):
        raise ReaderError("binary file")
    decoded = decode(data)
    warnings = [decoded.warning] if decoded.warning else []
    return Read(decoded.text.removeprefix("\ufeff").replace("\r\n", "\n"), decoded.encoding, warnings)
