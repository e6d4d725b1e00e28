"""Documents: find files under the paths a user names, read them as text, or import a pre-chunked corpus.

A document's id is its path relative to the parent of the argument it was found under, so ids stay
the same whichever directory localcr runs from. Files are read by localcr.readers in worker processes;
a file that cannot be read (binary, broken, a reader that crashes or hangs) is skipped and named with the
reason, never stopping the run.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from localcr.errors import LocalcrError
from localcr.text import hyphenation_marked

if TYPE_CHECKING:  # the readers are imported by load_paths, which reads files: a search only opens the index
    from localcr.readers import Part, Read

GUESS_CHARS = 64_000  # enough of a record to tell code from prose
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache"}
INDEX_MARKER = "localcr-index.json"  # localcr.store.MARKER: a localcr index inside a folder indexed is not read


@dataclass
class Chunk:
    """A piece of a document: the unit that is embedded, indexed, retrieved and given a context."""

    chunk_id: str
    doc_id: str
    position: int  # 0-based order within the document; neighbours are position +- 1
    start: int  # character offsets of `text` in the document's text (-1 if an imported chunk is not found verbatim)
    end: int
    text: str
    context: str = ""  # the situating context (structural or LLM-written), kept apart from the text
    context_source: str = ""  # "structural", "llm", "imported", "fallback" or "" for none
    external_index: int | None = None  # the chunk's index in an imported corpus (for its gold sets)
    kind: str = "text"  # its document's kind (see Document.kind): how a chunk too long to embed whole is cut

    @property
    def sha(self) -> str:
        return sha(self.text)


@dataclass
class Document:
    doc_id: str
    path: str
    kind: str  # a kind of localcr.readers.KIND_BY_SUFFIX ("markdown", "pdf", "xlsx", "mail" ...), or "code:<suffix>"
    text: str
    size: int
    external_id: str | None = None  # an imported corpus's own document id (e.g. original_uuid)
    given_chunks: list[Chunk] | None = None  # chunks that came with the document; None means "chunk it"
    encoding: str = "utf-8"  # how the file's bytes were decoded (see decode); "" for PDF and Office files
    pages: list[int] = field(default_factory=list)  # where each page (slide) starts in `text`; empty without pages
    title: str = ""  # the title in the file's metadata (PDF, Office), for its structural context
    bookmarks: list[tuple[int, str, int]] = field(default_factory=list)  # a PDF's outline: (level, title, offset)
    about: str = ""  # what the file's metadata says besides its title (a message's sender, recipients, date): context
    card: str = ""  # one LLM sentence saying what the document is (localcr.contexts.cards), when it has one
    language: str = ""  # ISO 639-1, set when indexed (localcr.language); decides the BM25 analysis
    # How the document's structure was read, set when chunked: a code file's "tree-sitter:<grammar>" or "regex"; LONG_PROSE
    # for long untitled prose (chunked larger, given a card in "auto" mode, fused by localcr.search.LONG_PROSE_FUSION).
    structure: str = ""
    mtime: int | None = None  # the file's modification time (ns) when read: with its size, how a re-index
    #                           knows a file unchanged without reading it (None for imported documents)

    @property
    def sha(self) -> str:
        return sha(self.text)

    @property
    def is_code(self) -> bool:
        return self.kind.startswith("code")

    @property
    def is_long_untitled_prose(self) -> bool:
        """Prose (code names itself in its path, definitions and comments) long enough to be read in pieces, with no
        title of its own (a record's or a file's metadata title; a first heading such as an 8-K's "CURRENT REPORT"
        names neither company nor period): a filing, a report's text layer. Such a document gets a card in "auto"
        mode (localcr.contexts.cards) and longer chunks by default (localcr.pipeline)."""
        return not self.is_code and not self.title and len(self.text) >= LONG_PROSE_CHARS


LONG_PROSE = "long-prose"  # Document.structure of long untitled prose, as the index records it
# A document this long (in characters) or longer is long prose when it has no title: about eight chunks of the
# default size. A shorter one's chunks hold much of it.
LONG_PROSE_CHARS = 8000


@dataclass
class Skipped:
    """A file that is not in the index, and why: the user must be able to tell what is missing."""

    path: str
    reason: str


@dataclass
class LoadReport:
    documents: list[Document] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # ids of files not read: the same size and mtime as known
    warnings: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, path, reason: str, *, warn: bool = True) -> None:
        self.skipped.append(Skipped(str(path), reason))
        if warn:
            self.warnings.append(f"{path}: {reason}, skipped")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def load_paths(paths: list[str | os.PathLike], readers: dict[str, str] | None = None,
               timeout: float | None = None, known: dict[str, tuple[int, int | None]] | None = None) -> LoadReport:
    """Read every supported file under `paths`; a pre-chunked corpus (.json in the codebase_chunks format) is
    imported. Files are read in worker processes (localcr.readers.workers), so a file whose reader crashes or
    takes longer than `timeout` seconds (default: localcr.readers.workers.READ_TIMEOUT) is skipped, not fatal.
    readers: more file types, as {".suffix": "module:function"} (see localcr.readers). known: doc_id -> (size,
    mtime) of files indexed before; a file with the same size and modification time is not read, only listed in
    `unchanged`."""
    from localcr.readers import kind_of, reader_for
    from localcr.readers.workers import READ_TIMEOUT, read_files

    timeout = READ_TIMEOUT if timeout is None else timeout
    known = known or {}
    report = LoadReport()
    readers = {suffix.lower(): name for suffix, name in (readers or {}).items()}
    found: list[list[Document] | tuple[Path, str, str]] = []  # in order: imported documents, or (file, kind, id) to read
    parts = _parts_by_file(known)
    for given in paths:
        root = Path(given).expanduser()
        if not root.exists():
            raise LocalcrError(f"{given}: no such file or directory")
        if root.is_file() and root.suffix == ".json" and _is_prechunked(root):
            found.append(import_prechunked(root))
            continue
        name = root.resolve().name
        for file in [root] if root.is_file() else _walk(root):
            kind = "text" if file.suffix.lower() in readers else kind_of(file)
            if kind is None:
                report.skip(file, "unsupported file type", warn=root.is_file())
            else:
                # The id is the path as walked: a symbolic link to a file elsewhere is indexed where the link is.
                doc_id = Path(name, file.relative_to(root)).as_posix()
                try:
                    stat = file.stat()
                except OSError as exc:  # a link to nowhere, a file gone since the walk
                    report.skip(file, f"unreadable: {(exc.strerror or str(exc)).lower()}")
                    continue
                ids = ([doc_id] if doc_id in known else []) + parts.get(doc_id, [])  # the file's, its parts'
                if ids and all(known[i] == (stat.st_size, stat.st_mtime_ns) for i in ids):
                    report.unchanged.extend(ids)
                    continue
                found.append((file, kind, doc_id, stat.st_mtime_ns))
    to_read = [f for f in found if isinstance(f, tuple)]
    read = dict(read_files([(file, readers.get(file.suffix.lower()) or reader_for(kind)) for file, kind, _, _ in to_read], timeout))
    seen: set[str] = set()
    for item in found:
        if isinstance(item, list):
            _add(report, seen, item)
        else:
            _add(report, seen, _documents(*item, read[item[0]], report))
    report.skipped.sort(key=lambda skipped: skipped.path)
    return report


def _documents(file: Path, kind: str, doc_id: str, mtime: int, outcome: Read | str, report: LoadReport) -> list[Document]:
    """The documents a reader made of a file: its own text's, then its parts' (`<id>#<name>`, a part's part
    `<id>#<name>/<name>`), each with the file's size and mtime, so that an unchanged file is not read again;
    none (and the reason recorded) when there are none."""
    if isinstance(outcome, str):
        report.skip(file, outcome)
        return []
    if not outcome.text.strip() and not outcome.parts:
        report.skip(file, "empty")
        return []
    docs = []
    for name, part_kind, read in [("", kind, outcome), *_flattened(outcome.parts)]:
        path, part_id = (f"{file}#{name}", f"{doc_id}#{name}") if name else (str(file), doc_id)
        report.warnings.extend(f"{path}: {warning}" for warning in read.warnings)
        if not read.text.strip():
            if name:
                report.skip(path, "empty")
            continue
        docs.append(Document(doc_id=part_id, path=path, kind=part_kind, text=hyphenation_marked(read.text), size=outcome.size,
                             encoding=read.encoding, pages=read.pages, title=read.title, mtime=mtime,
                             bookmarks=read.bookmarks, about=read.about))
    return docs


def _flattened(parts: list[Part], within: str = "") -> list[tuple[str, str, Read]]:
    """(name within the file, kind, Read) of parts and their parts, depth first."""
    found = []
    for part in parts:
        name = f"{within}/{part.name}" if within else part.name
        found += [(name, part.kind, part.read), *_flattened(part.read.parts, name)]
    return found


def _parts_by_file(known: dict[str, tuple[int, int | None]]) -> dict[str, list[str]]:
    """The ids of the known documents that are parts of a file (`<file id>#<name>`), by the file's id."""
    parts: dict[str, list[str]] = {}
    for doc_id in known:
        if "#" in doc_id:
            parts.setdefault(doc_id.partition("#")[0], []).append(doc_id)
    return parts


