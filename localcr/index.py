"""Indexes on disk: build a complete new generation beside the current one, then switch to it atomically.

Layout of an index directory:
    localcr-index.json   marker: format, version and the name of the current generation
    gen-*/               complete generations: manifest.json, store.sqlite (chunks, contexts, offsets),
                         dense.hnsw + windows.npy (vector label -> chunk row), lexical/ (bm25s)
    .building-*/         a build in progress (removed by the next run if the process died)
    .lock                held by the one writer

A search reads the marker once and sees only complete generations; a build killed at any point
leaves the marker, and so the previous index, untouched. Expensive work (embeddings, LLM contexts)
is cached by content, so the next run after a kill, or after a change to a few files, redoes only
what is new.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from tqdm import tqdm

import localcr
from localcr.chunking import chunk_document
from localcr.documents import Chunk, Document, load_paths
from localcr.errors import LocalcrError
from localcr.models import Registry
from localcr.structure import structural_contexts

MARKER = "localcr-index.json"
FORMAT = "localcr-index"
FORMAT_VERSION = 1
CONTEXT_MODES = ("structural", "llm", "none")


@dataclass
class BuildSummary:
    directory: Path
    documents: int = 0
    chunks: int = 0
    windows: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    embedded: int = 0  # windows embedded now; the rest came from the cache
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    context_summary: str = ""

    def text(self) -> str:
        lines = [
            f"indexed {self.documents} documents, {self.chunks} chunks ({self.windows} dense windows) into {self.directory} "
            f"in {self.seconds:.1f} s",
            f"  documents: {self.added} new, {self.changed} changed, {self.removed} removed, {self.unchanged} unchanged"
            + (f", {self.skipped} files skipped" if self.skipped else ""),
            f"  embeddings: {self.embedded} computed, {self.windows - self.embedded} from cache",
        ]
        if self.context_summary:
            lines.append("  " + self.context_summary.replace("\n", "\n  "))
        return "\n".join(lines)


def disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def read_marker(directory: Path) -> dict | None:
    """The index marker, None for an empty or absent directory; a LocalcrError for anything that is not ours."""
    marker = directory / MARKER
    if not marker.exists():
        if directory.exists() and not directory.is_dir():
            raise LocalcrError(f"{directory}: not a directory")
        if directory.exists() and any(p.name not in (".lock",) for p in directory.iterdir()):
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


@contextmanager
def writer_lock(directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / ".lock", "a+")
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


def build_index(
    paths: list[str], directory: str | os.PathLike, registry: Registry, *,
    embedder: str | None = None, contexts: str | None = None, llm: str | None = None,
    contexts_from: str | None = None, chunk_tokens: int | None = None, overlap_tokens: int | None = None,
    progress: bool = True, log=None,
) -> BuildSummary:
    """Index documents under `paths` into `directory`. Re-indexing keeps every setting not given again
    (paths, embedder, context mode, LLM, chunk sizes) as the index was last built with."""
    log = log or (lambda message: print(message, file=sys.stderr))
    started = time.monotonic()
    directory = Path(directory)
    if contexts is not None and contexts not in CONTEXT_MODES:
        raise LocalcrError(f"--contexts {contexts!r}: choose one of {', '.join(CONTEXT_MODES)}")
    read_marker(directory)  # refuse a foreign directory before the lock file is written into it
    with writer_lock(directory):
        marker = read_marker(directory)
        _remove_stale_builds(directory)
        last = _manifest(directory, marker)
        embedder = embedder or last.get("embedder", {}).get("name")
        contexts = contexts or last.get("contexts", {}).get("mode") or "structural"
        llm = llm or last.get("contexts", {}).get("llm")
        chunk_tokens = chunk_tokens or last.get("chunking", {}).get("chunk_tokens")
        overlap_tokens = last.get("chunking", {}).get("overlap_tokens") if overlap_tokens is None else overlap_tokens
        embedder_spec = registry.require("embedder", embedder)
        embedder_spec.resolve()  # a missing model fails before any work is done
        if contexts == "llm":
            registry.require("llm", llm).resolve()
        previous = _previous_documents(directory, marker)
        sources = [str(Path(p).expanduser().resolve()) for p in paths] or last.get("sources")
        if not sources:
            raise LocalcrError("nothing to index: name files or directories (e.g. `localcr index docs/ --index DIR`)")
        loaded = load_paths(sources)
        for warning in loaded.warnings:
            log(f"warning: {warning}")
        if not loaded.documents:
            raise LocalcrError(f"no indexable documents under {', '.join(sources)}: nothing was changed")

        from localcr.embeddings import Embedder  # imports torch: only once there is work to do

        model = Embedder(embedder_spec)
        chunk_tokens = chunk_tokens or default_chunk_tokens(model.max_length)
        overlap_tokens = chunk_tokens // 8 if overlap_tokens is None else overlap_tokens
        if not 0 <= overlap_tokens < chunk_tokens:
            raise LocalcrError(f"--overlap {overlap_tokens} must be below --chunk-tokens {chunk_tokens}")

        docs = loaded.documents
        chunks_by_doc = {d.doc_id: chunk_document(d, model.count_tokens, chunk_tokens, overlap_tokens) for d in docs}
        chunks = [c for d in docs for c in chunks_by_doc[d.doc_id]]
        if not chunks:
            raise LocalcrError("the documents hold no text to index: nothing was changed")

        summary = BuildSummary(directory=directory, documents=len(docs), chunks=len(chunks),
                               skipped=loaded.skipped, warnings=loaded.warnings)
        _count_changes(summary, previous, docs)
        context_meta = _add_contexts(docs, chunks_by_doc, chunks, contexts, llm, contexts_from, registry, progress, summary)

        windows = model.windows(chunks)
        summary.windows = len(windows)
        label = f"embedding {len(docs)} files, {len(chunks)} chunks"
        with tqdm(total=len(windows), desc=label, unit="emb", disable=not progress, file=sys.stderr) as bar:
            vectors, summary.embedded = model.embed([w.text for w in windows], progress=bar.update)

        from localcr.lexical import LexicalIndex

        lexical = LexicalIndex.build([f"{c.context}\n{c.text}" for c in chunks])

        manifest = {
            "localcr": localcr.__version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "sources": sources,
            "embedder": {"name": embedder_spec.name, "id": model.id, "dimension": model.dimension, "max_length": model.max_length},
            "chunking": {"chunk_tokens": chunk_tokens, "overlap_tokens": overlap_tokens},
            "contexts": context_meta,
            "documents": len(docs), "chunks": len(chunks), "windows": len(windows),
        }
        staging = directory / f".building-{uuid.uuid4().hex[:8]}"
        staging.mkdir()
        _write_store(staging / "store.sqlite", docs, chunks_by_doc)
        _write_dense(staging, vectors, np.array([w.chunk_row for w in windows], dtype=np.int64))
        lexical.save(staging / "lexical")
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2))
        _fsync_tree(staging)
        generation = "gen-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
        staging.rename(directory / generation)
        _switch_marker(directory, generation)
        _remove_old_generations(directory, keep={generation, marker["current"] if marker else ""})
        summary.seconds = time.monotonic() - started
        return summary


def default_chunk_tokens(max_length: int) -> int:
    """Chunks leave a quarter of the embedder's window for the context, so chunk + context embed as one window."""
    return max(32, int(max_length * 0.75) - 2)


