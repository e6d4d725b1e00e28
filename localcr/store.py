"""The on-disk index format, in one place: file names, SQL schema, dense-index parameters, segments, writing
a generation and switching to it atomically, and opening the current generation for reading.

Layout of an index directory:
    localcr-index.json   marker: format, version and the name of the current generation
    segments/seg-*/      immutable segments: store.sqlite (documents, chunks, contexts, offsets, file stats),
                         vectors.npy + windows.npy (each dense window's vector and chunk row), dense.usearch,
                         lexical/ (BM25 postings and chunk lengths, memory-mapped, and which stop words
                         analysed them), tables.sqlite (each sheet document's typed tables and their catalog:
                         localcr.sheet_tables; absent from a segment of no sheet, and from one written
                         before them)
    gen-*/manifest.json  complete generations: the build's settings and the segments that make the index,
                         each with its tombstones (documents deleted or replaced since it was written) and
                         each of its files' size, modification time and sha256 (what a re-index checks it
                         against), and the newer file stats of documents whose files were touched without changing
    .building-*/         a generation or segment being written (removed by the next writer if its process died)
    .lock                held by the one writer

A change writes a small new segment and a new generation that lists it beside the old ones, with the old
versions of changed or deleted documents as tombstones; compaction writes one segment of everything live.
A search reads the marker once and sees only complete generations and the segments they list; a writer
killed at any point leaves the marker, and so the previous index, untouched. Segments no kept generation
lists are removed by the next writer.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import uuid
from bisect import bisect_right
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np

from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError

MARKER = "localcr-index.json"
FORMAT = "localcr-index"
FORMAT_VERSION = 4  # 2: segments; 3: usearch graphs; 4: code chunked along syntax trees, documents.structure
# Not raised for a segment's tables.sqlite (localcr.sheet_tables, its own TABLES_VERSION): a version 4 segment
# without one still reads, its sheets rebuilt from their chunks when asked, and an older localcr ignores the file.
LOCK = ".lock"
MANIFEST = "manifest.json"
STORE = "store.sqlite"
DENSE = "dense.usearch"
WINDOWS = "windows.npy"
VECTORS = "vectors.npy"
LEXICAL = "lexical"
TABLES = "tables.sqlite"  # a segment's sheets as typed tables (localcr.sheet_tables writes and reads it)
SEGMENTS = "segments"
GENERATION_PREFIX = "gen-"
SEGMENT_PREFIX = "seg-"
STAGING_PREFIX = ".building-"
FILE_STATS = "file_stats"  # manifest key: doc_id -> [size, mtime] of files read again and found unchanged

# The dense index of a segment: a usearch HNSW graph saved with its vectors, which a search memory-maps instead of
# loading, so opening an index reads none of it and a search process holds only the pages its searches touch
# (hnswlib, used before, loads a graph whole: 7.7 s and 1.9 GB of anonymous memory at 1 M windows; BENCHMARKS.md).
# The graph keeps its vectors as bfloat16: half the file and the pages touched, and on CPUs with AVX-512 BF16 (the
# development machine) the fastest search (100 K random vectors: 2.8 ms, against 5.0 with float16 and 6.7 with
# float32); cosine similarities move by at most 5e-4. vectors.npy keeps them in full for compaction. Graphs are
# built on every core this process may use, threads inserting in an order that varies, so two builds of a large
# segment are equally good graphs, not identical files. A segment of at most DENSE_EXACT_UP_TO windows (every
# segment of the tests' corpora, and the small segments of changes) is searched exhaustively instead, over its
# full-precision vectors in numpy (_nearest): exact results, in half a millisecond at 10,000 windows, and its graph
# never opened, so a search of small segments does not import usearch (some 50 ms of a search process's start).
DENSE_METRIC = "cos"
DENSE_DTYPE = "bf16"
DENSE_CONNECTIVITY = 32
DENSE_EXPANSION_ADD = 200
DENSE_EXPANSION_SEARCH = 200
DENSE_EXACT_UP_TO = 10_000

SCHEMA = """
    CREATE TABLE documents (doc_id TEXT PRIMARY KEY, path TEXT, kind TEXT, sha TEXT, size INTEGER,
                            external_id TEXT, n_chunks INTEGER, encoding TEXT, pages TEXT, language TEXT,
                            mtime INTEGER, structure TEXT);
    CREATE TABLE chunks (row INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE, doc_id TEXT, position INTEGER,
                         start INTEGER, end INTEGER, text TEXT, context TEXT, context_source TEXT,
                         external_index INTEGER);
"""
DOCUMENT_COLUMNS = ("doc_id", "path", "kind", "sha", "size", "external_id", "n_chunks", "encoding", "pages", "language",
                    "mtime", "structure")
CHUNK_COLUMNS = ("row", "chunk_id", "doc_id", "position", "start", "end", "text", "context", "context_source",
                 "external_index")
# The columns a search hit shows: the chunk's own, and its document's path, imported id, page starts, kind and
# structure (which fusion reads: localcr.search.fusion_of).
HIT_COLUMNS = ("c.row", "c.chunk_id", "c.doc_id", "c.position", "c.start", "c.end", "c.text", "c.context",
               "c.external_index", "d.path", "d.external_id", "d.pages", "d.kind", "d.structure",
               "d.language")


class DamagedSegment(LocalcrError):
    """A segment file a search cannot use (missing, truncated, overwritten): the message names the command that
    mends it, since a re-index finds a damaged segment (check_segments) and rebuilds it from the sources; bytes
    that rotted on disk keep the file's size and time, which the check trusts, so it names --rebuild for that."""

    def __init__(self, path: Path, problem: str):
        segment = next(p for p in path.parents if p.parent.name == SEGMENTS)
        self.problem = f"{path.relative_to(segment).as_posix()}: {problem}"  # what a re-index says of the segment
        super().__init__(f"{path}: {problem}; `localcr index --index {segment.parent.parent}` rebuilds the damaged "
                         "segment from the sources (add --rebuild if it finds no damage)")


