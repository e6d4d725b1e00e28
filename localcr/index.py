"""Building an index: documents are loaded, chunked, given contexts, embedded and indexed for BM25, then
handed to localcr.store, which writes them as a new generation beside the current one and switches to it
atomically (see there for the layout on disk).

Expensive work (embeddings, LLM contexts) is cached by content, so the next run after a kill, or after a
change to a few files, redoes only what is new.
"""
from __future__ import annotations

import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from tqdm import tqdm

import localcr
from localcr import store
from localcr.backends import is_milvus
from localcr.chunking import chunk_document
from localcr.contexts import DEFAULT_COMPOSITION
from localcr.documents import Chunk, Document, LoadReport, Skipped, load_paths
from localcr.errors import ArgumentError, LocalcrError
from localcr.language import counted, document_language, embedder_warning, languages_of
from localcr.models import ModelSpec, Registry
from localcr.parsing.code import label as code_structure
from localcr.structure import structural_contexts

CONTEXT_MODES = ("structural", "llm", "none")


@dataclass
class BuildSummary:
    directory: Path
    documents: int = 0
    chunks: int = 0
    windows: int = 0  # dense windows of the documents indexed this run (new or changed)
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    restored: int = 0  # documents of damaged segments, read again from their files
    skipped: list[Skipped] = field(default_factory=list)
    embedded: int = 0  # windows embedded now; the rest came from the cache
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    context_summary: str = ""

    def text(self) -> str:
        lines = [
            f"indexed {self.documents} documents, {self.chunks} chunks into {self.directory} in {self.seconds:.1f} s",
            f"  documents: {self.added} new, {self.changed} changed, {self.removed} removed, {self.unchanged} unchanged"
            + (f", {self.restored} restored from the sources (damaged segment)" if self.restored else "")
            + ("" if self.added + self.changed + self.removed + self.restored else " (nothing to do)"),
            f"  embeddings: {self.embedded} computed, {self.windows - self.embedded} from cache",
        ]
        if self.skipped:
            lines.append("  " + _skipped_line(self.skipped))
        if self.context_summary:
            lines.append("  " + self.context_summary.replace("\n", "\n  "))
        return "\n".join(lines)


_SHOWN_SKIPPED = 3


def _skipped_line(skipped: list[Skipped]) -> str:
    """The first few files left out, with their reasons, and where to see the rest."""
    shown = "; ".join(f"{s.path} ({s.reason})" for s in skipped[:_SHOWN_SKIPPED])
    rest = len(skipped) - _SHOWN_SKIPPED
    more = f"; and {rest} more (`localcr stats --skipped` lists them all)" if rest > 0 else ""
    return f"{_count(len(skipped), 'file')} skipped: {shown}{more}"


# The policy that keeps search fast as changes pile up: compact when a change leaves more segments than this,
# or more than this share of the rows tombstoned.
MAX_SEGMENTS = 8
MAX_DEAD_SHARE = 0.3


