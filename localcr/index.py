"""Building a local index: the documents that changed (localcr.pipeline) are written by localcr.store as a new
segment of a generation beside the current one, switched to atomically (see there for the layout on disk);
compaction merges segments. A Milvus location is built by localcr.backends.milvus instead.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from localcr import store
from localcr.backends.locations import is_milvus
from localcr.cache import cache_dir
from localcr.contexts.modes import CONTEXT_MODES
from localcr.errors import ArgumentError, LocalcrError
from localcr.models import Registry
from localcr.pipeline import (BuildSummary, Made, coverage_text, make_chunks, manifest_of, plan_changes, resolve_settings,
                              same_settings, upgrades_in_place)


# The policy that keeps search fast as changes pile up: compact when a change leaves more segments than this,
# or more than this share of the rows tombstoned.
MAX_SEGMENTS = 8
MAX_DEAD_SHARE = 0.3
# build_space's estimate is raised by this share for what store.segment_bytes leaves out (SQLite's pages, each file's
# last block, the manifests of the generations kept): without it, 124 files of code and prose were estimated at
# 17.0 MB and their build peaked at 17.4 MB on disk.
BUILD_SPACE_MARGIN = 1.1


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
    "function" (Milvus's BM25), "client" (localcr's BM25 analysis as sparse vectors) or "none" (dense only), see
    localcr.backends.milvus."""
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
    needed: list[int] = []  # the build's estimate, once made (_Commits.check_space)
    with store.writer_lock(directory), store.full_disk_in_one_line(directory, lambda: needed[0] if needed else None,
                                                                   cache_dir()):
        marker = store.read_marker(directory)
        store.remove_stale_builds(directory)
        last = store.current_manifest(directory, marker)
        settings = resolve_settings(last, registry, paths, embedder=embedder, contexts=contexts, llm=llm,
                             chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, composition=composition,
                             rebuild=rebuild)
        upgrade = not rebuild and contexts_from is None and upgrades_in_place(last, settings)
        whole = rebuild or contexts_from is not None or not (upgrade or same_settings(last, settings))
        sound, damaged = ([], {}) if whole else store.check_segments(directory, last)
        for name, problem in damaged.items():
            log(f"warning: segment {name} is damaged ({problem}): rebuilding its documents from the sources")
        stored = {} if whole else store.live_documents(directory, {**last, "segments": sound})
        summary = BuildSummary(directory=directory)
        plan = plan_changes(settings, registry, stored, last, whole, summary, log, upgrade)
        # Documents not stored are new or were in a damaged segment (whose ids may be unreadable): counted by number.
        summary.restored = min(summary.added, sum(s["documents"] - len(s["dead"]) for s in last.get("segments", [])
                                                  if s["name"] in damaged))
        summary.added -= summary.restored
        docs, gone = plan.docs, plan.gone
        if not docs and not gone and not plan.improve and not plan.unembedded and not whole and not damaged:
            summary.documents, summary.chunks = len(plan.kept), last.get("chunks", 0)
            summary.seconds = time.monotonic() - started
            if plan.file_stats != last.get(store.FILE_STATS, {}) or sound != last["segments"]:  # or newer file records
                store.publish(directory, marker, {**last, "segments": sound, store.FILE_STATS: plan.file_stats})
            return summary  # no document changed: no new segment

        located = {doc_id: (d.segment, d.chunks) for doc_id, d in stored.items()}
        commits = _Commits(directory, marker, [_tombstoned(s, {i: located[i] for i in gone}) for s in sound],
                           {i: where for i, where in located.items() if i not in gone}, settings, plan, summary,
                           stopwords_changed=set(plan.index_languages) != set(last.get("languages", plan.index_languages)),
                           log=log, needed=needed)
        made = make_chunks(plan, settings, last, whole, contexts_from, registry, progress, summary, log, ray, staged=commits)
        # the live totals, from the manifest (compaction keeps them): no need to open the whole index
        summary.documents = sum(s["documents"] - len(s["dead"]) for s in commits.segments)
        summary.chunks = sum(s["chunks"] - s["dead_chunks"] for s in commits.segments)
        summary.coverage = coverage_text(made.context_meta)
        summary.seconds = time.monotonic() - started
        return summary