def embedded_share(embedded: int, chunks: int) -> str:
    """The dense leg's share of an index's chunks (StoreReader.dense_coverage) in whole percent, never rounded up to
    100% while a chunk waits for its vectors."""
    return f"{100 * embedded // max(chunks, 1)}%"


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
    return data


def check_version(directory: Path, marker: dict) -> None:
    """Readers need this version; a writer rebuilds an older index whole instead."""
    if marker.get("version") != FORMAT_VERSION:
        raise LocalcrError(f"{directory}: index format {marker.get('version')} is not {FORMAT_VERSION}: rebuild it with `localcr index`")


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
    try:  # unbuffered: a full disk fails here, not again when the handle closes
        os.ftruncate(handle.fileno(), 0)
        os.pwrite(handle.fileno(), f"pid {os.getpid()}".encode(), 0)
    except OSError:  # the holder's pid is only for the message of a writer that waits
        pass
    try:
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def current_manifest(directory: Path, marker: dict | None) -> dict:
    """The current generation's manifest, or {} for a new index (or an unreadable or older-format one, which
    is rebuilt whole)."""
    if not marker or marker.get("version") != FORMAT_VERSION:
        return {}
    try:
        return json.loads((directory / marker["current"] / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


@dataclass
class StoredDocument:
    """What the current generation records of a live document: enough to tell whether its file changed."""

    segment: str
    sha: str
    size: int
    mtime: int | None
    language: str
    chunks: int


def live_documents(directory: Path, manifest: dict) -> dict[str, StoredDocument]:
    """doc_id -> its record, for the live documents of the generation whose manifest this is; a file touched
    without changing has the size and mtime it was last read with (the manifest's, newer than its segment's)."""
    found: dict[str, StoredDocument] = {}
    touched = manifest.get(FILE_STATS, {})
    for segment in manifest.get("segments", []):
        dead = set(segment["dead"])
        path = directory / SEGMENTS / segment["name"] / STORE
        db = _open_store(path)
        try:
            for doc_id, sha, size, mtime, language, n in _store_rows(
                    db, path, "SELECT doc_id, sha, size, mtime, language, n_chunks FROM documents"):
                if doc_id not in dead:
                    size, mtime = touched.get(doc_id, (size, mtime))
                    found[doc_id] = StoredDocument(segment["name"], sha, size, mtime, language or "", n)
        finally:
            db.close()
    return found


def write_segment(directory: Path, docs: list[Document], chunks_by_doc: dict[str, list[Chunk]], vectors: np.ndarray,
                  window_rows: np.ndarray, lexical, shas: dict[str, str] | None = None,
                  tables: Callable[[Path], None] | None = None) -> dict:
    """Write an immutable segment of these documents; its manifest entry (no tombstones yet). `shas`: the
    documents' content hashes where their text is not at hand (compaction copies stored documents). `tables`:
    what writes its sheets' typed tables into the segment being written (localcr.sheet_tables.writer; passed in,
    since typing a sheet is answering's code, which imports the store)."""
    (directory / SEGMENTS).mkdir(parents=True, exist_ok=True)
    staging = directory / SEGMENTS / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    _write_store(staging / STORE, docs, chunks_by_doc, shas or {})
    if tables is not None:
        tables(staging)
    _write_dense(staging, vectors, window_rows)
    lexical.save(staging / LEXICAL)
    _fsync_tree(staging)
    files = _file_records(staging)  # renaming the directory changes none of them
    name = SEGMENT_PREFIX + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    staging.rename(directory / SEGMENTS / name)
    return {"name": name, "documents": len(docs), "chunks": sum(len(chunks_by_doc[d.doc_id]) for d in docs),
            "windows": len(window_rows), "dead": [], "dead_chunks": 0, "files": files}


def _file_records(segment: Path) -> dict[str, list]:
    """Each file of a segment (path inside it) -> [size, modification time in ns, sha256]."""
    return {p.relative_to(segment).as_posix(): [p.stat().st_size, p.stat().st_mtime_ns, _sha256(p)]
            for p in sorted(segment.rglob("*")) if p.is_file()}


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_segments(directory: Path, manifest: dict) -> tuple[list[dict], dict[str, str]]:
    """The manifest's sound segments (their entries with the file records brought up to date) and its damaged
    ones (name -> what is wrong), as a re-index checks them before keeping them. Cheap: a file with the size and
    modification time recorded when it was written is taken as written (segments are never written again); one
    whose time moved (the index was copied, or the file written over) is hashed and compared. A segment written
    before files were recorded (an older localcr) is opened as a search opens it, then recorded. Every store, and
    every sheet tables file (localcr.sheet_tables), must pass SQLite's own check (check_store), the one check that
    sees its bytes rot in place."""
    sound, damaged = [], {}
    for entry in manifest.get("segments", []):
        path = directory / SEGMENTS / entry["name"]
        try:
            files = _checked_files(path, entry["files"]) if "files" in entry else _opened_files(path, manifest)
            check_store(path / STORE)
            if TABLES in files:
                check_store(path / TABLES)
        except DamagedSegment as exc:
            damaged[entry["name"]] = exc.problem
        else:
            sound.append({**entry, "files": files})
    return sound, damaged


def _checked_files(path: Path, recorded: dict[str, list]) -> dict[str, list]:
    records = {}
    for name, (size, mtime, sha) in recorded.items():
        try:
            stat = (path / name).stat()
        except OSError:
            raise DamagedSegment(path / name, "missing") from None
        if stat.st_size != size:
            raise DamagedSegment(path / name, f"{stat.st_size} bytes where {size} were written")
        if stat.st_mtime_ns != mtime and _sha256(path / name) != sha:
            raise DamagedSegment(path / name, "not the bytes that were written (its sha256 differs)")
        records[name] = [size, stat.st_mtime_ns, sha]
    return records


def _opened_files(path: Path, manifest: dict) -> dict[str, list]:
    """The file records of a segment that opens as a search (and a compaction) would open it, its graph too (which a
    search of a small segment does not open)."""
    segment = Segment(path, set())
    try:
        segment.dense(manifest["embedder"]["dimension"])
        segment.graph(manifest["embedder"]["dimension"])
        segment.postings()
    finally:
        segment.db.close()
    return _file_records(path)


def publish(directory: Path, marker: dict | None, manifest: dict) -> str:
    """Make a generation of these segments (manifest["segments"]) current, and remove what no kept generation
    needs; `marker` is the one read under the writer lock. Returns the new generation's name."""
    staging = directory / f"{STAGING_PREFIX}{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
    _fsync_tree(staging)
    generation = GENERATION_PREFIX + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    staging.rename(directory / generation)
    _switch_marker(directory, generation)
    _remove_unused(directory, keep={generation, marker["current"] if marker else ""})
    return generation


def write_generation(directory: Path, marker: dict | None, manifest: dict, docs: list[Document],
                     chunks_by_doc: dict[str, list[Chunk]], vectors: np.ndarray, window_rows: np.ndarray, lexical) -> str:
    """A generation of one new segment holding these documents: a whole build."""
    segment = write_segment(directory, docs, chunks_by_doc, vectors, window_rows, lexical)
    return publish(directory, marker, {**manifest, "segments": [segment]})


def _write_store(path: Path, docs: list[Document], chunks_by_doc: dict[str, list[Chunk]], shas: dict[str, str]) -> None:
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany(_insert("documents", DOCUMENT_COLUMNS),
                   [(d.doc_id, d.path, d.kind, shas.get(d.doc_id) or d.sha, d.size, d.external_id, len(chunks_by_doc[d.doc_id]), d.encoding,
                     json.dumps(d.pages) if d.pages else None, d.language, d.mtime, d.structure) for d in docs])
    rows = (c for d in docs for c in chunks_by_doc[d.doc_id])
    db.executemany(_insert("chunks", CHUNK_COLUMNS),
                   [(i, c.chunk_id, c.doc_id, c.position, c.start, c.end, c.text, c.context, c.context_source,
                     c.external_index) for i, c in enumerate(rows)])
    db.commit()
    db.close()


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})"


