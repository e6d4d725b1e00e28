"""Plain text, Markdown, reST and source code: bytes decoded in whatever encoding they were written."""
from __future__ import annotations

import codecs
from dataclasses import dataclass

from localcr.readers import Read, ReaderError

_BOMS = [  # UTF-32 first: its little-endian BOM begins with UTF-16's
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
]
_DETECT_BYTES = 1 << 16  # enough text to recognise an encoding; detection time grows with the sample


@dataclass
class Decoded:
    text: str
    encoding: str  # a Python codec name
    lossy: bool = False  # no encoding fitted: undecodable bytes were replaced with U+FFFD


def decode(data: bytes) -> Decoded:
    """The text of a file's bytes: by its BOM, else UTF-8, else the encoding chardet recognises (measured on
    legacy-encoded prose in seven languages against charset-normalizer: benchmarks/formats/encodings.py), else UTF-8
    with replacement."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode(encoding), encoding)
            except UnicodeDecodeError:
                return Decoded(data[len(bom):].decode(encoding, errors="replace"), encoding, lossy=True)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    import chardet

    # The encodings of today's systems (Windows code pages, Shift_JIS, GBK, EUC-KR, KOI8 ...): allowing
    # Mac and DOS ones too turned short German text into MacTurkish.
    guess = chardet.detect(data[:_DETECT_BYTES], encoding_era=chardet.EncodingEra.MODERN_WEB, prefer_superset=True)["encoding"]
    if guess:
        try:
            return Decoded(data.decode(guess), codecs.lookup(guess).name)
        except (LookupError, UnicodeDecodeError):
            pass
    return Decoded(data.decode("utf-8", errors="replace"), "utf-8", lossy=True)


def is_binary(data: bytes) -> bool:
    """NUL bytes near the start mean binary, unless a BOM says UTF-16/32 (whose text is full of them)."""
    return b"\0" in data[:8192] and not data.startswith(tuple(bom for bom, _ in _BOMS))


def read(data: bytes) -> Read:
    if is_binary(data):
        raise ReaderError("binary file")
    decoded = decode(data)
    warnings = ["no text encoding fits its bytes; undecodable bytes replaced with U+FFFD"] if decoded.lossy else []
    return Read(decoded.text.removeprefix("\ufeff").replace("\r\n", "\n"), decoded.encoding, warnings)
