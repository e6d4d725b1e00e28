"""Reciprocal rank fusion, shared by hybrid search (localcr.search) and the answer's evidence (localcr.answers.evidence):
a pure scoring function with no index behind it, so the answer step can fuse without importing search."""
from __future__ import annotations

RRF_K = 60


def rrf(rankings: dict[str, list[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: each list gives an item 1 / (k + rank); ranks are 1-based."""
    fused: dict[int, float] = {}
    for ranking in rankings.values():
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
