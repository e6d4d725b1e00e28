"""LLM-written chunk contexts (Anthropic's Contextual Retrieval): prompts, windowing, the driver, composition.

For every chunk a local model reads the whole document and writes one or two sentences that situate the
chunk in it. Two prompt layouts (`PROMPTS`, chosen by the llm's `prompt` setting in models.toml):

* "marked" (default): the document is shown once with a light marker where each chunk begins
  (`<chunk 7>`); each chunk's request is a short instruction naming its marker and quoting its first
  words. Every document token is evaluated once, and a chunk costs only its ~40-token request.
* "published": the published prompt, document first and then the chunk repeated in full with the
  instruction. Kept for comparison: every chunk's text is evaluated twice.

Either way the document is the shared prefix of all its chunks' prompts: it is evaluated once into the KV
cache and the chunks are generated side by side on it (`LlamaRunner.complete_many`). A document that does
not fit the context window is never cut silently: the prompt keeps its head and a window around a group of
consecutive chunks (`[...]` marks what is left out), and the chunks of one group share that window.

Every finished context is written to the diskcache at once (key: model fingerprint, layout and its version,
generation settings, document sha, chunk sha); a killed run resumes where it stopped. n_ctx is not in the
key: only contexts written from a window are redone, and only when n_ctx grows. The raw model output is
cached and the guard (`localcr.guard`) runs on it each time, so tightening the guard never needs the model.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.guard import GuardLimits, guard_context
from localcr.llm import LlamaRunner, shared_start
from localcr.structure import situating_text

# The published Contextual Retrieval instruction.
_PUBLISHED_INSTRUCTION = (
    "Please give a short succinct context to situate this chunk within the overall document for the purposes "
    "of improving search retrieval of the chunk. Answer only with the succinct context and nothing else."
)


@dataclass(frozen=True)
class PromptLayout:
    """How a chunk's prompt is laid out: the shared document part and the per-chunk request."""

    name: str
    version: str  # part of every cache key: bump it whenever any text here changes
    document: str  # the shared prefix, with {document}
    request: str  # the per-chunk part, with {chunk} (published) or {marker} and {begins} (marked)
    marked: bool  # whether the document shows a marker where each chunk begins
    system: str = ""


PROMPTS = {  # the default first
    # The published instruction, its "this chunk" replaced by the chunk's marker and its first words (so the
    # model finds the right place); the system message keeps small models from restating the task instead of
    # doing it (measured on Qwen2.5-Coder 0.5B and 1.5B: without it they echo the request or copy the chunk).
    # An imperative only: a request that said "This chunk is the part of the document that begins at <chunk 7>
    # (...)" (version marked-2026.1) had 122 of the 1.5B's 737 answers on the code set restate that sentence.
    "marked": PromptLayout(
        name="marked", version="marked-2026.2", marked=True,
        system="You write search-index contexts. Given a document and one of its chunks, you answer with one or two "
        "sentences that situate the chunk: what the whole document is about and what this chunk covers within it.",
        document="<document>\n{document}\n</document>\n",
        request=_PUBLISHED_INSTRUCTION.replace("this chunk", "<chunk {marker}> (\"{begins}\")", 1),
    ),
    "published": PromptLayout(
        name="published", version="cr-2025.1", marked=False,
        document="<document>\n{document}\n</document>\n",
        request="Here is the chunk we want to situate within the whole document\n<chunk>\n{chunk}\n</chunk>\n"
        + _PUBLISHED_INSTRUCTION,
    ),
}
DEFAULT_PROMPT = "marked"
# Appended to the request of a document not in English when the llm's context_language is on: an English
# instruction draws an English answer. Off by default: with Qwen2.5-Coder-1.5B on German and Chinese prose the
# answers came in the document's language but retrieval was no better (benchmarks/context_language.py).
# English prompts stay unchanged either way, and so do their cache keys.
LANGUAGE_REQUEST = " Write the context in the language of the document ({language})."
BEGINS_WORDS = 12  # words of the chunk quoted in a marked request, so the model finds the right marker

