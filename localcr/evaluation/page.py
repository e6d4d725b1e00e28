"""`localcr eval --report FILE.html`: an evaluation as one self-contained HTML page: a chart per metric (the
configurations side by side, k on the x axis), the figures as a table, and the queries that fail at the largest
k with what was found instead.

The charts are drawn by matplotlib as SVG written into the page itself: no script, no stylesheet or font to fetch,
so the page opens offline in any browser (its Content-Security-Policy allows nothing to be loaded); plotly would
need its JavaScript bundle, megabytes of it, inlined in every page to do the same. matplotlib is imported only
here, when a report is written. The charts' text stays text (`svg.fonttype: none`), so the legends can be read
and searched.

Every string that comes from outside (queries, gold ids, paths, the hits' document text, configuration names)
is escaped: document text is untrusted and never becomes markup. Only matplotlib's own SVG is written unescaped,
and it escapes the text it draws itself.
"""
from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import Any, Sequence

from localcr.errors import LocalcrError
from localcr.evaluation.metrics import METRIC_TITLES, METRICS
from localcr.evaluation.query_files import QuerySet
from localcr.evaluation.reports import _fmt
from localcr.evaluation.runner import ConfigResult
from localcr.evaluation.span_metrics import SPAN_METRIC_TITLES, SPAN_METRICS

