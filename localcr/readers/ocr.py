"""Scans: text recognised by Tesseract, offline, in an image file (PNG, JPEG, TIFF; a TIFF's frames are its pages)
or on a PDF page with no text layer (rendered by the PDF reader).

pytesseract runs the `tesseract` program that the system's packages install (Debian: tesseract-ocr and one
tesseract-ocr-<lang> package per language). The language pack is chosen per page from those installed: a page is
read as English; one that reads badly so is read again in the pack of the script Tesseract's script detection
(OSD) finds (Cyrillic, Arabic, Han, Japanese), and a Latin one again as German or Spanish when its words say so
(py3langid). A page whose words' mean confidence is under LOW_CONFIDENCE keeps its text with a warning naming the
page. What a page reads as is cached (localcr.cache, store "ocr") by the page's pixels, so a re-index never
recognises a page twice.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import itertools
import os
import shutil
from typing import Iterable

from localcr.readers import Read, ReaderError, paged

LAYOUT = "blocks, English first"  # how a page's words are laid out as text (in the cache key: a new layout recognises again)
LOW_CONFIDENCE = 60  # a page's mean word confidence (0-100) under which its text is said to be unreliable
PAGE_TIMEOUT = 120  # seconds Tesseract may take over one page (a page takes a few); past it the page is missing
RENDER_SCALE = 300 / 72  # PDF pages are rendered at 300 dpi, Tesseract's own recommendation
MAX_PIXELS = 100_000_000  # an image larger than this (10,000 x 10,000) is refused, not decoded
MIN_PIXELS = 250_000  # ... and one smaller than 500 x 500 (an icon, a logo: no page of text) is not recognised
PACKS = {"en": "eng", "de": "deu", "es": "spa", "ru": "rus", "ar": "ara", "zh": "chi_sim", "ja": "jpn"}
_SCRIPT_PACKS = {"Cyrillic": "rus", "Arabic": "ara", "Han": "chi_sim", "Japanese": "jpn", "Hiragana": "jpn",
                 "Katakana": "jpn"}
INSTALL = "apt-get install tesseract-ocr " + " ".join(f"tesseract-ocr-{p.replace('_', '-')}" for p in PACKS.values())
NOT_INSTALLED = f"OCR needs Tesseract, which is not installed ({INSTALL})"


@functools.cache
def installed_packs() -> list[str]:
    """The language packs of localcr's languages that Tesseract has here (none when it is not installed)."""
    if shutil.which("tesseract") is None:
        return []
    import pytesseract

    have = set(pytesseract.get_languages())
    return [pack for pack in PACKS.values() if pack in have]


def describe() -> str:
    """What reads scans on this machine: Tesseract's version and language packs, and the packs it lacks."""
    packs = installed_packs()
    if not packs:
        return NOT_INSTALLED
    import pytesseract

    missing = [f"tesseract-ocr-{pack.replace('_', '-')}" for pack in PACKS.values() if pack not in packs]
    return (f"Tesseract {pytesseract.get_tesseract_version()}, language packs {', '.join(packs)} (chosen per page by "
            "script and words)" + (f"; not installed: {' '.join(missing)}" if missing else ""))


def read_image(data: bytes) -> Read:
    """An image file, one page per frame (a multi-page TIFF)."""
    from PIL import Image, ImageSequence, UnidentifiedImageError

    if not installed_packs():
        raise ReaderError(f"a scan: {NOT_INSTALLED}")
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        image = Image.open(io.BytesIO(data))
        if image.width * image.height < MIN_PIXELS:
            raise ReaderError(f"an image of {image.width}x{image.height} pixels: too small to be a scanned page")
        frames = [frame.convert("L") for frame in ImageSequence.Iterator(image)]
    except UnidentifiedImageError:
        raise ReaderError("not a readable image (not a PNG, JPEG or TIFF that Pillow can decode)") from None
    except (Image.DecompressionBombError, OSError, ValueError) as exc:
        raise ReaderError(f"not a readable image ({' '.join(str(exc).split())[:200]})") from None
    texts, warnings = recognise(frames)
    if not any(texts):
        raise ReaderError("OCR found no text in it")
    text, pages = paged(texts)
    return Read(text, "", warnings, pages=pages if len(pages) > 1 else [])


def recognise(pages: Iterable, numbers: list[int] | None = None) -> tuple[list[str], list[str]]:
    """Each page image's text, and a warning for each page whose recognition is not to be trusted (numbers: the
    pages' numbers as the document counts them, 1, 2, 3 ... unless given)."""
    texts, warnings = [], []
    for number, image in zip(numbers or itertools.count(1), pages):
        text, warning = _checked_page_text(image)
        texts.append(text)
        warnings += [f"page {number}: {warning}"] if warning else []
    return texts, warnings


