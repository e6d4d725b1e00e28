"""What every build does, whatever holds the index (the local store, localcr.index; a Milvus collection,
localcr.backends.milvus): the settings a build uses, which documents changed, and the chunks, contexts and
embeddings of those that did; the manifest that records how it was built.

Expensive work (embeddings, LLM contexts and cards) is cached by content, so the next run after a kill, or after a
change to a few files, redoes only what is new.
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np
from tqdm import tqdm

import localcr
from localcr import store
from localcr.chunking import chunk_document
from localcr.contexts.modes import CARD_MODES, DEFAULT_CONTEXTS, LLM_MODES
from localcr.contexts.run import DEFAULT_COMPOSITION
from localcr.documents import LONG_PROSE, Chunk, Document, LoadReport, Skipped, load_paths
from localcr.errors import ArgumentError, LocalcrError
from localcr.language import counted, detected, document_language, embedder_warning, languages_of, settled
from localcr.models import ModelSpec, Registry
from localcr.parsing.code import label as code_structure
from localcr.structure import structural_contexts


# Long untitled prose (Document.is_long_untitled_prose: a filing, a report's text layer) is chunked this many times
# larger than other documents when no chunk size is given. Measured on financebench-dev (BENCHMARKS.md, "Why the
# retrieval defaults are what they are"): at the same characters shown, twice the size finds more of the gold passages.
LONG_PROSE_FACTOR = 2
# Said by a build that writes its cards and LLM contexts before its index (make_chunks without `staged`): a Milvus
# collection is published whole, and committing improved documents as they come is the local store's alone so far.
UNSTAGED = ("note: this index answers once every card and LLM context is written: a Milvus collection is published "
            "whole (only a local index commits documents as their cards and contexts come)")


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
    waiting: int = 0  # unchanged documents read again for their cards or LLM contexts (left by a kill, or an upgrade)
    unembedded: int = 0  # unchanged documents a killed run committed without their vectors, embedded now
    skipped: list[Skipped] = field(default_factory=list)
    embedded: int = 0  # windows embedded now; the rest came from the cache
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    context_summary: str = ""
    card_summary: str = ""
    coverage: str = ""  # how far the index's cards and LLM contexts are (coverage_text)

    def text(self) -> str:
        lines = [
            f"indexed {self.documents} documents, {self.chunks} chunks into {self.directory} in {self.seconds:.1f} s",
            f"  documents: {self.added} new, {self.changed} changed, {self.removed} removed, {self.unchanged} unchanged"
            + (f", {self.restored} restored from the sources (damaged segment)" if self.restored else "")
            + (f"; {self.waiting} read again for their cards or LLM contexts" if self.waiting else "")
            + (f"; {self.unembedded} waiting for their vectors" if self.unembedded else "")
            + ("" if self.added + self.changed + self.removed + self.restored + self.waiting + self.unembedded
               else " (nothing to do)"),
            f"  embeddings: {self.embedded} computed, {self.windows - self.embedded} from cache",
        ]
        if self.skipped:
            lines.append("  " + _skipped_line(self.skipped))
        if self.card_summary:
            lines.append("  " + self.card_summary)
        if self.context_summary:
            lines.append("  " + self.context_summary.replace("\n", "\n  "))
        if self.coverage:
            lines.append("  coverage: " + self.coverage)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """`localcr index --json`: what text() says, its counts as numbers (the fields: docs/commands.md)."""
        return {"index": str(self.directory), "documents": self.documents, "chunks": self.chunks,
                "seconds": round(self.seconds, 3), "added": self.added, "changed": self.changed, "removed": self.removed,
                "unchanged": self.unchanged, "restored": self.restored, "waiting": self.waiting,
                "unembedded": self.unembedded, "windows": self.windows, "embedded": self.embedded,
                "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped], "warnings": list(self.warnings),
                "cards": self.card_summary, "contexts": self.context_summary, "coverage": self.coverage}


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
    improve: list[Document] = field(default_factory=list)  # unchanged, still waiting for their cards or LLM contexts
    unembedded: set[str] = field(default_factory=set)  # unchanged, in the index without their vectors (a killed run's)


def plan_changes(settings: "_Settings", registry: Registry, stored: dict, last: dict, whole: bool,
                 summary: BuildSummary, log, upgrade: bool = False) -> Plan:
    """Read the files that changed (stored: doc_id -> StoredDocument of the index as it is), count what changes in
    the summary, and choose the embedder by the documents' languages when none was named. The documents a killed
    run left waiting for their cards or LLM contexts (Coverage.pending), or every one for an upgrade (see
    upgrades_in_place), are read again, to be improved; those it committed without their vectors
    (Coverage.unembedded) are embedded from the chunks the index holds, not read again."""
    pending = set(stored) if upgrade else set(last.get("contexts", {}).get("pending", [])) & stored.keys()
    loaded = _load(settings.sources, log, {doc_id: (d.size, d.mtime) for doc_id, d in stored.items() if doc_id not in pending},
                   last.get("skipped", []))
    read = {d.doc_id: d for d in loaded.documents}
    docs = [d for d in loaded.documents if d.doc_id not in stored or stored[d.doc_id].sha != d.sha]
    improve = [read[i] for i in sorted(pending & read.keys()) if stored[i].sha == read[i].sha]
    kept = set(loaded.unchanged) | (read.keys() - {d.doc_id for d in docs})
    gone = {doc_id for doc_id in stored if doc_id not in kept}  # changed (replaced by docs) or removed
    summary.skipped, summary.warnings = loaded.skipped, loaded.warnings
    summary.added = sum(1 for d in docs if d.doc_id not in stored)
    summary.changed = len(docs) - summary.added
    summary.removed = len(gone) - summary.changed
    summary.unchanged = len(kept)
    summary.waiting = len(improve)
    unembedded = set(last.get("contexts", {}).get("unembedded", [])) & kept
    summary.unembedded = len(unembedded - pending)
    reading = {d.doc_id: d for d in docs + improve}
    found = {i: d.language for i, d in stored.items() if i in kept and i not in reading}  # the languages of before
    found |= {i: document_language(d.text, d.is_code, d.kind) for i, d in reading.items()}
    for doc_id, language in settled(found).items():
        if doc_id in reading:
            reading[doc_id].language = language
    languages = Counter(d.language for d in docs) + Counter(d.language for i, d in stored.items() if i in kept)
    if settings.embedder is None:
        settings.embedder, settings.embedder_choice = choose_embedder(registry, detected(languages))
        settings.embedder.resolve()
        log(f"embedder: {settings.embedder_choice}")
    if warning := embedder_warning(languages, settings.embedder.name, settings.embedder.languages):
        log(f"warning: {warning}")
    # Files read again but unchanged keep their new size and mtime, so the next run need not read them.
    file_stats = {} if whole else {i: s for i, s in last.get(store.FILE_STATS, {}).items() if i in kept}
    file_stats |= {i: [read[i].size, read[i].mtime] for i in kept & read.keys()}  # the ones read now win
    return Plan(docs, kept, gone, sorted(set(last.get("languages", [])) | set(languages)), file_stats, improve, unembedded)


@dataclass
class Made:
    """The chunks of a plan's documents with their contexts and the vectors of their dense windows; in a staged
    build, the documents whose cards or LLM contexts are still to be written (with their chunks, those of the
    plan's `improve` documents too) and what the index's contexts cover."""

    model: object  # the Embedder (loaded even with no document to embed: the manifest records it)
    chunks_by_doc: dict[str, list[Chunk]]
    chunks: list[Chunk]
    vectors: np.ndarray | None
    window_rows: np.ndarray | None
    contexts_before: dict  # the last build's record of contexts, where this run adds to it
    contexts_now: dict  # this run's (localcr.contexts' counts are added to it as the work is done)
    coverage: "Coverage | None" = None  # a staged build's
    card_stats: object = None  # CardStats of this run's cards
    context_stats: object = None  # ContextStats of this run's LLM contexts
    needs_card: list[Document] = field(default_factory=list)
    needs_llm: list[Document] = field(default_factory=list)
    card_fallbacks: set[str] = field(default_factory=set)  # this run's documents whose cached card the guard rejected

    @property
    def context_meta(self) -> dict:
        """The manifest's record of the index's contexts as far as they are now."""
        now = dict(self.contexts_now)
        if self.card_stats is not None:
            now["cards"] = self.card_stats.meta()
        if self.context_stats is not None:
            now.update(fallbacks=self.context_stats.fallbacks, generated=self.context_stats.generated,
                       cached=self.context_stats.cached, windowed_documents=self.context_stats.windowed_documents)
        judged = self.card_stats.judged if self.card_stats is not None else set()
        meta = _merged_context_meta(self.contexts_before, now, judged) if self.contexts_before else now
        return meta | (self.coverage.record() if self.coverage else {})


def make_chunks(plan: Plan, settings: "_Settings", last: dict, whole: bool, contexts_from, registry: Registry,
                progress: bool, summary: BuildSummary, log, ray: str | None, staged=None) -> Made:
    """Chunk, situate and embed the plan's documents, where the settings say (Ray is joined first, so a bad address
    fails before any work).

    staged: a build that is searchable before its models are done passes what commits documents to its index (an
    object with commit(docs, made, vectors, window_rows) and stored(doc_ids), localcr.index's). The chunks are
    then situated with what costs no model (structure, the cards and LLM contexts the cache holds) and committed
    at once for the lexical leg, without vectors (seconds: a search answers from BM25 from then on);
    complete_index then embeds them and writes the missing cards and LLM contexts, every window once, each batch
    of documents committed as it is done, while the executor is still open."""
    from localcr.execution import open_executor

    docs = plan.docs
    before = last.get("contexts", {}) if not whole and last.get("contexts", {}).get("mode") == settings.contexts else {}
    made = Made(None, {}, [], None, None, before, {"mode": settings.contexts})
    with open_executor(ray if docs or plan.improve or plan.unembedded else None, log=log) as executor:
        from localcr.embeddings import Embedder  # imports torch: only once there is work to do

        made.model = Embedder(settings.embedder)
        if docs:
            summary.documents = len(docs)
            made.chunks_by_doc, made.chunks = _chunk(docs, made.model, settings)
            later = staged is not None and not contexts_from  # imported contexts are final: no card may replace them
            made.contexts_now = _add_contexts(docs, made, settings, contexts_from, registry, progress, summary, log,
                                              executor, later, "" if staged is not None else UNSTAGED)
            if staged is None:
                made.vectors, made.window_rows = _embed(made.model, made.chunks, summary, progress, executor)
        if staged is not None:
            made.coverage = Coverage.carried({} if whole else last.get("contexts", {}), plan.kept, docs, made)
            if plan.improve:
                _chunk_improved(plan.improve, made, settings, registry)
            waiting = {d.doc_id for d in made.needs_card + made.needs_llm}
            stored_docs, stored_chunks = staged.stored(plan.unembedded - waiting)  # their chunks as committed
            made.chunks_by_doc.update(stored_chunks)
            made.coverage.unembedded |= {d.doc_id for d in docs}
            staged.commit(docs, made, *_no_vectors(made.model))
            ready = [d for d in docs if d.doc_id not in waiting] + stored_docs
            complete_index(made, ready, settings, registry, executor, staged, progress, summary, log)
    return made


def _no_vectors(model) -> tuple[np.ndarray, np.ndarray]:
    """What a commit for the lexical leg alone writes as its documents' vectors and their windows' chunk rows."""
    return np.zeros((0, model.dimension), dtype=np.float32), np.zeros(0, dtype=np.int64)


# How often a staged build commits documents: when the time since its last commit is at least this many times what
# that commit took (writing its segment, publishing, compacting: not embedding, which every chunk needs once however
# they are batched), so commits cost at most a tenth of the run; the first document of each stage is committed at
# once. Measured in BENCHMARKS.md ("Indexing").
COMMIT_SPACING = 9
# Documents are embedded in groups of at least this many chunks (a long filing is a group of its own), so short
# documents still fill the embedder's batches.
EMBED_GROUP_CHUNKS = 256


@dataclass
class Coverage:
    """How far a staged build's index is, kept in its manifest: the documents still waiting for their cards or
    LLM contexts (what `localcr stats` reports and the next run improves after a kill), those committed without
    their vectors yet (only the lexical leg finds them; the next run embeds them from the index), those whose
    chunks hold a card, and those whose card the guard rejected (they keep their structural contexts)."""

    pending: set[str]
    carded: set[str]
    card_fallbacks: set[str]
    unembedded: set[str] = field(default_factory=set)
    seconds_each: float | None = None  # a waiting document's cards and LLM contexts, as this run or the last wrote them

    @classmethod
    def carried(cls, before: dict, kept: set[str], docs: list[Document], made: Made) -> "Coverage":
        """The last build's coverage of the documents it keeps, and this run's of the documents it (re)indexes."""
        coverage = cls(*(set(before.get(key, [])) & kept for key in ("pending", "carded", "card_fallbacks", "unembedded")),
                       before.get("seconds_each"))
        waiting = {d.doc_id for d in made.needs_card + made.needs_llm}
        coverage.pending |= waiting
        coverage.carded |= {d.doc_id for d in docs if d.card}
        coverage.card_fallbacks |= made.card_fallbacks
        return coverage

    def record(self) -> dict:
        return {"pending": sorted(self.pending), "carded": sorted(self.carded), "card_fallbacks": sorted(self.card_fallbacks),
                "unembedded": sorted(self.unembedded),
                **({"seconds_each": round(self.seconds_each, 1)} if self.seconds_each else {})}


def coverage_text(contexts: dict, llm_chunks: int | None = None, chunks: int | None = None,
                  dense: tuple[int, int] | None = None) -> str:
    """What `localcr stats`, the served index's health and the build summary say of how far an index is: while
    vectors are missing, each leg's share of the chunks (dense: (chunks embedded, live chunks), where known); the
    documents with cards, the chunks with LLM contexts (when counted: `localcr stats` counts them in the index), of
    how many, and what remains by the estimate; "" where nothing is or was missing."""
    mode = contexts.get("mode")
    carded, fallbacks, pending = (len(contexts.get(key, [])) for key in ("carded", "card_fallbacks", "pending"))
    waiting = len(set(contexts.get("pending", [])) | set(contexts.get("unembedded", [])))
    parts = []
    if dense is not None and dense[0] < dense[1]:
        parts.append(f"lexical 100%, dense {store.embedded_share(*dense)} ({dense[0]} of {dense[1]} chunks embedded)")
    if mode in CARD_MODES and (carded + fallbacks + pending or mode != "auto"):
        parts.append(f"cards in {carded} of {carded + fallbacks + pending} documents that want one"
                     + (f" ({fallbacks} rejected by the guard)" if fallbacks else ""))
    if mode in ("llm", "cards+llm") and llm_chunks is not None:
        parts.append(f"LLM contexts in {llm_chunks} of {chunks} chunks")
    if waiting:
        each = contexts.get("seconds_each")
        left = f", about {_duration(pending * each)} by the last run's pace" if each and pending else ""
        parts.append(f"{_count(waiting, 'document')} still waiting{left}; `localcr index` goes on where it stopped")
    elif parts:
        parts.append("complete")
    return "; ".join(parts)


def _duration(seconds: float) -> str:
    from localcr.contexts.run import _duration as duration

    return duration(seconds)


def _chunk_improved(docs: list[Document], made: Made, settings: "_Settings", registry: Registry) -> None:
    """Chunk the documents a killed run left waiting, or an upgrade reads again (they are in the index with
    structural contexts), to be improved: their cards and LLM contexts are written (the cache has those written
    before a kill); those the mode gives nothing more are left as the index holds them."""
    chunks_by_doc, _ = _chunk(docs, made.model, settings)
    made.chunks_by_doc.update(chunks_by_doc)
    for doc in docs:
        structural_contexts(doc, chunks_by_doc[doc.doc_id])
    needs_card, needs_llm = [], []
    if settings.contexts in CARD_MODES:
        from localcr.contexts.cards import CardStats

        made.card_stats = made.card_stats or CardStats()
        needs_card = _wanting_cards(docs, settings)
    if settings.contexts in ("llm", "cards+llm"):
        from localcr.contexts import ContextStats

        made.context_stats = made.context_stats or ContextStats()
        needs_llm = docs
        made.contexts_now.update(_llm_meta(registry.require("llm", settings.llm), settings, made.context_stats))
    made.needs_card += needs_card
    made.needs_llm += needs_llm
    waiting = {d.doc_id for d in needs_card + needs_llm}
    made.coverage.pending = (made.coverage.pending - {d.doc_id for d in docs}) | waiting  # the others keep their chunks


class _Batches:
    """Documents committed a batch at a time, as COMMIT_SPACING paces: with their vectors (dense: embedded as they
    are added, once their contexts are final), or for the lexical leg alone (a card is in, the vectors will come)."""

    def __init__(self, made: Made, executor, commits, summary: BuildSummary, dense: bool = True,
                 worked: Callable[[], int] | None = None):
        self.made, self.executor, self.commits, self.summary, self.dense = made, executor, commits, summary, dense
        self.worked = worked  # documents the LLM worked on so far (not all cached), for the pace of what waits
        self.ready: list[Document] = []
        self.vectors: list[np.ndarray] = []
        self.window_rows: list[np.ndarray] = []
        self.done: set[str] = set()  # documents that wait for nothing more once committed
        self.last_end, self.last_cost, self.count = time.monotonic(), 0.0, 0
        self.started = time.monotonic()
        self.seconds = 0.0  # spent committing
        self.progress = None  # called with each embedded batch's size
        self.computed = [0, 0.0, 0, 0]  # windows computed, their seconds, windows and chunks: the embedder's pace

    def add(self, docs: list[Document], finished: bool) -> None:
        if self.dense:
            made = self.made
            chunks = [c for d in docs for c in made.chunks_by_doc[d.doc_id]]
            windows = made.model.windows(chunks)
            began = time.monotonic()
            vectors, computed = self.executor.embed(made.model, [w.text for w in windows], progress=self.progress)
            for i, value in enumerate((computed, time.monotonic() - began, len(windows), len(chunks))):
                self.computed[i] += value
            self.summary.windows += len(windows)
            self.summary.embedded += computed
            before = sum(len(made.chunks_by_doc[d.doc_id]) for d in self.ready)
            self.vectors.append(vectors)
            self.window_rows.append(np.array([w.chunk_row + before for w in windows], dtype=np.int64))
        self.ready += docs
        if finished:
            self.done |= {d.doc_id for d in docs}
        if self.count == 0 or time.monotonic() - self.last_end >= COMMIT_SPACING * self.last_cost:
            self.flush()

    def flush(self) -> None:
        if not self.ready:
            return
        made, ready, coverage = self.made, self.ready, self.made.coverage
        ids = {d.doc_id for d in ready}
        coverage.pending -= ids & self.done
        if self.dense:
            coverage.unembedded -= ids
            vectors, window_rows = np.concatenate(self.vectors), np.concatenate(self.window_rows)
        else:
            coverage.unembedded |= ids
            vectors, window_rows = _no_vectors(made.model)
        worked = self.worked() if self.worked else 0
        if worked:
            coverage.seconds_each = (time.monotonic() - self.started) / worked
        started = time.monotonic()  # embedding is no cost of committing often: the chunks are embedded once anyway
        self.commits.commit(ready, made, vectors, window_rows)
        self.ready, self.vectors, self.window_rows, self.count = [], [], [], self.count + 1
        self.last_end = time.monotonic()
        self.last_cost = self.last_end - started
        self.seconds += self.last_cost


def _embed_all(docs: list[Document], batches: _Batches, progress: bool, log) -> None:
    """Embed these documents, whose contexts are final, and commit them as batches paces: in groups of at least
    EMBED_GROUP_CHUNKS chunks, under one progress bar of their windows, counted before it starts (a total of chunks
    that grew to windows as they came had 28 filings' bar at 10,927 and then 19,883, its time left half of what
    remained). Says first how long it will take, at this machine's last pace, when that is more than a few seconds."""
    if not docs:
        return
    model, chunks_by_doc = batches.made.model, batches.made.chunks_by_doc
    chunks = sum(len(chunks_by_doc[d.doc_id]) for d in docs)
    windows = model.count_windows([c for d in docs for c in chunks_by_doc[d.doc_id]])
    label = f"embedding {_count(len(docs), 'document')}, {_count(chunks, 'chunk')}"
    if (rate := model.recorded_rate()) is not None and (seconds := windows / rate[0]) >= 30:
        log(f"{label}: about {_duration(seconds)} at this machine's last pace ({rate[0]:.0f} windows/s, had nothing "
            "come from the cache); the index answers lexically meanwhile")
    with tqdm(total=windows, desc=label, unit="emb", disable=not progress, file=sys.stderr) as bar:
        batches.progress = bar.update
        group: list[Document] = []
        for i, doc in enumerate(docs):
            group.append(doc)
            if sum(len(chunks_by_doc[d.doc_id]) for d in group) >= EMBED_GROUP_CHUNKS or i == len(docs) - 1:
                batches.add(group, finished=True)
                group = []
        batches.flush()
        batches.progress = None
    model.record_rate(*batches.computed)


def complete_index(made: Made, ready: list[Document], settings: "_Settings", registry: Registry, executor, commits,
                   progress: bool, summary: BuildSummary, log) -> None:
    """After the lexical commit, embed every window once, with its final context: first the documents that wait for
    nothing more (`ready`: no card or LLM context coming, or left without vectors by a killed run); then the cards,
    each document committed at once for the lexical leg (its card searchable before its vectors), then those
    documents embedded; then the LLM contexts, a document at a time, each embedded and committed once they are in.
    A killed run keeps every batch committed; the next one goes on with what still waits (Coverage)."""
    _embed_all(ready, _Batches(made, executor, commits, summary), progress, log)
    if not made.needs_card and not made.needs_llm:
        return
    from localcr.contexts.cards import write_cards

    spec = registry.require("llm", settings.llm)
    waiting_llm = {d.doc_id for d in made.needs_llm}
    if made.needs_card:
        lexical = _Batches(made, executor, commits, summary, dense=False, worked=lambda: made.card_stats.written)

        def carded(doc: Document, card: str | None) -> None:
            doc.card = card or ""
            (made.coverage.carded if card else made.coverage.card_fallbacks).add(doc.doc_id)
            structural_contexts(doc, made.chunks_by_doc[doc.doc_id])
            lexical.add([doc], finished=doc.doc_id not in waiting_llm)

        made.contexts_now.update(llm=spec.name, llm_id=spec.fingerprint())
        write_cards(made.needs_card, spec, progress=progress, log=log, stats=made.card_stats, on_card=carded)
        made.card_stats.seconds -= lexical.seconds  # the cards' own time, not the commits made between them
        lexical.flush()
        summary.card_summary = made.card_stats.summary()
        _embed_all([d for d in made.needs_card if d.doc_id not in waiting_llm], _Batches(made, executor, commits, summary),
                   progress, log)
    # One call per document, so each is embedded and committed as soon as it is done; an executor that spreads
    # documents over workers (Ray's actors) gets them all in one call, or all but one worker would wait.
    llm_documents = [0]
    batches = _Batches(made, executor, commits, summary, worked=lambda: llm_documents[0])
    groups = [made.needs_llm] if executor.spreads_documents else [[doc] for doc in made.needs_llm]
    for group in groups:
        for doc in group:  # what the LLM's context joins (cached ones were applied on it before)
            structural_contexts(doc, made.chunks_by_doc[doc.doc_id])
        stats = executor.write_contexts(group, {d.doc_id: made.chunks_by_doc[d.doc_id] for d in group}, spec,
                                        composition=settings.composition, progress=progress, log=log)
        _add_stats(made.context_stats, stats)
        llm_documents[0] += len(group) if stats.generated > 0 else 0
        batches.add(group, finished=True)
    batches.flush()
    if made.needs_llm:
        summary.context_summary = made.context_stats.summary()


def _add_stats(total, stats) -> None:
    """Add one call's ContextStats to a run's."""
    for name, value in vars(stats).items():
        if isinstance(value, dict):
            for reason, n in value.items():
                total.fallback_reasons[reason] = total.fallback_reasons.get(reason, 0) + n
        else:
            setattr(total, name, getattr(total, name) + value)


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
            and settings.long_prose_tokens == long_prose_tokens_of(last["chunking"])
            and settings.contexts == contexts.get("mode")
            and (settings.contexts not in (*LLM_MODES, "auto") or settings.llm in (None, contexts.get("llm")))
            and (settings.contexts not in ("llm", "cards+llm") or settings.composition == contexts.get("composition")))


