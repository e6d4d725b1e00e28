"""The run: cached contexts first, then the model writes the missing ones side by side on each document's KV
cache, each stored at once (a killed run resumes); the guard judges every output, and `compose` joins it to the
structural context."""
from __future__ import annotations

import sys
import time
from typing import Callable

from localcr.contexts.keys import context_key, context_tag, store_context, usable
from localcr.contexts.prompts import Group, Prompter, check_room, marked_view
from localcr.contexts.rates import MEASURE_FROM_TOKENS, machine_rates, record_rates, typical_rates
from localcr.contexts.stats import ContextStats
from localcr.contexts.windows import groups_for
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.guard import GuardLimits, guard_context
from localcr.llm import LlamaRunner
from localcr.structure import situating_text


# Chunks of one document generated side by side on the shared document prefix (llama.cpp sequences in one
# unified KV cache): on a CPU one decode step for 8 sequences costs little more than for one.
DEFAULT_PARALLEL = 8

# How a written context joins the structural one (see compose).
COMPOSITIONS = ("llm", "structural+llm")
DEFAULT_COMPOSITION = "structural+llm"


def compose(structural: str, written: str, how: str = DEFAULT_COMPOSITION) -> str:
    """The context a chunk is indexed with, from its structural context and the LLM's: the LLM's alone, or
    the structural facts (path, package, enclosing definitions) followed by the LLM's sentence."""
    if how not in COMPOSITIONS:
        raise LocalcrError(f"context composition {how!r}: choose one of {', '.join(COMPOSITIONS)}")
    if how == "llm" or not structural:
        return written
    return f"{structural} {written}"


def _apply(doc: Document, chunk: Chunk, entry: dict, guard: GuardLimits | None, stats: ContextStats, composition: str) -> None:
    """Set the chunk's context from a cached or fresh generation, or count the fallback and keep the structural one."""
    text, reason = guard_context(entry.get("raw", ""), chunk.text, guard, entry.get("finished", True), entry.get("prefill", ""),
                                 doc.text, situating_text(doc))
    if entry.get("skipped"):
        text, reason = None, entry["skipped"]
    if text is None:
        chunk.context_source = "fallback"
        stats.count_fallback(reason)
    else:
        chunk.context, chunk.context_source = compose(chunk.context, text, composition), "llm"


def write_llm_contexts(
    documents: list[Document],
    chunks_by_doc: dict[str, list[Chunk]],
    spec,
    *,
    progress: bool = True,
    guard: GuardLimits | None = None,
    limit: int | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
    reuse: bool = True,
    runner: LlamaRunner | None = None,
    load_runner: Callable[[], LlamaRunner] | None = None,
    use_cache: bool = True,
    parallel: int = DEFAULT_PARALLEL,
    composition: str = DEFAULT_COMPOSITION,
    log: Callable[[str], None] | None = None,
    stats: ContextStats | None = None,
) -> ContextStats:
    """Give every chunk of `documents` an LLM-written context composed with its current (structural) one
    (context_source "llm"); when the guard rejects the output, keep the current context ("fallback").

    Each context is written to the diskcache as soon as it is generated, so a killed run resumes without
    regenerating anything. limit: generate at most this many contexts in this call (the rest keep their
    context); on_chunk: called after each generated context is stored; reuse=False evaluates every prompt
    from scratch, one chunk at a time (the naive baseline of benchmarks); parallel: how many chunks of a
    document are generated side by side on its shared prefix (1 = one after another); runner: an already
    loaded model to use (not closed here; its own `parallel` applies); load_runner: where the model comes from when
    one is needed, for a caller that keeps it across calls (not closed here); log: where the time estimate goes;
    stats: the counters to fill and return (a caller's on_chunk can read them while the run goes on)."""
    from localcr.cache import open_cache

    compose("", "", composition)  # an unknown composition fails before any work
    started = time.perf_counter()
    stats = stats if stats is not None else ContextStats()
    docs = [d for d in documents if chunks_by_doc.get(d.doc_id)]
    unknown = set(chunks_by_doc) - {d.doc_id for d in documents}
    if any(chunks_by_doc[u] for u in unknown):
        raise LocalcrError(f"chunks of unknown documents: {', '.join(sorted(unknown)[:3])}")
    stats.documents = len(docs)
    stats.chunks = sum(len(chunks_by_doc[d.doc_id]) for d in docs)

    fingerprint = spec.fingerprint()
    cache = open_cache("contexts") if use_cache else None
    own_runner = False
    try:
        todo = _from_cache(docs, chunks_by_doc, spec, fingerprint, cache, guard, stats, composition)
        if todo:
            own_runner = runner is None and load_runner is None
            runner = runner or (load_runner() if load_runner else LlamaRunner(spec, parallel=parallel))
            run = Run(runner, spec, fingerprint, cache, guard, stats, composition, reuse, limit, on_chunk)
            _announce(run, todo, log or (lambda m: print(m, file=sys.stderr)))
            run.generate(todo, progress)
    finally:
        if own_runner and runner is not None:
            runner.close()
        if cache is not None:
            cache.close()
        stats.seconds = time.perf_counter() - started
    return stats


