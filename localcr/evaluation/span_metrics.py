"""Span gold: character ranges of documents, against which chunks of any chunking are scored. A hit stands
for its own chunk's range (window neighbours do not count); a span is found at rank r when the chunks of hits
1..r together cover SPAN_FOUND of its characters. The token-level metrics are those of Chroma's chunking
report, computed on characters as its code does: with G the gold spans and R the union of the top k chunks'
ranges, |G ∩ R| / |G| (token recall), |G ∩ R| / |R| (token precision) and |G ∩ R| / |G ∪ R| (IoU)."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from localcr.evaluation.gold import Target

SPAN_FOUND = 0.5  # the share of a gold span the top hits must cover for it to count as found
SPAN_METRICS = ("token_recall", "token_precision", "iou")
SPAN_METRIC_TITLES = {"token_recall": "Token recall", "token_precision": "Token precision", "iou": "IoU"}

Ranges = list[tuple[int, int]]


def first_ranks(hits: Sequence[Any], targets: Sequence[Target]) -> dict[Target, int]:
    """Each span the hits find -> the 1-based rank at which the hits so far first cover SPAN_FOUND of it."""
    retrieved: dict[str, Ranges] = {}
    found: dict[Target, int] = {}
    for rank, hit in enumerate(hits, start=1):
        if hit.start < 0:
            continue
        retrieved[hit.doc_id] = _union(retrieved.get(hit.doc_id, []) + [(hit.start, hit.end)])
        for t in targets:
            if t not in found and _overlap([(t.start, t.end)], retrieved.get(t.id, [])) >= SPAN_FOUND * (t.end - t.start):
                found[t] = rank
    return found


def token_metrics(hits: Sequence[Any], targets: Sequence[Target], k: int) -> dict[str, float]:
    """Token recall, token precision and IoU of the top k hits' chunks against the gold spans."""
    gold = _by_document((t.id, t.start, t.end) for t in targets)
    retrieved = _by_document((hit.doc_id, hit.start, hit.end) for hit in hits[:k] if hit.start >= 0)
    gold_size = sum(_size(spans) for spans in gold.values())
    size = sum(_size(spans) for spans in retrieved.values())
    common = sum(_overlap(spans, retrieved.get(doc, [])) for doc, spans in gold.items())
    return {
        f"token_recall@{k}": common / gold_size if gold_size else 0.0,
        f"token_precision@{k}": common / size if size else 0.0,
        f"iou@{k}": common / (gold_size + size - common) if gold_size + size else 0.0,
    }


def _by_document(spans: Iterable[tuple[str, int, int]]) -> dict[str, Ranges]:
    grouped: dict[str, Ranges] = {}
    for doc, start, end in spans:
        grouped.setdefault(doc, []).append((start, end))
    return {doc: _union(ranges) for doc, ranges in grouped.items()}


def _union(ranges: Ranges) -> Ranges:
    """Ranges merged where they overlap or touch, in order."""
    merged: Ranges = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _size(ranges: Ranges) -> int:
    return sum(end - start for start, end in ranges)


def _overlap(a: Ranges, b: Ranges) -> int:
    """Characters two sets of disjoint ranges share."""
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)
