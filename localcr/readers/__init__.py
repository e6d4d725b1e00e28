"""Readers: a file's bytes as text, one module per family of formats, each run in a worker process.

A reader is a function `read(data: bytes) -> Read` named by its import path ("module:function"), so a
worker process imports it by name: the same way for localcr's own readers and for one a caller brings for
a format of its own (`load_paths(..., readers={".ext": "package.module:function"})`). A reader raises
ReaderError for a file it recognises as unreadable (the message becomes the reason the file is skipped).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

KIND_BY_SUFFIX = {
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".text": "text",
    ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx",
}
CODE_SUFFIXES = {
    ".py", ".pyi", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".go", ".java", ".kt", ".scala",
    ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cs", ".rb", ".php", ".swift", ".m", ".sh", ".bash", ".zsh",
    ".lua", ".r", ".jl", ".sql", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".json", ".css", ".scss",
    ".proto", ".cmake", ".el", ".clj", ".ex", ".exs", ".erl", ".hs", ".ml", ".dart", ".zig", ".nim", ".v",
}
TEXT_NAMES = {"readme", "license", "licence", "changelog", "authors", "contributing", "makefile", "dockerfile", "notice"}

# The reader of each document kind; every kind not named here is plain text.
READERS = {
    "html": "localcr.readers.html:read", "pdf": "localcr.readers.pdf:read",
    "docx": "localcr.readers.office:read_docx", "pptx": "localcr.readers.office:read_pptx",
}
PLAIN = "localcr.readers.plain:read"


@dataclass
class Read:
    """What a reader made of a file."""

    text: str
    encoding: str = "utf-8"  # how the bytes were decoded; "" for a format that is not text (PDF, Office)
    warnings: list[str] = field(default_factory=list)  # said once per file, after its path
    size: int = 0  # the file's bytes (set by the worker that read it)
    pages: list[int] = field(default_factory=list)  # where each page (slide) starts in `text`; empty without pages
    title: str = ""  # the title the file's metadata gives, if any
    bookmarks: list[tuple[int, str, int]] = field(default_factory=list)  # a PDF's outline: (level, title, offset in text)


PAGE_BREAK = "\n\n"  # a paragraph break, so chunks prefer to end where a page does


def paged(pages: list[str]) -> tuple[str, list[int]]:
    """Pages (or slides) as one text, a paragraph break between two, and where each begins in it."""
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + len(PAGE_BREAK)
    return PAGE_BREAK.join(pages) + "\n", starts


class ReaderError(Exception):
    """The file is not readable as its kind (binary, encrypted, broken): skip it, with this reason."""


def kind_of(path: Path) -> str | None:
    """The document kind of a file, from its name; None for a file type localcr does not read."""
    suffix = path.suffix.lower()
    if suffix in KIND_BY_SUFFIX:
        return KIND_BY_SUFFIX[suffix]
    if suffix in CODE_SUFFIXES:
        return "code:" + suffix[1:]
    if path.stem.lower() in TEXT_NAMES and suffix in ("", ".txt"):
        return "text"
    return None


def reader_for(kind: str) -> str:
    return READERS.get(kind, PLAIN)