def build_index(
    paths: list[str], directory: str | os.PathLike, registry: Registry, *,
    embedder: str | None = None, contexts: str | None = None, llm: str | None = None,
    contexts_from: str | None = None, chunk_tokens: int | None = None, overlap_tokens: int | None = None,
    composition: str | None = None, progress: bool = True, log=None, ray: str | None = None, rebuild: bool = False,
    lexical: str | None = None,
) -> BuildSummary:
    """Index documents under `paths` into `directory`. Re-indexing keeps every setting not given again
    (paths, embedder, context mode, LLM, how LLM contexts join structural ones, chunk sizes) as the index
    was last built with, and only reads, chunks, contextualises and embeds the files that changed (same size
    and modification time: not even read), writing them as a new segment; with other settings than last
    time, everything is rebuilt. The segments kept are checked first (store.check_segments): a damaged one is
    dropped and its documents read again from their files (contexts and embeddings come from the cache), with one
    line saying so. rebuild: build everything again, whatever changed.

    ray: run the LLM contexts and embeddings on Ray actors ("auto": a local Ray instance; else the address of a
    running cluster); this process still reads, chunks, checks and writes the caches and builds the index.

    `directory` may name a Milvus collection instead (see localcr.backends); lexical, for such an index only:
    "function" (Milvus's BM25) or "client" (localcr's BM25 analysis as sparse vectors), see localcr.backends.milvus."""
    log = log or (lambda message: print(message, file=sys.stderr))
    started = time.monotonic()
    if contexts is not None and contexts not in CONTEXT_MODES:
        raise ArgumentError(("contexts", contexts), f": choose one of {', '.join(CONTEXT_MODES)}")
    if is_milvus(directory):
        from localcr.backends.milvus import build  # pymilvus only when a Milvus index is named

        return build(paths, str(directory), registry, rebuild=rebuild, lexical=lexical, log=log, progress=progress, ray=ray,
                     contexts_from=contexts_from, embedder=embedder, contexts=contexts, llm=llm, chunk_tokens=chunk_tokens,
                     overlap_tokens=overlap_tokens, composition=composition)
    if lexical is not None:
        raise ArgumentError(("lexical", lexical), " is for a Milvus index; a local index analyses text itself")
    directory = Path(directory)
    store.read_marker(directory)  # refuse a foreign directory before the lock file is written into it
    with store.writer_lock(directory):
        marker = store.read_marker(directory)
        store.remove_stale_builds(directory)
        last = store.current_manifest(directory, marker)
        settings = _settings(last, registry, paths, embedder=embedder, contexts=contexts, llm=llm,
                             chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, composition=composition)
        whole = rebuild or contexts_from is not None or not _same_settings(last, settings)
        sound, damaged = ([], {}) if whole else store.check_segments(directory, last)
        for name, problem in damaged.items():
            log(f"warning: segment {name} is damaged ({problem}): rebuilding its documents from the sources")
        stored = {} if whole else store.live_documents(directory, {**last, "segments": sound})
        summary = BuildSummary(directory=directory)
        plan = plan_changes(settings, registry, stored, last, whole, summary, log)
        # Documents not stored are new or were in a damaged segment (whose ids may be unreadable): counted by number.
        summary.restored = min(summary.added, sum(s["documents"] - len(s["dead"]) for s in last.get("segments", [])
                                                  if s["name"] in damaged))
        summary.added -= summary.restored
        docs, gone = plan.docs, plan.gone
        if not docs and not gone and not whole and not damaged:
            summary.documents, summary.chunks = len(plan.kept), last.get("chunks", 0)
            summary.seconds = time.monotonic() - started
            if plan.file_stats != last.get(store.FILE_STATS, {}) or sound != last["segments"]:  # or newer file records
                store.publish(directory, marker, {**last, "segments": sound, store.FILE_STATS: plan.file_stats})
            return summary  # no document changed: no new segment

        segments = [] if whole else [_tombstoned(s, {i: stored[i] for i in gone}) for s in sound]
        made = make_chunks(plan, settings, last, whole, contexts_from, registry, progress, summary, log, ray)
        if docs:
            from localcr.lexical import LexicalIndex, stopwords_of

            language = {d.doc_id: d.language for d in docs}
            lexical = LexicalIndex.build([f"{c.context}\n{c.text}" for c in made.chunks], [language[c.doc_id] for c in made.chunks],
                                         stopwords_of(plan.index_languages))
            segments.append(store.write_segment(directory, docs, made.chunks_by_doc, made.vectors, made.window_rows, lexical))
        manifest = _manifest(settings, made.model, made.context_meta, summary, plan.index_languages, plan.file_stats)
        store.publish(directory, marker, {**manifest, "segments": segments, "documents": sum(s["documents"] for s in segments),
                                          "chunks": sum(s["chunks"] for s in segments)})
        stopwords_changed = set(plan.index_languages) != set(last.get("languages", plan.index_languages))
        if len(segments) > MAX_SEGMENTS or _dead_share(segments) > MAX_DEAD_SHARE or stopwords_changed:
            compact(directory, log=log, locked=True)
        # the live totals, from the manifest (compaction keeps them): no need to open the whole index
        summary.documents = sum(s["documents"] - len(s["dead"]) for s in segments)
        summary.chunks = sum(s["chunks"] - s["dead_chunks"] for s in segments)
        summary.seconds = time.monotonic() - started
        return summary


@dataclass
class Plan:
    """What a run must do, from the files against what the index holds: the documents to (re)index, the ids of
    those gone (changed or removed) and kept, their languages, and the file stats the next run trusts."""

    docs: list[Document]
    kept: set[str]
    gone: set[str]
    index_languages: list[str]
    file_stats: dict


