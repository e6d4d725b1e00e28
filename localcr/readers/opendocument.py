"""OpenDocument text (ODT) and presentations (ODP), read by odfpy (whose XML parser is defusedxml's).

As with Word and PowerPoint files (localcr.readers.office): headings become Markdown headings of their outline
level, list items `- ` lines, tables lines of cells; a presentation is read one page per slide, the slide's title
as its heading, then the text of every drawing shape (a frame's text box, a custom shape, a rectangle, a group's
shapes: office suites write a slide's text in any of them) top to bottom and left to right, then the notes. A text
document's page-anchored shapes and frames are read where they stand. (Spreadsheets, ODS, are read with the other
spreadsheets, localcr.readers.sheets, through `load` and `table_rows`.)
"""
from __future__ import annotations

import io
from typing import Iterator

from localcr.readers import CELL_SEPARATOR, Read, ReaderError, bounded_zip, paged

MAX_REPEAT = 1000  # times a table row or cell that says "repeated" is written out

_BLOCKS_INSIDE = {"section", "list", "list-item", "list-header", "index-body", "table-of-content"}
_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96}  # svg lengths in centimetres


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
    """A text document's blocks in order: headings, paragraphs, list items, tables; sections, lists and drawing
    shapes and frames entered."""
    from odf import teletype
    from odf.namespaces import DRAWNS

    for node in element.childNodes:
        if node.nodeType != node.ELEMENT_NODE:
            continue
        name = node.qname[1] if node.qname[0] != DRAWNS else "shape"
        if name == "h":
            level = min(int(node.getAttribute("outlinelevel") or 1), 6)
            yield f"{'#' * level} {' '.join(teletype.extractText(node).split())}"
        elif name == "p":
            text = teletype.extractText(node).strip()
            yield f"- {text}" if in_list and text else text
        elif name == "table":
            yield _table(node)
        elif name in _BLOCKS_INSIDE or name == "shape":
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
            if cell.qname[1] in ("table-cell", "covered-table-cell"):  # a cell's paragraphs (its lines) joined by a space
                text = " ".join(" ".join(teletype.extractText(p).split()) for p in _paragraphs(cell))
                cells += [text] * min(int(cell.getAttribute("numbercolumnsrepeated") or 1), MAX_REPEAT)
        if any(cells):
            yield from [cells] * min(int(row.getAttribute("numberrowsrepeated") or 1), MAX_REPEAT)


def _slide_text(page) -> str:
    """A slide's title (its shape of class "title") as a heading, then the text of its other shapes in reading order,
    then its notes."""
    from odf import teletype
    from odf.namespaces import PRESENTATIONNS

    notes = [node for node in page.childNodes if node.qname == (PRESENTATIONNS, "notes")]
    heading, texts = "", []
    for shape in sorted(_shapes(page), key=_place) + [s for n in notes for s in _shapes(n)]:
        text = "\n".join(teletype.extractText(p).strip() for p in _paragraphs(shape)).strip()
        if shape.attributes.get((PRESENTATIONNS, "class")) == "title" and not heading:
            heading = " ".join(text.split())
        elif text:
            texts.append(text)
    return "\n\n".join(([f"# {heading}"] if heading else []) + texts)


def _shapes(element) -> list:
    """The drawing shapes (frames, custom shapes, rectangles ...) directly on a slide or in its groups."""
    from odf.namespaces import DRAWNS

    found = []
    for node in element.childNodes:
        if node.nodeType == node.ELEMENT_NODE and node.qname[0] == DRAWNS:
            found += _shapes(node) if node.qname[1] == "g" else [node]
    return found


def _place(shape) -> tuple[float, float]:
    """Where a shape stands, for reading order: (top, left) in centimetres; a shape without a place, at the top."""
    from odf.namespaces import SVGNS

    return tuple(_centimetres(shape.attributes.get((SVGNS, axis), "")) for axis in ("y", "x"))


def _centimetres(length: str) -> float:
    number = length.rstrip("abcdefghijklmnopqrstuvwxyz")
    try:
        return float(number) * _CM.get(length[len(number):], 1.0)
    except ValueError:
        return 0.0


def _paragraphs(element) -> Iterator:
    """The paragraphs and headings under an element, in document order (a paragraph's own text holds what is
    anchored in it)."""
    from odf.namespaces import TEXTNS

    for node in element.childNodes:
        if node.nodeType != node.ELEMENT_NODE:
            continue
        if node.qname in ((TEXTNS, "p"), (TEXTNS, "h")):
            yield node
        else:
            yield from _paragraphs(node)


def title_of(document) -> str:
    from odf.dc import Title

    titles = document.meta.getElementsByType(Title) if document.meta is not None else []
    return " ".join(str(titles[0]).split()) if titles else ""
