"""localcr's own BM25 in Milvus (--lexical client): each chunk's saturated term frequencies as a sparse vector, the
query's IDF weights from a collection of document frequencies by term (GENERATION + TERMS_SUFFIX) that every write
keeps current; their inner product is the local index's BM25 score (see localcr.backends.milvus)."""
from __future__ import annotations

import zlib
from collections import Counter

import numpy as np

from localcr.backends.milvus.connection import QUERY_BATCH, TERMS_SUFFIX, Connection

INSERT_BATCH = 500
# A term's dimension in a client-computed sparse vector: its CRC-32, below this (Milvus takes dimensions below 2**32 - 1).
SPARSE_DIMENSIONS = 2**32 - 2
# Milvus refuses an empty sparse vector: a chunk's second and later windows (which hold no terms: the first window
# carries the chunk's) get this dimension, which no term has and so no query asks for.
NO_TERMS = {SPARSE_DIMENSIONS: 1.0}


def sparse_dimension(term: str) -> int:
    return zlib.crc32(term.encode("utf-8")) % SPARSE_DIMENSIONS


def idf(df: int, n: int) -> float:
    """BM25's inverse document frequency, as localcr.lexical.bm25 weighs a term (in single precision)."""
    return float(np.float32(np.log(1 + (n - df + 0.5) / (df + 0.5))))


def document_frequencies(connection: Connection, generation: str, dimensions: list[int]) -> dict[int, int]:
    """How many chunks hold each term (by sparse dimension), for a generation with client-computed vectors."""
    found: dict[int, int] = {}
    for start in range(0, len(dimensions), QUERY_BATCH):
        batch = dimensions[start:start + QUERY_BATCH]
        rows = connection.call("query", generation + TERMS_SUFFIX, filter=f"id in {batch}", output_fields=["df"])
        found.update({r["id"]: r["df"] for r in rows})
    return found


class TermCounts:
    """localcr's BM25 analysis of the chunks a write adds and removes, for client-computed sparse vectors: each added
    chunk's term frequencies and length, and the change to every term's document frequency."""

    def __init__(self, languages: list[str]):
        from localcr.lexical import stopwords_of

        self.stopwords = stopwords_of(languages)
        self.added: list[tuple[Counter, int]] = []
        self.df_change: Counter = Counter()

    def _analyse(self, passage: str, language: str) -> tuple[Counter, int]:
        from localcr.lexical import EMPTY, tokenize

        tokens = tokenize(passage, language, self.stopwords) or [EMPTY]  # a text of no terms has the one EMPTY term
        return Counter(sparse_dimension(t) for t in tokens), len(tokens)

    def add(self, passages: list[str], languages: list[str]) -> None:
        self.added = [self._analyse(p, language) for p, language in zip(passages, languages)]
        for counts, _ in self.added:
            self.df_change.update(counts.keys())

    def remove(self, passages: list[str], languages: list[str]) -> None:
        for passage, language in zip(passages, languages):
            self.df_change.subtract(self._analyse(passage, language)[0].keys())

    def mean_length(self) -> float:
        return sum(length for _, length in self.added) / max(len(self.added), 1)

    def weights(self, mean_length: float) -> list[dict[int, float]]:
        """Each added chunk's saturated term frequencies, tf / (tf + k1 (1 - b + b len / mean len)), in single
        precision as localcr.lexical scores."""
        from localcr.lexical import length_norms

        norms = length_norms(np.array([length for _, length in self.added]), mean_length)
        return [{d: float(np.float32(tf) / (norm + np.float32(tf))) for d, tf in counts.items()}
                for (counts, _), norm in zip(self.added, norms)]

    def write(self, connection: Connection, generation: str) -> None:
        """Bring the generation's document frequencies up to date (a term no chunk holds any more is deleted)."""
        changed = sorted(d for d, change in self.df_change.items() if change)
        now = document_frequencies(connection, generation, changed)
        after = {d: now.get(d, 0) + self.df_change[d] for d in changed}
        kept = [{"id": d, "df": df, "vector": [0.0, 0.0]} for d, df in after.items() if df > 0]
        for start in range(0, len(kept), INSERT_BATCH):
            connection.call("upsert", generation + TERMS_SUFFIX, kept[start:start + INSERT_BATCH])
        dropped = [d for d, df in after.items() if df <= 0]
        if dropped:
            connection.call("delete", generation + TERMS_SUFFIX, filter=f"id in {dropped}")
