"""Scans: text recognised by Tesseract, offline, in an image file (PNG, JPEG, TIFF; a TIFF's frames are its pages)
or on a PDF page with no text layer (rendered by the PDF reader).

pytesseract runs the `tesseract` program that the system's packages install (Debian: tesseract-ocr and one
tesseract-ocr-<lang> package per language). Tesseract's orientation and script detection (OSD, `--psm 0`) looks at
each page first: a page it finds turned (90, 180 or 270 degrees) is turned back before it is read, and a page in a
script no installed pack reads (Devanagari, Hebrew, Greek ...) that reads badly as English is skipped with the pack to
install, not indexed as junk. The language pack is chosen per page from those installed: a page in a script of
localcr's packs (Cyrillic, Arabic, Han, Japanese) is read in its pack; any other is read as English, one that reads
badly so again in each other script's pack (OSD needs more than a few lines to tell), and a Latin one again as German
or Spanish when its words say so (py3langid). A page whose words' mean confidence is under LOW_CONFIDENCE keeps its
text with a warning naming the page; one whose text is under MIN_TEXT_HEIGHT pixels high is too small to read, how
large the image is does not matter. What a page reads as is cached (localcr.cache, store "ocr") by the page's
pixels, so a re-index never recognises a page twice.
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

LAYOUT = "OSD first, blocks"  # how a page is read and laid out as text (in the cache key: a new one reads again)
LOW_CONFIDENCE = 60  # a page's mean word confidence (0-100) under which its text is said to be unreliable
PAGE_TIMEOUT = 120  # seconds Tesseract may take over one page (a page takes a few); past it the page is missing
RENDER_SCALE = 300 / 72  # PDF pages are rendered at 300 dpi, Tesseract's own recommendation
MAX_PIXELS = 100_000_000  # an image larger than this (10,000 x 10,000) is refused, not decoded
# Text whose words are less high than this (the median of their boxes, in pixels) is too small to read: Tesseract
# reads capitals 20 pixels high and more best, and makes junk of text a few pixels high (a thumbnail, an icon).
MIN_TEXT_HEIGHT = 8
# OSD's confidence in a page's orientation at or above which a page it finds turned is turned back (pages of text
# measured 4.5-13; a handful of words less).
MIN_ORIENTATION_CONFIDENCE = 3.0
# ... and in its script at or above which the page is read in that script's pack first, or skipped when no installed
# pack reads it (pages of Latin text measured 31-183, of Greek 12.8-35).
MIN_SCRIPT_CONFIDENCE = 10.0
PACKS = {"en": "eng", "de": "deu", "es": "spa", "ru": "rus", "ar": "ara", "zh": "chi_sim", "ja": "jpn"}
# The pack that reads each script OSD names: localcr's packs for theirs, and the Debian pack of the language most
# written in each other script, named when a page in it is skipped (tesseract-ocr-<pack>).
SCRIPT_PACKS = {"Cyrillic": "rus", "Arabic": "ara", "Han": "chi_sim", "Japanese": "jpn", "Hiragana": "jpn",
                "Katakana": "jpn", "Devanagari": "hin", "Hebrew": "heb", "Greek": "ell", "Hangul": "kor",
                "Korean": "kor", "Thai": "tha", "Bengali": "ben", "Tamil": "tam", "Telugu": "tel", "Gujarati": "guj",
                "Gurmukhi": "pan", "Kannada": "kan", "Malayalam": "mal", "Oriya": "ori", "Sinhala": "sin",
                "Georgian": "kat", "Armenian": "hye", "Ethiopic": "amh", "Khmer": "khm", "Lao": "lao",
                "Myanmar": "mya", "Tibetan": "bod"}
_LOCALCR_SCRIPTS = {script: pack for script, pack in SCRIPT_PACKS.items() if pack in PACKS.values()}
_NO_TEXT = "no text layer, and OCR found no text"
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
        frames = [frame.convert("L") for frame in ImageSequence.Iterator(image)]
    except UnidentifiedImageError:
        raise ReaderError("not a readable image (not a PNG, JPEG or TIFF that Pillow can decode)") from None
    except (Image.DecompressionBombError, OSError, ValueError) as exc:
        raise ReaderError(f"not a readable image ({' '.join(str(exc).split())[:200]})") from None
    texts, warnings = recognise(frames)
    if not any(texts):
        raise ReaderError(why_no_text(warnings) or "OCR found no text in it")
    text, pages = paged(texts)
    return Read(text, "", warnings, pages=pages if len(pages) > 1 else [])


def why_no_text(warnings: list[str]) -> str:
    """Why OCR read no text on any page, where every page says the same (a script no installed pack reads, text too
    small, Tesseract failing): what to say of the whole file; "" otherwise."""
    reasons = {warning.partition(": ")[2] for warning in warnings}
    return reasons.pop() if len(reasons) == 1 and _NO_TEXT not in reasons else ""


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
    """A page's text, and what to say of it: nothing found, a script no pack reads, text too small, low confidence,
    or Tesseract failing on it."""
    import pytesseract

    try:
        text, confidence, height, script = _cached_page_text(image)
    except (RuntimeError, pytesseract.TesseractError) as exc:  # pytesseract's timeout is a RuntimeError
        return "", f"OCR failed ({' '.join(str(exc).split())[:200]}): its text is missing"
    if script:
        pack = f"tesseract-ocr-{SCRIPT_PACKS[script].replace('_', '-')}"
        return "", f"in {script} script, which no installed Tesseract pack reads (apt-get install {pack})"
    if text and height < MIN_TEXT_HEIGHT:
        return "", f"its text is {height} pixels high, too small to read (at least {MIN_TEXT_HEIGHT})"
    if not text:
        return "", _NO_TEXT
    if confidence < LOW_CONFIDENCE:
        return text, f"OCR confidence {confidence:.0f}% (under {LOW_CONFIDENCE}%): its text may be wrong"
    return text, ""


def _cached_page_text(image) -> tuple[str, float, int, str]:
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


def _page_text(image) -> tuple[str, float, int, str]:
    """A page's text (lines as Tesseract found them, a blank line between its blocks), its mean word confidence, its
    words' median height in pixels, and the script OSD found when no installed pack reads it ("" when one does).
    A page OSD finds turned is turned back first. A page in a script of an installed pack is read in it; one that
    reads badly so, or in any other script, as English, and one that reads badly as English too again in each other
    script's pack (the best read kept) unless OSD names a script no installed pack reads (then it is skipped: OSD
    took the page for that script and English does not read it); a Latin one in German or Spanish when its words
    say so."""
    packs = installed_packs()
    rotate, script = _orientation_and_script(image)
    if rotate:
        image = image.rotate(-rotate, expand=True, fillcolor=255)  # OSD's rotation is clockwise, PIL's anticlockwise
    own = SCRIPT_PACKS.get(script)
    reads = [_tesseract(image, own)] if own in packs else []
    if reads and reads[0][1] >= LOW_CONFIDENCE:
        return *reads[0], ""
    first = "eng" if "eng" in packs else packs[0]
    text, confidence, height = _tesseract(image, first)
    if confidence < LOW_CONFIDENCE:
        if own and own not in packs:
            return "", confidence, height, script
        others = [pack for pack in packs if pack in _LOCALCR_SCRIPTS.values() and pack != own]
        reads += [(text, confidence, height), *(_tesseract(image, pack) for pack in others)]
        return *max(reads, key=lambda r: r[1]), ""
    if first == "eng" and (better := _latin_pack(text, packs)) != "eng":
        return *_tesseract(image, f"{better}+eng"), ""
    return text, confidence, height, ""


def _orientation_and_script(image) -> tuple[int, str]:
    """How far a page is turned (clockwise degrees to turn it back: 0, 90, 180 or 270; 0 when OSD is not sure) and
    its script ("Latin", "Cyrillic", "Devanagari" ...; "" when OSD is not sure) as Tesseract's OSD finds them; (0, "")
    when it cannot tell (too little text, or no osd pack)."""
    import pytesseract

    try:
        found = pytesseract.image_to_osd(image, output_type=pytesseract.Output.DICT, timeout=PAGE_TIMEOUT)
    except (pytesseract.TesseractError, KeyError, ValueError):
        return 0, ""
    sure_of_turn = float(found.get("orientation_conf", 0)) >= MIN_ORIENTATION_CONFIDENCE
    sure_of_script = float(found.get("script_conf", 0)) >= MIN_SCRIPT_CONFIDENCE
    turned = int(found.get("rotate", 0)) % 360 if sure_of_turn else 0
    return turned, str(found.get("script", "")) if sure_of_script else ""


def _latin_pack(text: str, packs: list[str]) -> str:
    """The installed pack of the Latin-script language the words read as English say they are in."""
    if len(text.split()) < 8:
        return "eng"
    from localcr.language import document_language

    pack = PACKS.get(document_language(text, False), "eng")
    return pack if pack in packs and pack not in _LOCALCR_SCRIPTS.values() else "eng"


def _tesseract(image, pack: str) -> tuple[str, float, int]:
    import pytesseract

    found = pytesseract.image_to_data(image, lang=pack, output_type=pytesseract.Output.DICT, timeout=PAGE_TIMEOUT)
    lines: dict[tuple[int, int, int], list[str]] = {}
    confidences, heights = [], []
    for word, confidence, height, *where in zip(found["text"], found["conf"], found["height"], found["block_num"],
                                                found["par_num"], found["line_num"]):
        if word.strip():
            lines.setdefault(tuple(where), []).append(word)
            confidences.append(float(confidence))
            heights.append(int(height))
    space = "" if pack in ("chi_sim", "jpn") else " "  # Tesseract's words in Chinese and Japanese are characters
    blocks: dict[int, list[str]] = {}
    for (block, _paragraph, _line), words in lines.items():
        blocks.setdefault(block, []).append(space.join(words))
    # A blank line between blocks (text regions) only: Tesseract takes many a single line for a paragraph, and a text
    # layer's lines (PDFium's) have no blank line between them either, so chunks are cut alike.
    text = "\n\n".join("\n".join(block) for block in blocks.values())
    median_height = sorted(heights)[len(heights) // 2] if heights else 0
    return text, sum(confidences) / len(confidences) if confidences else 0.0, median_height
