"""Dense embeddings, cached on disk by (model fingerprint, text), from one of several model families.

A *backend* (one module each: `onnx` runs sentence-transformers models on ONNX Runtime, `sbert` runs them on
torch (the reference, and the way for models the ONNX export does not cover), `use` runs Google's Universal
Sentence Encoder Multilingual in numpy) only counts and clips tokens and turns texts into vectors; everything
else here is the same for every backend: windows, the cache, query and document prefixes, identifiers spelled out.

Code identifiers are spelled out as words in everything embedded, queries included (`run_target` is
embedded as "run target"): small embedders' vocabularies know words, and a question asked in words
then meets the code it is about.

How a context enters the dense side: small embedders read few word pieces (MiniLM: 256) and silently
drop the rest, so "context + chunk" as one text would push the end of a long chunk out. Instead every
chunk is embedded as one or more *windows*, each "context + a piece of the chunk" that fits the
model's real limit; a chunk's dense score is its best window's. Nothing is truncated, the context
situates every window, and a chunk that fits (the default chunk size leaves room for the context) is
exactly one window.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from localcr.cache import key, open_cache, tag
from localcr.documents import Chunk
from localcr.embeddings.backend import Backend
from localcr.models import EMBEDDER_BACKENDS, ModelSpec
from localcr.text import spell_out_identifiers

# What an embedder is loaded for, which sets how its runtime runs (ONNX Runtime's session options; torch's and
# OpenBLAS's pools have no such switches). "build": batches of windows back to back. "queries": a query at a time
# with idle time between (an opened index's: a server, an evaluation), so idle threads wait without spinning: a
# spinning thread takes a core from the rest of the process (opening the index, the lexical leg) and from other
# processes (on a 2-core pair busy with another benchmark, MiniLM's session opened in 37 ms without it against 72,
# a query took 3.6 ms against 7.3). "one query": a process that embeds one (the command line's search), whose
# session also leaves the weights as they are instead of packing them for faster products: it opens in 8-10 ms
# instead of 41-56 and a query takes 6.4-8.2 ms instead of 4.4-4.7, which packing pays back after some 15 queries.
PURPOSES = ("build", "queries", "one query")
CONTEXT_SHARE = 0.4  # a context may take at most this share of a window; the chunk keeps the rest
RATE_FROM_WINDOWS = 200  # a stage that computed fewer windows says too little of the pace (loading, warming up)


@dataclass
class Window:
    chunk_row: int
    text: str


class Embedder:
    """An embedder of the registry, loaded from local files for a purpose (PURPOSES), with its disk cache."""

    def __init__(self, spec: ModelSpec, *, purpose: str = "build"):
        self.backend: Backend = load_backend(spec, purpose=purpose)
        self.spec = spec
        self.max_length = self.backend.max_length
        fingerprint = spec.fingerprint()
        self.id = f"{spec.name}:{fingerprint}"
        self.cache_tag = tag(spec.name, f"fingerprint {fingerprint}")
        self.dimension = self.backend.dimension

    @cached_property
    def _cache(self):
        """The disk cache of the windows' vectors, opened when first used: a search embeds its query without it."""
        return open_cache("embeddings")

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.backend.count_tokens(texts)

    def windows(self, chunks: list[Chunk]) -> list[Window]:
        """Split each chunk into embeddable windows of "context + piece" that fit the model's length; a chunk
        too long for one window is cut at the boundaries its kind knows."""
        return [Window(row, spell_out_identifiers(text)) for row, text in self._pieces(chunks)]

    def count_windows(self, chunks: list[Chunk]) -> int:
        """How many windows `windows` cuts these chunks into, without writing their texts out: a progress bar's
        total before the first is embedded (a long filing's chunks are about two windows each, so a total of chunks
        grew by 80% as the windows came, and the bar's time left said half of what remained). It counts their tokens
        as windows does: about 1% of embedding them (3,537 windows of code and prose counted in 1.0 s, embedded in
        150 s, on 2 loaded cores)."""
        return sum(1 for _ in self._pieces(chunks))

    def _pieces(self, chunks: list[Chunk]):
        """(chunk row, "prefix + context + piece") of each window, in order."""
        from localcr.chunking import levels_for, pack, split_spans  # a build's, with the parsers: a query needs none

        budget = self.max_length - self.backend.added_tokens - 1  # and the newline between context and text
        contexts = list(dict.fromkeys(c.context for c in chunks))  # a document's chunks share a few contexts
        counted = dict(zip(contexts, self.count_tokens(contexts)))
        context_tokens = [counted[c.context] for c in chunks]
        text_tokens = self.count_tokens([c.text for c in chunks])
        for row, (chunk, n_context, n_text) in enumerate(zip(chunks, context_tokens, text_tokens)):
            context = chunk.context
            if n_context > budget * CONTEXT_SHARE:
                context = self.backend.clip(context, int(budget * CONTEXT_SHARE))
                n_context = int(budget * CONTEXT_SHARE)
            room = budget - n_context
            prefix = self.spec.document_prefix + (context + "\n" if context else "")
            if n_text <= room:
                yield row, prefix + chunk.text
                continue
            levels = levels_for(chunk.kind)
            for group in pack(split_spans(chunk.text, self.count_tokens, room, levels, tokens=n_text), room):
                piece = chunk.text[group[0][0]:group[-1][1]].strip()
                if piece:
                    yield row, prefix + piece

    def embed(self, texts: list[str], progress=None, encode_batches=None) -> tuple[np.ndarray, int]:
        """Vectors for texts, from the disk cache where possible, and how many had to be computed;
        `progress` is called with each batch's size. encode_batches: where the misses are encoded, a function
        from a list of text batches to an iterator of their vectors in the same order (default: here, one
        batch after another; localcr.execution.ray: on Ray actors). The cache is read and written here either way."""
        keys = [key(self.id, text) for text in texts]
        vectors: list[np.ndarray | None] = self._cache.get_many(keys)
        # Shortest first, so that each call's batches hold windows of about one length and pad little: a document's
        # last piece of each chunk is short, its other windows full (BENCHMARKS.md, "Why the indexing defaults are
        # what they are").
        missing = sorted((i for i, v in enumerate(vectors) if v is None), key=lambda i: len(texts[i]))
        if progress and len(texts) > len(missing):
            progress(len(texts) - len(missing))
        batch = self.encode_batch
        groups = [missing[start:start + batch] for start in range(0, len(missing), batch)]
        encoded = (encode_batches or self._encode_batches)([[texts[i] for i in todo] for todo in groups])
        for todo, computed in zip(groups, encoded):
            for i, vector in zip(todo, computed):
                vectors[i] = vector
            self._cache.set_many(((keys[i], vectors[i]) for i in todo), self.cache_tag)
            if progress:
                progress(len(todo))
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, self.dimension), np.float32)
        return matrix, len(missing)

    def recorded_rate(self) -> tuple[float, float] | None:
        """(windows computed a second, windows a chunk) as this embedder's last long stage ran on this machine with
        as many cores, if one did: what a build's "about N min" of embedding is estimated from."""
        with open_cache("rates") as cache:
            rate = cache.get(self._rate_key())
        return tuple(rate) if isinstance(rate, (tuple, list)) and len(rate) == 2 else None

    def record_rate(self, computed: int, seconds: float, windows: int, chunks: int) -> None:
        """Remember a stage's pace (computed windows in seconds) and windows a chunk, as the mean with the last."""
        if computed < RATE_FROM_WINDOWS or seconds <= 0 or not chunks:
            return
        rate = (computed / seconds, windows / chunks)
        if (known := self.recorded_rate()) is not None:
            rate = tuple((now + before) / 2 for now, before in zip(rate, known))
        with open_cache("rates") as cache:
            cache.set(self._rate_key(), rate, self.cache_tag)

    def _rate_key(self) -> str:
        return key("embedding-rate", self.id, str(len(os.sched_getaffinity(0))))

    def embed_query(self, query: str) -> np.ndarray:
        return self.embed_queries([query])[0]

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        """One vector per query, in one batch (a server embeds the queries of concurrent requests together)."""
        return self.encode([self.spec.query_prefix + spell_out_identifiers(q) for q in queries])

    @property
    def encode_batch(self) -> int:
        """Texts encoded per call (and cached per transaction)."""
        return max(self.spec.batch_size, 1) * 4

    def _encode_batches(self, batches: list[list[str]]):
        return (self.encode(texts) for texts in batches)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Vectors for texts as given, computed now: neither read from nor written to the disk cache (for texts
        used once, such as the sentences a refusal is weighed on: localcr.answers.closest_window)."""
        return self.backend.encode(texts).astype(np.float32)


def load_backend(spec: ModelSpec, threads: int | None = None, purpose: str = "build") -> Backend:
    """The model of an embedder alone, without the cache (a Ray actor has none), computing on `threads` threads
    (default: the physical cores), run for its purpose (PURPOSES)."""
    if purpose not in PURPOSES:
        raise ValueError(f"purpose {purpose!r}: one of {', '.join(PURPOSES)}")
    path = spec.resolve()
    module, name = EMBEDDER_BACKENDS[spec.backend][runtime(spec, path)]
    return getattr(importlib.import_module(module), name)(spec, path, threads, purpose)


RUNTIME_NAMES = {"onnx": "ONNX Runtime", "onnx-int8": "ONNX Runtime, 8-bit copy", "torch": "torch (sentence-transformers)",
                 "numpy": "numpy"}  # for `localcr models`


def runtime(spec: ModelSpec, path) -> str:
    """What runs the embedder whose files are at path: a key of its backend's entry in EMBEDDER_BACKENDS."""
    runtimes = EMBEDDER_BACKENDS[spec.backend]
    if len(runtimes) == 1:
        return next(iter(runtimes))
    if spec.runtime == "auto":
        from localcr.embeddings.onnx import unsupported

        return "torch" if unsupported(path) else "onnx"
    return spec.runtime
