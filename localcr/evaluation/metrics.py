"""Metrics of one ranking, then averaged over queries; k is a cut-off on the ranked hits. Each gold target is
credited at most once, at the first hit that finds it (chunk and document targets: chunk_metrics; spans:
span_metrics):

* ``pass@k``    the published Pass@k: share of the query's targets satisfied by the own chunks of the top k
                hits. Window neighbours do not count, so numbers stay comparable with the published table and
                across window sizes. For spans, the share of spans found.
* ``recall@k``  share of the targets covered by the top k hits, window neighbours included: what a reader of
                the results actually gets. Identical to ``pass@k`` when no window is used, and for spans.
* ``hit@k``     1 if the top k hits cover at least one target, else 0 (hit rate).
* ``mrr@k``     1 / rank of the first hit covering a target; 0 if none is in the top k.
* ``precision@k`` hits among the top k that cover a target not covered by an earlier hit, divided by k
                (always by k, even when fewer hits came back). A repeat of an already-found target is not
                counted twice, so precision@k <= min(k, targets) / k.
* ``ndcg@k``    binary gains on those same "new target" hits, DCG = sum 1/log2(rank + 1), divided by the
                ideal DCG of min(k, targets) relevant hits at the top ranks; always in [0, 1].
* for spans also ``token_recall@k``, ``token_precision@k`` and ``iou@k`` (span_metrics).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from localcr.evaluation import chunk_metrics, span_metrics
from localcr.evaluation.gold import Target
from localcr.evaluation.span_metrics import SPAN_METRICS

DEFAULT_KS = (5, 10, 20)
METRICS = ("pass", "recall", "precision", "hit", "mrr", "ndcg")
METRIC_TITLES = {
    "pass": "Pass",
    "recall": "Recall",
    "precision": "Precision",
    "hit": "Hit rate",
    "mrr": "MRR",
    "ndcg": "nDCG",
}


def found_targets(hits: Sequence[Any], targets: Sequence[Target]) -> dict[Target, int]:
    """Each target the hits find -> the 1-based rank that first finds it: covers a chunk or document target,
    or brings the hits so far to cover enough of a span (a query's gold is all spans or none)."""
    if all(t.kind == "span" for t in targets):
        return span_metrics.first_ranks(hits, targets)
    return chunk_metrics.first_ranks(hits, targets)


def score_ranking(hits: Sequence[Any], targets: Sequence[Target], ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """Every metric at every k for one query: {"pass@5": 0.5, ..., "ndcg@20": 0.63}, fractions in [0, 1].

    `hits` are ranked best first and need `chunk_id`, `doc_id`, and optionally `neighbours` and `text`; for
    span targets `doc_id`, `start` and `end`.
    """
    targets = list(dict.fromkeys(targets))
    if not targets:
        raise ValueError("a query needs at least one target")
    ks = sorted(set(ks))
    top = hits[: ks[-1]]
    spans = all(t.kind == "span" for t in targets)
    found = found_targets(top, targets)
    passed = found if spans else chunk_metrics.first_ranks(top, targets, own_only=True)
    new_ranks = sorted(set(found.values()))  # ranks of hits finding a target no earlier hit found
    n = len(targets)
    out: dict[str, float] = {}
    for k in ks:
        new = [r for r in new_ranks if r <= k]
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, n) + 1))
        out[f"pass@{k}"] = sum(1 for r in passed.values() if r <= k) / n
        out[f"recall@{k}"] = sum(1 for r in found.values() if r <= k) / n
        out[f"precision@{k}"] = len(new) / k
        out[f"hit@{k}"] = 1.0 if new else 0.0
        out[f"mrr@{k}"] = 1 / new[0] if new else 0.0
        out[f"ndcg@{k}"] = sum(1 / math.log2(r + 1) for r in new) / ideal
        if spans:
            out.update(span_metrics.token_metrics(top, targets, k))
    return out


def metric_keys(ks: Iterable[int]) -> list[str]:
    return [f"{m}@{k}" for m in METRICS for k in sorted(set(ks))]


def mean_metrics(rows: Sequence[dict[str, float]], ks: Iterable[int]) -> dict[str, float]:
    keys = metric_keys(ks)
    if not rows:
        return {key: 0.0 for key in keys}
    keys += [f"{m}@{k}" for m in SPAN_METRICS for k in sorted(set(ks)) if all(f"{m}@{k}" in row for row in rows)]
    return {key: sum(row[key] for row in rows) / len(rows) for key in keys}


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (p in [0, 100]) like numpy's default; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