def upgrades_in_place(last: dict, settings: "_Settings") -> bool:
    """Whether a build can keep the last one's chunks and vectors and improve its documents in place: the last
    one had no LLM work beyond cards (structural, or auto), this one adds some (more cards, LLM contexts), and
    nothing else changed. Every mode's contexts start from the structural ones, so a document this mode gives
    nothing more keeps its chunks as they are; the others are committed again as their cards and contexts come."""
    before = last.get("contexts", {}).get("mode")
    if before not in ("structural", "auto") or settings.contexts in (before, "structural", "none"):
        return False
    return same_settings({**last, "contexts": {"mode": settings.contexts, "llm": settings.llm,
                                               "composition": settings.composition}}, settings)


def _merged_context_meta(before: dict, now: dict, judged: set[str]) -> dict:
    """The LLM context counts of the whole index: the last build's plus this one's (judged: the documents whose
    cards this build judged)."""
    merged = {**before, **now}
    for key in ("fallbacks", "generated", "cached", "windowed_documents"):
        if key in before or key in now:
            merged[key] = before.get(key, 0) + now.get(key, 0)
    if "cards" in before or "cards" in now:
        merged["cards"] = merged_card_meta(before.get("cards", {}), now.get("cards", {}), judged)
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
    long_prose_tokens: int | None  # the chunk size of long untitled prose; None until chunk_tokens gives the default