class _Commits:
    """The generations a local build publishes, one a commit: the documents of the plan with what contexts cost
    no model and no vectors (the lexical leg answers from then on), then batches of documents as they are embedded
    or their cards and LLM contexts written (localcr.pipeline.complete_index). A commit writes its documents as a
    new segment, tombstones their older versions (the first also those of documents changed or gone), drops the
    segments left with no live document, publishes the generation and compacts by the policy. A killed build
    leaves the last generation it published."""

    def __init__(self, directory: Path, marker, segments: list[dict], located: dict[str, tuple[str, int]], settings, plan,
                 summary: BuildSummary, stopwords_changed: bool, log, needed: list[int] | None = None):
        self.directory, self.marker, self.segments, self.log = directory, marker, segments, log
        self.needed = needed if needed is not None else []  # the build's space estimate, made before the first commit
        self.written = 0  # bytes of the segments this build wrote
        self.located = located  # each live document's segment and number of chunks
        self.settings, self.plan, self.summary = settings, plan, summary
        self.stopwords_changed = stopwords_changed
        self.shas: dict[str, str] = {}  # of the documents read back from the index (stored), whose text is not at hand
        self.held: dict[str, str] = {}  # doc_id -> _digest of its chunks in the index, as this run committed or read them

    def stored(self, doc_ids: set[str]) -> tuple[list, dict]:
        """These live documents (without their text) and their chunks, as the index holds them: a killed run
        committed them without vectors, and they are embedded from there, not read and situated again."""
        if not doc_ids:
            return [], {}
        reader = store.StoreReader(self.directory)
        self.shas.update({i: sha for i, sha in reader.document_shas().items() if i in doc_ids})
        docs, chunks_by_doc = reader.stored_documents(only=doc_ids)
        self.held.update({d.doc_id: _digest(d, chunks_by_doc[d.doc_id]) for d in docs})
        return docs, chunks_by_doc

    def commit(self, docs: list, made: Made, vectors, window_rows) -> None:
        """Commit these documents' chunks as they are now, with the vectors of their windows (none: for the lexical
        leg alone) and each window's chunk row among the documents' chunks."""
        if not self.needed:
            self.needed.append(self.check_space(made))
        replaced = {d.doc_id: self.located[d.doc_id] for d in docs if d.doc_id in self.located}
        donors = [s["name"] for s in self.segments]  # whose sheet tables of unchanged chunks are copied, not rebuilt
        self.segments = [s for s in (_tombstoned(s, replaced) for s in self.segments) if len(s["dead"]) < s["documents"]]
        if docs:
            digests = {d.doc_id: _digest(d, made.chunks_by_doc[d.doc_id]) for d in docs}
            postings = self._postings(docs, made.chunks_by_doc, digests)
            segment = store.write_segment(self.directory, docs, made.chunks_by_doc, vectors, window_rows, postings,
                                          shas=self.shas, tables=_tables(self.directory, docs, made.chunks_by_doc, donors))
            self.segments.append(segment)
            self.written += sum(f[0] for f in segment["files"].values())
            self.located.update({d.doc_id: (segment["name"], len(made.chunks_by_doc[d.doc_id])) for d in docs})
            self.held.update(digests)
        contexts = made.context_meta
        manifest = manifest_of(self.settings, made.model, contexts, self.summary, self.plan.index_languages, self.plan.file_stats)
        generation = store.publish(self.directory, self.marker, {
            **manifest, "segments": self.segments, "documents": sum(s["documents"] for s in self.segments),
            "chunks": sum(s["chunks"] for s in self.segments)})
        self.marker = {**(self.marker or {}), "current": generation}
        if self.stopwords_changed or ((len(self.segments) > MAX_SEGMENTS or _dead_share(self.segments) > MAX_DEAD_SHARE)
                                      and self._room_to_compact()):  # new stop words: every segment analysed again
            compact(self.directory, log=self.log, locked=True)
            self.marker = store.read_marker(self.directory)
            self.segments = store.current_manifest(self.directory, self.marker)["segments"]
            self.located = {i: (d.segment, d.chunks) for i, d in store.live_documents(self.directory, {"segments": self.segments}).items()}
        self.stopwords_changed = False

    def check_space(self, made: Made) -> int:
        """Before this build writes anything: the free space it needs (build_space of every chunk it will commit:
        the plan's, those improved and those embedded from the index), or a LocalcrError saying how much where the
        index's disk has less, the index left as it was."""
        chunks = [c for chunks in made.chunks_by_doc.values() for c in chunks]
        carded = [c for d in made.needs_card for c in made.chunks_by_doc.get(d.doc_id, [])]
        need, new = build_space(chunks, made.model.count_windows(chunks) if chunks else 0, made.model.dimension, carded)
        free = store.free_bytes(self.directory)
        if need > free:
            raise LocalcrError(f"{self.directory}: this build needs about {store.megabytes(need)} free on its disk and "
                               f"{store.megabytes(free)} are ({store.megabytes(new)} of new segments, their text "
                               f"written first for the lexical leg); nothing was written and the index is as it was: "
                               "free some space, or build the index on another disk")
        return need

    def _room_to_compact(self) -> bool:
        """Whether the disk holds another copy of the live index beside what this build still has to write (by its
        estimate); if not, the build goes on uncompacted (searches are a little slower until `localcr compact`) and
        says so."""
        compaction, free = store.live_bytes(self.segments), store.free_bytes(self.directory)
        left = max(0, self.needed[0] - self.written) if self.needed else 0
        if compaction + left <= free:
            return True
        self.log(f"warning: not compacting {self.directory} during this build: compaction writes about "
                 f"{store.megabytes(compaction)}, the build about {store.megabytes(left)} more, and its disk has "
                 f"{store.megabytes(free)} free (`localcr compact` merges the segments later)")
        return False

    def _postings(self, docs: list, chunks_by_doc: dict, digests: dict[str, str]):
        """These documents' BM25 postings: copied from the index where it holds their chunks as they are now (the
        commit with vectors after the lexical or card commit of the same contexts), analysed for the rest."""
        from localcr.lexical import Postings, stopwords_of

        stopwords = stopwords_of(self.plan.index_languages)
        same = [d.doc_id for d in docs if self.held.get(d.doc_id) == digests[d.doc_id]]
        found = store.StoreReader(self.directory).document_postings(same) if same else {}
        copied = {doc_id: pick for doc_id, pick in found.items() if pick[0].analysed_with(stopwords)}
        analysed = _analysed([d for d in docs if d.doc_id not in copied], chunks_by_doc, stopwords)
        if not copied:
            return analysed
        picks, start = [], 0
        for d in docs:
            if d.doc_id in copied:
                picks.append(copied[d.doc_id])
            else:
                count = len(chunks_by_doc[d.doc_id])
                picks.append((analysed, np.arange(start, start + count)))
                start += count
        return Postings.merged(picks, [d.language for d in docs if chunks_by_doc[d.doc_id]], stopwords)