def plan_changes(settings: "_Settings", registry: Registry, stored: dict, last: dict, whole: bool,
                 summary: BuildSummary, log) -> Plan:
    """Read the files that changed (stored: doc_id -> StoredDocument of the index as it is), count what changes in
    the summary, and choose the embedder by the documents' languages when none was named."""
    loaded = _load(settings.sources, log, {doc_id: (d.size, d.mtime) for doc_id, d in stored.items()})
    read = {d.doc_id: d for d in loaded.documents}
    docs = [d for d in loaded.documents if d.doc_id not in stored or stored[d.doc_id].sha != d.sha]
    kept = set(loaded.unchanged) | (read.keys() - {d.doc_id for d in docs})
    gone = {doc_id for doc_id in stored if doc_id not in kept}  # changed (replaced by docs) or removed
    summary.skipped, summary.warnings = loaded.skipped, loaded.warnings
    summary.added = sum(1 for d in docs if d.doc_id not in stored)
    summary.changed = len(docs) - summary.added
    summary.removed = len(gone) - summary.changed
    summary.unchanged = len(kept)
    for doc in docs:
        doc.language = document_language(doc.text, doc.is_code)
    languages = Counter(d.language for d in docs) + Counter(d.language for i, d in stored.items() if i in kept)
    if settings.embedder is None:
        settings.embedder, settings.embedder_choice = choose_embedder(registry, languages)
        settings.embedder.resolve()
        log(f"embedder: {settings.embedder_choice}")
    if warning := embedder_warning(languages, settings.embedder.name, settings.embedder.languages):
        log(f"warning: {warning}")
    # Files read again but unchanged keep their new size and mtime, so the next run need not read them.
    file_stats = {} if whole else {i: s for i, s in last.get(store.FILE_STATS, {}).items() if i in kept}
    file_stats |= {i: [read[i].size, read[i].mtime] for i in kept & read.keys()}  # the ones read now win
    return Plan(docs, kept, gone, sorted(set(last.get("languages", [])) | set(languages)), file_stats)


@dataclass
class Made:
    """The chunks of a plan's documents with their contexts and the vectors of their dense windows."""

    model: object  # the Embedder (loaded even with no document to embed: the manifest records it)
    chunks_by_doc: dict[str, list[Chunk]]
    chunks: list[Chunk]
    vectors: np.ndarray | None
    window_rows: np.ndarray | None
    context_meta: dict


def make_chunks(plan: Plan, settings: "_Settings", last: dict, whole: bool, contexts_from, registry: Registry,
                progress: bool, summary: BuildSummary, log, ray: str | None) -> Made:
    """Chunk, situate and embed the plan's documents, where the settings say (Ray is joined first, so a bad address
    fails before any work)."""
    from localcr.execution import open_executor

    docs = plan.docs
    made = Made(None, {}, [], None, None, last.get("contexts", {"mode": settings.contexts}))
    with open_executor(ray if docs else None, log=log) as executor:
        from localcr.embeddings import Embedder  # imports torch: only once there is work to do

        made.model = Embedder(settings.embedder)
        if docs:
            summary.documents = len(docs)
            made.chunks_by_doc, made.chunks = _chunk(docs, made.model, settings)
            made.context_meta = _add_contexts(docs, made.chunks_by_doc, made.chunks, settings, contexts_from, registry,
                                              progress, summary, log, executor)
            made.vectors, made.window_rows = _embed(made.model, made.chunks, summary, progress, executor)
    if docs and settings.contexts == "llm" and last.get("contexts", {}).get("mode") == "llm" and not whole:
        made.context_meta = _merged_context_meta(last["contexts"], made.context_meta)
    return made


def _same_settings(last: dict, settings: "_Settings") -> bool:
    """Whether a build with these settings can add to the last one: the same embedder (model and files),
    chunk sizes and contexts; anything else and every chunk must be redone (as for an index of no chunks)."""
    if not last.get("chunks"):
        return False
    embedder = settings.embedder
    contexts = last.get("contexts", {})
    return (embedder is not None and last["embedder"]["id"] == f"{embedder.name}:{embedder.fingerprint()}"
            and settings.chunk_tokens == last["chunking"].get("chunk_tokens")
            and settings.overlap_tokens == last["chunking"].get("overlap_tokens")
            and settings.contexts == contexts.get("mode")
            and (settings.contexts != "llm" or (settings.llm in (None, contexts.get("llm"))
                                                and settings.composition == contexts.get("composition"))))


def _merged_context_meta(before: dict, now: dict) -> dict:
    """The LLM context counts of the whole index: the last build's plus this one's."""
    merged = dict(now)
    for key in ("fallbacks", "generated", "cached", "windowed_documents"):
        merged[key] = before.get(key, 0) + now.get(key, 0)
    return merged


def _tombstoned(segment: dict, gone: dict) -> dict:
    """A segment's manifest entry with the documents of it that are gone (changed or removed) added as dead."""
    dead = {doc_id: d.chunks for doc_id, d in gone.items() if d.segment == segment["name"]}
    return {**segment, "dead": sorted(set(segment["dead"]) | dead.keys()), "dead_chunks": segment["dead_chunks"] + sum(dead.values())}


