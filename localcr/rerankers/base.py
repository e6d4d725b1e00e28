"""The reranker interface both runtimes implement, and what they share: how much of the window the query keeps,
and an exception worded on one line."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence, TypeVar

from localcr.models import ModelSpec
from localcr.text import without_soft_hyphens

T = TypeVar("T")


class Reranker:
    """A cross-encoder that scores how well each passage answers a query (higher is better; raw scores)."""

    spec: ModelSpec
    path: Path
    max_length: int  # word pieces of query + passage read; the rest of the passage is cut
    batch_size: int

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.spec.name!r}, {str(self.path)!r}, max_length={self.max_length}, "
                f"batch_size={self.batch_size})")

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in the passages' order."""
        raise NotImplementedError

    def rerank(self, query: str, items: Sequence[T], texts: Sequence[str]) -> list[tuple[T, float]]:
        """`items` paired with the scores of their `texts`, best first; equal scores keep the given order."""
        if len(items) != len(texts):
            raise ValueError(f"rerank: {len(items)} items but {len(texts)} texts")
        scores = self.score(query, [without_soft_hyphens(text) for text in texts])
        order = sorted(range(len(items)), key=lambda i: -scores[i])
        return [(items[i], scores[i]) for i in order]


def query_budget(max_length: int, specials: int) -> int:
    """Word pieces the query may keep: 3/4 of the budget, as FlagEmbedding gives it, leaving at least one for the
    passage; 0 when max_length is too small to hold both."""
    return max(0, min(max_length * 3 // 4, max_length - specials - 1))


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