def _checked_page_text(image) -> tuple[str, str]:
    """A page's text, and what to say of it: nothing found, low confidence, or Tesseract failing on it."""
    import pytesseract

    try:
        text, confidence = _cached_page_text(image)
    except (RuntimeError, pytesseract.TesseractError) as exc:  # pytesseract's timeout is a RuntimeError
        return "", f"OCR failed ({' '.join(str(exc).split())[:200]}): its text is missing"
    if not text:
        return "", "no text layer, and OCR found no text"
    if confidence < LOW_CONFIDENCE:
        return text, f"OCR confidence {confidence:.0f}% (under {LOW_CONFIDENCE}%): its text may be wrong"
    return text, ""


def _cached_page_text(image) -> tuple[str, float]:
    from localcr import cache

    import pytesseract

    version = str(pytesseract.get_tesseract_version())
    key = cache.key("ocr", LAYOUT, version, ",".join(installed_packs()), f"{image.size}", hashlib.sha256(image.tobytes()).hexdigest())
    with cache.open_cache("ocr") as store:
        if (found := store.get(key)) is not None:
            return found
        with _one_thread():
            result = _page_text(image)
        store.set(key, result, cache.tag("tesseract", version))
    return result


@contextlib.contextmanager
def _one_thread():
    """Tesseract on one thread: its OpenMP threads slow it down, most of all with two reader workers side by side
    (benchmarks/formats/ocr.py on 2 AVX-512 cores: 5.65 s a page with its default threads, 2.24 s on one).
    pytesseract hands os.environ to the program, so the limit is set there while a page is read, then put back."""
    before = os.environ.get("OMP_THREAD_LIMIT")
    os.environ["OMP_THREAD_LIMIT"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["OMP_THREAD_LIMIT"]
        else:
            os.environ["OMP_THREAD_LIMIT"] = before


def _page_text(image) -> tuple[str, float]:
    """A page's text (lines as Tesseract found them, a blank line between its blocks) and its mean word confidence.
    Read as English first (most pages are Latin script; script detection costs a fifth of a page's time); a page
    that reads badly so is read again in another script's pack (the best read kept), a Latin one in German or
    Spanish when its words say so."""
    packs = installed_packs()
    first = "eng" if "eng" in packs else packs[0]
    text, confidence = _tesseract(image, first)
    if confidence < LOW_CONFIDENCE:
        return max([(text, confidence), *(_tesseract(image, pack) for pack in _other_scripts(image, packs))], key=lambda r: r[1])
    if first == "eng" and (better := _latin_pack(text, packs)) != "eng":
        return _tesseract(image, f"{better}+eng")
    return text, confidence


def _other_scripts(image, packs: list[str]) -> list[str]:
    """The installed packs of other scripts to read a page in: the one of the script OSD finds, else (OSD needs
    more text than a few lines) all of them, the best read kept."""
    found = _SCRIPT_PACKS.get(_script(image))
    others = [pack for pack in packs if pack in _SCRIPT_PACKS.values()]
    return [found] if found in others else others


def _script(image) -> str:
    """The page's script as Tesseract's OSD names it ("Latin", "Cyrillic", "Han" ...); "" when it cannot tell
    (too little text, or no osd pack)."""
    import pytesseract

    try:
        return pytesseract.image_to_osd(image, output_type=pytesseract.Output.DICT, timeout=PAGE_TIMEOUT)["script"]
    except (pytesseract.TesseractError, KeyError):
        return ""


def _latin_pack(text: str, packs: list[str]) -> str:
    """The installed pack of the Latin-script language the words read as English say they are in."""
    if len(text.split()) < 8:
        return "eng"
    from localcr.language import document_language

    pack = PACKS.get(document_language(text, False), "eng")
    return pack if pack in packs and pack not in _SCRIPT_PACKS.values() else "eng"


def _tesseract(image, pack: str) -> tuple[str, float]:
    import pytesseract

    found = pytesseract.image_to_data(image, lang=pack, output_type=pytesseract.Output.DICT, timeout=PAGE_TIMEOUT)
    lines: dict[tuple[int, int, int], list[str]] = {}
    confidences = []
    for word, confidence, *where in zip(found["text"], found["conf"], found["block_num"], found["par_num"], found["line_num"]):
        if word.strip():
            lines.setdefault(tuple(where), []).append(word)
            confidences.append(float(confidence))
    space = "" if pack in ("chi_sim", "jpn") else " "  # Tesseract's words in Chinese and Japanese are characters
    blocks: dict[int, list[str]] = {}
    for (block, _paragraph, _line), words in lines.items():
        blocks.setdefault(block, []).append(space.join(words))
    # A blank line between blocks (text regions) only: Tesseract takes many a single line for a paragraph, and a text
    # layer's lines (PDFium's) have no blank line between them either, so chunks are cut alike.
    text = "\n\n".join("\n".join(block) for block in blocks.values())
    return text, sum(confidences) / len(confidences) if confidences else 0.0