def _from_cache(docs, chunks_by_doc, spec, fingerprint, cache, guard, stats, composition) -> list[tuple[Document, list[Chunk], list[Chunk]]]:
    """Apply every cached context; return (document, all its chunks, the chunks still to generate) where any are missing."""
    todo = []
    for doc in docs:
        missing = []
        for chunk in chunks_by_doc[doc.doc_id]:
            entry = cache.get(context_key(fingerprint, spec, doc, chunk)) if cache is not None else None
            if usable(entry, spec):
                stats.cached += 1
                _apply(doc, chunk, entry, guard, stats, composition)
            else:
                missing.append(chunk)
        if missing:
            todo.append((doc, chunks_by_doc[doc.doc_id], missing))
    return todo


def pending_contexts(documents, chunks_by_doc, spec, cache, stats: ContextStats, composition: str = DEFAULT_COMPOSITION,
                     guard: GuardLimits | None = None):
    """For an executor that generates elsewhere (localcr.execution): apply every cached context (counted in
    stats) and return (document, all its chunks, the chunks still to generate) for the documents with misses."""
    compose("", "", composition)
    docs = [d for d in documents if chunks_by_doc.get(d.doc_id)]
    stats.documents = len(docs)
    stats.chunks = sum(len(chunks_by_doc[d.doc_id]) for d in docs)
    return _from_cache(docs, chunks_by_doc, spec, spec.fingerprint(), cache, guard, stats, composition)


def apply_generated(doc: Document, chunk: Chunk, entry: dict, stats: ContextStats, composition: str = DEFAULT_COMPOSITION,
                    guard: GuardLimits | None = None) -> None:
    """Set a chunk's context from an entry generated elsewhere (or keep its structural one), counted in stats."""
    stats.generated += 1
    _apply(doc, chunk, entry, guard, stats, composition)


def add_work(stats: ContextStats, done: ContextStats) -> None:
    """Add the model's work counters of `done` (a worker's) to stats; results are counted by apply_generated."""
    for name in ("prefix_tokens_evaluated", "prefix_tokens_reused", "chunk_tokens", "generated_tokens",
                 "windowed_documents", "prompt_seconds", "generate_seconds", "prefixes"):
        setattr(stats, name, getattr(stats, name) + getattr(done, name))