def _dead_share(segments: list[dict]) -> float:
    chunks = sum(s["chunks"] for s in segments)
    return sum(s.get("dead_chunks", 0) for s in segments) / max(chunks, 1)


def compact(directory: str | os.PathLike, *, log=None, locked: bool = False) -> None:
    """Merge every live chunk of the index into one segment (no model is needed: chunks, contexts and vectors
    are copied, the dense graph and BM25 postings rebuilt), published as a new generation. Searches keep
    reading the previous generation until the merged one is switched in; a compaction killed halfway leaves
    the index as it was."""
    directory = Path(directory)
    if not locked:
        with store.writer_lock(directory):
            store.remove_stale_builds(directory)
            return compact(directory, log=log, locked=True)
    marker = store.read_marker(directory)
    if marker is None:
        raise LocalcrError(f"{directory}: empty, not an index yet; build one with `localcr index`")
    reader = store.StoreReader(directory)
    from localcr.lexical import LexicalIndex, stopwords_of

    docs, chunks_by_doc = reader.stored_documents()
    texts_and_languages = [(f"{c.context}\n{c.text}", d.language) for d in docs for c in chunks_by_doc[d.doc_id]]
    vectors, window_rows = reader.live_vectors()
    lexical = LexicalIndex.build([t for t, _ in texts_and_languages], [lang for _, lang in texts_and_languages],
                                 stopwords_of(reader.manifest.get("languages", ["en"])))
    segment = store.write_segment(directory, docs, chunks_by_doc, vectors, window_rows, lexical, shas=reader.document_shas())
    store.publish(directory, marker, {**reader.manifest, "segments": [segment], store.FILE_STATS: {}})  # stats folded in


@dataclass
class _Settings:
    """What a build uses: each setting as given, else as the index was last built with, else the default."""

    sources: list[str] | None
    embedder: ModelSpec | None  # None: chosen by the documents' languages once they are read (choose_embedder)
    embedder_choice: str  # why the embedder was chosen by language ("" when it was named)
    contexts: str
    llm: str | None
    composition: str  # how an LLM context joins the structural one (localcr.contexts.compose)
    chunk_tokens: int | None  # None until the embedder's length gives the default
    overlap_tokens: int | None


def _settings(last: dict, registry: Registry, paths: list[str], *, embedder, contexts, llm, chunk_tokens,
              overlap_tokens, composition) -> _Settings:
    """The build's settings from its arguments and the last manifest; the models they name are resolved
    now, so a missing one fails before any work is done."""
    chunking = last.get("chunking", {})
    contexts = contexts or last.get("contexts", {}).get("mode") or "structural"
    llm = llm or last.get("contexts", {}).get("llm")
    named = embedder or last.get("embedder", {}).get("name")
    spec = registry.require("embedder", named) if named else None
    (spec or registry.require("embedder")).resolve()  # the named one, or the default the choice falls back on
    if contexts == "llm":
        registry.require("llm", llm).resolve()
    return _Settings(
        sources=[str(Path(p).expanduser().resolve()) for p in paths] or last.get("sources"),
        embedder=spec, embedder_choice="" if embedder else last.get("embedder", {}).get("chosen", ""),
        contexts=contexts, llm=llm,
        composition=composition or last.get("contexts", {}).get("composition") or DEFAULT_COMPOSITION,
        chunk_tokens=chunk_tokens or chunking.get("chunk_tokens"),
        overlap_tokens=chunking.get("overlap_tokens") if overlap_tokens is None else overlap_tokens,
    )


def choose_embedder(registry: Registry, languages: dict[str, int]) -> tuple[ModelSpec, str]:
    """The embedder for documents in these languages (code -> number of documents) when none is named: of the
    registry's embedders that declare their languages, the one trained for the languages of the most documents;
    on a tie the default embedder (MiniLM, the best of the two bundled ones in English and on code), else the
    first listed. Returns it and why, in words."""
    default = registry.require("embedder")
    candidates = [spec for spec in registry.models["embedder"].values() if spec.languages]
    if not candidates:
        return default, f"{default.name}, the default (no embedder declares its languages)"
    covered = {}
    for spec in candidates:
        trained_for = languages_of(spec.languages)
        covered[spec.name] = sum(n for language, n in languages.items() if language in trained_for)
    best = max(covered.values())
    tied = [spec for spec in candidates if covered[spec.name] == best]
    spec = default if default in tied else tied[0]
    return spec, (f"{spec.name}, chosen for the documents' languages ({counted(languages)}): trained for {best} "
                  f"of {sum(languages.values())}")


