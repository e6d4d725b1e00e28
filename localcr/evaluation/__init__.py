"""Measuring retrieval: query sets, metrics, and several search configurations run side by side; the package's
interface.

    queries = load_queries("queries.jsonl", index)            # either format; ids resolved against the index
    results = evaluate(index, queries, [parse_config("hybrid"), parse_config("lexical")], ks=(5, 10, 20))
    print(format_table(results, (5, 10, 20)))

The parts: `query_files` (the two JSON Lines formats and what a line is left out for), `gold` (targets: chunks,
documents and character spans, and how a file's ids become targets of one index), `metrics` (Pass@k, Recall@k,
Precision@k, hit rate, MRR and nDCG of one ranking, and their means; its doc defines them), `chunk_metrics` and
`span_metrics` (which targets a ranking finds, and at which rank, for each kind of gold; span_metrics also the
token-level metrics), `answers` (answers of `localcr ask` scored against the gold and a reference answer),
`configs` (search configurations and cut-offs from their written form), `runner` (every
query under every configuration, timed and scored), `reports` (the tables, the JSON summary, per-query lines) and
`page` (the HTML report: a chart per metric, the queries that fail).
"""
from localcr.evaluation.answers import AnswerResult, evaluate_answers, format_answer_table
from localcr.evaluation.configs import SearchConfig, describe, parse_config, parse_ks
from localcr.evaluation.gold import (BAD_SPAN, DUPLICATE_ID, MALFORMED_ID, NO_SPAN_TEXT, SPAN_NOT_FOUND, UNKNOWN_CHUNK,
                                     UNKNOWN_DOC, UNKNOWN_ID, Target)
from localcr.evaluation.metrics import (DEFAULT_KS, METRIC_TITLES, METRICS, found_targets, mean_metrics, metric_keys,
                                        percentile, score_ranking)
from localcr.evaluation.query_files import (BAD_JSON, GOLDS, NO_QUERY, NO_TARGETS, NOT_OBJECT, NOTHING_LEFT, PARTIAL,
                                            Query, QuerySet, load_queries)
from localcr.evaluation.page import render_report, write_report
from localcr.evaluation.reports import format_table, to_json, write_per_query
from localcr.evaluation.runner import ConfigResult, evaluate, search_options
from localcr.evaluation.span_metrics import SPAN_FOUND, SPAN_METRIC_TITLES, SPAN_METRICS

__all__ = [
    "BAD_JSON", "BAD_SPAN", "DEFAULT_KS", "DUPLICATE_ID", "GOLDS", "MALFORMED_ID", "METRICS", "METRIC_TITLES",
    "NOTHING_LEFT", "NOT_OBJECT", "NO_QUERY", "NO_SPAN_TEXT", "NO_TARGETS", "PARTIAL", "SPAN_FOUND",
    "SPAN_METRICS", "SPAN_METRIC_TITLES", "SPAN_NOT_FOUND", "UNKNOWN_CHUNK", "UNKNOWN_DOC", "UNKNOWN_ID",
    "AnswerResult", "ConfigResult", "Query", "QuerySet", "SearchConfig", "Target", "describe", "evaluate", "evaluate_answers", "format_answer_table", "format_table",
    "found_targets", "load_queries", "mean_metrics", "metric_keys", "parse_config", "parse_ks", "percentile",
    "render_report", "score_ranking", "search_options", "to_json", "write_per_query", "write_report",
]
