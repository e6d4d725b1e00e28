"""Concurrent requests' queries embedded together, one batch at a time.

On a CPU, one forward pass over eight short queries costs far less than eight passes over one, and passes
run side by side only fight over the same cores (torch's threads wait on each other). So a server embeds on
one thread: each request queues its query, and whatever has queued while the previous batch ran becomes the
next batch. An idle server embeds a lone query at once; a busy one batches without any waiting window.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np

MAX_BATCH = 32


class QueryBatcher:
    """Stands in for an Embedder where a search embeds its query (`embed_query`, `id`, `spec`) and an answer its
    sources' sentences (`encode`)."""

    def __init__(self, embedder, max_batch: int = MAX_BATCH):
        self.embedder = embedder
        self.id, self.spec = embedder.id, embedder.spec
        self.max_batch = max_batch
        self._queued: list[tuple[str, Future]] = []
        self._ready = threading.Condition()
        threading.Thread(target=self._embed_forever, name="localcr-query-embedder", daemon=True).start()

    def embed_query(self, query: str) -> np.ndarray:
        future: Future = Future()
        with self._ready:
            self._queued.append((query, future))
            self._ready.notify()
        return future.result()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Passages embedded at once on the caller's thread, uncached (a refusal's sentences weighed against its
        question: localcr.answers.reader.closest_window); rare enough not to queue behind the queries."""
        return self.embedder.encode(texts)

    def _embed_forever(self) -> None:
        while True:
            with self._ready:
                while not self._queued:
                    self._ready.wait()
                batch, self._queued = self._queued[:self.max_batch], self._queued[self.max_batch:]
            try:
                vectors = self.embedder.embed_queries([query for query, _ in batch])
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the model's error
                for _, future in batch:
                    future.set_exception(exc)
                continue
            for (_, future), vector in zip(batch, vectors):
                future.set_result(vector)