def _usearch():
    """usearch's module, imported after ONNX Runtime: with usearch 2.26 (its numkong kernels) loaded first, importing
    onnxruntime 1.31 later in the same process crashes (SIGSEGV in its pybind module), as a process that indexes
    with the numpy-only multilingual embedder and then loads MiniLM does. ONNX Runtime loads in about 0.1 s."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    import usearch.index

    return usearch.index


def _dense_index(dimension: int):
    return _usearch().Index(ndim=dimension, metric=DENSE_METRIC, dtype=DENSE_DTYPE, connectivity=DENSE_CONNECTIVITY,
                 expansion_add=DENSE_EXPANSION_ADD, expansion_search=DENSE_EXPANSION_SEARCH, enable_key_lookups=False)


def _write_dense(directory: Path, vectors: np.ndarray, window_rows: np.ndarray) -> None:
    index = _dense_index(vectors.shape[1])
    if len(vectors):
        index.add(np.arange(len(vectors), dtype=np.uint64), vectors, threads=len(os.sched_getaffinity(0)))
    index.save(str(directory / DENSE))
    np.save(directory / VECTORS, vectors.astype(np.float32))
    np.save(directory / WINDOWS, window_rows)


def _fsync_tree(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())


def remove_stale_builds(directory: Path) -> None:
    """Staging directories of writers that died; call it holding the writer lock."""
    for path in [*directory.glob(f"{STAGING_PREFIX}*"), *(directory / SEGMENTS).glob(f"{STAGING_PREFIX}*")]:
        shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- space on disk

# What a segment holds on disk, measured on this format (`localcr stats`' "on disk"): its store and BM25 postings
# about twice the UTF-8 bytes of its chunks' texts and contexts (store.sqlite 1.3-1.7 times, lexical/ up to once more),
# and a dense window its float32 vector (vectors.npy), its bfloat16 copy with about DENSE_CONNECTIVITY links of 8 bytes
# in the graph (dense.usearch: 990 bytes a 384-d window) and its chunk row (windows.npy).
TEXT_BYTES_FACTOR = 2.0


def segment_bytes(text_bytes: int, windows: int, dimension: int) -> int:
    """About the size of a segment of chunks whose texts and contexts take text_bytes (UTF-8) and of these windows."""
    return int(TEXT_BYTES_FACTOR * text_bytes + windows * (4 * dimension + 2 * dimension + 8 * DENSE_CONNECTIVITY + 8))


def live_bytes(segments: list[dict]) -> int:
    """About the size of these segments' live chunks (manifest entries: each file's size as written, times the
    segment's share of chunks not tombstoned): what a compaction writes again."""
    return int(sum(sum(f[0] for f in s.get("files", {}).values()) * (1 - s["dead_chunks"] / max(1, s["chunks"]))
                   for s in segments))