FRACTIONS = ("mrr", "ndcg")  # drawn 0-1, as the table prints them; every other metric in percent
MAX_FAILURES = 200  # failing queries listed; --per-query has every one

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #1b1b1b; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.meta { color: #555; margin-top: 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(30em, 1fr)); gap: 1em; }
figure.chart { margin: 0; border: 1px solid #e2e2e2; border-radius: 6px; padding: .5em; }
figure.chart figcaption { font-weight: 600; }
figure.chart svg { width: 100%; height: auto; display: block; }
table { border-collapse: collapse; margin: .5em 0 1em; } th, td { padding: .2em .7em; border-bottom: 1px solid #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } th { text-align: left; }
article.failure { border: 1px solid #e2e2e2; border-radius: 6px; padding: .4em 1em; margin: .8em 0; }
article.failure h3 { font-size: 1.05em; margin: .3em 0; white-space: pre-wrap; }
.gold code.missed { background: #fde2e2; } .gold code.found { background: #dff3e3; }
.config h4 { margin: .6em 0 .2em; font-size: .95em; } .passed { color: #2e7d32; }
ol.hits { margin: .2em 0; padding-left: 1.6em; } ol.hits li { margin: .25em 0; }
.hit-text { white-space: pre-wrap; color: #444; font-size: .9em; margin: .1em 0 0; }
code { font-size: .9em; overflow-wrap: anywhere; }
"""


def write_report(results: Sequence[ConfigResult], path: str | Path, queries: QuerySet | None = None) -> None:
    """Write the page for these results (from `evaluate`) to `path`: one file, nothing else needed to open it."""
    path = Path(path)
    page = render_report(results, queries)
    try:
        path.write_text(page, encoding="utf-8", errors="replace")
    except OSError as exc:
        raise LocalcrError(f"{path}: cannot write the report ({exc.strerror})") from None


def render_report(results: Sequence[ConfigResult], queries: QuerySet | None = None) -> str:
    """The page as a string."""
    if not results:
        raise LocalcrError("no results to report")
    from localcr import __version__

    ks = list(results[0].ks)
    metrics = report_metrics(results)
    source = f" from {queries.path}" if queries is not None else ""
    charts = "\n".join(
        f'<figure class="chart" data-metric="{m}"><figcaption>{_e(title(m))}@k</figcaption>\n'
        f"{chart_svg(results, m, n)}\n</figure>" for n, m in enumerate(metrics))
    head = (f"{results[0].n_queries} queries{source}; k = {', '.join(map(str, ks))}; configurations: "
            + ", ".join(r.config.name for r in results) + f". Written by localcr {__version__}.")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>localcr eval{_e(source)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>Retrieval evaluation</h1>
<p class="meta">{_e(head)}</p>
<section id="charts">
<h2>Metrics</h2>
<p>Percentages, except MRR and nDCG (0-1); metrics are defined in docs/evaluation.md.</p>
<div class="charts">
{charts}
</div>
</section>
<section id="figures">
<h2>Figures</h2>
{_figures_table(results, metrics, ks)}
{_latency_table(results)}
</section>
<section id="failures">
{_failures(results, ks[-1])}
</section>
</body>
</html>
"""


def report_metrics(results: Sequence[ConfigResult]) -> list[str]:
    """The metrics every configuration has (the span metrics only with span gold), in the table's order."""
    first = results[0].ks[0]
    return [m for m in METRICS + SPAN_METRICS if all(f"{m}@{first}" in r.metrics for r in results)]


def title(metric: str) -> str:
    return {**METRIC_TITLES, **SPAN_METRIC_TITLES}[metric]


def chart_svg(results: Sequence[ConfigResult], metric: str, number: int) -> str:
    """One metric's chart as an inline <svg>: a group of bars at each k, a bar per configuration, its value on it."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise LocalcrError("--report draws its charts with matplotlib, which is not installed: "
                           "pip install matplotlib") from None

    ks = list(results[0].ks)
    scale = 1 if metric in FRACTIONS else 100
    width = 0.8 / len(results)
    rc = {"svg.fonttype": "none", "svg.hashsalt": f"localcr-{metric}", "text.parse_math": False,
          "font.size": 9}
    with matplotlib.rc_context(rc):
        fig = Figure(figsize=(6.4, 3.6), layout="constrained")
        ax = fig.add_subplot()
        for i, result in enumerate(results):
            values = [result.metrics[f"{metric}@{k}"] * scale for k in ks]
            offsets = [x - 0.4 + width * (i + 0.5) for x in range(len(ks))]
            bars = ax.bar(offsets, values, width * 0.92, label=result.config.name)
            ax.bar_label(bars, fmt="%.3f" if scale == 1 else "%.1f", fontsize=7, padding=1)
        ax.set_xticks(range(len(ks)), [str(k) for k in ks])
        ax.set_xlabel("k")
        ax.set_ylabel(f"{title(metric)}@k" + ("" if scale == 1 else " (%)"))
        ax.set_ylim(0, 1.1 * scale)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        fig.legend(loc="outside lower center", ncols=min(len(results), 3), frameon=False)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg"):]  # no XML prolog or DOCTYPE inside HTML
    return _scoped(svg, f"chart{number}")


def _scoped(svg: str, prefix: str) -> str:
    """Prefix every id of one SVG, and the references to them, so that several SVGs in one page share none (the
    ids are rewritten inside tags only: the text the chart draws is left as it is)."""
    def tag(match: re.Match) -> str:
        return re.sub(r'(\sid="|href="#|url\(#)', rf"\g<1>{prefix}-", match.group(0))

    return re.sub(r"<[^<>]+>", tag, svg)


def _figures_table(results: Sequence[ConfigResult], metrics: list[str], ks: list[int]) -> str:
    head = "".join(f'<th class="num">@{k}</th>' for k in ks)
    rows = []
    for m in metrics:
        for i, r in enumerate(results):
            cells = "".join(f'<td class="num">{_fmt(m, r.metrics[f"{m}@{k}"])}</td>' for k in ks)
            rows.append(f"<tr><th>{_e(title(m)) if i == 0 else ''}</th><td>{_e(r.config.name)}</td>{cells}</tr>")
    return f'<table class="metrics"><thead><tr><th>metric</th><th>config</th>{head}</tr></thead><tbody>\n' \
           + "\n".join(rows) + "\n</tbody></table>"


def _latency_table(results: Sequence[ConfigResult]) -> str:
    rows = "\n".join(f'<tr><td>{_e(r.config.name)}</td><td class="num">{r.n_queries}</td>'
                     + "".join(f'<td class="num">{r.latency_ms[p]:.1f}</td>' for p in ("p50", "p95")) + "</tr>"
                     for r in results)
    return ('<table class="latency"><thead><tr><th>config</th><th class="num">queries</th><th class="num">p50 ms</th>'
            f'<th class="num">p95 ms</th></tr></thead><tbody>\n{rows}\n</tbody></table>')


def _failures(results: Sequence[ConfigResult], k: int) -> str:
    """The queries that leave a gold target unfound in the top k hits under some configuration (those missing it
    under the most configurations first): the query, its gold (missed or found), and per configuration what came
    back instead."""
    by_query: dict[tuple, dict[str, Any]] = {}
    for r in results:
        for n, row in enumerate(r.per_query):
            entry = by_query.setdefault((row["line"], row["query_id"]), {"row": row, "failed": [], "passed": []})
            if row["missed"]:
                entry["failed"].append((r.config.name, row, r.shown.get(n, [])))
            else:
                entry["passed"].append(r.config.name)
    failing = sorted((e for e in by_query.values() if e["failed"]), key=lambda e: (-len(e["failed"]), e["row"]["line"]))
    counts = ", ".join(f"{r.config.name} {sum(1 for row in r.per_query if row['missed'])} of {r.n_queries}"
                       for r in results)
    out = [f"<h2>Queries that fail at k = {k}</h2>",
           f"<p>A query fails when its top {k} hits leave a gold target unfound: {_e(counts)}.</p>"]
    if not failing:
        out.append('<p class="passed">No query fails.</p>')
    for entry in failing[:MAX_FAILURES]:
        out.append(_failure(entry))
    if len(failing) > MAX_FAILURES:
        out.append(f"<p>… and {len(failing) - MAX_FAILURES} more (--per-query writes every query's results).</p>")
    return "\n".join(out)


def _failure(entry: dict[str, Any]) -> str:
    row = entry["row"]
    missed_any = {t for _, r, _ in entry["failed"] for t in r["missed"]}
    gold = " ".join(f'<code class="{"missed" if t in missed_any else "found"}">{_e(t)}</code>' for t in row["targets"])
    parts = [f'<article class="failure" data-query-id="{_e(row["query_id"])}">',
             f'<h3 class="query">{_e(row["query"])}</h3>',
             f'<p class="gold">line {row["line"]}, id <code>{_e(row["query_id"])}</code>; gold: {gold}</p>']
    for name, r, hits in entry["failed"]:
        rank = r["first_relevant_rank"]
        found = f"first relevant hit at rank {rank}" if rank else "no relevant hit"
        missed = " ".join(f"<code>{_e(t)}</code>" for t in r["missed"])
        items = "".join(f'<li><code>{_e(h["chunk_id"])}</code> <span class="path">{_e(h["path"])}</span>'
                        f'<p class="hit-text">{_e(h["text"])}</p></li>' for h in hits)
        parts.append(f'<div class="config" data-config="{_e(name)}"><h4>{_e(name)}: missed {missed}; {found}</h4>'
                     + (f'<ol class="hits">{items}</ol>' if items else "<p>nothing came back</p>") + "</div>")
    if entry["passed"]:
        parts.append(f'<p class="passed">found every target: {_e(", ".join(entry["passed"]))}</p>')
    parts.append("</article>")
    return "\n".join(parts)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)
