"""PDF: the text layer, page by page, with where each page starts, so a hit can name its page.

pypdfium2 is PDFium, the parser Chrome uses on hostile PDFs every day: fast, permissively licensed, shipped
as wheels. A page with no text layer (a scan) is rendered and its text recognised by Tesseract
(localcr.readers.ocr); where Tesseract is not installed, such pages are missing with a warning, and a PDF with no
text layer at all is skipped with what to install.
"""
from __future__ import annotations

import re

from localcr.readers import Read, ReaderError, ocr, paged

# A metadata title that only names a file (`Binder1.pdf`, `Microsoft Word - report.docx`): what a tool wrote, not the
# document's title, and no title is better (a structural context would carry it into every chunk).
_FILE_NAME = re.compile(r"(?:Microsoft \w+ - )?[^/\\]*\.(?:pdf|docx?|xlsx?|pptx?|odt|rtf|txt|indd|tiff?|jpe?g|png)", re.IGNORECASE)


def read(data: bytes) -> Read:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise ReaderError(_why_unreadable(exc.err_code)) from None
    try:
        texts = [_page_text(pdf[i]) for i in range(len(pdf))]
        warnings = _recognise_scans(pdf, texts)
        title = pdf.get_metadata_value("Title")
        outline = _outline(pdf)
    finally:
        pdf.close()
    if not any(texts):
        if not ocr.installed_packs():
            raise ReaderError(f"no text layer (scanned PDF?): {ocr.NOT_INSTALLED}")
        why = ocr.why_no_text(warnings)
        raise ReaderError(f"no text layer (scanned PDF?), and OCR read none: {why}" if why
                          else "no text layer (scanned PDF?), and OCR found no text")
    text, pages = paged(texts)
    bookmarks = [(level, name, _where(text, name, pages[page])) for level, name, page in outline if page < len(pages)]
    title = " ".join(title.split())
    return Read(text, "", warnings, pages=pages, title="" if _FILE_NAME.fullmatch(title) else title, bookmarks=bookmarks)


def _recognise_scans(pdf, texts: list[str]) -> list[str]:
    """Fill in the text of the pages with no text layer by OCR (in place); the warnings to give."""
    blank = [i for i, text in enumerate(texts) if not text]
    if not blank:
        return []
    if not ocr.installed_packs():
        return [f"{len(blank)} of {len(texts)} pages have no text layer (scanned?): their text is missing ({ocr.NOT_INSTALLED})"]
    images = (_rendered(pdf[i]) for i in blank)  # one page's image in memory at a time (9 MB at 300 dpi)
    recognised, warnings = ocr.recognise(images, [i + 1 for i in blank])
    for i, text in zip(blank, recognised):
        texts[i] = text
    return warnings


def _rendered(page):
    """A page as a greyscale image at the resolution OCR wants."""
    try:
        return page.render(scale=ocr.RENDER_SCALE, grayscale=True).to_pil()
    finally:
        page.close()


def _outline(pdf) -> list[tuple[int, str, int]]:
    """The PDF's bookmarks as (level from 1, title, page index); those that point at no page are left out."""
    found = []
    for bookmark in pdf.get_toc():
        dest = bookmark.get_dest()
        page = dest.get_index() if dest is not None else None
        name = " ".join((bookmark.get_title() or "").split())
        if page is not None and name:
            found.append((bookmark.level + 1, name, page))
    return found


def _where(text: str, title: str, page_start: int) -> int:
    """Where a bookmark's title stands on its page (the page's start when the page does not show it)."""
    page_end = text.find("\n\n", page_start + 1)
    at = text.lower().find(title.lower(), page_start, page_end if page_end > 0 else len(text))
    return at if at >= 0 else page_start


def _page_text(page) -> str:
    """One page's text with Unix line ends; PDFium marks a hyphen it breaks a line at as U+0002 and may end
    a page with a NUL. (A hyphen it joins two lines at, U+FFFE, stays: every document's text carries it as a soft
    hyphen, localcr.text.HYPHENATION_POINT.)"""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
    finally:
        textpage.close()
        page.close()
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x02", "-").replace("\0", "").strip()


def _why_unreadable(code: int | None) -> str:
    import pypdfium2.raw as raw

    if code == raw.FPDF_ERR_PASSWORD:
        return "encrypted"
    if code == raw.FPDF_ERR_SECURITY:
        return "encrypted (with a security handler PDFium does not support)"
    detail = {raw.FPDF_ERR_FORMAT: "damaged, or not a PDF", raw.FPDF_ERR_SUCCESS: "no pages",
              raw.FPDF_ERR_PAGE: "a page is damaged"}.get(code, f"PDFium error {code}")
    return f"not a readable PDF ({detail})"
