"""OpenDocument text (ODT) and presentations (ODP), read by odfpy (whose XML parser is defusedxml's).

As with Word and PowerPoint files (localcr.readers.office): headings become Markdown headings of their outline
level, list items `- ` lines, tables lines of cells; a presentation is read one page per slide, the slide's title
as its heading. (Spreadsheets, ODS, are read with the other spreadsheets, localcr.readers.sheets, through `load` and
`table_rows`.)
"""
from __future__ import annotations

import io
from typing import Iterator

from localcr.readers import CELL_SEPARATOR, Read, ReaderError, bounded_zip, paged

MAX_REPEAT = 1000  # times a table row or cell that says "repeated" is written out

_BLOCKS_INSIDE = {"section", "list", "list-item", "list-header", "index-body", "table-of-content", "frame", "text-box"}


def read_odt(data: bytes) -> Read:
    document = load(data, "ODT")
    if document.text is None:
        raise ReaderError("not a readable ODT file (it holds no text document)")
    blocks = list(_blocks(document.text))
    return Read("\n\n".join(b for b in blocks if b) + "\n", "", title=title_of(document))


def read_odp(data: bytes) -> Read:
    from odf.draw import Page

    document = load(data, "ODP")
    if document.presentation is None:
        raise ReaderError("not a readable ODP file (it holds no presentation)")
    text, pages = paged([_slide_text(page) for page in document.presentation.getElementsByType(Page)])
    return Read(text, "", pages=pages, title=title_of(document))


def load(data: bytes, what: str):
    from odf import opendocument

    bounded_zip(data, what)
    try:
        return opendocument.load(io.BytesIO(data))
    except (KeyError, ValueError, AttributeError, IndexError) as exc:  # odfpy's errors for a package that is not ODF
        raise ReaderError(f"not a readable {what} file ({' '.join(str(exc).split())[:200]})") from None


def _blocks(element, in_list: bool = False) -> Iterator[str]:
    """A text document's blocks in order: headings, paragraphs, list items, tables; sections and lists entered."""
    from odf import teletype

    for node in element.childNodes:
        name = node.qname[1] if node.nodeType == node.ELEMENT_NODE else ""
        if name == "h":
            level = min(int(node.getAttribute("outlinelevel") or 1), 6)
            yield f"{'#' * level} {' '.join(teletype.extractText(node).split())}"
        elif name == "p":
            text = teletype.extractText(node).strip()
            yield f"- {text}" if in_list and text else text
        elif name == "table":
            yield _table(node)
        elif name in _BLOCKS_INSIDE:
            yield from _blocks(node, in_list or name == "list")


def _table(table) -> str:
    return "\n".join(CELL_SEPARATOR.join(cells).rstrip(" |") for cells in table_rows(table))


def table_rows(table) -> Iterator[list[str]]:
    """A table's rows as lists of cell texts (a formula's cell: its cached result), repeated rows and cells written
    out at most MAX_REPEAT times (a sheet says "the next million cells are empty" that way); empty rows left out."""
    from odf import teletype
    from odf.table import TableRow

    for row in table.getElementsByType(TableRow):
        cells: list[str] = []
        for cell in row.childNodes:
            if cell.qname[1] in ("table-cell", "covered-table-cell"):
                text = " ".join(teletype.extractText(cell).split())
                cells += [text] * min(int(cell.getAttribute("numbercolumnsrepeated") or 1), MAX_REPEAT)
        if any(cells):
            yield from [cells] * min(int(row.getAttribute("numberrowsrepeated") or 1), MAX_REPEAT)


def _slide_text(page) -> str:
    """A slide's title (its frame of class "title") as a heading, then the text of its other frames and notes."""
    from odf import teletype
    from odf.draw import Frame
    from odf.namespaces import PRESENTATIONNS
    from odf.text import P

    heading, texts = "", []
    for frame in page.getElementsByType(Frame):
        text = "\n".join(teletype.extractText(p).strip() for p in frame.getElementsByType(P)).strip()
        if frame.attributes.get((PRESENTATIONNS, "class")) == "title" and not heading:
            heading = " ".join(text.split())
        elif text:
            texts.append(text)
    return "\n\n".join(([f"# {heading}"] if heading else []) + texts)


def title_of(document) -> str:
    from odf.dc import Title

    titles = document.meta.getElementsByType(Title) if document.meta is not None else []
    return " ".join(str(titles[0]).split()) if titles else ""