# A base model has no template: the prompt ends where the answer should begin, and the answer ends at the
# first line break once some text is written (a context is one short paragraph). The answer is started for
# the model ("prefilled"): a base model then writes prose about the chunk instead of copying code or echoing
# the instruction. The prefill is part of the returned context.
COMPLETION_ANSWER = "\n\nSuccinct context:"
# Measured with Gemma 3 270M base: " defines" makes it name the code's types and functions; prose gets " is about".
COMPLETION_PREFILL = {"code": " This chunk defines", "text": " This chunk is about"}
COMPLETION_STOPS = ("\n", "</", "<chunk", "<document")
CHAT_STOPS = ("\n\n\n", "</context>")
ELISION = "\n[...]\n"
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


def layout_of(spec) -> PromptLayout:
    return PROMPTS[spec.prompt]


# --------------------------------------------------------------------------------------------- prompts


def mark_document(text: str, chunks: list[Chunk]) -> tuple[str, Callable[[int], int]]:
    """The document with `<chunk N>` (N = the chunk's 1-based position) inserted where each chunk begins, on
    a line of its own when the chunk starts a line; and a function mapping an offset in `text` to the marked
    text (a chunk's start maps to its marker). Chunks whose offsets are unknown are not marked."""
    starts = sorted({(c.start, c.position) for c in chunks if 0 <= c.start <= len(text)})
    out, cursor, inserted = [], 0, []  # inserted: (offset in text, total marker length up to and including it)
    total = 0
    for start, position in starts:
        out.append(text[cursor:start])
        at_line_start = start == 0 or text[start - 1] == "\n"
        marker = f"<chunk {position + 1}>" + ("\n" if at_line_start else " ")
        out.append(marker)
        total += len(marker)
        inserted.append((start, total))
        cursor = start
    out.append(text[cursor:])

    def shift(offset: int) -> int:
        before = [t for at, t in inserted if at < offset]
        return offset + (before[-1] if before else 0)

    return "".join(out), shift


def marked_view(doc: Document, all_chunks: list[Chunk], chunks: list[Chunk]) -> tuple[Document, list[Chunk]]:
    """The document with every chunk marked, and copies of `chunks` whose offsets point into it (at their markers)."""
    from dataclasses import replace

    text, shift = mark_document(doc.text, all_chunks)
    moved = [replace(c, start=shift(c.start), end=shift(c.end)) if c.start >= 0 else replace(c) for c in chunks]
    return replace(doc, text=text), moved


def begins(chunk: Chunk, n_words: int = BEGINS_WORDS) -> str:
    """The chunk's first words on one line, quoted in a marked request."""
    first = chunk.text.split()[:n_words]
    return " ".join(first).replace('"', "'") + (" ..." if len(chunk.text.split()) > n_words else "")


@dataclass
class _Group:
    """Consecutive chunks of one document that share one prompt prefix."""

    doc_text: str  # the document as the prompt shows it (whole, or head + window), markers included
    chunks: list[Chunk]
    windowed: bool
    code: bool = False
    language: str = ""  # the document's (ISO 639-1), for the language clause of its requests


