"""Query sets, metrics and configuration runs, on hand-made rankings whose metric values are worked out by hand."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pytest

from localcr import evaluation as ev
from localcr.errors import ArgumentError, LocalcrError
from localcr.evaluation import SearchConfig, Target, parse_config, score_ranking


@dataclass
class H:
    """The parts of search.Hit that evaluation reads."""

    chunk_id: str
    doc_id: str = "d"
    neighbours: list[str] = field(default_factory=list)
    text: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        return [self.chunk_id, *self.neighbours]


def C(chunk_id: str, text: str | None = None) -> Target:
    return Target("chunk", chunk_id, text)


def D(doc_id: str) -> Target:
    return Target("doc", doc_id)


L3, L4, L5 = 1 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)


# ---------------------------------------------------------------------------------------------- metrics


def test_metrics_without_window():
    # gold c1 and c3, found at ranks 2 and 4; rank 5 repeats c1
    hits = [H("c2"), H("c1"), H("c5"), H("c3"), H("c1")]
    m = score_ranking(hits, [C("c1"), C("c3")], ks=(1, 3, 5))
    expected = {
        "pass@1": 0, "pass@3": 0.5, "pass@5": 1,
        "recall@1": 0, "recall@3": 0.5, "recall@5": 1,
        "hit@1": 0, "hit@3": 1, "hit@5": 1,
        "mrr@1": 0, "mrr@3": 0.5, "mrr@5": 0.5,
        "precision@1": 0, "precision@3": 1 / 3, "precision@5": 2 / 5,  # the repeat at rank 5 earns nothing
        "ndcg@1": 0, "ndcg@3": L3 / (1 + L3), "ndcg@5": (L3 + L5) / (1 + L3),
    }
    assert m == pytest.approx(expected)
    assert set(m) == set(ev.metric_keys((1, 3, 5)))


def test_metrics_with_window_neighbours():
    # rank 1's window holds gold c1 (its own chunk c2 is not gold); rank 3 is gold c7 itself
    hits = [H("c2", neighbours=["c1", "c3"]), H("c9", doc_id="B"), H("c7")]
    m = score_ranking(hits, [C("c1"), C("c7")], ks=(1, 2, 3))
    assert m == pytest.approx({
        "pass@1": 0, "pass@2": 0, "pass@3": 0.5,  # published Pass@k: own chunks only
        "recall@1": 0.5, "recall@2": 0.5, "recall@3": 1,  # what the reader gets, windows included
        "hit@1": 1, "hit@2": 1, "hit@3": 1,
        "mrr@1": 1, "mrr@2": 1, "mrr@3": 1,
        "precision@1": 1, "precision@2": 0.5, "precision@3": 2 / 3,
        "ndcg@1": 1, "ndcg@2": 1 / (1 + L3), "ndcg@3": (1 + L4) / (1 + L3),
    })


def test_metrics_with_document_targets():
    # doc A is satisfied by any chunk of A (twice here: credited once); b2 arrives first through a window
    hits = [H("a1", "A"), H("a2", "A"), H("b1", "B", neighbours=["b2"]), H("b2", "B")]
    m = score_ranking(hits, [D("A"), C("b2")], ks=(2, 4))
    assert m == pytest.approx({
        "pass@2": 0.5, "pass@4": 1,
        "recall@2": 0.5, "recall@4": 1,
        "hit@2": 1, "hit@4": 1,
        "mrr@2": 1, "mrr@4": 1,
        "precision@2": 0.5, "precision@4": 0.5,
        "ndcg@2": 1 / (1 + L3), "ndcg@4": (1 + L4) / (1 + L3),
    })


def test_equal_text_counts_like_the_published_evaluation():
    hits = [H("copy", text="  fn same() {}\n")]
    assert score_ranking(hits, [C("gold", text="fn same() {}")], ks=(1,))["pass@1"] == 1
    assert score_ranking(hits, [C("gold", text="fn other() {}")], ks=(1,))["pass@1"] == 0
    assert score_ranking(hits, [C("gold")], ks=(1,))["pass@1"] == 0


def test_short_and_empty_rankings():
    m = score_ranking([H("c1")], [C("c1")], ks=(5,))
    assert m["precision@5"] == pytest.approx(0.2)  # always divided by k
    assert m["ndcg@5"] == pytest.approx(1.0)  # ideal DCG over min(k, 1 target)
    assert m["pass@5"] == m["mrr@5"] == m["hit@5"] == 1
    assert set(score_ranking([], [C("c1")], ks=(5,)).values()) == {0.0}
    # hits beyond the largest k are ignored; duplicate targets count once
    m = score_ranking([H("x"), H("c1")], [C("c1"), C("c1")], ks=(1,))
    assert m["pass@1"] == 0 and m["mrr@1"] == 0
    with pytest.raises(ValueError):
        score_ranking([H("c1")], [], ks=(1,))


def test_ndcg_and_precision_stay_in_range_when_one_hit_covers_several_targets():
    hits = [H("c2", neighbours=["c1", "c3"]), H("c9")]
    m = score_ranking(hits, [C("c1"), C("c2"), C("c3")], ks=(1, 2))
    assert m["recall@1"] == 1 and m["pass@1"] == pytest.approx(1 / 3)
    assert m["ndcg@1"] == 1 and m["ndcg@2"] == pytest.approx(1 / (1 + L3))
    assert m["precision@1"] == 1 and m["precision@2"] == 0.5


def test_mean_and_percentile():
    rows = [{"pass@1": 1.0}, {"pass@1": 0.0}, {"pass@1": 0.5}]
    assert ev.mean_metrics([{**r, **{k: 0.0 for k in ev.metric_keys((1,)) if k != "pass@1"}} for r in rows], (1,))[
        "pass@1"
    ] == pytest.approx(0.5)
    assert ev.percentile([1, 2, 3, 4], 50) == 2.5
    assert ev.percentile([10], 95) == 10
    assert ev.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert ev.percentile([], 50) == 0.0


# ---------------------------------------------------------------------------------------------- query files


class FakeStore:
    """The lookups of a store.StoreReader that query files are resolved with: three chunks in two documents,
    one imported corpus."""

    def __init__(self, external=True):
        self.chunks = {"d1_c0": "d1", "d1_c1": "d1", "d2_c0": "d2"}
        self.external = {("U1", 0): "d1_c0", ("U1", 1): "d1_c1", ("U2", 0): "d2_c0"} if external else {}

    def chunk_id_set(self):
        return set(self.chunks)

    def doc_ids(self):
        return set(self.chunks.values())

    def chunk_ids_for_external(self):
        return dict(self.external)

    def documents_by_external_id(self):
        return {doc: f"d{doc[1:]}" for doc, _ in self.external}


class FakeIndex:
    """A stand-in for search.Index over a FakeStore, with canned rankings."""

    def __init__(self, external=True, rankings=None):
        self.store = FakeStore(external)
        self.rankings = rankings or {}
        self.calls = []

    def search(self, query, k=20, *, mode="hybrid", fusion="weighted", alpha=0.3, rerank=None, candidates=150, window=0):
        self.calls.append(dict(query=query, k=k, mode=mode, fusion=fusion, alpha=alpha, rerank=rerank,
                               candidates=candidates, window=window))
        ids = self.rankings.get((mode, query), [])
        return [H(c, self.store.chunks.get(c, "?")) for c in ids][:k]


def write_lines(path, lines):
    path.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n", encoding="utf-8")
    return path


def test_load_both_formats_and_count_every_bad_input(tmp_path):
    f = write_lines(tmp_path / "q.jsonl", [
        {"query": "q1", "golden_chunk_uuids": [["U1", 0]],
         "golden_chunks": [{"doc_uuid": "U1", "index": 0, "content": " text a \n"}]},  # 1
        "   ",  # 2 blank
        "{bad json",  # 3
        {"query": "q2", "golden_chunk_uuids": [["U1", 1], ["U9", 0], ["U1", 7]]},  # 4 keeps U1/1
        {"query": "q3", "golden_chunk_uuids": [["U9", 0]]},  # 5 other corpus: dropped
        {"golden_chunk_uuids": [["U1", 0]]},  # 6 no query
        [1, 2],  # 7
        {"query": "q4", "golden_chunk_uuids": [["U1", 0], ["U1", 0], ["U1", "x"]]},  # 8 repeat, malformed
        {"query": "q5"},  # 9
        {"query": "q6", "id": "custom", "relevant": ["d2", "d1_c1", "nope", 5, ["U2", 0]]},  # 10
    ])
    qs = ev.load_queries(f, FakeIndex(), skip_bad_lines=True)
    assert [(q.qid, q.line, q.text) for q in qs.queries] == [
        ("line1", 1, "q1"), ("line4", 4, "q2"), ("line8", 8, "q4"), ("custom", 10, "q6")
    ]
    assert qs.queries[0].targets == [C("d1_c0", "text a")]
    assert qs.queries[1].targets == [C("d1_c1")]
    assert qs.queries[2].targets == [C("d1_c0")]
    assert qs.queries[3].targets == [D("d2"), C("d1_c1"), C("d2_c0")]
    assert qs.formats == {"published": 3, "generic": 1}
    assert qs.blank_lines == 1
    assert qs.skipped == {
        ev.BAD_JSON: 1, ev.UNKNOWN_DOC: 2, ev.UNKNOWN_CHUNK: 1, ev.PARTIAL: 3, ev.NOTHING_LEFT: 1,
        ev.NO_QUERY: 1, ev.NOT_OBJECT: 1, ev.DUPLICATE_ID: 1, ev.MALFORMED_ID: 2, ev.NO_TARGETS: 1,
        ev.UNKNOWN_ID: 1,
    }
    assert qs.skipped_lines[ev.PARTIAL] == [4, 8, 10]
    assert qs.skipped_lines[ev.UNKNOWN_DOC] == [4, 5]
    report = qs.report()
    assert report.splitlines()[0].endswith("4 queries (1 generic, 3 published) with 6 gold targets")
    assert f"1 x {ev.BAD_JSON}: line 3" in report
    assert f"3 x {ev.PARTIAL}: line 4, 8, 10" in report


def test_clean_file_reports_one_line(tmp_path):
    f = write_lines(tmp_path / "q.jsonl", [{"query": "a", "relevant": ["d1"]}, "", {"query": "b", "relevant": ["d2_c0"]}])
    qs = ev.load_queries(f, FakeIndex())
    assert len(qs) == 2 and qs.skipped == {}
    assert len(qs.report().splitlines()) == 1


def test_sample_line_numbers_are_capped(tmp_path):
    f = write_lines(tmp_path / "q.jsonl", ["{bad"] * 8 + [{"query": "a", "relevant": ["d1"]}])
    qs = ev.load_queries(f, FakeIndex(), skip_bad_lines=True)
    assert qs.skipped[ev.BAD_JSON] == 8
    assert qs.skipped_lines[ev.BAD_JSON] == [1, 2, 3, 4, 5]
    assert "line 1, 2, 3, 4, 5, ..." in qs.report()


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(LocalcrError, match="query file not found"):
        ev.load_queries(tmp_path / "nope.jsonl", FakeIndex())
    with pytest.raises(LocalcrError, match="is a directory"):
        ev.load_queries(tmp_path, FakeIndex())


def test_nothing_usable_is_an_error(tmp_path):
    empty = write_lines(tmp_path / "empty.jsonl", ["", "  "])
    with pytest.raises(LocalcrError, match="holds no queries"):
        ev.load_queries(empty, FakeIndex())
    other = write_lines(tmp_path / "other.jsonl", [{"query": "a", "golden_chunk_uuids": [["X", 0]]},
                                                    {"query": "b", "relevant": ["zzz"]}])
    with pytest.raises(LocalcrError, match="another corpus") as err:
        ev.load_queries(other, FakeIndex())
    assert "\n" not in str(err.value)
    with pytest.raises(LocalcrError, match="holds no imported document uuids"):
        ev.load_queries(other, FakeIndex(external=False))
    garbage = write_lines(tmp_path / "garbage.jsonl", ["nope", "{}"])
    with pytest.raises(LocalcrError, match=r"no usable query \(1 x line is not valid JSON"):
        ev.load_queries(garbage, FakeIndex(), skip_bad_lines=True)


@pytest.mark.parametrize("line, what", [
    ("{bad json", "line is not valid JSON"),
    ("[1, 2]", "line is not a JSON object"),
    ('{"relevant": ["d1"]}', 'no "query" text'),
    ('{"query": "q"}', 'no "relevant", "spans" or "golden_chunk_uuids" list'),
    ('{"query": "q", "golden_chunk_uuids": [["U1", "x"]]}', "malformed id"),
])
def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path, line, what):
    """Metrics over part of a file read as metrics over the file: a malformed line stops the run unless the
    caller opts in to dropping it, and then the dropped queries are counted."""
    f = write_lines(tmp_path / "q.jsonl", [{"query": "a", "relevant": ["d1"]}, line])
    with pytest.raises(ArgumentError) as err:
        ev.load_queries(f, FakeIndex())
    assert str(err.value) == f"{f}:2: {what}; correct the line, or drop such lines with skip_bad_lines=True"
    qs = ev.load_queries(f, FakeIndex(), skip_bad_lines=True)
    assert len(qs) == 1 and qs.dropped == 1


def test_ids_of_another_index_are_left_out_without_an_error(tmp_path):
    f = write_lines(tmp_path / "q.jsonl", [{"query": "a", "relevant": ["d1"]}, {"query": "b", "relevant": ["zzz"]}])
    qs = ev.load_queries(f, FakeIndex())
    assert len(qs) == 1 and qs.dropped == 1 and qs.skipped[ev.NOTHING_LEFT] == 1


# ---------------------------------------------------------------------------------------------- configurations


def test_parse_config():
    assert parse_config("hybrid") == SearchConfig(name="hybrid")
    assert parse_config("dense") == SearchConfig(name="dense", mode="dense")
    assert parse_config("hybrid,fusion=weighted,alpha=0.3") == SearchConfig(name="hybrid,fusion=weighted", fusion="weighted", alpha=0.3)
    assert parse_config("hybrid,fusion=rrf") == SearchConfig(name="hybrid,fusion=rrf", fusion="rrf")
    assert parse_config("hybrid, rerank") == SearchConfig(name="hybrid,rerank", rerank=True)
    assert parse_config("lexical,window=1") == SearchConfig(name="lexical,window=1", mode="lexical", window=1)
    assert parse_config("Hybrid,fusion=weighted,rerank,candidates=50,name=best") == SearchConfig(
        name="best", fusion="weighted", rerank=True, candidates=50)
    assert parse_config("hybrid,fusion=weighted,alpha=0.5").name == "hybrid,fusion=weighted,alpha=0.5"
    assert parse_config("dense,rerank=false") == SearchConfig(name="dense", mode="dense")
    assert parse_config("dense,candidates=150").name == "dense"


def test_parse_ks():
    assert ev.parse_ks("5,10,20") == (5, 10, 20)
    assert ev.parse_ks(" 20, 5,5 ") == (5, 20)
    for bad in ("", "5,,10", "0", "-1", "five", "2.5"):
        with pytest.raises(LocalcrError, match="whole numbers >= 1"):
            ev.parse_ks(bad)


@pytest.mark.parametrize("text, message", [
    ("", "unknown search mode"),
    ("bm25", "unknown search mode"),
    ("hybrid,fusion=max", "fusion='max'"),
    ("hybrid,fusion=weighted,alpha=1.5", "a number from 0 to 1"),
    ("hybrid,fusion=weighted,alpha=x", "a number from 0 to 1"),
    ("hybrid,fusion=rrf,alpha=0.3", "alpha applies only to fusion=weighted"),
    ("dense,fusion=rrf", "only to hybrid"),
    ("hybrid,window=-1", "whole number >= 0"),
    ("hybrid,window=1.5", "whole number >= 0"),
    ("hybrid,candidates=0", "whole number >= 1"),
    ("hybrid,window", "needs a value"),
    ("hybrid,rerank=maybe", "rerank=true or rerank=false"),
    ("hybrid,topk=3", "unknown option 'topk'"),
    ("hybrid,,rerank", "empty option"),
    ("hybrid,window=1,window=2", "given twice"),
])
def test_parse_config_errors(text, message):
    with pytest.raises(LocalcrError, match=message.replace("(", r"\(")):
        parse_config(text)


# ---------------------------------------------------------------------------------------------- evaluate


def query_file(tmp_path):
    return write_lines(tmp_path / "q.jsonl", [
        {"query": "alpha", "relevant": ["d1_c0"]},
        {"query": "beta", "relevant": ["d2_c0", "d1_c1"]},
    ])


def test_evaluate_runs_every_config_and_aggregates(tmp_path):
    index = FakeIndex(rankings={
        ("dense", "alpha"): ["d1_c0", "d2_c0"],  # pass@1 = 1
        ("dense", "beta"): ["d1_c0", "d1_c1"],  # pass@1 = 0, pass@2 = 0.5
        ("lexical", "alpha"): ["d2_c0", "d1_c1"],  # nothing
        ("lexical", "beta"): ["d2_c0", "d1_c1"],  # everything by rank 2
    })
    qs = ev.load_queries(query_file(tmp_path), index)
    reranker = object()
    configs = [parse_config("dense"), parse_config("lexical,rerank,candidates=1")]
    results = ev.evaluate(index, qs, configs, ks=(2, 1), reranker=reranker, progress=False)
    dense, lexical = results
    assert dense.ks == (1, 2) and dense.n_queries == 2
    assert dense.metrics["pass@1"] == pytest.approx(0.5)
    assert dense.metrics["pass@2"] == pytest.approx(0.75)
    assert dense.metrics["mrr@2"] == pytest.approx(0.75)
    assert lexical.metrics["pass@2"] == pytest.approx(0.5)
    assert lexical.metrics["hit@1"] == pytest.approx(0.5)
    assert set(dense.latency_ms) == {"p50", "p95", "mean"}
    # one untimed warm-up plus one search per query, at k = max(ks); rerank only where asked
    assert len(index.calls) == 6
    assert {c["k"] for c in index.calls} == {2}
    assert [c["rerank"] for c in index.calls] == [None] * 3 + [reranker] * 3
    assert index.calls[-1]["candidates"] == 2  # never fewer candidates than k
    row = dense.per_query[1]
    assert row["config"] == "dense" and row["query"] == "beta" and row["query_id"] == "line2"
    assert row["targets"] == ["d2_c0", "d1_c1"] and row["missed"] == ["d2_c0"]
    assert row["retrieved"] == ["d1_c0", "d1_c1"] and row["first_relevant_rank"] == 2
    assert row["pass@2"] == 0.5

    out = tmp_path / "per-query.jsonl"
    ev.write_per_query(results, out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and lines[3]["config"] == "lexical,rerank,candidates=1"

    summary = ev.to_json(results, qs)
    json.dumps(summary)
    assert summary["ks"] == [1, 2] and summary["configs"][0]["metrics"]["pass@2"] == 0.75
    assert summary["configs"][1]["config"]["rerank"] is True and summary["skipped"] == {}

    table = ev.format_table(results, (2, 1))
    assert table.startswith("| metric ") and "@1 |" in table and "@2 |" in table and "75.00" in table and "0.750" in table
    # every metric at every k, each configuration on its own line under it
    lines = table.splitlines()
    for title in ev.METRIC_TITLES.values():
        (row,) = [line for line in lines if line.startswith(f"| {title} ")]
        assert len(row.split("|")) == 2 + 2 + 2  # metric, config, @1, @2
    assert sum(1 for line in lines if "| lexical,rerank,candidates=1 |" in line) == len(ev.METRICS) + 1  # + latency
    assert "p50 ms" in table


def test_evaluate_clears_the_query_cache_before_each_timed_run(tmp_path):
    events = []

    class CachingIndex(FakeIndex):
        def search(self, query, k=20, **kw):
            events.append("search")
            return super().search(query, k, **kw)

        def clear_query_cache(self):
            events.append("clear")

    index = CachingIndex()
    qs = ev.load_queries(query_file(tmp_path), index)
    ev.evaluate(index, qs, [parse_config("dense"), parse_config("lexical")], progress=False)
    assert events == ["search", "clear", "search", "search"] * 2


def test_evaluate_refuses_rerank_without_reranker_and_bad_arguments(tmp_path):
    index = FakeIndex()
    qs = ev.load_queries(query_file(tmp_path), index)
    with pytest.raises(LocalcrError, match="reranks but no reranker"):
        ev.evaluate(index, qs, [parse_config("hybrid,rerank")], progress=False)
    with pytest.raises(LocalcrError, match="distinct names"):
        ev.evaluate(index, qs, [parse_config("hybrid"), parse_config("hybrid,candidates=150")], progress=False)
    with pytest.raises(LocalcrError, match="cut-offs"):
        ev.evaluate(index, qs, [parse_config("hybrid")], ks=(0, 5), progress=False)
    with pytest.raises(LocalcrError, match="no search configuration"):
        ev.evaluate(index, qs, [], progress=False)
    assert index.calls == []


def test_write_per_query_error(tmp_path):
    with pytest.raises(LocalcrError, match="cannot write"):
        ev.write_per_query([], tmp_path / "missing-dir" / "out.jsonl")


# ---------------------------------------------------------------------------------------------- span gold


@dataclass
class SpanHit:
    doc_id: str
    start: int
    end: int
    chunk_id: str = ""


def test_span_metrics_on_a_hand_made_example():
    gold = [Target("span", "d1", start=10, end=30), Target("span", "d1", start=50, end=60)]
    hits = [SpanHit("d1", 0, 20), SpanHit("d2", 0, 50), SpanHit("d1", 20, 55)]
    s = score_ranking(hits, gold, ks=(1, 2, 3))
    # rank 1 covers half of the first span (found); rank 3 half of the second (found), with the first hit
    assert (s["pass@1"], s["pass@2"], s["pass@3"]) == (0.5, 0.5, 1.0)
    assert (s["precision@1"], s["precision@2"], s["precision@3"]) == (1.0, 0.5, 2 / 3)
    assert (s["mrr@3"], s["hit@1"], s["ndcg@1"]) == (1.0, 1.0, 1.0)
    assert s["ndcg@3"] == pytest.approx((1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))
    # gold: 30 characters; retrieved: 20, then 70, then 105 (d1's two chunks merged to 0..55)
    assert (s["token_recall@1"], s["token_precision@1"], s["iou@1"]) == (10 / 30, 10 / 20, 10 / 40)
    assert (s["token_recall@2"], s["token_precision@2"], s["iou@2"]) == (10 / 30, 10 / 70, 10 / 90)
    assert (s["token_recall@3"], s["token_precision@3"], s["iou@3"]) == (25 / 30, 25 / 105, 25 / 110)


def test_span_gold_from_lines_and_from_published_chunks(tmp_path):
    f = write_lines(tmp_path / "q.jsonl", [
        {"query": "a", "spans": [["d1", 0, 5], ["U2", 3, 9]]},
        {"query": "b", "golden_chunk_uuids": [["U1", 1]], "golden_chunks": [{"doc_uuid": "U1", "index": 1, "content": "beta"}],
         "golden_documents": [{"uuid": "U1", "content": "alpha beta gamma"}]},
    ])
    qs = ev.load_queries(f, FakeIndex(), gold="spans")
    assert [q.targets for q in qs.queries] == [
        [Target("span", "d1", start=0, end=5), Target("span", "d2", start=3, end=9)],
        [Target("span", "d1", start=6, end=10)],
    ]
    assert ev.load_queries(f, FakeIndex(), gold="chunks").queries[1].targets == [Target("chunk", "d1_c1", "beta")]
    bad = write_lines(tmp_path / "bad.jsonl", [{"query": "a", "spans": [["d1", 5, 2]]}])
    with pytest.raises(ArgumentError, match="bad.jsonl:1: span is not"):
        ev.load_queries(bad, FakeIndex())


def test_span_metrics_are_averaged_and_reported():
    gold = [Target("span", "d1", start=10, end=30)]
    rows = [score_ranking([SpanHit("d1", 0, 20)], gold, ks=(1,)), score_ranking([SpanHit("d1", 0, 40)], gold, ks=(1,))]
    means = ev.mean_metrics(rows, (1,))
    assert means["token_recall@1"] == (0.5 + 1.0) / 2 and means["iou@1"] == (10 / 30 + 20 / 40) / 2
    result = ev.ConfigResult(SearchConfig("hybrid"), (1,), means, {"p50": 1.0, "p95": 1.0, "mean": 1.0}, 2, [])
    table = ev.format_table([result], (1,))
    assert "| Token recall " in table and "| IoU " in table and "75.00" in table


def test_found_targets_knows_spans_as_the_metrics_do():
    """The per-query rows' "missed" and first relevant rank come from found_targets: a span is found at the rank
    whose hits together cover half of it, as score_ranking counts it."""
    gold = [Target("span", "d1", start=10, end=30), Target("span", "d1", start=50, end=60), Target("span", "d3", start=0, end=5)]
    hits = [SpanHit("d2", 0, 50), SpanHit("d1", 0, 20), SpanHit("d1", 20, 55)]
    assert ev.found_targets(hits, gold) == {gold[0]: 2, gold[1]: 3}
    assert score_ranking(hits, gold, ks=(3,))["mrr@3"] == 1 / 2
    assert ev.found_targets([H("c9"), H("c1", neighbours=["c2"])], [C("c2"), D("d")]) == {D("d"): 1, C("c2"): 2}



def test_an_answer_contains_its_gold_strictly_and_its_terms_leniently():
    """"contains gold" is the issue's figure; the lenient reading beside it forgives inflection and clitics only."""
    from localcr.evaluation.answers import contains, terms_contained

    assert not contains("Die Rasse war weiß [1].", "weiße", "de")  # the metric's strictness, kept
    assert terms_contained("Die Rasse war weiß [1].", "weiße", "de")
    assert terms_contained("Победила либеральная партия [1].", "Либеральной партии", "ru")
    assert terms_contained("هو المقسم المنعزل [1]", "مقسم منعزل", "ar") and terms_contained("3 [1]", "ثلاثة", "ar")
    assert contains("3 [1]", "ثلاثة", "ar")  # Arabic number words are numbers, as in every language read
    assert not terms_contained("Die Greens [1].", "Liberal Party", "de")
    assert not terms_contained("Виргиния [1]", "колонию Виргиния", "ru")  # a gold word missing is still a miss
    assert terms_contained("排名第 139 [1]。", "第 139", "zh")  # what contains the gold holds it leniently too
    # no space beside Han or kana counts, nor punctuation there: Chinese and Japanese are written without spaces
    assert contains("1900年，特斯拉获得了专利 [1]。", "1900 年", "zh")
    assert contains("与医生结成商业伙伴关系或向他们支付“回扣” [3]。", "与医生结成商业伙伴关系，或向他们支付“回扣”", "zh")
    assert not contains("Sky Digitalの衛星 [1]", "SkyDigital", "ja")  # words of other scripts keep their spaces


def test_an_estimate_holds_within_thirty_percent_of_the_time_after_it():
    """What is timed is the answer after the estimate was said (the model loaded and the instruction restored before
    it), against the unrounded figure; only where a time was said."""
    from localcr.evaluation.answers import estimate_held

    said = {"estimated_s": 8.0, "estimate_at_s": 1.0, "announced": True}
    assert estimate_held({**said, "total_s": 11.0}) == 1.0  # 10 s: 25% over
    assert estimate_held({**said, "total_s": 11.8}) == 0.0  # 35% over
    assert estimate_held({**said, "total_s": 6.2}) == 0.0  # 35% under
    assert estimate_held({**said, "total_s": 11.0, "announced": False}) is None  # too short to say a time
    assert estimate_held({"first_token_s": 0.0, "total_s": 0.01}) is None  # a cached answer: nothing was estimated