def resolve_settings(last: dict, registry: Registry, paths: list[str], *, embedder, contexts, llm, chunk_tokens,
              overlap_tokens, composition, rebuild: bool = False) -> _Settings:
    """The build's settings from its arguments and the last manifest; the models they name are resolved
    now, so a missing one fails before any work is done. rebuild: settings the last manifest never recorded take
    today's defaults (a rebuild is when an old index adopts them)."""
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
        long_prose_tokens=chunk_tokens or long_prose_tokens_of(chunking, rebuild),
    )


def long_prose_tokens_of(chunking: dict, rebuild: bool = False) -> int | None:
    """The long-prose chunk size an index was built with: an index from before there was one chunked every
    document alike, and keeps doing so when brought up to date (its chunks, contexts and vectors stay valid) until
    it is rebuilt; a new index, or an old one rebuilt, has none yet (None: the default)."""
    return chunking.get("long_prose_tokens", None if rebuild else chunking.get("chunk_tokens"))


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


def _load(sources: list[str] | None, log, known: dict[str, tuple[int, int | None]],
          skipped_before: list[dict]) -> LoadReport:
    """The files under the sources, read where they changed; each warning logged, but those of files the last build
    skipped for the same reason only counted (a re-index of a folder of 14 broken files would repeat 14 lines)."""
    if not sources:
        raise ArgumentError("nothing to index: ", ("paths", []), " names no files or directories and the index records none")
    loaded = load_paths(sources, known=known)
    before = {(s["path"], s["reason"]) for s in skipped_before}
    repeated = {f"{s.path}: {s.reason}, skipped" for s in loaded.skipped if (s.path, s.reason) in before}
    for warning in loaded.warnings:
        if warning not in repeated:
            log(f"warning: {warning}")
    if said := sum(1 for warning in loaded.warnings if warning in repeated):
        log(f"{_count(said, 'file')} skipped before, still skipped: localcr stats --skipped")
    if not loaded.documents and not loaded.unchanged:
        raise LocalcrError(f"no indexable documents under {', '.join(sources)}: nothing was changed")
    return loaded