def _digest(doc, chunks: list) -> str:
    """What a document's BM25 postings are made of: its language and its chunks' "context + text", in order."""
    return hashlib.blake2b(json.dumps([doc.language] + [f"{c.context}\n{c.text}" for c in chunks]).encode(),
                           digest_size=16).hexdigest()


def _tombstoned(segment: dict, gone: dict[str, tuple[str, int]]) -> dict:
    """A segment's manifest entry with the documents of it that are gone (changed, removed or improved: doc_id ->
    the segment that holds it and its number of chunks) added as dead."""
    dead = {doc_id: chunks for doc_id, (name, chunks) in gone.items() if name == segment["name"]}
    return {**segment, "dead": sorted(set(segment["dead"]) | dead.keys()), "dead_chunks": segment["dead_chunks"] + sum(dead.values())}


def build_space(chunks: list, windows: int, dimension: int, carded: list = ()) -> tuple[int, int]:
    """About the free space a build of these chunks and windows needs, and the size of the segments it leaves
    (store.segment_bytes): a staged build commits its chunks' text for the lexical leg first, then again with their
    vectors (a carded chunk a time more, with its card), and the segments a commit tombstones stay as long as the
    generation before lists them (searches may be reading it). Compacting during the build needs the live index's size
    more: it runs only where the disk has that too (_Commits._room_to_compact)."""
    text = sum(len(c.text.encode()) + len(c.context.encode()) for c in chunks)
    new = store.segment_bytes(text, windows, dimension)
    lexical = store.segment_bytes(text + sum(len(c.text.encode()) + len(c.context.encode()) + 200 for c in carded), 0,
                                  dimension)
    return int(BUILD_SPACE_MARGIN * (new + lexical)), new