def _announce(run: "Run", todo, log: Callable[[str], None]) -> None:
    """Say before starting how long the generation will take, when that is more than a few seconds."""
    estimate = run.estimate(todo, log)
    if estimate >= 30:
        n = sum(len(missing) for _, _, missing in todo)
        log(f"contexts: {n} to write with {run.spec.name} in {len(todo)} documents, about {_duration(estimate)} "
            f"on {run.runner.threads} threads; an interrupted run resumes where it stopped")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Run:
    """One generation pass: the loaded model, where results go, and the counters."""

    records_rates = True  # remember this machine's LLM speeds in the rates store

    def __init__(self, runner, spec, fingerprint, cache, guard, stats, composition, reuse, limit, on_chunk):
        self.runner, self.spec, self.fingerprint, self.cache = runner, spec, fingerprint, cache
        self.guard, self.stats, self.composition, self.reuse = guard, stats, composition, reuse
        self.budget, self.on_chunk = limit, on_chunk
        self.cache_tag = context_tag(fingerprint, spec)
        self.prompter = Prompter(runner, spec)
        check_room(self.prompter, spec)

    def estimate(self, todo, log: Callable[[str], None] | None = None) -> float:
        """Seconds to write these contexts: the prompt tokens the run will evaluate at the prompt rate, the
        tokens a context takes at the batched generation rate. Rates and tokens per context are this model's
        last run on this machine; without one, a long run measures the rates first (the typical ones of the
        CPU's kind, AVX-512 or AVX2, are one pair of cores: another machine of that kind can be 2-3 times off)."""
        tokens = self.prompt_tokens(todo)
        rates = machine_rates(self.runner, [doc for doc, _, _ in todo], tokens >= MEASURE_FROM_TOKENS, "contexts", log)
        rates = rates or typical_rates(self.spec)
        n = sum(len(missing) for _, _, missing in todo)
        per_context = rates.tokens_per_context or 0.5 * self.spec.max_tokens
        return tokens / rates.prompt + n * per_context / rates.generate

    def prompt_tokens(self, todo) -> int:
        """The prompt tokens generating `todo` evaluates: each group's prefix once (a long document's every
        window, markers and template included) less what the KV cache serves of it after the previous one (the
        system turn they share: `LlamaRunner.reused_after`), and every request. Counting the document once and
        requests as a fixed 60 tokens had put 434 contexts of the code set at 2.2 h where they took about 3.2."""
        total, previous = 0, []
        for doc, all_chunks, missing in todo:
            for group in self.groups_for(doc, all_chunks, missing):
                prefix = self.prompter.prefix(group.doc_text)
                total += len(prefix) - self.runner.reused_after(previous, prefix)
                total += sum(len(self.prompter.suffix(group, c)) for c in group.chunks)
                previous = prefix
        return total

    def generate(self, todo, progress: bool) -> None:
        from tqdm import tqdm

        stats = self.stats
        bar = tqdm(total=stats.chunks, initial=stats.cached, unit="chunk", desc="contexts", file=sys.stderr,
                   disable=not progress, dynamic_ncols=True, smoothing=0.1)
        try:
            for doc, all_chunks, missing in todo:
                if self.budget is not None and self.budget <= 0:
                    break
                groups = self.groups_for(doc, all_chunks, missing)
                stats.windowed_documents += any(g.windowed for g in groups)
                for group in groups:
                    self.generate_group(doc, group, bar)
        finally:
            bar.close()
            if self.records_rates:
                record_rates(self.runner, stats)

    def groups_for(self, doc: Document, all_chunks: list[Chunk], missing: list[Chunk]) -> list[Group]:
        """Groups of the missing chunks with the document text each group's prompt shows (markers included)."""
        if not self.prompter.layout.marked:
            return groups_for(self.prompter, self.spec, doc, missing)
        view, moved = marked_view(doc, all_chunks, missing)
        original = {id(m): c for m, c in zip(moved, missing)}
        groups = groups_for(self.prompter, self.spec, view, moved)
        for group in groups:
            group.chunks = [original[id(c)] for c in group.chunks]
        return groups

    def generate_group(self, doc: Document, group: Group, bar) -> None:
        """Contexts for the chunks of one group, `parallel` at a time on the group's shared prefix."""
        stats, runner = self.stats, self.runner
        stats.prefixes += 1
        prefix = self.prompter.prefix(group.doc_text)
        queue = list(group.chunks)
        while queue and (self.budget is None or self.budget > 0):
            take = runner.parallel if self.reuse else 1
            if self.budget is not None:
                take = min(take, self.budget)
            batch = queue[:take]
            suffixes = [self.prompter.suffix(group, c) for c in batch]
            while len(batch) > 1 and not runner.fits_together(prefix, suffixes, self.spec.max_tokens):
                batch, suffixes = batch[:-1], suffixes[:-1]
            queue = queue[len(batch):]
            for chunk, entry in zip(batch, self.complete(group, prefix, suffixes)):
                self.keep(doc, chunk, entry)
                stats.generated += 1
                _apply(doc, chunk, entry, self.guard, stats, self.composition)
                if self.budget is not None:
                    self.budget -= 1
                bar.update(1)
                if stats.generate_seconds:
                    bar.set_postfix_str(f"{stats.generated_tokens / stats.generate_seconds:.1f} gen tok/s", refresh=False)
                if self.on_chunk is not None:
                    self.on_chunk(chunk)

    def keep(self, doc: Document, chunk: Chunk, entry: dict) -> None:
        """Store a fresh generation in the cache at once (a killed run loses nothing)."""
        store_context(self.cache, self.fingerprint, self.spec, doc, chunk, entry, self.cache_tag)

    def complete(self, group: Group, prefix: list[int], suffixes: list[list[int]]) -> list[dict]:
        """Generate the contexts of chunks that share one prefix; returns their cache entries and counts the tokens."""
        runner, spec, stats = self.runner, self.spec, self.stats
        prefill = self.prompter.prefill(group.code).lstrip()
        stops = self.prompter.stops
        fit = [len(prefix) + len(s) + spec.max_tokens <= runner.n_ctx for s in suffixes]
        todo = [s for s, ok in zip(suffixes, fit) if ok]
        if not todo:
            done = []
        elif self.reuse:
            done = runner.complete_many(prefix, todo, max_tokens=spec.max_tokens, stops=stops)
        else:
            done = [runner.complete(prefix, s, max_tokens=spec.max_tokens, stops=stops, reuse=False) for s in todo]
        results, it = [], iter(zip(todo, done))
        for ok in fit:
            if not ok:
                results.append({"raw": "", "finished": False, "tokens": 0, "skipped": "too_long"})
                continue
            suffix, out = next(it)
            from_prefix = min(out.reused, len(prefix))
            stats.prefix_tokens_reused += out.reused
            stats.prefix_tokens_evaluated += len(prefix) - from_prefix
            stats.chunk_tokens += len(suffix) - (out.reused - from_prefix)
            stats.generated_tokens += out.tokens
            stats.prompt_seconds += out.prompt_seconds
            stats.generate_seconds += out.generate_seconds
            results.append({"raw": prefill + out.text, "prefill": prefill, "finished": out.finished, "tokens": out.tokens,
                            "windowed": group.windowed, "n_ctx": spec.n_ctx})
        return results


class _Collecting(Run):
    """A generation pass that touches no cache or store: it keeps each entry for whoever asked (a Ray actor's caller)."""

    records_rates = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.entries: dict[int, dict] = {}

    def keep(self, doc, chunk, entry) -> None:
        self.entries[id(chunk)] = entry


def generate_document(runner: LlamaRunner, spec, doc: Document, all_chunks: list[Chunk], missing: list[Chunk],
                      fingerprint: str) -> tuple[list[dict], ContextStats]:
    """The cache entries of `missing` (chunks of `doc`, in their order) generated on `runner`, exactly as
    write_llm_contexts would (same groups, prefix, side-by-side batches), without reading or writing any
    cache; and the token counters of the work. A worker that has no cache (a Ray actor) runs this; its
    caller stores the entries (store_context) and applies them (apply_generated)."""
    stats = ContextStats()
    run = _Collecting(runner, spec, fingerprint, None, None, stats, DEFAULT_COMPOSITION, True, None, None)
    run.generate([(doc, all_chunks, missing)], progress=False)
    return [run.entries[id(c)] for c in missing], stats