def _chunk(docs: list[Document], model, settings: _Settings) -> tuple[dict[str, list[Chunk]], list[Chunk]]:
    """Every document's chunks (by document, and all in index order), sized for the embedder unless the
    settings say otherwise (long untitled prose LONG_PROSE_FACTOR times larger); fills in the settings' chunk sizes."""
    settings.chunk_tokens = settings.chunk_tokens or default_chunk_tokens(model.max_length)
    settings.long_prose_tokens = settings.long_prose_tokens or LONG_PROSE_FACTOR * settings.chunk_tokens
    if settings.overlap_tokens is None:
        settings.overlap_tokens = settings.chunk_tokens // 8
    if not 0 <= settings.overlap_tokens < settings.chunk_tokens:
        raise ArgumentError(("overlap_tokens", settings.overlap_tokens), " must be below ", ("chunk_tokens", settings.chunk_tokens))
    # The default overlap is an eighth of each chunk size; a given one is the same for both.
    default_overlap = settings.overlap_tokens == settings.chunk_tokens // 8
    long_overlap = settings.long_prose_tokens // 8 if default_overlap else settings.overlap_tokens
    chunks_by_doc = {}
    for d in docs:
        size, overlap = ((settings.long_prose_tokens, long_overlap) if d.is_long_untitled_prose
                         else (settings.chunk_tokens, settings.overlap_tokens))
        chunks_by_doc[d.doc_id] = chunk_document(d, model.count_tokens, size, overlap)
        if d.is_code:  # right after chunking: the parser's cache still holds this document's tree
            d.structure = code_structure(d.text, d.kind)
        elif d.is_long_untitled_prose:  # what search's fusion asks of each candidate's document
            d.structure = LONG_PROSE
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
        "chunking": {"chunk_tokens": settings.chunk_tokens, "overlap_tokens": settings.overlap_tokens,
                     "long_prose_tokens": settings.long_prose_tokens},
        "contexts": context_meta,
        "skipped": [{"path": s.path, "reason": s.reason} for s in summary.skipped],
    }


