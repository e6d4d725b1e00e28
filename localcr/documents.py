"""Documents: find files under the paths a user names, read them as text, or import a pre-chunked corpus.

A document's id is its path relative to the parent of the argument it was found under, so ids stay
the same whichever directory localcr runs from. Text in a legacy encoding (Windows-1252, Shift_JIS, GBK,
UTF-16 with a BOM ...) is decoded as what it is, not replaced; binary and unreadable files are skipped and
named with the reason, never stopping the run.
"""
from __future__ import annotations

import codecs
import hashlib
import html.parser
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from localcr.errors import LocalcrError

KIND_BY_SUFFIX = {
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text", ".text": "text",
    ".html": "html", ".htm": "html",
}
CODE_SUFFIXES = {
    ".py", ".pyi", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".go", ".java", ".kt", ".scala",
    ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cs", ".rb", ".php", ".swift", ".m", ".sh", ".bash", ".zsh",
    ".lua", ".r", ".jl", ".sql", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".json", ".css", ".scss",
    ".proto", ".cmake", ".el", ".clj", ".ex", ".exs", ".erl", ".hs", ".ml", ".dart", ".zig", ".nim", ".v",
}
TEXT_NAMES = {"readme", "license", "licence", "changelog", "authors", "contributing", "makefile", "dockerfile", "notice"}
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache"}


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
    kind: str  # "markdown", "rst", "html", "text", or "code:<suffix>"
    text: str
    size: int
    external_id: str | None = None  # an imported corpus's own document id (e.g. original_uuid)
    given_chunks: list[Chunk] | None = None  # chunks that came with the document; None means "chunk it"
    encoding: str = "utf-8"  # how the file's bytes were decoded (see decode)

    @property
    def sha(self) -> str:
        return sha(self.text)

    @property
    def is_code(self) -> bool:
        return self.kind.startswith("code")


@dataclass
class Skipped:
    """A file that is not in the index, and why: the user must be able to tell what is missing."""

    path: str
    reason: str


@dataclass
class LoadReport:
    documents: list[Document] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, path, reason: str, *, warn: bool = True) -> None:
        self.skipped.append(Skipped(str(path), reason))
        if warn:
            self.warnings.append(f"{path}: {reason}, skipped")


@dataclass
class Decoded:
    text: str
    encoding: str  # a Python codec name
    lossy: bool = False  # no encoding fitted: undecodable bytes were replaced with U+FFFD


_BOMS = [  # UTF-32 first: its little-endian BOM begins with UTF-16's
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
]
_DETECT_BYTES = 1 << 16  # enough text to recognise an encoding; detection time grows with the sample


