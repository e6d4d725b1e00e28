"""What an evaluation reports: the terminal's Markdown tables, a JSON summary, and per-query JSON Lines."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from localcr.errors import LocalcrError
from localcr.evaluation.metrics import DEFAULT_KS, METRIC_TITLES, METRICS
from localcr.evaluation.query_files import QuerySet
from localcr.evaluation.runner import ConfigResult
from localcr.evaluation.span_metrics import SPAN_METRIC_TITLES, SPAN_METRICS


def write_per_query(results: Sequence[ConfigResult], path: str | Path) -> None:
    """One JSON line per (configuration, query): the query, its targets, what came back, every metric."""
    path = Path(path)
    try:
        with open(path, "w", encoding="utf-8") as f:
            for result in results:
                for row in result.per_query:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise LocalcrError(f"{path}: cannot write per-query results ({exc.strerror})") from None


def to_json(results: Sequence[ConfigResult], queries: QuerySet | None = None) -> dict[str, Any]:
    """A JSON-ready summary (no per-query rows): metrics as fractions, latency in milliseconds."""
    out: dict[str, Any] = {
        "ks": list(results[0].ks) if results else [],
        "configs": [
            {
                "name": r.config.name,
                "config": asdict(r.config),
                "queries": r.n_queries,
                "metrics": {key: round(value, 6) for key, value in r.metrics.items()},
                "latency_ms": {key: round(value, 3) for key, value in r.latency_ms.items()},
            }
            for r in results
        ],
    }
    if queries is not None:
        out["query_file"] = str(queries.path)
        out["skipped"] = dict(queries.skipped)
        out["dropped_queries"] = queries.dropped
    return out


def format_table(results: Sequence[ConfigResult], ks: Iterable[int] = DEFAULT_KS) -> str:
    """Markdown tables for the terminal: every metric at every k, the configurations one under the other within
    each metric (so they compare at a glance, and the width grows with the ks asked for, not with metrics x ks),
    then each configuration's latency.

    Pass, Recall, Precision and Hit rate are percentages (like the published numbers); MRR and nDCG are 0-1.
    """
    ks = sorted(set(ks))
    titles = {**METRIC_TITLES, **SPAN_METRIC_TITLES}
    rows = [[titles[m] if i == 0 else "", r.config.name, *(_fmt(m, r.metrics[f"{m}@{k}"]) for k in ks)]
            for m in METRICS + SPAN_METRICS if all(f"{m}@{ks[0]}" in r.metrics for r in results)
            for i, r in enumerate(results)]
    latency = [[r.config.name, str(r.n_queries), f"{r.latency_ms['p50']:.1f}", f"{r.latency_ms['p95']:.1f}"]
               for r in results]
    return (markdown_table(["metric", "config", *(f"@{k}" for k in ks)], rows) + "\n\n"
            + markdown_table(["config", "queries", "p50 ms", "p95 ms"], latency))


def _fmt(metric: str, value: float) -> str:
    return f"{value:.3f}" if metric in ("mrr", "ndcg") else f"{value * 100:.2f}"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    numeric = [i > 0 and all(_is_number(row[i]) for row in rows) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if numeric[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), sep, *(line(r) for r in rows)])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True