def free_bytes(directory: Path) -> int:
    """The bytes this process may still write on the filesystem of an index directory (or of its nearest existing
    parent)."""
    while not directory.exists() and directory.parent != directory:
        directory = directory.parent
    return shutil.disk_usage(directory).free


def megabytes(n: float) -> str:
    return f"{n / 1e6:.2f} MB" if n < 1e7 else f"{n / 1e6:.0f} MB" if n < 1e9 else f"{n / 1e9:.1f} GB"


# A write that failed with less than this left on its filesystem failed for want of space, whatever it raised:
# usearch says only "Failed to serialize into stream" (a RuntimeError), numpy's save "N requested and M written"
# (an OSError without errno); a disk fills to its last block before a write fails.
FULL_BELOW_BYTES = 1 << 20


def is_disk_full(exc: BaseException, places: list[Path]) -> bool:
    """Whether this exception, raised while writing an index, means a disk is full (or the user's quota spent):
    ENOSPC or EDQUOT, SQLite's SQLITE_FULL ("database or disk is full"), or any write error with less than
    FULL_BELOW_BYTES left where it writes (the index directory, the cache). Ask before removing what it left."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return True
    return isinstance(exc, (OSError, RuntimeError, sqlite3.OperationalError)) and _full_place(places) is not None


def _full_place(places: list[Path]) -> Path | None:
    for place in places:
        try:
            if free_bytes(place) < FULL_BELOW_BYTES:
                return place
        except OSError:
            pass
    return None


@contextmanager
def full_disk_in_one_line(directory: Path, needed: Callable[[], int | None] = lambda: None, cache: Path | None = None):
    """Writes into an index directory, under its writer lock, whose failure for want of space (is_disk_full) is one
    LocalcrError: the half-written segment or generation removed (their space is free again), the marker still
    naming the last generation published, which is complete and searchable. needed(): the build's estimate, where
    one was made. The disk named is the index's, or that of localcr's cache (`cache`) where that one filled up."""
    try:
        yield
    except (OSError, RuntimeError, sqlite3.Error) as exc:
        places = [directory] + ([cache] if cache else [])
        if not is_disk_full(exc, places):
            raise
        full = _full_place(places) or directory
        remove_stale_builds(directory)
        (directory / (MARKER + ".tmp")).unlink(missing_ok=True)
        try:
            marker = read_marker(directory) if (directory / MARKER).exists() else None
        except LocalcrError:
            marker = None
        state = (f"the index is its last complete generation ({marker['current']}), intact and searchable"
                 if marker else "no index was published yet")
        disk = "its disk" if full == directory else f"the disk of localcr's cache ({full})"
        need = needed()
        raise LocalcrError(f"{directory}: {disk} is full ({megabytes(free_bytes(full))} free once this run's half-written "
                           f"files were removed), so the run stopped and {state}; "
                           + (f"the run needs about {megabytes(need)} free: " if need else "")
                           + "free some space and run it again (`localcr index` goes on where it stopped)") from None


def _remove_unused(directory: Path, keep: set[str]) -> None:
    """Keep the new generation and the one before it (searches started earlier may still be reading it) and
    the segments either lists; remove the rest, including everything an older format left."""
    needed: set[str] = set()
    for name in keep:
        try:
            needed.update(s["name"] for s in json.loads((directory / name / MANIFEST).read_text()).get("segments", []))
        except (OSError, ValueError):
            pass
    for path in directory.glob(f"{GENERATION_PREFIX}*"):
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)
    for path in (directory / SEGMENTS).glob(f"{SEGMENT_PREFIX}*"):
        if path.name not in needed:
            shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- reading


def _open_store(path: Path) -> sqlite3.Connection:
    """A segment's store, read-only, its rows addressed by column name."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise DamagedSegment(path, f"corrupt ({type(exc).__name__}: {exc})") from None
    db.row_factory = sqlite3.Row
    return db


def _store_rows(db: sqlite3.Connection, path: Path, sql: str, parameters=()):
    """The rows of a query of a segment's store, as they are read: a page that fails to read (a bad sector, bit
    rot) is a DamagedSegment, whose one line names the command that mends it, not a traceback. SQLite reads
    only the pages a query needs, so damage elsewhere goes unnoticed here; a re-index's check_store sees it."""
    try:
        yield from db.execute(sql, parameters)
    except sqlite3.ProgrammingError:
        raise  # a mistake in the query, not damage
    except sqlite3.DatabaseError as exc:
        raise DamagedSegment(path, f"corrupt ({type(exc).__name__}: {exc})") from None


