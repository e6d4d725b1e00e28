"""Readers: a file's bytes as text, one module per family of formats, each run in a worker process.

A reader is a function `read(data: bytes) -> Read` named by its import path ("module:function"), so a
worker process imports it by name: the same way for localcr's own readers and for one a caller brings for
a format of its own (`load_paths(..., readers={".ext": "package.module:function"})`). A reader raises
ReaderError for a file it recognises as unreadable (the message becomes the reason the file is skipped).
A file may hold documents of their own (a mailbox's messages, a message's attachments): its reader returns them
as the Read's `parts`, each named within the file, and each becomes a document whose id is the file's and the
name (`archive.mbox#12`, `archive.mbox#12/contract.pdf`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

KIND_BY_SUFFIX = {
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".text": "text",
    ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx",
    ".csv": "csv", ".tsv": "tsv", ".xlsx": "xlsx", ".ods": "ods", ".eml": "mail", ".mbox": "mbox",
    ".epub": "epub", ".odt": "odt", ".odp": "odp", ".rtf": "rtf",
    ".png": "image", ".jpg": "image", ".jpeg": "image", ".tif": "image", ".tiff": "image",
}
SHEET_KINDS = ("csv", "tsv", "xlsx", "ods")  # rows under a header row, one section per sheet
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
    "csv": "localcr.readers.sheets:read_csv", "tsv": "localcr.readers.sheets:read_tsv",
    "xlsx": "localcr.readers.sheets:read_xlsx", "ods": "localcr.readers.sheets:read_ods",
    "mail": "localcr.readers.mail:read_message", "mbox": "localcr.readers.mail:read_mbox",
    "epub": "localcr.readers.ebooks:read_epub", "rtf": "localcr.readers.rtf:read_rtf",
    "odt": "localcr.readers.opendocument:read_odt", "odp": "localcr.readers.opendocument:read_odp",
    "image": "localcr.readers.ocr:read_image",
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
    about: str = ""  # what the file's metadata says of it besides its title (a message's sender, recipients, date)
    parts: list[Part] = field(default_factory=list)  # the documents of their own the file holds


@dataclass
class Part:
    """A document of its own inside a file: its name there (`12`, `contract.pdf`), its kind, what was read."""

    name: str
    kind: str
    read: Read


CELL_SEPARATOR = " | "  # between a table row's cells, in every reader's text
PAGE_BREAK = "\n\n"  # a paragraph break, so chunks prefer to end where a page does


def paged(pages: list[str]) -> tuple[str, list[int]]:
    """Pages (or slides) as one text, a paragraph break between two, and where each begins in it."""
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + len(PAGE_BREAK)
    return PAGE_BREAK.join(pages) + "\n", starts


_OLE = b"\xd0\xcf\x11\xe0"  # how a compound file begins: an encrypted OOXML/ODF package, or a .xls or .doc
MAX_UNZIPPED = 1 << 30  # bytes a zip-based file (EPUB, OpenDocument) may unpack to: a zip bomb stops here


def bounded_zip(data: bytes, what: str):
    """The zip archive of a zip-based format, refused when it is none or would unpack to more than MAX_UNZIPPED
    (the libraries that read these formats unpack whole parts into memory)."""
    import io
    import zipfile

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        why = "encrypted, or an older binary format" if data.startswith(_OLE) else "not a zip archive"
        raise ReaderError(f"not a readable {what} ({why})") from None
    if sum(info.file_size for info in archive.infolist()) > MAX_UNZIPPED:
        raise ReaderError(f"not read: its {what} archive unpacks to more than {MAX_UNZIPPED >> 20} MiB")
    return archive


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