class _Prompter:
    """Renders the prompts of one llm spec (its layout and language setting) for one loaded model."""

    def __init__(self, runner: LlamaRunner, spec):
        self.runner, self.spec, self.layout = runner, spec, layout_of(spec)

    def prefill(self, code: bool) -> str:
        """Text the prompt puts at the start of the answer (completion style only)."""
        return "" if self.runner.is_chat else COMPLETION_PREFILL["code" if code else "text"]

    @property
    def stops(self) -> tuple[str, ...]:
        return CHAT_STOPS if self.runner.is_chat else COMPLETION_STOPS

    def prefix(self, doc_text: str) -> list[int]:
        return self.runner.render(self.layout.document.format(document=doc_text), "", self.layout.system)[0]

    def request_text(self, group: _Group, chunk: Chunk) -> str:
        marker = f"<chunk {chunk.position + 1}>"
        if self.layout.marked and marker in group.doc_text:
            text = self.layout.request.format(marker=chunk.position + 1, begins=begins(chunk))
        else:  # published layout, or a chunk that no window could show: the chunk itself goes in the request
            text = PROMPTS["published"].request.format(chunk=chunk.text)
        return text + language_clause(self.spec, group.language)

    def suffix(self, group: _Group, chunk: Chunk) -> list[int]:
        text = self.request_text(group, chunk)
        if not self.runner.is_chat:
            text += COMPLETION_ANSWER + self.prefill(group.code)
        return self.runner.render("", text, self.layout.system)[1]

    def overhead(self) -> int:
        """Tokens of the prompt around an empty document and an empty chunk."""
        head = self.runner.render(self.layout.document.format(document=""), "", self.layout.system)[0]
        tail = self.runner.render("", PROMPTS["published"].request.format(chunk="") + COMPLETION_ANSWER, self.layout.system)[1]
        return len(head) + len(tail)


def language_clause(spec, language: str) -> str:
    """What a request adds to ask for the context in the document's language ("" for English or when off)."""
    if not spec.context_language or language in ("", "en"):
        return ""
    return LANGUAGE_REQUEST.format(language=language)


# --------------------------------------------------------------------------------------------- windows