def default_chunk_tokens(max_length: int) -> int:
    """Chunks leave a quarter of the embedder's window for the context, so chunk + context embed as one window."""
    return max(32, int(max_length * 0.75) - 2)


def _add_contexts(docs, made: Made, settings, contexts_from, registry, progress, summary, log, executor, staged: bool,
                  why_not_staged: str) -> dict:
    """Fill every chunk's context. Structural contexts come first: they are the LLM's fallback, and
    `contexts.compose` decides how an LLM context joins them. staged: only the cards and LLM contexts the cache
    holds; the documents still missing some are listed in made.needs_card and made.needs_llm. why_not_staged: the
    line said before cards or LLM contexts are written up front, if any."""
    meta: dict = {"mode": settings.contexts}
    chunks_by_doc = made.chunks_by_doc
    if settings.contexts in CARD_MODES:
        meta.update(_add_cards(docs, made, settings, registry, progress, summary, log, staged, why_not_staged))
    if settings.contexts != "none":
        for doc in docs:
            structural_contexts(doc, chunks_by_doc[doc.doc_id])
    if settings.contexts in ("llm", "cards+llm"):
        from localcr.contexts import ContextStats

        spec = registry.require("llm", settings.llm)
        if staged:
            made.context_stats = ContextStats()
            waiting = {d.doc_id for d in made.needs_card}
            made.needs_llm = [d for d in docs if d.doc_id in waiting] + _cached_contexts(
                [d for d in docs if d.doc_id not in waiting], chunks_by_doc, spec, settings, made.context_stats)
            stats = made.context_stats
            summary.context_summary = stats.summary()
        else:
            if settings.contexts == "llm" and why_not_staged:  # (cards+llm said it with the cards)
                log(why_not_staged)
            stats = executor.write_contexts(docs, chunks_by_doc, spec, composition=settings.composition, progress=progress, log=log)
            summary.context_summary = stats.summary()
        meta.update(_llm_meta(spec, settings, stats))
    if contexts_from:
        from localcr.contexts import load_contexts_file

        meta["imported"] = load_contexts_file(contexts_from, made.chunks)
        meta["imported_from"] = str(contexts_from)
    return meta


