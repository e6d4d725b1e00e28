"""Running configurations: every query under every configuration, timed and scored, with a row per query
that says what came back and which targets it missed."""
from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from localcr.errors import ArgumentError, LocalcrError
from localcr.evaluation.configs import SearchConfig
from localcr.evaluation.metrics import DEFAULT_KS, found_targets, mean_metrics, percentile, score_ranking
from localcr.evaluation.query_files import Query, QuerySet


@dataclass
class ConfigResult:
    config: SearchConfig
    ks: tuple[int, ...]
    metrics: dict[str, float]  # "pass@5" -> mean over queries, fraction in [0, 1]
    latency_ms: dict[str, float]  # "p50", "p95", "mean" of one search call
    n_queries: int
    per_query: list[dict[str, Any]]
    # What came back instead for each query that leaves a target unfound (its row's "missed"), by the row's position
    # in per_query: the first SHOWN_HITS hits, their text cut at SHOWN_CHARS (for the HTML report, evaluation.page).
    shown: dict[int, list[dict[str, str]]] = field(default_factory=dict)


SHOWN_HITS = 5
SHOWN_CHARS = 300


def evaluate(
    index: Any,
    queries: QuerySet,
    configs: Sequence[SearchConfig],
    ks: Iterable[int] = DEFAULT_KS,
    reranker: Any = None,
    progress: bool = True,
    expander: Any = None,
    navigator: Any = None,
) -> list[ConfigResult]:
    """Run every query under every configuration (top max(ks) hits each) and score them.

    Each configuration first runs one untimed warm-up search, so lazily loaded models do not count
    towards latency; latency is the wall time of one `index.search` call. If the index offers
    `clear_query_cache()`, it is called before each configuration's timed run, so configurations after
    the first do not look faster by reusing the query vectors the first one computed. A configuration that
    expands (localcr.expansion) has every query's passage written first, several side by side; latency is then
    the search with the passage at hand (the expander's `seconds` and `written` say what writing them cost). A
    configuration that navigates (localcr.navigation) times each search with its navigation, cached or not.
    """
    ks = tuple(sorted(set(ks)))
    _check_run(queries, configs, ks, reranker, expander, navigator)
    if any(cfg.expand for cfg in configs):
        expander.passages([q.text for q in queries.queries], progress=progress)
    return [_run_config(index, queries, cfg, ks, reranker, expander, navigator, progress) for cfg in configs]


def _check_run(queries: QuerySet, configs: Sequence[SearchConfig], ks: tuple[int, ...], reranker: Any, expander: Any,
               navigator: Any) -> None:
    if not ks or ks[0] < 1:
        raise ArgumentError(("ks", ks), ": cut-offs must be whole numbers >= 1")
    if not configs:
        raise LocalcrError("no search configuration to evaluate")
    if not queries.queries:
        raise LocalcrError(f"{queries.path}: no query to evaluate")
    names = Counter(c.name for c in configs)
    if any(n > 1 for n in names.values()):
        raise LocalcrError(f"configurations need distinct names: {', '.join(sorted(k for k, n in names.items() if n > 1))}")
    for cfg in configs:
        if cfg.rerank and reranker is None:
            raise LocalcrError(
                f"configuration {cfg.name!r} reranks but no reranker is loaded: configure one in models.toml "
                "and pass it as reranker= (localcr.rerankers.load_reranker)"
            )
        if cfg.expand and expander is None:
            raise LocalcrError(f"configuration {cfg.name!r} expands queries but no expander is given: pass "
                               "expander= (localcr.expansion.load_expander)")
        if cfg.navigate and navigator is None:
            raise LocalcrError(f"configuration {cfg.name!r} navigates outlines but no navigator is given: pass "
                               "navigator= (localcr.navigation.load_navigator)")


def _run_config(index: Any, queries: QuerySet, cfg: SearchConfig, ks: tuple[int, ...], reranker: Any, expander: Any,
                navigator: Any, progress: bool) -> ConfigResult:
    """One configuration over every query: a warm-up search, then each query timed and scored."""
    k = ks[-1]
    kwargs = dict(k=k, **search_options(cfg, k, reranker, expander, navigator))
    index.search(queries.queries[0].text, **kwargs)  # warm-up, untimed
    clear = getattr(index, "clear_query_cache", None)
    if callable(clear):  # every configuration pays for embedding its queries, not just the first one
        clear()
    rows, scores, latencies, shown = [], [], [], {}
    for q in progress_bar(queries.queries, f"{cfg.name}", progress):
        start = time.perf_counter()
        hits = index.search(q.text, **kwargs)
        elapsed = (time.perf_counter() - start) * 1000
        score = score_ranking(hits, q.targets, ks)
        latencies.append(elapsed)
        scores.append(score)
        rows.append(_query_row(cfg, q, hits[:k], elapsed, score))
        if rows[-1]["missed"]:
            shown[len(rows) - 1] = [_shown_hit(hit) for hit in hits[:SHOWN_HITS]]
    return ConfigResult(
        config=cfg,
        ks=ks,
        metrics=mean_metrics(scores, ks),
        latency_ms={
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "mean": sum(latencies) / len(latencies),
        },
        n_queries=len(rows),
        per_query=rows,
        shown=shown,
    )


def search_options(cfg: SearchConfig, k: int, reranker: Any = None, expander: Any = None,
                   navigator: Any = None) -> dict[str, Any]:
    """The keyword arguments of Index.search (and Index.ask) for a configuration, k aside."""
    return dict(
        mode=cfg.mode,
        fusion=cfg.fusion,
        alpha=cfg.alpha,
        rerank=reranker if cfg.rerank else None,
        candidates=max(cfg.candidates, k),
        window=cfg.window,
        **({"expand": expander} if cfg.expand else {}),
        **({"navigate": navigator} if cfg.navigate else {}),
        **({"glob": cfg.glob, "kind": cfg.kind, "lang": cfg.lang} if cfg.filtered else {}),
    )


def _query_row(cfg: SearchConfig, q: Query, hits: Sequence[Any], elapsed: float, score: dict[str, float]) -> dict[str, Any]:
    """A query's line of per-query output: what it asked for, what came back and missed, its metrics."""
    found = found_targets(hits, q.targets)
    return {
        "config": cfg.name,
        "query_id": q.qid,
        "line": q.line,
        "query": q.text,
        "targets": [str(t) for t in q.targets],
        "missed": [str(t) for t in q.targets if t not in found],
        "retrieved": [hit.chunk_id for hit in hits],
        "first_relevant_rank": min(found.values(), default=None),
        "latency_ms": round(elapsed, 3),
        **{key: round(value, 6) for key, value in score.items()},
    }


def _shown_hit(hit: Any) -> dict[str, str]:
    text = getattr(hit, "text", "") or ""
    return {"chunk_id": hit.chunk_id, "path": getattr(hit, "path", "") or hit.doc_id,
            "text": text[:SHOWN_CHARS] + ("…" if len(text) > SHOWN_CHARS else "")}


def progress_bar(items: list, label: str, enabled: bool, unit: str = "query"):
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=label, unit=unit, file=sys.stderr, leave=False)