def _dead_share(segments: list[dict]) -> float:
    chunks = sum(s["chunks"] for s in segments)
    return sum(s.get("dead_chunks", 0) for s in segments) / max(chunks, 1)


def compact(directory: str | os.PathLike, *, log=None, locked: bool = False) -> None:
    """Merge every live chunk of the index into one segment (no model is needed: chunks, contexts, vectors and
    BM25 postings are copied, the dense graph rebuilt), published as a new generation. Searches keep
    reading the previous generation until the merged one is switched in; a compaction killed halfway leaves
    the index as it was."""
    directory = Path(directory)
    if not locked:
        with store.writer_lock(directory), store.full_disk_in_one_line(directory):
            store.remove_stale_builds(directory)
            return compact(directory, log=log, locked=True)
    marker = store.read_marker(directory)
    if marker is None:
        raise LocalcrError(f"{directory}: empty, not an index yet; build one with `localcr index`")
    reader = store.StoreReader(directory)
    need, free = store.live_bytes(reader.manifest["segments"]), store.free_bytes(directory)
    if need > free:
        raise LocalcrError(f"{directory}: compacting writes the index's live chunks again, about {store.megabytes(need)}, "
                           f"and its disk has {store.megabytes(free)} free; nothing was written: free some space first")
    from localcr.lexical import Postings, stopwords_of

    docs, chunks_by_doc = reader.stored_documents()
    vectors, window_rows = reader.live_vectors()
    stopwords = stopwords_of(reader.manifest.get("languages", ["en"]))
    picks = list(reader.document_postings([d.doc_id for d in docs]).values())
    if all(part.analysed_with(stopwords) for part, _ in picks):
        postings = Postings.merged(picks, [d.language for d in docs if chunks_by_doc[d.doc_id]], stopwords)
    else:  # the index's languages, and so its stop words, changed (or a segment predates the record): analysed again
        postings = _analysed(docs, chunks_by_doc, stopwords)
    segment = store.write_segment(directory, docs, chunks_by_doc, vectors, window_rows, postings, shas=reader.document_shas(),
                                  tables=_tables(directory, docs, chunks_by_doc, [s["name"] for s in reader.manifest["segments"]]))
    store.publish(directory, marker, {**reader.manifest, "segments": [segment], store.FILE_STATS: {}})  # stats folded in


def _tables(directory: Path, docs: list, chunks_by_doc: dict, donors: list[str]):
    """What writes a segment's sheet tables (localcr.sheet_tables), copying those of unchanged chunks from the
    segments named in donors."""
    from localcr.sheet_tables import writer

    return writer(directory, docs, chunks_by_doc, donors)


def _analysed(docs: list, chunks_by_doc: dict, stopwords: frozenset[str]):
    """BM25 postings of these documents' chunks ("context + text"), analysed in each document's language."""
    from localcr.lexical import Postings

    pairs = [(f"{c.context}\n{c.text}", d.language) for d in docs for c in chunks_by_doc[d.doc_id]]
    return Postings.build([text for text, _ in pairs], [language for _, language in pairs], stopwords)
