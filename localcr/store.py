"""The on-disk index format, in one place: file names, SQL schema, dense-index parameters, writing a
generation and switching to it atomically, and opening the current generation for reading.

Layout of an index directory:
    localcr-index.json   marker: format, version and the name of the current generation
    gen-*/               complete generations: manifest.json, store.sqlite (chunks, contexts, offsets),
                         dense.hnsw + windows.npy (vector label -> chunk row), lexical/ (bm25s)
    .building-*/         a build in progress (removed by the next run if the process died)
    .lock                held by the one writer

A search reads the marker once and sees only complete generations; a build killed at any point
leaves the marker, and so the previous index, untouched.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import uuid
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path

import numpy as np

from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError

MARKER = "localcr-index.json"
FORMAT = "localcr-index"
FORMAT_VERSION = 1
LOCK = ".lock"
MANIFEST = "manifest.json"
STORE = "store.sqlite"
DENSE = "dense.hnsw"
WINDOWS = "windows.npy"
LEXICAL = "lexical"
GENERATION_PREFIX = "gen-"
STAGING_PREFIX = ".building-"

# hnswlib: built once with these, searched with HNSW_EF candidates per query.
HNSW_SPACE = "cosine"
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200
HNSW_EF = 200
HNSW_SEED = 7

SCHEMA = """
    CREATE TABLE documents (doc_id TEXT PRIMARY KEY, path TEXT, kind TEXT, sha TEXT, size INTEGER,
                            external_id TEXT, n_chunks INTEGER, encoding TEXT, pages TEXT, language TEXT);
    CREATE TABLE chunks (row INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE, doc_id TEXT, position INTEGER,
                         start INTEGER, end INTEGER, text TEXT, context TEXT, context_source TEXT,
                         external_index INTEGER);
"""
DOCUMENT_COLUMNS = ("doc_id", "path", "kind", "sha", "size", "external_id", "n_chunks", "encoding", "pages", "language")
CHUNK_COLUMNS = ("row", "chunk_id", "doc_id", "position", "start", "end", "text", "context", "context_source",
                 "external_index")
# The columns a search hit shows: the chunk's own, and its document's path, imported id and page starts.
HIT_COLUMNS = ("c.row", "c.chunk_id", "c.doc_id", "c.position", "c.start", "c.end", "c.text", "c.context",
               "c.external_index", "d.path", "d.external_id", "d.pages")


def disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


# ---------------------------------------------------------------------------------------------- the marker


def read_marker(directory: Path) -> dict | None:
    """The index marker, None for an empty or absent directory; a LocalcrError for anything that is not ours."""
    marker = directory / MARKER
    if not marker.exists():
        if directory.exists() and not directory.is_dir():
            raise LocalcrError(f"{directory}: not a directory")
        if directory.exists() and any(p.name not in (LOCK,) for p in directory.iterdir()):
            raise LocalcrError(f"{directory}: not a localcr index (no {MARKER}); choose a new or empty directory")
        return None
    try:
        data = json.loads(marker.read_text())
        if data.get("format") != FORMAT:
            raise ValueError("wrong format")
    except (ValueError, OSError):
        raise LocalcrError(f"{marker}: not a localcr index marker; choose a new or empty directory") from None
    if data.get("version") != FORMAT_VERSION:
        raise LocalcrError(f"{directory}: index format {data.get('version')} is not {FORMAT_VERSION}: rebuild it with `localcr index`")
    return data


def _switch_marker(directory: Path, generation: str) -> None:
    tmp = directory / (MARKER + ".tmp")
    tmp.write_text(json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "current": generation}))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, directory / MARKER)


# ---------------------------------------------------------------------------------------------- writing


@contextmanager
def writer_lock(directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / LOCK, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise LocalcrError(f"{directory}: another `localcr index` ({holder}) is writing this index; wait for it to finish") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}")
    handle.flush()
    try:
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def current_manifest(directory: Path, marker: dict | None) -> dict:
    """The current generation's manifest, or {} for a new index (or an unreadable one, which is rebuilt)."""
    if not marker:
        return {}
    try:
        return json.loads((directory / marker["current"] / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def current_documents(directory: Path, marker: dict | None) -> dict[str, str]:
    """doc_id -> content sha of the current generation's documents ({} if there is none, or it is unreadable)."""
    if not marker:
        return {}
    try:
        with sqlite3.connect(f"file:{directory / marker['current'] / STORE}?mode=ro", uri=True) as db:
            return dict(db.execute("SELECT doc_id, sha FROM documents"))
    except sqlite3.Error:
        return {}  # an unreadable previous generation only costs the change counts


def write_generation(directory: Path, marker: dict | None, manifest: dict, docs: list[Document],
                     chunks_by_doc: dict[str, list[Chunk]], vectors: np.ndarray, window_rows: np.ndarray, lexical) -> str:
    """Write a complete generation into a staging directory, make it current, and remove what is no longer
    needed; `marker` is the one read under the writer lock. Returns the new generation's name."""
    staging = directory / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    _write_store(staging / STORE, docs, chunks_by_doc)
    _write_dense(staging, vectors, window_rows)
    lexical.save(staging / LEXICAL)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
    _fsync_tree(staging)
    generation = GENERATION_PREFIX + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    staging.rename(directory / generation)
    _switch_marker(directory, generation)
    _remove_old_generations(directory, keep={generation, marker["current"] if marker else ""})
    return generation


def _write_store(path: Path, docs: list[Document], chunks_by_doc: dict[str, list[Chunk]]) -> None:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany(_insert("documents", DOCUMENT_COLUMNS),
                   [(d.doc_id, d.path, d.kind, d.sha, d.size, d.external_id, len(chunks_by_doc[d.doc_id]), d.encoding,
                     json.dumps(d.pages) if d.pages else None, d.language) for d in docs])
    rows = (c for d in docs for c in chunks_by_doc[d.doc_id])
    db.executemany(_insert("chunks", CHUNK_COLUMNS),
                   [(i, c.chunk_id, c.doc_id, c.position, c.start, c.end, c.text, c.context, c.context_source,
                     c.external_index) for i, c in enumerate(rows)])
    db.commit()
    db.close()


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})"


