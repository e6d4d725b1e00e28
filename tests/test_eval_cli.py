"""`localcr eval` and `localcr make-qa` end to end on a real index the test builds."""
from __future__ import annotations

import json

import pytest
from conftest import error_line, run


@pytest.fixture
def fruit_index(tmp_path):
    docs = tmp_path / "fruit"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha apples are red. They grow on trees in orchards and are picked in the autumn.\n")
    (docs / "b.md").write_text("# B\n\nbeta bananas are yellow.\n")
    (docs / "c.md").write_text("# C\n\ngamma grapes are green.\n")
    run("index", docs, "--index", tmp_path / "i", "-q")
    return tmp_path / "i"


def test_eval_reproduces_hand_computed_metrics(fruit_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join([
        json.dumps({"query": "bananas", "relevant": ["fruit/b.md#0"]}),  # found at rank 1
        json.dumps({"query": "grapes", "relevant": ["fruit/a.md"]}),  # a document id; lexical finds only c.md
        "",
        "{not json",
        json.dumps({"query": "kiwi", "relevant": ["other-corpus#3"]}),
    ]) + "\n")
    out = run("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical", "--k", "1,5", "--json")
    summary = json.loads(out[out.index("{"):])
    m = summary["configs"][0]["metrics"]
    # two queries kept: one perfect, one miss
    assert m["pass@1"] == m["pass@5"] == 0.5
    assert m["hit@5"] == 0.5 and m["mrr@5"] == 0.5 and m["ndcg@5"] == 0.5
    assert m["precision@1"] == 0.5 and m["precision@5"] == pytest.approx((1 / 5 + 0) / 2)
    assert summary["configs"][0]["queries"] == 2
    assert sum(summary["skipped"].values()) >= 2  # the bad JSON line and the foreign id


def test_eval_fails_when_nothing_is_left(fruit_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "x", "golden_chunk_uuids": [["nope", 0]]}) + "\n")
    assert "no usable query" in error_line("eval", "--index", fruit_index, "--queries", queries)


def test_eval_errors_name_the_options(fruit_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "bananas", "relevant": ["fruit/b.md#0"]}) + "\n")
    line = error_line("eval", "--index", fruit_index, "--queries", queries, "--config", "bm25")
    assert line.startswith("localcr: error: --config 'bm25': unknown search mode 'bm25'")
    line = error_line("eval", "--index", fruit_index, "--queries", queries, "--k", "5,,10")
    assert line == "localcr: error: --k '5,,10': write whole numbers >= 1 separated by commas, e.g. 5,10,20"


def test_make_qa_writes_questions_eval_can_read(fruit_index, tmp_path):
    out = tmp_path / "qa.jsonl"
    text = run("make-qa", "--index", fruit_index, "--out", out, "--limit", 2, "-q")
    assert "questions to" in text
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        assert line["query"].strip() and line["relevant"][0].startswith("fruit/")
    if lines:
        assert "Pass@5" in run("eval", "--index", fruit_index, "--queries", out, "--config", "hybrid")