def _add_contexts(docs, chunks_by_doc, chunks, mode, llm, contexts_from, registry, progress, summary) -> dict:
    """Fill every chunk's context. Structural contexts come first: they are the LLM's fallback, and
    `contexts.compose` decides how an LLM context joins them."""
    meta: dict = {"mode": mode}
    if mode != "none":
        for doc in docs:
            structural_contexts(doc, chunks_by_doc[doc.doc_id])
    if mode == "llm":
        from localcr.contexts import DEFAULT_COMPOSITION, write_llm_contexts

        spec = registry.require("llm", llm)
        stats = write_llm_contexts(docs, chunks_by_doc, spec, progress=progress, composition=DEFAULT_COMPOSITION)
        summary.context_summary = stats.summary()
        meta.update(llm=spec.name, llm_id=spec.fingerprint(), composition=DEFAULT_COMPOSITION, fallbacks=stats.fallbacks,
                    generated=stats.generated, cached=stats.cached, windowed_documents=stats.windowed_documents)
    if contexts_from:
        from localcr.contexts import load_contexts_file

        meta["imported"] = load_contexts_file(contexts_from, chunks)
        meta["imported_from"] = str(contexts_from)
    return meta


def _manifest(directory: Path, marker: dict | None) -> dict:
    """The current generation's manifest, or {} for a new index (or an unreadable one, which is rebuilt)."""
    if not marker:
        return {}
    try:
        return json.loads((directory / marker["current"] / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def _previous_documents(directory: Path, marker: dict | None) -> dict[str, str]:
    if not marker:
        return {}
    try:
        with sqlite3.connect(f"file:{directory / marker['current'] / 'store.sqlite'}?mode=ro", uri=True) as db:
            return dict(db.execute("SELECT doc_id, sha FROM documents"))
    except sqlite3.Error:
        return {}  # an unreadable previous generation only costs the change counts


def _count_changes(summary: BuildSummary, previous: dict[str, str], docs: list[Document]) -> None:
    current = {d.doc_id: d.sha for d in docs}
    summary.added = sum(1 for d in current if d not in previous)
    summary.changed = sum(1 for d, s in current.items() if d in previous and previous[d] != s)
    summary.unchanged = sum(1 for d, s in current.items() if previous.get(d) == s)
    summary.removed = sum(1 for d in previous if d not in current)


def _write_store(path: Path, docs: list[Document], chunks_by_doc: dict[str, list[Chunk]]) -> None:
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE documents (doc_id TEXT PRIMARY KEY, path TEXT, kind TEXT, sha TEXT, size INTEGER,
                                external_id TEXT, n_chunks INTEGER);
        CREATE TABLE chunks (row INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE, doc_id TEXT, position INTEGER,
                             start INTEGER, end INTEGER, text TEXT, context TEXT, context_source TEXT,
                             external_index INTEGER);
    """)
    db.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?)",
                   [(d.doc_id, d.path, d.kind, d.sha, d.size, d.external_id, len(chunks_by_doc[d.doc_id])) for d in docs])
    rows = (c for d in docs for c in chunks_by_doc[d.doc_id])
    db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)",
                   [(i, c.chunk_id, c.doc_id, c.position, c.start, c.end, c.text, c.context, c.context_source,
                     c.external_index) for i, c in enumerate(rows)])
    db.commit()
    db.close()


def _write_dense(directory: Path, vectors: np.ndarray, window_rows: np.ndarray) -> None:
    import hnswlib

    index = hnswlib.Index(space="cosine", dim=vectors.shape[1])
    index.init_index(max_elements=max(len(vectors), 1), ef_construction=200, M=32, random_seed=7)
    index.add_items(vectors, np.arange(len(vectors)), num_threads=1)
    index.save_index(str(directory / "dense.hnsw"))
    np.save(directory / "windows.npy", window_rows)


def _fsync_tree(directory: Path) -> None:
    for path in directory.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())


def _switch_marker(directory: Path, generation: str) -> None:
    tmp = directory / (MARKER + ".tmp")
    tmp.write_text(json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "current": generation}))
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, directory / MARKER)


def _remove_stale_builds(directory: Path) -> None:
    for path in directory.glob(".building-*"):
        shutil.rmtree(path, ignore_errors=True)


def _remove_old_generations(directory: Path, keep: set[str]) -> None:
    """Keep the new generation and the one before it, which searches started earlier may still be reading."""
    for path in directory.glob("gen-*"):
        if path.name not in keep:
            shutil.rmtree(path, ignore_errors=True)