def _llm_meta(spec, settings, stats) -> dict:
    """The manifest's record of LLM contexts: the model, how they join the structural ones, and what was done."""
    return dict(llm=spec.name, llm_id=spec.fingerprint(), composition=settings.composition, fallbacks=stats.fallbacks,
                generated=stats.generated, cached=stats.cached, windowed_documents=stats.windowed_documents)


def _cached_contexts(docs, chunks_by_doc, spec, settings, stats) -> list[Document]:
    """Apply the LLM contexts the cache holds to these documents' chunks (no model is loaded); the documents
    that still miss some. Only the documents found whole are counted in stats: the others are counted when their
    contexts are written."""
    from localcr.cache import open_cache
    from localcr.contexts import ContextStats, pending_contexts

    missing = []
    with open_cache("contexts") as cache:
        for doc in docs:
            found = ContextStats()
            if pending_contexts([doc], chunks_by_doc, spec, cache, found, settings.composition):
                missing.append(doc)
            else:
                _add_stats(stats, found)
    return missing


def _wanting_cards(docs, settings) -> list[Document]:
    """The documents the context mode gives a card: every one, or in "auto" mode those that wants_card picks."""
    from localcr.contexts.cards import wants_card

    return docs if settings.contexts != "auto" else [d for d in docs if wants_card(d)]


