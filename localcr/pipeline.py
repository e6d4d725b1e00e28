"""What every build does, whatever holds the index (the local store, localcr.index; a Milvus collection,
localcr.backends.milvus): the settings a build uses, which documents changed, and the chunks, contexts and
embeddings of those that did; the manifest that records how it was built.

Expensive work (embeddings, LLM contexts and cards) is cached by content, so the next run after a kill, or after a
change to a few files, redoes only what is new.
"""
from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from tqdm import tqdm

import localcr
from localcr import store
from localcr.chunking import chunk_document
from localcr.contexts import DEFAULT_COMPOSITION
from localcr.documents import Chunk, Document, LoadReport, Skipped, load_paths
from localcr.errors import ArgumentError, LocalcrError
from localcr.language import counted, document_language, embedder_warning, languages_of
from localcr.models import ModelSpec, Registry
from localcr.parsing.code import label as code_structure
from localcr.structure import structural_contexts


# What situates each chunk, by cost (README, "Contexts: tiers by cost"): the document's structure (free); a card,
# one LLM sentence per document, joined to it ("cards" for every document; "auto" only for long prose that
# names no subject: no title, no heading); a context the LLM writes for every chunk ("llm"), with cards too
# ("cards+llm"); nothing.
CONTEXT_MODES = ("auto", "structural", "cards", "llm", "cards+llm", "none")
DEFAULT_CONTEXTS = "auto"  # README, "Contexts: tiers by cost": the same contexts as structural on code and prose
CARD_MODES = ("auto", "cards", "cards+llm")
LLM_MODES = ("cards", "llm", "cards+llm")  # the modes that need the LLM whatever the documents ("auto" may not)


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
    card_summary: str = ""

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
        if self.card_summary:
            lines.append("  " + self.card_summary)
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
    if docs and not whole and last.get("contexts", {}).get("mode") == settings.contexts:
        made.context_meta = _merged_context_meta(last["contexts"], made.context_meta)
    return made


def same_settings(last: dict, settings: "_Settings") -> bool:
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
            and (settings.contexts not in (*LLM_MODES, "auto") or settings.llm in (None, contexts.get("llm")))
            and (settings.contexts not in ("llm", "cards+llm") or settings.composition == contexts.get("composition")))


def _merged_context_meta(before: dict, now: dict) -> dict:
    """The LLM context counts of the whole index: the last build's plus this one's."""
    merged = dict(now)
    for key in ("fallbacks", "generated", "cached", "windowed_documents"):
        if key in before or key in now:
            merged[key] = before.get(key, 0) + now.get(key, 0)
    if "cards" in before or "cards" in now:
        merged["cards"] = merged_card_meta(before.get("cards", {}), now.get("cards", {}))
    return merged


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


def resolve_settings(last: dict, registry: Registry, paths: list[str], *, embedder, contexts, llm, chunk_tokens,
              overlap_tokens, composition) -> _Settings:
    """The build's settings from its arguments and the last manifest; the models they name are resolved
    now, so a missing one fails before any work is done."""
    chunking = last.get("chunking", {})
    contexts = contexts or last.get("contexts", {}).get("mode") or DEFAULT_CONTEXTS
    llm = llm or last.get("contexts", {}).get("llm")
    named = embedder or last.get("embedder", {}).get("name")
    spec = registry.require("embedder", named) if named else None
    (spec or registry.require("embedder")).resolve()  # the named one, or the default the choice falls back on
    if contexts in LLM_MODES:
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


def manifest_of(settings: _Settings, model, context_meta: dict, summary: BuildSummary, languages: list[str],
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
    if settings.contexts in CARD_MODES:
        meta.update(_add_cards(docs, settings, registry, progress, summary, log))
    if settings.contexts != "none":
        for doc in docs:
            structural_contexts(doc, chunks_by_doc[doc.doc_id])
    if settings.contexts in ("llm", "cards+llm"):
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


def _add_cards(docs, settings, registry, progress, summary, log) -> dict:
    """Give documents their cards (every one, or in "auto" mode those that wants_card picks); the manifest's
    record of them. The model is loaded only when a card is missing from the cache."""
    from localcr.contexts.cards import CardStats, write_cards, wants_card

    chosen = docs if settings.contexts != "auto" else [d for d in docs if wants_card(d)]
    stats = CardStats()
    if not chosen:
        return {"cards": stats.meta()}
    try:
        spec = registry.require("llm", settings.llm)
        spec.resolve()
    except LocalcrError as exc:
        if settings.contexts != "auto":
            raise
        log(f"warning: no cards for {_count(len(chosen), 'long document')} without a title: {exc}")
        return {"cards": stats.meta()}
    cards = write_cards(chosen, spec, progress=progress, log=log, stats=stats)
    for doc in chosen:
        doc.card = cards.get(doc.doc_id, "")
    summary.card_summary = stats.summary()
    return {"llm": spec.name, "llm_id": spec.fingerprint(), "cards": stats.meta()}


def merged_card_meta(before: dict, now: dict) -> dict:
    """The card counts of the whole index: the last build's plus this one's."""
    merged = {key: before.get(key, 0) + now.get(key, 0) for key in ("documents", "cached", "written", "fallbacks")}
    reasons = Counter(before.get("fallback_reasons", {})) + Counter(now.get("fallback_reasons", {}))
    return {**merged, "fallback_reasons": dict(reasons)}
