"""Office Open XML: Word (DOCX) and PowerPoint (PPTX) files as Markdown-ish text.

Headings become Markdown headings, so structure.py finds heading paths as it does in Markdown; tables
become lines of cells separated by " | ". A presentation is read one page per slide, the slide's title as
its heading, so a hit can name its slide.
"""
from __future__ import annotations

import io
import re
import zipfile

from localcr.readers import Read, ReaderError, paged

_HEADING_STYLE = re.compile(r"Heading (\d)$")
_STREAM = re.compile(r"file '<_io\.BytesIO object at 0x[0-9a-fA-F]+>'")  # how the libraries name the stream given


def _broken() -> tuple[type[Exception], ...]:
    """What python-docx and python-pptx raise for a file that is not a sound package: a damaged zip, a
    missing part, damaged XML, another Office format."""
    from lxml.etree import XMLSyntaxError

    return zipfile.BadZipFile, KeyError, ValueError, XMLSyntaxError


def _unreadable(what: str, exc: Exception) -> ReaderError:
    detail = "not a zip archive" if isinstance(exc, zipfile.BadZipFile) else _STREAM.sub("the file", " ".join(str(exc).split()))
    return ReaderError(f"not a readable {what} ({detail[:200]})")


def _table(rows: list[list[str]]) -> str:
    lines = [" | ".join(" ".join(cell.split()) for cell in row) for row in rows]
    return "\n".join(line for line in lines if line.strip(" |"))


def read_docx(data: bytes) -> Read:
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [_docx_block(item) for item in document.iter_inner_content()]
        title = document.core_properties.title or ""
    except _broken() as exc:
        raise _unreadable("DOCX", exc) from None
    return Read("\n\n".join(block for block in blocks if block) + "\n", "", title=" ".join(title.split()))


def _docx_block(item) -> str:
    """A paragraph (a heading style becomes a Markdown heading of its level, the Title style a level-1 one)
    or a table."""
    from docx.table import Table

    if isinstance(item, Table):
        rows = []
        for row in item.rows:
            cells = row.cells  # a cell spanning columns comes once per column: keep it once
            rows.append([cell.text for i, cell in enumerate(cells) if i == 0 or cell is not cells[i - 1]])
        return _table(rows)
    text = item.text.strip()
    style = item.style.name if item.style is not None else ""
    level = 1 if style == "Title" else int(m.group(1)) if (m := _HEADING_STYLE.match(style)) else 0
    return f"{'#' * min(level, 6)} {' '.join(text.split())}" if level and text else text


def read_pptx(data: bytes) -> Read:
    import pptx

    try:
        deck = pptx.Presentation(io.BytesIO(data))
        slides = [_slide_text(slide) for slide in deck.slides]
        title = deck.core_properties.title or ""
    except _broken() as exc:
        raise _unreadable("PPTX", exc) from None
    text, pages = paged(slides)
    return Read(text, "", pages=pages, title=" ".join(title.split()))


def _slide_text(slide) -> str:
    """A slide's title as a heading, then the text of its shapes and tables, then its speaker notes."""
    title = slide.shapes.title
    heading = " ".join(title.text_frame.text.split()) if title is not None and title.has_text_frame else ""
    blocks = [f"# {heading}" if heading else ""]
    blocks += _shape_texts(slide.shapes, title.shape_id if title is not None else None)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        blocks.append(slide.notes_slide.notes_text_frame.text)
    texts = (block.replace("\v", "\n").strip() for block in blocks)  # python-pptx reads a line break as \v
    return "\n\n".join(text for text in texts if text)


def _shape_texts(shapes, skip_id) -> list[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    texts = []
    for shape in shapes:
        if shape.shape_id == skip_id:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            texts += _shape_texts(shape.shapes, skip_id)
        elif shape.has_table:
            texts.append(_table([[cell.text for cell in row.cells if not cell.is_spanned] for row in shape.table.rows]))
        elif shape.has_text_frame:
            texts.append(shape.text_frame.text)
    return texts
