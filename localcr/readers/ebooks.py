"""E-books (EPUB): the chapters in their reading order (the spine), each chapter's title as a heading.

ebooklib reads the package (container, OPF, the table of contents; its XML parser resolves no entities) from the
bytes in memory, never a path; each chapter's XHTML is then read as an HTML page is (localcr.readers.html), so its
headings are Markdown headings. A chapter that opens with no heading gets the title the table of contents gives
it. An e-book with DRM (its chapters listed in META-INF/encryption.xml) is skipped as encrypted.
"""
from __future__ import annotations

import io
import posixpath

from localcr.readers import Read, ReaderError, bounded_zip, plain
from localcr.readers.html import html_to_text


def read_epub(data: bytes) -> Read:
    from ebooklib import epub

    archive = bounded_zip(data, "EPUB")
    if "META-INF/encryption.xml" in archive.namelist() and b"html" in archive.read("META-INF/encryption.xml"):
        raise ReaderError("encrypted (an e-book with DRM)")
    try:
        book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": False})
    except (epub.EpubException, KeyError, ValueError, AttributeError, IndexError) as exc:
        raise ReaderError(f"not a readable EPUB ({' '.join(str(exc).split())[:200]})") from None
    titles = _toc_titles(book.toc)
    chapters = [_chapter(item, titles) for item in _spine_items(book)]
    title = book.get_metadata("DC", "title")
    return Read("\n\n".join(c for c in chapters if c) + "\n", "", title=" ".join(title[0][0].split()) if title else "")


def _spine_items(book) -> list:
    """The spine's documents in reading order (an idref naming no document is passed over)."""
    items = (book.get_item_with_id(idref) for idref, _linear in book.spine)
    return [item for item in items if item is not None and item.media_type in ("application/xhtml+xml", "text/html")]


def _toc_titles(toc) -> dict[str, str]:
    """The first table-of-contents title of each chapter file (its href without a fragment)."""
    titles: dict[str, str] = {}
    for entry in toc:
        node, children = entry if isinstance(entry, tuple) else (entry, [])  # a section is (Section, [children])
        if getattr(node, "href", None):
            titles.setdefault(_file_of(node.href), node.title)
        for href, title in _toc_titles(children).items():
            titles.setdefault(href, title)
    return titles


def _file_of(href: str) -> str:
    return posixpath.normpath(href.partition("#")[0])


def _chapter(item, titles: dict[str, str]) -> str:
    text = html_to_text(plain.decode(item.get_content()).text).strip()
    title = " ".join((titles.get(posixpath.normpath(item.file_name)) or "").split())
    return f"# {title}\n\n{text}" if title and not text.startswith("#") else text