def decode(data: bytes) -> Decoded:
    """The text of a file's bytes: by its BOM, else UTF-8, else the encoding chardet recognises (measured on
    legacy-encoded prose in seven languages against charset-normalizer: benchmarks/encodings.py), else UTF-8
    with replacement."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data[len(bom):].decode(encoding), encoding)
            except UnicodeDecodeError:
                return Decoded(data[len(bom):].decode(encoding, errors="replace"), encoding, lossy=True)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    import chardet

    # The encodings of today's systems (Windows code pages, Shift_JIS, GBK, EUC-KR, KOI8 ...): allowing
    # Mac and DOS ones too turned short German text into MacTurkish.
    guess = chardet.detect(data[:_DETECT_BYTES], encoding_era=chardet.EncodingEra.MODERN_WEB, prefer_superset=True)["encoding"]
    if guess:
        try:
            return Decoded(data.decode(guess), codecs.lookup(guess).name)
        except (LookupError, UnicodeDecodeError):
            pass
    return Decoded(data.decode("utf-8", errors="replace"), "utf-8", lossy=True)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def kind_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in KIND_BY_SUFFIX:
        return KIND_BY_SUFFIX[suffix]
    if suffix in CODE_SUFFIXES:
        return "code:" + suffix[1:]
    if path.stem.lower() in TEXT_NAMES and suffix in ("", ".txt"):
        return "text"
    return None


def load_paths(paths: list[str | os.PathLike]) -> LoadReport:
    """Read every supported file under `paths`; a pre-chunked corpus (.json in the codebase_chunks format) is imported."""
    report = LoadReport()
    seen: set[str] = set()
    for given in paths:
        root = Path(given).expanduser()
        if not root.exists():
            raise LocalcrError(f"{given}: no such file or directory")
        if root.is_file() and root.suffix == ".json" and _is_prechunked(root):
            docs = import_prechunked(root)
            _add(report, seen, docs)
            continue
        base = root.resolve().parent
        files = [root] if root.is_file() else _walk(root)
        for file in files:
            kind = kind_of(file)
            if kind is None:
                report.skip(file, "unsupported file type", warn=root.is_file())
                continue
            doc = _read_file(file, kind, file.resolve().relative_to(base).as_posix(), report)
            if doc is not None:
                _add(report, seen, [doc])
    return report


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
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        found.extend(Path(dirpath) / name for name in sorted(filenames) if not name.startswith("."))
    return found


def _read_file(file: Path, kind: str, doc_id: str, report: LoadReport) -> Document | None:
    try:
        data = file.read_bytes()
    except OSError as exc:
        report.skip(file, f"unreadable ({exc.strerror})")
        return None
    if b"\0" in data[:8192] and not data.startswith(tuple(bom for bom, _ in _BOMS)):
        report.skip(file, "binary file")
        return None
    decoded = decode(data)
    if decoded.lossy:
        report.warnings.append(f"{file}: no text encoding fits its bytes; undecodable bytes replaced with U+FFFD")
    text = decoded.text.removeprefix("\ufeff").replace("\r\n", "\n")
    if kind == "html":
        text = html_to_text(text)
    if not text.strip():
        report.skip(file, "empty")
        return None
    return Document(doc_id=doc_id, path=str(file), kind=kind, text=text, size=len(data), encoding=decoded.encoding)


class _HTMLText(html.parser.HTMLParser):
    BLOCKS = {"p", "div", "br", "li", "tr", "section", "article", "pre", "table", "ul", "ol", "blockquote"}
    HEADINGS = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "#####", "h6": "######"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "noscript", "template"):
            self.hidden += 1
        elif tag in self.HEADINGS:
            self.parts.append("\n\n" + self.HEADINGS[tag] + " ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n" if tag in ("p", "pre", "table", "section", "article") else "\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "noscript", "template"):
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.HEADINGS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """HTML as Markdown-ish text: headings keep their level (so heading paths work), scripts and styles go."""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n"


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
            text = entry["content"]
            kind = _guess_kind(text)
            chunks, cursor = [], 0
            for position, c in enumerate(entry["chunks"]):
                start = text.find(c["content"], cursor)
                if start < 0:
                    start = text.find(c["content"])
                end = start + len(c["content"]) if start >= 0 else -1
                cursor = end if start >= 0 else cursor
                chunks.append(Chunk(
                    chunk_id=str(c["chunk_id"]), doc_id=doc_id, position=position, start=start, end=end,
                    text=c["content"], external_index=int(c.get("original_index", position)), kind=kind,
                ))
            docs.append(Document(
                doc_id=doc_id, path=f"{path.name}#{doc_id}", kind=kind, text=text,
                size=len(text.encode()), external_id=entry.get("original_uuid"), given_chunks=chunks,
            ))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise LocalcrError(
            f"{path}: not a pre-chunked corpus ({type(exc).__name__}: {exc}); expected a JSON list of "
            "{doc_id, original_uuid, content, chunks: [{chunk_id, original_index, content}]}"
        ) from None
    if not docs:
        raise LocalcrError(f"{path}: the corpus holds no documents")
    return docs


def _guess_kind(text: str) -> str:
    """Imported documents come without a path; code is recognised by its braces, semicolons and keywords."""
    signals = sum(text.count(s) for s in ("{", "}", ";", "def ", "fn ", "import ", "use ", "#include", "=>", "package ", "class "))
    return "code" if signals > len(text) / 200 else "text"