def check_store(path: Path) -> None:
    """SQLite's own check of every page of a segment's store; a DamagedSegment if it fails. Bytes rotted in place
    keep the file's size and modification time, so this is what sees them. quick_check reads every page and
    checks its b-tree and records, as integrity_check does, but not that the indexes agree with the tables (which
    a rotted page could only break by also passing the page checks): 0.19 s against 0.52 s for a 100 K-chunk
    store (102 MB) here, a cost every re-index pays for each kept segment."""
    db = _open_store(path)
    try:
        problems = [row[0] for row in _store_rows(db, path, "PRAGMA quick_check(3)")]
    finally:
        db.close()
    if problems != ["ok"]:
        raise DamagedSegment(path, f"fails SQLite's quick_check ({'; '.join(problems)})")


class Segment:
    """One segment as a generation sees it: its documents, which document each chunk row belongs to, and which
    rows are live (not tombstoned)."""

    def __init__(self, path: Path, dead_docs: set[str]):
        self.path = path
        self.db = _open_store(path / STORE)
        # A document's chunks are consecutive rows, in the order the documents were written: the map from row
        # to document comes from one record per document (reading one per chunk took seconds at 1M chunks).
        records = list(self.rows("SELECT doc_id, n_chunks FROM documents ORDER BY rowid"))
        (stored,) = next(self.rows("SELECT COUNT(*) FROM chunks"))
        self.documents = [r[0] for r in records]
        counts = np.array([r[1] for r in records], dtype=np.int64)
        self.first_rows = np.cumsum(counts) - counts  # per document
        self.row_docs = np.repeat(np.arange(len(records)), counts)  # per row: its document's index in documents
        self.n_chunks = len(self.row_docs)
        if stored != self.n_chunks:
            raise DamagedSegment(path / STORE, f"corrupt: {stored} chunk rows where its documents count {self.n_chunks}")
        self.doc_live = np.array([d not in dead_docs for d in self.documents], dtype=bool)
        self.live = self.doc_live[self.row_docs]
        self.dead_docs = dead_docs
        self.window_rows = self._array(WINDOWS, mmap_mode=None)

    def rows(self, sql: str, parameters=()):
        """The rows of a query of its store, as they are read (see _store_rows)."""
        return _store_rows(self.db, self.path / STORE, sql, parameters)

    @cached_property
    def tables(self) -> Path | None:
        """Its sheets' typed tables (localcr.sheet_tables), None for a segment of no sheet or one written before
        them."""
        return self.path / TABLES if (self.path / TABLES).is_file() else None

    def _array(self, name: str, mmap_mode: str | None = "r") -> np.ndarray:
        try:
            return np.load(self.path / name, mmap_mode=mmap_mode)
        except (OSError, ValueError) as exc:
            raise DamagedSegment(self.path / name, f"unreadable ({type(exc).__name__}: {exc})") from None

    def vectors(self) -> np.ndarray:
        """Every window's vector in full precision, memory-mapped (what compaction copies)."""
        return self._array(VECTORS)

    def postings(self):
        """Its BM25 postings, memory-mapped (localcr.lexical.Postings)."""
        from localcr.lexical import Postings

        try:
            return Postings.load(self.path / LEXICAL)
        except (OSError, ValueError) as exc:
            raise DamagedSegment(self.path / LEXICAL, f"unreadable ({type(exc).__name__}: {exc})") from None

    def dense(self, dimension: int) -> "DenseSegment":
        """Its dense index, answering with the windows of live chunks only: its vectors, memory-mapped, and for a
        segment of more than DENSE_EXACT_UP_TO windows its graph, memory-mapped too."""
        vectors = self.vectors()
        if vectors.shape != (len(self.window_rows), dimension):
            raise DamagedSegment(self.path / VECTORS, f"{' x '.join(map(str, vectors.shape))} values where the segment "
                                 f"has {len(self.window_rows)} windows of {dimension}")
        dead = ~self.live[self.window_rows]
        return DenseSegment(vectors, dead, None if len(vectors) <= DENSE_EXACT_UP_TO else self.graph(dimension))

    def graph(self, dimension: int):
        """Its HNSW graph, memory-mapped."""
        index = _dense_index(dimension)
        try:
            index.view(str(self.path / DENSE))
        except Exception as exc:
            raise DamagedSegment(self.path / DENSE, f"unreadable ({exc})") from None
        if len(index) != len(self.window_rows) or index.ndim != dimension:
            raise DamagedSegment(self.path / DENSE, f"{len(index)} vectors of {index.ndim} dimensions where the segment has "
                                 f"{len(self.window_rows)} of {dimension}")
        return index