def _card_llm(settings, registry, chosen, log):
    """The LLM that writes cards, or None in "auto" mode when none can be loaded (the documents keep their
    structural contexts, with one line saying so)."""
    try:
        spec = registry.require("llm", settings.llm)
        spec.resolve()
    except LocalcrError as exc:
        if settings.contexts != "auto":
            raise
        log(f"warning: no cards for {_count(len(chosen), 'long document')} without a title: {exc}")
        return None
    return spec


def _add_cards(docs, made: Made, settings, registry, progress, summary, log, staged: bool, why_not_staged: str) -> dict:
    """Give documents their cards (every one, or in "auto" mode those that wants_card picks); the manifest's
    record of them. The model is loaded only when a card is missing from the cache; staged: never (the
    documents without a cached card are listed in made.needs_card)."""
    from localcr.contexts.cards import CardStats, cached_cards, write_cards

    chosen = _wanting_cards(docs, settings)
    made.card_stats = stats = CardStats()
    spec = _card_llm(settings, registry, chosen, log) if chosen else None
    if spec is None:
        return {"cards": stats.meta()}
    if staged:
        cards, made.needs_card = cached_cards(chosen, spec, stats=stats)
        made.card_fallbacks = {d.doc_id for d in chosen if d.doc_id not in cards} - {d.doc_id for d in made.needs_card}
    else:
        if why_not_staged:
            log(why_not_staged)
        cards = write_cards(chosen, spec, progress=progress, log=log, stats=stats)
    for doc in chosen:
        doc.card = cards.get(doc.doc_id, "")
    summary.card_summary = stats.summary()
    return {"llm": spec.name, "llm_id": spec.fingerprint(), "cards": stats.meta()}


def merged_card_meta(before: dict, now: dict, judged: set[str] = frozenset()) -> dict:
    """The card counts of the whole index: the last build's plus this one's; the documents that fell back, and
    why, as this build judged them or else as an earlier one did."""
    merged = {key: before.get(key, 0) + now.get(key, 0) for key in ("documents", "cached", "written", "fallbacks")}
    reasons = Counter(before.get("fallback_reasons", {})) + Counter(now.get("fallback_reasons", {}))
    fell_back = {d: r for d, r in before.get("fell_back", {}).items() if d not in judged} | now.get("fell_back", {})
    return {**merged, "fallback_reasons": dict(reasons), "fell_back": dict(sorted(fell_back.items()))}