def _add(report: LoadReport, seen: set[str], docs: list[Document]) -> None:
    for doc in docs:
        if doc.doc_id in seen:
            report.skip(doc.path, f"a document with id {doc.doc_id!r} is already indexed")
            continue
        seen.add(doc.doc_id)
        report.documents.append(doc)


def _walk(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                             and not os.path.exists(os.path.join(dirpath, d, INDEX_MARKER)))
        found.extend(Path(dirpath) / name for name in sorted(filenames) if not name.startswith("."))
    return found


def _is_prechunked(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    return head.startswith(b"[") and (b'"chunks"' in head or b'"doc_id"' in head)


def import_prechunked(path: Path) -> list[Document]:
    """Import documents that carry their own chunks (the codebase_chunks.json format), keeping their ids."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        docs = []
        for entry in raw:
            doc_id = str(entry["doc_id"])
            text = hyphenation_marked(entry["content"])
            kind = _guess_kind(text)
            chunks, cursor = [], 0
            for position, c in enumerate(entry.get("chunks") or []):
                content = hyphenation_marked(c["content"])
                start = text.find(content, cursor)
                if start < 0:
                    start = text.find(content)
                end = start + len(content) if start >= 0 else -1
                cursor = end if start >= 0 else cursor
                chunks.append(Chunk(
                    chunk_id=str(c["chunk_id"]), doc_id=doc_id, position=position, start=start, end=end,
                    text=content, external_index=int(c.get("original_index", position)), kind=kind,
                ))
            docs.append(Document(
                doc_id=doc_id, path=f"{path.name}#{doc_id}", kind=kind, text=text,
                size=len(text.encode()), external_id=entry.get("original_uuid"),
                given_chunks=chunks or None,  # a document that comes without chunks is chunked by localcr
                title=record_title(entry.get("title")),
            ))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise LocalcrError(
            f"{path}: not a pre-chunked corpus ({type(exc).__name__}: {exc}); expected a JSON list of "
            "{doc_id, original_uuid, title (optional), content, chunks (optional): [{chunk_id, original_index, content}]}"
        ) from None
    if not docs:
        raise LocalcrError(f"{path}: the corpus holds no documents")
    return docs


def record_title(title) -> str:
    """A pre-chunked record's title as its structural context shows it: a wiki-style title written with
    underscores for spaces (XQuAD's `Super_Bowl_50`) reads as words, as a person and the embedder see it."""
    if not isinstance(title, str):
        return ""
    title = " ".join(title.split())
    return title.replace("_", " ") if "_" in title and " " not in title else title


# Lines that only code writes: ending in a brace or semicolon, a call or subscript with no space before its
# bracket (`parse(data)`, `rows[0]`), an operator between spaces, a definition's keyword and name with its bracket.
_CODE_LINE = re.compile(
    r"[;{}]\s*$|^\s*[{}]|[A-Za-z_]\w*(?:\.\w+)*[(\[][^\s)]|\s(?:==|!=|=>|->|:=|::|&&|\|\||\+=|<=|>=)\s|^\s*\w+\s*=\s*\S"
    r"|^\s*(?://|/\*|\*/)|^ \*(?:\s|$)"  # comments: `// ...`, and `/* ... */` blocks with their ` * ` lines
    r"|^\s*(?:def|fn|func|function|class|struct|impl|import|from|#include|package|public|private|return)\s+[\w.]+.*[(:{;<]"
)
# Lines that only prose writes: a sentence of six words or more, made of words, ending as sentences end.
_PROSE_LINE = re.compile(r"^\s*[^\W\d_][^\n]*[.?!:;\"'”’)。！？]\s*$")


_FENCED = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_WORD = re.compile(r"^[^\W\d_][^\W\d_'’-]*[.,;:!?)]?$")


def _wrapped_prose(line: str) -> bool:
    """A line of a paragraph wrapped at a column: four words or more, most of them plain words, no code."""
    words = line.split()
    return len(words) >= 4 and 2 * sum(bool(_WORD.match(w)) for w in words) > len(words) and not _CODE_LINE.search(line)


def _guess_kind(text: str) -> str:
    """Imported documents come without a path: a record is code when most of its lines carry what only code
    writes (see _CODE_LINE), prose sentences do not outnumber them, and most of its characters are code; a strict
    grammar (Python, Rust, C, Java ...) that parses the whole record without one error settles a record with a
    little of both. Counting words such as "use", "import" and "class" (English words too) had taken
    documentation pages for code, and so had counting lines: a page whose paragraphs are one long line each and
    whose samples are many short ones is prose with code blocks (13 of 45 documentation pages held out), and so is
    a page whose samples stand in fences and whose paragraphs are wrapped at a column (Node.js's API pages)."""
    head = text[:GUESS_CHARS]
    lines = [ln for ln in head.split("\n") if ln.strip()]
    if not lines:
        return "text"
    code_lines = [ln for ln in lines if _CODE_LINE.search(ln)]
    prose_lines = [ln for ln in lines if len(ln.split()) >= 6 and _PROSE_LINE.match(ln) and not _CODE_LINE.search(ln)]
    code, prose = len(code_lines), len(prose_lines)
    if _FENCED.search(head):  # samples in fences: the text around them decides, its wrapped lines prose too
        prose_lines = [ln for ln in _FENCED.sub("\n", head).split("\n") if _wrapped_prose(ln)]
    if sum(len(ln.strip()) for ln in prose_lines) > sum(len(ln.strip()) for ln in code_lines):
        return "text"
    if code >= max(2, 0.3 * len(lines)) and code >= prose:
        return "code"
    from localcr.parsing.code import parses_cleanly  # the code parsers, only for a record this close (a search imports none)

    return "code" if code >= 2 and code >= prose / 2 and parses_cleanly(text) else "text"


def page_at(pages: list[int], offset: int) -> int | None:
    """The 1-based page holding a character offset, given where each page starts; None without pages (or
    for an imported chunk not found in its document's text)."""
    return bisect.bisect_right(pages, offset) if pages and offset >= 0 else None