def _load(sources: list[str] | None, log, known: dict[str, tuple[int, int | None]]) -> LoadReport:
    if not sources:
        raise ArgumentError("nothing to index: ", ("paths", []), " names no files or directories and the index records none")
    loaded = load_paths(sources, known=known)
    for warning in loaded.warnings:
        log(f"warning: {warning}")
    if not loaded.documents and not loaded.unchanged:
        raise LocalcrError(f"no indexable documents under {', '.join(sources)}: nothing was changed")
    return loaded


def _chunk(docs: list[Document], model, settings: _Settings) -> tuple[dict[str, list[Chunk]], list[Chunk]]:
    """Every document's chunks (by document, and all in index order), sized for the embedder unless the
    settings say otherwise; fills in the settings' chunk sizes."""
    settings.chunk_tokens = settings.chunk_tokens or default_chunk_tokens(model.max_length)
    if settings.overlap_tokens is None:
        settings.overlap_tokens = settings.chunk_tokens // 8
    if not 0 <= settings.overlap_tokens < settings.chunk_tokens:
        raise ArgumentError(("overlap_tokens", settings.overlap_tokens), " must be below ", ("chunk_tokens", settings.chunk_tokens))
    chunks_by_doc = {}
    for d in docs:
        chunks_by_doc[d.doc_id] = chunk_document(d, model.count_tokens, settings.chunk_tokens, settings.overlap_tokens)
        if d.is_code:  # right after chunking: the parser's cache still holds this document's tree
            d.structure = code_structure(d.text, d.kind)
    chunks = [c for d in docs for c in chunks_by_doc[d.doc_id]]
    if not chunks:
        raise LocalcrError("the documents hold no text to index: nothing was changed")
    return chunks_by_doc, chunks


def _embed(model, chunks: list[Chunk], summary: BuildSummary, progress: bool, executor) -> tuple[np.ndarray, np.ndarray]:
    """The vectors of every chunk's dense windows, and the chunk row of each window."""
    windows = model.windows(chunks)
    summary.windows = len(windows)
    label = f"embedding {_count(summary.documents, 'document')}, {_count(len(chunks), 'chunk')}"  # a file may hold many
    with tqdm(total=len(windows), desc=label, unit="emb", disable=not progress, file=sys.stderr) as bar:
        vectors, summary.embedded = executor.embed(model, [w.text for w in windows], progress=bar.update)
    return vectors, np.array([w.chunk_row for w in windows], dtype=np.int64)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _manifest(settings: _Settings, model, context_meta: dict, summary: BuildSummary, languages: list[str],
              file_stats: dict) -> dict:
    """What a build records of itself, wherever the index lives (the local store adds its segments)."""
    return {
        "languages": languages, store.FILE_STATS: file_stats,
        "localcr": localcr.__version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sources": settings.sources,
        "embedder": {"name": settings.embedder.name, "id": model.id, "dimension": model.dimension, "max_length": model.max_length,
                     "chosen": settings.embedder_choice},
        "chunking": {"chunk_tokens": settings.chunk_tokens, "overlap_tokens": settings.overlap_tokens},
        "contexts": context_meta,
        "skipped": [{"path": s.path, "reason": s.reason} for s in summary.skipped],
    }


def default_chunk_tokens(max_length: int) -> int:
    """Chunks leave a quarter of the embedder's window for the context, so chunk + context embed as one window."""
    return max(32, int(max_length * 0.75) - 2)


def _add_contexts(docs, chunks_by_doc, chunks, settings, contexts_from, registry, progress, summary, log, executor) -> dict:
    """Fill every chunk's context. Structural contexts come first: they are the LLM's fallback, and
    `contexts.compose` decides how an LLM context joins them."""
    meta: dict = {"mode": settings.contexts}
    if settings.contexts != "none":
        for doc in docs:
            structural_contexts(doc, chunks_by_doc[doc.doc_id])
    if settings.contexts == "llm":
        spec = registry.require("llm", settings.llm)
        stats = executor.write_contexts(docs, chunks_by_doc, spec, composition=settings.composition, progress=progress, log=log)
        summary.context_summary = stats.summary()
        meta.update(llm=spec.name, llm_id=spec.fingerprint(), composition=settings.composition, fallbacks=stats.fallbacks,
                    generated=stats.generated, cached=stats.cached, windowed_documents=stats.windowed_documents)
    if contexts_from:
        from localcr.contexts import load_contexts_file

        meta["imported"] = load_contexts_file(contexts_from, chunks)
        meta["imported_from"] = str(contexts_from)
    return meta