class DenseSegment:
    """One segment's dense index as its generation sees it: its vectors, and its graph unless it is small enough to
    be searched exhaustively (index None). The mapped graph cannot be changed, so the windows of tombstoned chunks
    stay in it: a search asks for as many more as their share suggests and drops them, asking again for twice as
    many in the rare case that leaves fewer than k."""

    def __init__(self, vectors: np.ndarray, dead: np.ndarray, index=None):
        self.vectors = vectors  # per window, full precision, memory-mapped: what is searched exhaustively
        self.dead, self.index = dead, index  # dead: per window of the segment
        self.n_live = int(len(dead) - dead.sum())

    def knn(self, vector: np.ndarray, k: int, passing: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Labels (windows of the segment) and cosine distances of the k nearest live windows, nearest first;
        of those `passing` (per window) lets through, if given. The windows of a segment without a graph, or at
        most DENSE_EXACT_UP_TO windows let through, are compared one by one; more are found in the graph, which is
        asked for as many more as the share left out suggests."""
        skip = self.dead if passing is None else self.dead | ~passing
        n_wanted = self.n_live if passing is None else int(len(skip) - skip.sum())
        k, size = min(k, n_wanted), len(skip)
        if self.index is None or (passing is not None and n_wanted <= DENSE_EXACT_UP_TO):
            return _nearest(self.vectors, np.flatnonzero(~skip), vector, k)
        count = k if n_wanted == size else min(size, -(-k * size // max(n_wanted, 1)) + 16)
        while True:
            found = self.index.search(vector, count, threads=1)
            labels = found.keys.astype(np.int64)
            keep = ~skip[labels]
            if keep.sum() >= k or count >= size:
                return labels[keep][:k], found.distances[keep][:k]
            count = min(size, 2 * count)


def _nearest(vectors: np.ndarray, labels: np.ndarray, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k of these windows nearest the vector by cosine distance, nearest first (the lower label first on a tie),
    compared one by one with einsum, numpy's own loop on one thread: at 10,000 windows of 384 dimensions 0.5 ms,
    where usearch's exhaustive search took 2.9 and numpy's matrix product 8 on a busy 2-core machine, its BLAS
    threads contending. Only the labelled rows are read where they are few (a narrow filter over a large segment)."""
    query = np.asarray(vector, dtype=np.float32).ravel()
    rows = vectors[labels] if 2 * len(labels) < len(vectors) else vectors
    dots, norms = np.einsum("ij,j->i", rows, query), np.sqrt(np.einsum("ij,ij->i", rows, rows))
    if rows is vectors:
        dots, norms = dots[labels], norms[labels]
    distances = (1 - dots / np.maximum(norms * np.linalg.norm(query), 1e-12)).astype(np.float32)
    best = np.argsort(distances, kind="stable")[:k]
    return labels[best], distances[best]


class SegmentedDense:
    """k nearest windows over every segment's graph, as one index whose label i is window i of the generation."""

    def __init__(self, segments: list[DenseSegment], window_offsets: list[int]):
        self.segments, self.window_offsets = segments, window_offsets

    def knn_query(self, vector: np.ndarray, k: int, passing: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest live windows (of those `passing`, per window of the generation, lets through)."""
        labels, distances = [], []
        for segment, offset in zip(self.segments, self.window_offsets):
            wanted = None if passing is None else passing[offset:offset + len(segment.dead)]
            if segment.n_live and (wanted is None or wanted.any()):
                found, dist = segment.knn(vector, k, wanted)
                labels.append(found + offset)
                distances.append(dist)
        if not labels:
            return np.zeros((1, 0), dtype=np.int64), np.zeros((1, 0), dtype=np.float32)
        labels, distances = np.concatenate(labels), np.concatenate(distances)
        best = np.argsort(distances, kind="stable")[:k]
        return labels[best][None, :], distances[best][None, :]


class StoreReader:
    """The generation current when it was opened: its manifest, its segments' chunks and documents (read by
    column name) as one sequence of rows (segment after segment; the rows of tombstoned documents stay in the
    sequence, marked dead, and are never returned), and its dense and lexical indexes, loaded when first asked for."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise LocalcrError(f"{self.directory}: no such index directory; build one with localcr.build_index")
        marker = read_marker(self.directory)
        if marker is None:
            raise LocalcrError(f"{self.directory}: empty, not an index yet; build one with localcr.build_index")
        check_version(self.directory, marker)
        self.path = self.directory / marker["current"]
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text())
            entries = self.manifest["segments"]
        except (OSError, ValueError, KeyError) as exc:
            raise LocalcrError(f"{self.path}: index is corrupt ({type(exc).__name__}: {exc}); rebuild it with `localcr index`") from None
        self.segments = [Segment(self.directory / SEGMENTS / s["name"], set(s["dead"])) for s in entries]
        self.offsets = [0]
        for segment in self.segments:
            self.offsets.append(self.offsets[-1] + segment.n_chunks)
        self.n_chunks = self.offsets[-1]  # rows, dead ones included
        self.live = np.concatenate([seg.live for seg in self.segments] or [np.zeros(0, dtype=bool)])  # per row
        self.live_chunks = int(self.live.sum())  # what a banner or a health check counts: `stats`' chunks
        self.window_rows = np.concatenate([seg.window_rows + offset for seg, offset in zip(self.segments, self.offsets)]
                                          or [np.zeros(0, dtype=np.int64)])

    @property
    def generation(self) -> str:
        return self.path.name

    def _locate(self, row: int) -> tuple[Segment, int]:
        i = bisect_right(self.offsets, row) - 1
        return self.segments[i], row - self.offsets[i]

    def dense(self) -> SegmentedDense:
        """The dense index of the chunks' windows (label i is window i; `window_rows[i]` its chunk row)."""
        dimension = self.manifest["embedder"]["dimension"]
        window_offsets = np.cumsum([0] + [len(seg.window_rows) for seg in self.segments]).tolist()
        return SegmentedDense([seg.dense(dimension) for seg in self.segments], window_offsets)

    def lexical(self):
        """BM25 over the live chunks of every segment, with statistics of them all (see localcr.lexical)."""
        from localcr.lexical import LexicalIndex

        return LexicalIndex([seg.postings() for seg in self.segments],
                            [None if seg.live.all() else seg.live for seg in self.segments])

    def document_postings(self, doc_ids: list[str]) -> dict[str, tuple]:
        """Where these live documents' BM25 postings lie, in the order given: doc_id -> (its segment's Postings, its
        rows there), what localcr.lexical.Postings.merged copies without analysing the texts again. A document
        without chunks has no rows, and is left out."""
        parts: dict[int, object] = {}
        found = {}
        for doc_id in doc_ids:
            rows = self.rows_of_document(doc_id)
            if rows:
                i = bisect_right(self.offsets, rows.start) - 1
                if i not in parts:
                    parts[i] = self.segments[i].postings()
                found[doc_id] = (parts[i], np.arange(rows.start - self.offsets[i], rows.stop - self.offsets[i]))
        return found

    def live_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The vectors of the live chunks' windows, and each window's row once dead rows are dropped (as in
        stored_documents): what compaction copies."""
        vectors, rows, base = [], [], 0
        for seg in self.segments:
            if not seg.n_chunks:
                continue
            keep = seg.live[seg.window_rows]
            renumbered = np.cumsum(seg.live) - 1 + base
            vectors.append(seg.vectors()[keep])
            rows.append(renumbered[seg.window_rows[keep]])
            base += int(seg.live.sum())
        return np.concatenate(vectors).astype(np.float32), np.concatenate(rows).astype(np.int64)

    @cached_property
    def dense_coverage(self) -> tuple[int, int]:
        """(live chunks with vectors, live chunks): a build commits chunks before their vectors (lexical first,
        localcr.pipeline), so a search may meet chunks that only the lexical leg holds yet."""
        embedded = np.zeros(self.n_chunks, dtype=bool)
        embedded[self.window_rows] = True
        return int((embedded & self.live).sum()), int(self.live.sum())

    def document_shas(self) -> dict[str, str]:
        return {r["doc_id"]: r["sha"] for seg in self.segments for r in seg.rows("SELECT doc_id, sha FROM documents")
                if r["doc_id"] not in seg.dead_docs}

    def hit_records(self, rows: list[int]) -> list[dict]:
        """For each chunk row, in the order given: the chunk's fields plus its document's path, external id
        and page starts (a list, empty for a document without pages); "row" is the generation's row."""
        by_row: dict[int, dict] = {}
        wanted: dict[int, list[int]] = {}
        for row in rows:
            i = bisect_right(self.offsets, row) - 1
            wanted.setdefault(i, []).append(row - self.offsets[i])
        for i, local in wanted.items():
            marks = ",".join("?" * len(local))
            found = self.segments[i].rows(f"SELECT {', '.join(HIT_COLUMNS)} FROM chunks c JOIN documents d USING (doc_id) "
                                          f"WHERE c.row IN ({marks})", local)
            for r in found:
                by_row[r["row"] + self.offsets[i]] = dict(r, row=r["row"] + self.offsets[i], pages=json.loads(r["pages"] or "[]"))
        return [by_row[row] for row in rows]

    def stored_documents(self, only: set[str] | None = None) -> tuple[list[Document], dict[str, list[Chunk]]]:
        """The live documents (without their full text, with their files' latest stats) and their chunks, in
        index order; a chunk's kind is its document's. only: these documents alone (read by SQLite, not walked)."""
        docs: list[Document] = []
        chunks: dict[str, list[Chunk]] = {}
        fields = [c for c in CHUNK_COLUMNS if c != "row"]
        touched = self.manifest.get(FILE_STATS, {})
        where, parameters = ("", ()) if only is None else (" WHERE doc_id IN (SELECT value FROM json_each(?))",
                                                           (json.dumps(sorted(only)),))
        for seg in self.segments:
            for r in seg.rows("SELECT * FROM documents" + where, parameters):
                if r["doc_id"] not in seg.dead_docs:
                    size, mtime = touched.get(r["doc_id"], (r["size"], r["mtime"]))
                    docs.append(Document(doc_id=r["doc_id"], path=r["path"], kind=r["kind"], text="", size=size,
                                         external_id=r["external_id"], encoding=r["encoding"] or "",
                                         pages=json.loads(r["pages"] or "[]"), language=r["language"] or "", mtime=mtime,
                                         structure=r["structure"] or ""))
                    chunks[r["doc_id"]] = []
            query = f"SELECT {', '.join('c.' + f for f in fields)}, d.kind FROM chunks c JOIN documents d USING (doc_id)"
            for r in seg.rows(query + where.replace("doc_id", "c.doc_id") + " ORDER BY c.row", parameters):
                if r["doc_id"] not in seg.dead_docs:
                    chunks[r["doc_id"]].append(Chunk(**{f: r[f] for f in fields}, kind=r["kind"]))
        order = {doc_id: i for i, doc_id in enumerate(chunks)}
        docs.sort(key=lambda d: order[d.doc_id])
        return docs, chunks

    def chunk_ids_for_external(self) -> dict[tuple[str, int], str]:
        """(imported document uuid, chunk index) -> chunk id, for the live chunks of an imported corpus."""
        found = {}
        for seg in self.segments:
            rows = seg.rows("SELECT d.external_id, c.external_index, c.chunk_id, c.doc_id FROM chunks c JOIN documents d "
                                  "USING (doc_id) WHERE d.external_id IS NOT NULL AND c.external_index IS NOT NULL")
            found.update({(r["external_id"], r["external_index"]): r["chunk_id"] for r in rows if r["doc_id"] not in seg.dead_docs})
        return found

    def documents_by_external_id(self) -> dict[str, str]:
        """Imported documents' own ids (e.g. original_uuid) -> their ids in this index."""
        return {r["external_id"]: r["doc_id"] for seg in self.segments
                for r in seg.rows("SELECT doc_id, external_id FROM documents WHERE external_id IS NOT NULL")
                if r["doc_id"] not in seg.dead_docs}

    def row_of_chunk(self, chunk_id: str) -> int | None:
        """The live row of a chunk id (an older version of its document may still lie, dead, in another segment)."""
        for seg, offset in zip(self.segments, self.offsets):
            found = next(seg.rows("SELECT row FROM chunks WHERE chunk_id = ?", (chunk_id,)), None)
            if found is not None and seg.live[found["row"]]:
                return found["row"] + offset
        return None

    def doc_of_row(self, row: int) -> str | None:
        """The id of the document a row belongs to; None for a dead row."""
        seg, local = self._locate(row)
        return seg.documents[seg.row_docs[local]] if seg.live[local] else None

    def rows_of_document(self, doc_id: str) -> range:
        """A live document's chunk rows, in order (a document's chunks are stored consecutively); empty if unknown."""
        return self._document_rows.get(doc_id, range(0))

    @cached_property
    def _document_rows(self) -> dict[str, range]:
        found = {}
        for seg, offset in zip(self.segments, self.offsets):
            ends = np.append(seg.first_rows[1:], seg.n_chunks)
            for doc_id, first, end, live in zip(seg.documents, seg.first_rows, ends, seg.doc_live):
                if live:
                    found[doc_id] = range(offset + int(first), offset + int(end))
        return found

    def doc_ids(self) -> set[str]:
        return {d for seg in self.segments for d, live in zip(seg.documents, seg.doc_live) if live}

    def _live_segment(self, doc_id: str) -> Segment | None:
        """The segment where a document is live (none holds a tombstoned version's rows for it)."""
        rows = self.rows_of_document(doc_id)
        if not rows:
            return None
        return self.segments[bisect_right(self.offsets, rows.start) - 1]

    def tables_of(self, doc_id: str) -> Path | None:
        """The tables file (localcr.sheet_tables) of the segment where a document is live: None for a document not
        live, and where that segment stored none (no sheet in it, or written before tables were). A tombstoned
        version's segment is never named, so its tables are never read."""
        segment = self._live_segment(doc_id)
        return segment.tables if segment is not None else None

    def chunk_id_set(self) -> set[str]:
        return {r["chunk_id"] for seg in self.segments for r in seg.rows("SELECT chunk_id, row FROM chunks") if seg.live[r["row"]]}

    def stats(self) -> dict:
        """What the index holds and what it cost on disk."""
        sizes: Counter = Counter()
        for seg in self.segments:
            for part in seg.path.iterdir():
                sizes[part.name] += disk_size(part)
        sizes[MANIFEST] = disk_size(self.path / MANIFEST)
        sources = self._live_counts("chunks", "context_source", with_empty=True)  # "" is a chunk without context
        m = self.manifest
        return {
            "directory": str(self.directory), "generation": self.path.name,
            "created": m["created"], "localcr": m["localcr"],
            "documents": len(self.doc_ids()), "chunks": sum(int(seg.live.sum()) for seg in self.segments),
            "windows": int(sum(seg.live[seg.window_rows].sum() for seg in self.segments if seg.n_chunks)),
            "embedded_chunks": self.dense_coverage[0],
            "segments": len(self.segments), "dead_chunks": int(sum((~seg.live).sum() for seg in self.segments)),
            "embedder": m["embedder"], "chunking": m["chunking"], "contexts": m["contexts"],
            "context_sources": dict(sources), "sources": m["sources"],
            "encodings": self._live_counts("documents", "encoding"), "languages": self._live_counts("documents", "language"),
            "kinds": self._live_counts("documents", "kind"),
            "structure": self._live_counts("documents", "structure"), "regex_fallback": self._fallback_documents(),
            "skipped": m.get("skipped", []),
            "bytes": dict(sizes), "total_bytes": sum(sizes.values()),
        }

    def _fallback_documents(self) -> list[str]:
        """The live code documents whose structure came from regular expressions (no grammar read them)."""
        return sorted(r["doc_id"] for seg in self.segments
                      for r in seg.rows("SELECT doc_id FROM documents WHERE structure = 'regex'")
                      if r["doc_id"] not in seg.dead_docs)

    def _live_counts(self, table: str, column: str, with_empty: bool = False) -> dict[str, int]:
        """How many live rows of a table (chunks, documents) have each value of a column, counted by SQLite (a
        million chunks are not walked in Python): all rows, minus those of tombstoned documents. Rows with no
        value (imported documents have no encoding) are left out unless with_empty."""
        counts: Counter = Counter()
        keep = "1" if with_empty else f"{column} != ''"
        query = f"SELECT {column} AS value, COUNT(*) AS n FROM {table} WHERE {keep} {{}} GROUP BY {column}"
        for seg in self.segments:
            counts.update({r["value"]: r["n"] for r in seg.rows(query.format(""))})
            if seg.dead_docs:
                dead = seg.rows(query.format("AND doc_id IN (SELECT value FROM json_each(?))"), (json.dumps(sorted(seg.dead_docs)),))
                counts.subtract({r["value"]: r["n"] for r in dead})
        return {value: n for value, n in counts.items() if n > 0}
