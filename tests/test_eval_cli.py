"""`localcr eval` and `localcr make-qa` end to end on a real index the test builds."""
from __future__ import annotations

import json

import pytest
from conftest import error_line, run

pytestmark = pytest.mark.model  # every test here builds an index with the bundled embedder


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
    line = error_line("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical")
    assert line == f"localcr: error: {queries}:4: line is not valid JSON; correct the line, or drop such lines with --skip-bad-lines"
    table = run("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical", "--skip-bad-lines")
    assert "metrics over 2 queries: 2 of the file's were dropped (listed above)" in table
    out = run("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical", "--k", "1,5", "--json",
              "--skip-bad-lines")
    summary = json.loads(out[out.index("{"):])
    m = summary["configs"][0]["metrics"]
    # two queries kept: one perfect, one miss
    assert m["pass@1"] == m["pass@5"] == 0.5
    assert m["hit@5"] == 0.5 and m["mrr@5"] == 0.5 and m["ndcg@5"] == 0.5
    assert m["precision@1"] == 0.5 and m["precision@5"] == pytest.approx((1 / 5 + 0) / 2)
    assert summary["configs"][0]["queries"] == 2
    assert summary["dropped_queries"] == 2  # the bad JSON line and the foreign id
    table = run("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical", "-k", "5,1", "--skip-bad-lines")
    rows = {cells[0]: cells[1:] for line in table.splitlines() if line.startswith("| ")
            for cells in [[cell.strip() for cell in line.strip("|").split("|")]]}
    assert rows["metric"] == ["config", "@1", "@5"]  # every metric at every k asked for
    assert rows["nDCG"] == rows["MRR"] == ["lexical", "0.500", "0.500"] and rows["Pass"] == ["lexical", "50.00", "50.00"]


def test_per_query_rows_with_span_gold_name_what_was_found(fruit_index, tmp_path):
    """Span gold in --per-query: a span the hits cover is not missed, and its rank is the first relevant one."""
    text = (tmp_path / "fruit" / "b.md").read_text()
    start = text.index("beta bananas")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "bananas", "query": "bananas", "spans": [["fruit/b.md", start, start + 12]]}) + "\n"
                       + json.dumps({"id": "kiwi", "query": "kiwi", "spans": [["fruit/c.md", 0, 3]]}) + "\n")
    rows = tmp_path / "rows.jsonl"
    run("eval", "--index", fruit_index, "--queries", queries, "--config", "lexical", "--k", "1", "--per-query", rows)
    found, missed = [json.loads(line) for line in rows.read_text().splitlines()]
    assert found["query_id"] == "bananas" and found["targets"] == [f"fruit/b.md[{start}:{start + 12}]"]
    assert found["missed"] == [] and found["first_relevant_rank"] == 1 and found["pass@1"] == 1.0
    assert missed["missed"] == ["fruit/c.md[0:3]"] and missed["first_relevant_rank"] is None


def test_eval_fails_when_nothing_is_left(fruit_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "x", "golden_chunk_uuids": [["nope", 0]]}) + "\n")
    assert "no usable query" in error_line("eval", "--index", fruit_index, "--queries", queries)


def test_eval_errors_name_the_options(fruit_index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query": "bananas", "relevant": ["fruit/b.md#0"]}) + "\n")
    line = error_line("eval", "--index", fruit_index, "--queries", queries, "--config", "bm25")
    assert line.startswith("localcr: error: --config 'bm25': unknown search mode 'bm25'")
    line = error_line("eval", "--index", fruit_index, "--queries", queries, "-k", "5,,10")
    assert line == "localcr: error: -k '5,,10': write whole numbers >= 1 separated by commas, e.g. 5,10,20"


def test_make_qa_writes_what_eval_reads(fruit_index, tmp_path, monkeypatch):
    """make-qa hands the stored chunks to the question writer and writes its questions as JSONL that eval
    reads (the writing itself is tested in test_questions)."""
    import localcr.questions

    asked = {}

    def questions(chunks_by_doc, documents, spec, per_chunk=1, *, limit=None, progress=True, **_):
        asked.update(docs=sorted(d.doc_id for d in documents), kinds={c.kind for cs in chunks_by_doc.values() for c in cs},
                     per_chunk=per_chunk, limit=limit)
        return [{"query": "what colour are bananas?", "relevant": [chunks_by_doc["fruit/b.md"][0].chunk_id]}]

    monkeypatch.setattr(localcr.questions, "make_questions", questions)
    out = tmp_path / "qa.jsonl"
    assert f"wrote 1 questions to {out}" in run("make-qa", "--index", fruit_index, "--out", out, "--limit", 2, "-q")
    assert asked == {"docs": ["fruit/a.md", "fruit/b.md", "fruit/c.md"], "kinds": {"markdown"}, "per_chunk": 1, "limit": 2}
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"query": "what colour are bananas?", "relevant": ["fruit/b.md#0"]}]
    report = run("eval", "--index", fruit_index, "--queries", out, "--config", "lexical", "--k", 1, "--json")
    assert json.loads(report[report.index("{"):])["configs"][0]["metrics"]["pass@1"] == 1.0


def test_make_qa_with_the_bundled_llm(fruit_index, tmp_path):
    out = tmp_path / "qa.jsonl"
    text = run("make-qa", "--index", fruit_index, "--out", out, "--limit", 2, "-q")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines, text  # the model wrote a question
    assert f"wrote {len(lines)} questions to {out}" in text
    chunk_ids = {"fruit/a.md#0", "fruit/b.md#0", "fruit/c.md#0"}
    for line in lines:
        assert line["query"].strip().endswith("?") and set(line["relevant"]) <= chunk_ids