def _spans(doc: Document, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Character span of every chunk in the document; chunks not found verbatim sit after their predecessor."""
    spans, cursor = [], 0
    for chunk in chunks:
        if chunk.start >= 0 and chunk.end >= chunk.start:
            spans.append((chunk.start, chunk.end))
            cursor = chunk.end
        else:
            start = min(cursor, len(doc.text))
            spans.append((start, min(len(doc.text), start + len(chunk.text))))
            cursor = spans[-1][1]
    return spans


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """Move window edges to line boundaries when that costs little."""
    if start > 0:
        nl = text.find("\n", start, start + 200)
        if nl >= 0:
            start = nl + 1
    if end < len(text):
        nl = text.rfind("\n", max(start, end - 200), end)
        if nl > start:
            end = nl
    return start, end


@dataclass
class _Window:
    """A view of a long document: its head, then text[start:end]; the chunks it serves."""

    head_end: int
    start: int
    end: int
    chunks: list[Chunk]


def plan_windows(doc: Document, chunks: list[Chunk], doc_budget_chars: int, head_chars: int,
                 group_share: float = 0.6) -> list[_Group]:
    """Split the chunks of a document too long for the prompt into groups of consecutive chunks, each with a
    view of the document of at most doc_budget_chars: its head, then a window around the group.

    A group spans at most group_share of the window, so every chunk keeps some text on both sides,
    while consecutive chunks still share one evaluated prefix."""
    text = doc.text
    if len(text) <= doc_budget_chars:
        return [_Group(text, list(chunks), False)]
    return [_Group(_window_text(text, w), w.chunks, True) for w in _windows(doc, chunks, doc_budget_chars, head_chars, group_share)]


def _windows(doc: Document, chunks: list[Chunk], budget: int, head_chars: int, group_share: float) -> list[_Window]:
    text = doc.text
    head_chars = min(head_chars, budget // 4)
    window = max(1, budget - head_chars - len(ELISION) * 2)
    spans = _spans(doc, chunks)
    out: list[_Window] = []
    i = 0
    while i < len(chunks):
        first = spans[i][0]
        j = i + 1
        while j < len(chunks) and spans[j][1] - first <= window * group_share:
            j += 1
        last = max(end for _, end in spans[i:j])
        pad = max(0, (window - (last - first)) // 2)
        start = max(0, first - pad)
        end = min(len(text), start + window)
        start = max(0, end - window)
        if start <= head_chars:
            out.append(_Window(0, 0, min(len(text), budget), list(chunks[i:j])))
        else:
            start, end = _snap(text, start, end)
            out.append(_Window(_snap(text, 0, head_chars)[1], start, end, list(chunks[i:j])))
        i = j
    return out


def _window_text(text: str, w: _Window) -> str:
    body = text[: w.end] if w.start == 0 else text[: w.head_end] + ELISION + text[w.start : w.end]
    return body + (ELISION.rstrip("\n") if w.end < len(text) else "")


# --------------------------------------------------------------------------------------------- stats


@dataclass
class ContextStats:
    documents: int = 0
    chunks: int = 0
    cached: int = 0  # served from diskcache without running the model
    generated: int = 0
    fallbacks: int = 0  # guard rejections (or chunks too long for n_ctx): the structural context is kept
    prefix_tokens_evaluated: int = 0  # document-prefix tokens the model evaluated
    prefix_tokens_reused: int = 0  # prompt tokens served from the KV cache instead of evaluated
    chunk_tokens: int = 0  # per-chunk prompt tokens evaluated (the request: chunk text or marker + instruction)
    generated_tokens: int = 0
    windowed_documents: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0  # spent evaluating prompt tokens
    generate_seconds: float = 0.0  # spent generating
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    prefixes: int = 0  # distinct document prefixes (whole documents or windows) prompts were built on

    @property
    def prompt_tokens(self) -> int:
        return self.prefix_tokens_evaluated + self.prefix_tokens_reused + self.chunk_tokens

    @property
    def cache_share(self) -> float:
        """Share of all prompt tokens that were served from the KV cache (0 when nothing was generated)."""
        total = self.prompt_tokens
        return self.prefix_tokens_reused / total if total else 0.0

    def summary(self) -> str:
        rate = self.generated / self.seconds if self.seconds else 0.0
        gen_rate = self.generated_tokens / self.generate_seconds if self.generate_seconds else 0.0
        prompt_rate = (self.prefix_tokens_evaluated + self.chunk_tokens) / self.prompt_seconds if self.prompt_seconds else 0.0
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.fallback_reasons.items())) or "none"
        return "\n".join([
            f"contexts: {self.chunks} chunks in {self.documents} documents ({self.windowed_documents} windowed to fit n_ctx)",
            f"  from cache {self.cached}, generated {self.generated}, fallbacks {self.fallbacks} ({reasons})",
            f"  prompt tokens: {self.prefix_tokens_evaluated} document-prefix evaluated, {self.prefix_tokens_reused} served from KV cache, "
            f"{self.chunk_tokens} chunk tokens evaluated; cache share {self.cache_share:.1%}",
            f"  generated tokens: {self.generated_tokens} ({gen_rate:.1f} tok/s); prompt evaluation {prompt_rate:.0f} tok/s",
            f"  time: {self.seconds:.1f} s ({rate:.2f} chunks/s generated)",
        ])

    def count_fallback(self, reason: str) -> None:
        self.fallbacks += 1
        self.fallback_reasons[reason] = self.fallback_reasons.get(reason, 0) + 1


# --------------------------------------------------------------------------------------------- main API


def settings_signature(spec) -> str:
    """The generation settings that change what the model writes (n_threads, n_batch do not)."""
    return f"{spec.prompt_style}|{spec.chat_format}|{spec.max_tokens}|{spec.temperature}|{spec.repeat_penalty}"


def context_key(fingerprint: str, spec, doc: Document, chunk: Chunk) -> str:
    from localcr.cache import key

    layout = layout_of(spec)
    parts = ["context", fingerprint, layout.name, layout.version, settings_signature(spec), doc.sha, chunk.sha]
    if clause := language_clause(spec, doc.language):
        parts.append(clause)  # only then: keys of English documents stay what they were before the clause existed
    return key(*parts)


def context_tag(fingerprint: str, spec) -> str:
    """The label of a context in the cache: the LLM and the prompt version, by which `localcr cache` lists and prunes."""
    from localcr.cache import tag

    return tag(spec.name, f"fingerprint {fingerprint}", f"prompt {layout_of(spec).version}")


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


def _usable(entry, spec) -> bool:
    """A cached entry is used unless it was written from a window and n_ctx has grown since."""
    return isinstance(entry, dict) and not (entry.get("windowed") and entry.get("n_ctx", 0) < spec.n_ctx)


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
    loaded model to use (not closed here; its own `parallel` applies); log: where the time estimate goes;
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
            own_runner = runner is None
            runner = runner or LlamaRunner(spec, parallel=parallel)
            run = _Run(runner, spec, fingerprint, cache, guard, stats, composition, reuse, limit, on_chunk)
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
            if _usable(entry, spec):
                stats.cached += 1
                _apply(doc, chunk, entry, guard, stats, composition)
            else:
                missing.append(chunk)
        if missing:
            todo.append((doc, chunks_by_doc[doc.doc_id], missing))
    return todo


def store_context(cache, fingerprint: str, spec, doc: Document, chunk: Chunk, entry: dict, cache_tag: str | None = None) -> None:
    """Write one generated context's entry to the cache (a skip depends on n_ctx: never cached)."""
    if cache is not None and not entry.get("skipped"):
        cache.set(context_key(fingerprint, spec, doc, chunk), entry, cache_tag or context_tag(fingerprint, spec))


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


def _announce(run: "_Run", todo, log: Callable[[str], None]) -> None:
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


class _Run:
    """One generation pass: the loaded model, where results go, and the counters."""

    records_rates = True  # remember this machine's LLM speeds in the rates store

    def __init__(self, runner, spec, fingerprint, cache, guard, stats, composition, reuse, limit, on_chunk):
        self.runner, self.spec, self.fingerprint, self.cache = runner, spec, fingerprint, cache
        self.guard, self.stats, self.composition, self.reuse = guard, stats, composition, reuse
        self.budget, self.on_chunk = limit, on_chunk
        self.cache_tag = context_tag(fingerprint, spec)
        self.prompter = _Prompter(runner, spec)
        _check_room(self.prompter, spec)

    def estimate(self, todo, log: Callable[[str], None] | None = None) -> float:
        """Seconds to write these contexts: the prompt tokens the run will evaluate at the prompt rate, the
        tokens a context takes at the batched generation rate. Rates and tokens per context are this model's
        last run on this machine; without one, a long run measures the rates first (typical ones are an
        AVX-512 machine's: on an AVX2 laptop they put a 40-minute run at 12 minutes)."""
        tokens = self.prompt_tokens(todo)
        rates = llm_rates(self.runner)
        if rates is None and tokens >= MEASURE_FROM_TOKENS:
            if log:
                log(f"contexts: measuring {self.spec.name}'s speed on this machine (once)")
            rates = measure_rates(self.runner, [doc for doc, _, _ in todo])
        rates = rates or TYPICAL_RATES
        n = sum(len(missing) for _, _, missing in todo)
        per_context = rates.tokens_per_context or 0.5 * self.spec.max_tokens
        return tokens / rates.prompt + n * per_context / rates.generate

    def prompt_tokens(self, todo) -> int:
        """The prompt tokens generating `todo` evaluates: each group's prefix once (a long document's every
        window, markers and template included) less the start it shares with the previous one (kept in the KV
        cache), and every request. Counting the document once and requests as a fixed 60 tokens had put 434
        contexts of the code set at 2.2 h where they took about 3.2."""
        total, previous = 0, []
        for doc, all_chunks, missing in todo:
            for group in self.groups_for(doc, all_chunks, missing):
                prefix = self.prompter.prefix(group.doc_text)
                total += len(prefix) - min(shared_start(previous, prefix), len(prefix) - 1)
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

    def groups_for(self, doc: Document, all_chunks: list[Chunk], missing: list[Chunk]) -> list[_Group]:
        """Groups of the missing chunks with the document text each group's prompt shows (markers included)."""
        if not self.prompter.layout.marked:
            return _groups_for(self.prompter, self.spec, doc, missing)
        view, moved = marked_view(doc, all_chunks, missing)
        original = {id(m): c for m, c in zip(moved, missing)}
        groups = _groups_for(self.prompter, self.spec, view, moved)
        for group in groups:
            group.chunks = [original[id(c)] for c in group.chunks]
        return groups

    def generate_group(self, doc: Document, group: _Group, bar) -> None:
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

    def complete(self, group: _Group, prefix: list[int], suffixes: list[list[int]]) -> list[dict]:
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


class _Collecting(_Run):
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


class LlmRates(NamedTuple):
    """What a model reached on this machine: prompt and generated tokens per second, and the tokens it wrote
    for one context (None until a run has measured it)."""

    prompt: float
    generate: float
    tokens_per_context: float | None = None


# Typical rates of a 1.5B Q4_K_M model on 2 AVX-512 cores, for a short run on a machine with no rates recorded.
TYPICAL_RATES = LlmRates(65.0, 25.0)
# A run that evaluates this many prompt tokens or more (half a minute at typical rates) first measures the
# rates when none are recorded: a few hundred tokens, about 20 s for the 1.5B on 2 AVX2 cores, once.
MEASURE_FROM_TOKENS = 2000


def _rates_key(runner: LlamaRunner) -> str:
    from localcr.cache import key

    return key("llm-rates", runner.spec.fingerprint(), str(runner.threads), str(runner.parallel))


def llm_rates(runner: LlamaRunner) -> LlmRates | None:
    """The rates this model last reached on this machine with these threads, if any (entries of earlier
    versions, and measured ones, hold the two speeds only)."""
    from localcr.cache import open_cache

    with open_cache("rates") as cache:
        rates = cache.get(_rates_key(runner))
    return LlmRates(*rates) if isinstance(rates, (tuple, list)) and len(rates) in (2, 3) else None


def _store_rates(runner: LlamaRunner, rates: LlmRates) -> None:
    from localcr.cache import open_cache, tag

    with open_cache("rates") as cache:
        cache.set(_rates_key(runner), tuple(r for r in rates if r is not None),
                  tag(runner.spec.name, f"fingerprint {runner.spec.fingerprint()}"))


def measure_rates(runner: LlamaRunner, documents: list[Document], prompt_tokens: int = 256,
                  generate_tokens: int = 16) -> LlmRates:
    """Measure and record the prompt rate (`prompt_tokens` of the documents from an empty KV cache) and the
    batched generation rate (the runner's parallel sequences side by side on them, `generate_tokens` each)."""
    need = prompt_tokens + 4 * runner.parallel
    sample = runner.tokenize("\n".join(d.text[:8000] for d in documents[:16]))
    sample = (sample * (need // max(1, len(sample)) + 1))[:need]  # a tiny corpus is repeated to fill the sample
    prefix, rest = sample[:prompt_tokens], sample[prompt_tokens:]
    prompt = runner.prompt_rate(prefix)
    generate = runner.generation_rate(prefix, [rest[4 * i:4 * i + 4] for i in range(runner.parallel)],
                                      max_tokens=generate_tokens)
    rates = LlmRates(prompt, generate)
    _store_rates(runner, rates)
    return rates


def record_rates(runner: LlamaRunner, stats: ContextStats) -> None:
    """Remember the rates of a run long enough to measure them, for the next run's estimate."""
    evaluated = stats.prefix_tokens_evaluated + stats.chunk_tokens
    if evaluated < 500 or stats.prompt_seconds <= 0 or stats.generate_seconds <= 0 or stats.generated_tokens < 50:
        return
    _store_rates(runner, LlmRates(evaluated / stats.prompt_seconds, stats.generated_tokens / stats.generate_seconds,
                                  stats.generated_tokens / max(1, stats.generated)))


def _check_room(prompter: _Prompter, spec) -> None:
    need = prompter.overhead() + spec.max_tokens + 8
    if need > prompter.runner.n_ctx:
        raise LocalcrError(
            f"{spec.where}: n_ctx = {prompter.runner.n_ctx} leaves no room for a chunk: the prompt alone takes "
            f"{need - spec.max_tokens - 8} tokens and max_tokens = {spec.max_tokens}; raise n_ctx or lower max_tokens"
        )


def _groups_for(prompter: _Prompter, spec, doc: Document, chunks: list[Chunk]) -> list[_Group]:
    """The whole document as one prefix if it fits beside the chunks' requests, else windows."""
    runner = prompter.runner
    group = _Group("", list(chunks), False, doc.is_code, doc.language)
    requests = [len(prompter.suffix(_Group(doc.text, chunks, False, doc.is_code, doc.language), c)) for c in chunks]
    if prompter.layout.marked:
        # Requests are short, and those generated side by side share the context with the document: reserve room
        # for all of them, but never more than a quarter of n_ctx (then fewer run side by side in a long document).
        longest = sorted(requests, reverse=True)
        side_by_side = sum(longest[: runner.parallel]) + spec.max_tokens * min(runner.parallel, len(chunks))
        side_by_side = min(side_by_side, max(longest[0] + spec.max_tokens, runner.n_ctx // 4))
        room = runner.n_ctx - len(prompter.prefix("")) - side_by_side - 8
    else:
        room = runner.n_ctx - spec.max_tokens - len(prompter.prefix("")) - max(requests) - 8
    doc_tokens = runner.count(doc.text)
    if doc_tokens <= room:
        group.doc_text = doc.text
        return [group]
    room = max(room, 0)
    chars_per_token = len(doc.text) / max(1, doc_tokens)
    share = 0.8 if prompter.layout.marked else 0.6  # marked chunks need no text around them in the request
    for shrink in (0.95, 0.85, 0.7, 0.5, 0.3):
        budget = int(room * chars_per_token * shrink)
        groups = plan_windows(doc, chunks, budget, head_chars=int(256 * chars_per_token), group_share=share)
        if all(runner.count(g.doc_text) <= room for g in groups):
            for g in groups:
                g.code, g.language = doc.is_code, doc.language
            return groups
    return [_Group("", list(chunks), True, doc.is_code, doc.language)]


# --------------------------------------------------------------------------------------------- import


def load_contexts_file(path, chunks: list[Chunk], *, warn: Callable[[str], None] | None = None) -> int:
    """Set contexts from a JSONL file of {"chunk_id": ..., "context": ...} lines (context_source "imported").
    Returns how many chunks got one; a bad line is a LocalcrError naming the line; unknown chunk ids are
    counted and reported through `warn` (default: a line on stderr) and skipped."""
    path = Path(path)
    by_id = {c.chunk_id: c for c in chunks}
    found, unknown = 0, []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LocalcrError(f"{path}: no such contexts file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LocalcrError(f"{path}: cannot read the contexts file ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LocalcrError(f"{path}:{number}: not valid JSON ({exc.msg}): each line must be {{\"chunk_id\": ..., \"context\": ...}}") from None
        if not isinstance(record, dict) or "chunk_id" not in record or "context" not in record:
            raise LocalcrError(f"{path}:{number}: each line must be an object with \"chunk_id\" and \"context\"")
        if not isinstance(record["context"], str):
            raise LocalcrError(f"{path}:{number}: \"context\" must be a string")
        chunk = by_id.get(str(record["chunk_id"]))
        if chunk is None:
            unknown.append(str(record["chunk_id"]))
            continue
        chunk.context, chunk.context_source = record["context"].strip(), "imported"
        found += 1
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        message = f"{path}: {len(unknown)} context(s) for unknown chunk ids skipped ({shown})"
        (warn or (lambda m: print(f"warning: {m}", file=sys.stderr)))(message)
    return found