def _write_dense(directory: Path, vectors: np.ndarray, window_rows: np.ndarray) -> None:
    import hnswlib

    index = hnswlib.Index(space=HNSW_SPACE, dim=vectors.shape[1])
    index.init_index(max_elements=max(len(vectors), 1), ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M, random_seed=HNSW_SEED)
    index.add_items(vectors, np.arange(len(vectors)), num_threads=1)
    index.save_index(str(directory / DENSE))
    np.save(directory / WINDOWS, window_rows)


def _fsync_tree(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())


def remove_stale_builds(directory: Path) -> None:
    """Staging directories of builds that died; call it holding the writer lock."""
    for path in directory.glob(f"{STAGING_PREFIX}*"):
        shutil.rmtree(path, ignore_errors=True)


def _remove_old_generations(directory: Path, keep: set[str]) -> None:
    """Keep the new generation and the one before it, which searches started earlier may still be reading."""
    for path in directory.glob(f"{GENERATION_PREFIX}*"):
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- reading


class StoreReader:
    """The generation current when it was opened: its manifest, its chunks and documents (read by column
    name), and its dense and lexical indexes, loaded when first asked for."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise LocalcrError(f"{self.directory}: no such index directory; build one with localcr.build_index")
        marker = read_marker(self.directory)
        if marker is None:
            raise LocalcrError(f"{self.directory}: empty, not an index yet; build one with localcr.build_index")
        self.path = self.directory / marker["current"]
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text())
            self.db = sqlite3.connect(f"file:{self.path / STORE}?mode=ro", uri=True, check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            rows = self.db.execute("SELECT doc_id FROM chunks ORDER BY row").fetchall()
            has_pages = any(r["name"] == "pages" for r in self.db.execute("PRAGMA table_info(documents)"))
            self.window_rows = np.load(self.path / WINDOWS)
        except (OSError, ValueError, sqlite3.Error) as exc:
            raise LocalcrError(f"{self.path}: index is corrupt ({type(exc).__name__}: {exc}); rebuild it with `localcr index`") from None
        self.row_doc_ids = [r["doc_id"] for r in rows]  # chunk row -> its document's id
        # an index built before pages were recorded has no such column: its documents have no pages
        self._hit_columns = ", ".join(c if has_pages or c != "d.pages" else "NULL AS pages" for c in HIT_COLUMNS)
        self.n_chunks = len(rows)

    def dense(self):
        """The hnswlib index of the chunks' windows (label i is window i; `window_rows[i]` its chunk row)."""
        import hnswlib

        index = hnswlib.Index(space=HNSW_SPACE, dim=self.manifest["embedder"]["dimension"])
        try:
            index.load_index(str(self.path / DENSE), max_elements=len(self.window_rows))
        except Exception as exc:
            raise LocalcrError(f"{self.path / DENSE}: unreadable ({exc}); rebuild the index with `localcr index`") from None
        index.set_ef(HNSW_EF)
        return index

    def lexical(self):
        from localcr.lexical import LexicalIndex

        return LexicalIndex.load(self.path / LEXICAL)

    def hit_records(self, rows: list[int]) -> list[dict]:
        """For each chunk row, in the order given: the chunk's fields plus its document's path, external id
        and page starts (a list, empty for a document without pages)."""
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        found = self.db.execute(f"SELECT {self._hit_columns} FROM chunks c JOIN documents d USING (doc_id) "
                                f"WHERE c.row IN ({marks})", rows)
        by_row = {r["row"]: dict(r, pages=json.loads(r["pages"] or "[]")) for r in found}
        return [by_row[row] for row in rows]

    def stored_documents(self) -> tuple[list[Document], dict[str, list[Chunk]]]:
        """The indexed documents (without their full text) and their chunks, in index order; a chunk's
        kind is its document's."""
        docs = [Document(doc_id=r["doc_id"], path=r["path"], kind=r["kind"], text="", size=r["size"], external_id=r["external_id"])
                for r in self.db.execute("SELECT doc_id, path, kind, size, external_id FROM documents")]
        chunks: dict[str, list[Chunk]] = {d.doc_id: [] for d in docs}
        fields = [c for c in CHUNK_COLUMNS if c != "row"]
        query = f"SELECT {', '.join('c.' + f for f in fields)}, d.kind FROM chunks c JOIN documents d USING (doc_id) ORDER BY c.row"
        for r in self.db.execute(query):
            chunks[r["doc_id"]].append(Chunk(**{f: r[f] for f in fields}, kind=r["kind"]))
        return docs, chunks

    def chunk_ids_for_external(self) -> dict[tuple[str, int], str]:
        """(imported document uuid, chunk index) -> chunk id, for the chunks of an imported corpus."""
        rows = self.db.execute("SELECT d.external_id, c.external_index, c.chunk_id FROM chunks c JOIN documents d USING (doc_id) "
                               "WHERE d.external_id IS NOT NULL AND c.external_index IS NOT NULL")
        return {(r["external_id"], r["external_index"]): r["chunk_id"] for r in rows}

    @property
    def generation(self) -> str:
        return self.path.name

    def row_of_chunk(self, chunk_id: str) -> int | None:
        found = self.db.execute("SELECT row FROM chunks WHERE chunk_id = ?", (chunk_id,)).fetchone()
        return None if found is None else found["row"]

    def rows_of_document(self, doc_id: str) -> range:
        """A document's chunk rows, in order (a document's chunks are stored consecutively); empty if unknown."""
        first = self._first_rows.get(doc_id)
        return range(0) if first is None else range(first, first + self._row_counts[doc_id])

    @cached_property
    def _first_rows(self) -> dict[str, int]:
        first: dict[str, int] = {}
        for row, doc_id in enumerate(self.row_doc_ids):
            first.setdefault(doc_id, row)
        return first

    @cached_property
    def _row_counts(self) -> dict[str, int]:
        return Counter(self.row_doc_ids)

    def doc_ids(self) -> set[str]:
        return set(self.row_doc_ids)

    def chunk_id_set(self) -> set[str]:
        return {r["chunk_id"] for r in self.db.execute("SELECT chunk_id FROM chunks")}

    def stats(self) -> dict:
        """What the index holds and what it cost on disk."""
        sizes = {p.name: disk_size(p) for p in self.path.iterdir()}
        sources = {r["context_source"]: r["n"] for r in
                   self.db.execute("SELECT context_source, COUNT(*) AS n FROM chunks GROUP BY context_source")}
        m = self.manifest
        return {
            "directory": str(self.directory), "generation": self.path.name,
            "created": m["created"], "localcr": m["localcr"],
            "documents": m["documents"], "chunks": m["chunks"], "windows": m["windows"],
            "embedder": m["embedder"], "chunking": m["chunking"], "contexts": m["contexts"],
            "context_sources": sources, "sources": m["sources"],
            "encodings": self._counts("encoding"), "languages": self._counts("language"),
            "skipped": m.get("skipped", []),
            "bytes": sizes, "total_bytes": sum(sizes.values()),
        }

    def _counts(self, column: str) -> dict[str, int] | None:
        """How many documents have each value of a column recorded per document (encoding, language); None for
        an index built before the column was (PDF and Office files have no encoding)."""
        try:
            rows = self.db.execute(f"SELECT {column} AS value, COUNT(*) AS n FROM documents GROUP BY {column}")
            return {r["value"]: r["n"] for r in rows if r["value"]}
        except sqlite3.OperationalError:
            return None
