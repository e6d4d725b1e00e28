"""The local index directory as a retrieval backend: the store's current generation (localcr.store) with its
usearch graphs and BM25 postings, searched in this process."""
from __future__ import annotations

from functools import cached_property

import numpy as np

from localcr.lexical import top_rows
from localcr.store import StoreReader, read_marker


class LocalBackend(StoreReader):
    """A StoreReader that answers the ranked legs (see localcr.backends); rows are the generation's row numbers."""

    @property
    def location(self) -> str:
        return str(self.directory)

    @cached_property
    def dense_index(self):
        return self.dense()

    @cached_property
    def lexical_index(self):
        return self.lexical()

    def warm(self) -> None:
        """Open both indexes now, so that no request pays for it."""
        self.dense_index, self.lexical_index  # noqa: B018

    def current_generation(self) -> str | None:
        """The generation a reader opening the index now would see (a rebuild may have switched one in)."""
        marker = read_marker(self.directory)
        return marker["current"] if marker else None

    def dense_ranked(self, vector: np.ndarray, depth: int) -> dict[int, float]:
        """Top chunks by cosine similarity; a chunk embedded as several windows scores as its best window."""
        n = len(self.window_rows)
        per_chunk = max(1.0, n / max(self.n_chunks, 1))
        labels, distances = self.dense_index.knn_query(vector, k=min(n, int(depth * per_chunk) + 8))
        scores: dict[int, float] = {}
        for label, distance in zip(labels[0], distances[0]):
            row = int(self.window_rows[label])
            if row not in scores:
                scores[row] = 1.0 - float(distance)
            if len(scores) == depth:
                break
        return scores

    def lexical_ranked(self, query: str, depth: int) -> dict[int, float]:
        scores = self.lexical_index.scores(query)
        return {int(i): float(scores[i]) for i in top_rows(scores, depth)}

    def highlighter(self, query: str):
        return self.lexical_index.highlighter(query)

    def rows_around(self, row: int, window: int) -> list[int]:
        """The row and up to `window` rows on each side from its own document, in document order."""
        rows = self.rows_of_document(self.doc_of_row(row))
        return list(range(max(rows.start, row - window), min(rows.stop, row + window + 1)))
