"""`localcr serve`: the real server in its own process on a free loopback port, exercised over HTTP."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import error_line, start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.model, pytest.mark.loopback]


def quoted(identifier: str) -> str:
    return urllib.parse.quote(identifier, safe="")


def test_search_returns_hits_with_contexts_and_matches(served):
    status, body = served.request("POST", "/api/search", {"query": "how long is the retry backoff?", "k": 3,
                                                           "highlight": True})
    assert status == 200, body
    top = body["hits"][0]
    assert top["path"].endswith("guide.md") and "backoff" in top["text"]
    assert "guide.md" in top["context"] and "Retries" in top["context"]
    assert any(top["text"][a:b].lower() == "backoff" for a, b in top["matches"]["text"])
    assert top["ranks"].keys() >= {"dense", "lexical", "fused"}
    assert "matches" not in served.request("POST", "/api/search", {"query": "retry"})[1]["hits"][0]


def test_every_search_option_of_the_cli_is_accepted_by_post_and_get(served):
    options = {"query": "fair scheduler heap", "k": 2, "mode": "hybrid", "fusion": "rrf", "alpha": 0.5,
               "candidates": 20, "window": 1}
    status, posted = served.request("POST", "/api/search", options)
    assert status == 200, posted
    status, got = served.request("GET", "/api/search?" + urllib.parse.urlencode(options))
    assert status == 200, got
    assert [h["chunk_id"] for h in posted["hits"]] == [h["chunk_id"] for h in got["hits"]]
    assert posted["hits"][0]["path"].endswith("scheduler.py")
    status, lexical = served.request("POST", "/api/search", {"query": "quota", "mode": "lexical"})
    assert status == 200 and all(set(h["ranks"]) == {"lexical", "fused"} for h in lexical["hits"])


def test_filters_by_post_and_by_get_with_repeated_globs(served):
    options = [("query", "retry backoff quotas"), ("k", 5), ("glob", "docs/**"), ("glob", "!release.md"), ("kind", "markdown")]
    status, got = served.request("GET", "/api/search?" + urllib.parse.urlencode(options))
    assert status == 200 and got["hits"] and {h["doc_id"] for h in got["hits"]} == {"orbit/docs/guide.md"}
    status, posted = served.request("POST", "/api/search", {"query": "retry backoff quotas", "k": 5,
                                                            "glob": ["docs/**", "!release.md"], "kind": "markdown"})
    assert [h["chunk_id"] for h in posted["hits"]] == [h["chunk_id"] for h in got["hits"]]
    status, none = served.request("POST", "/api/search", {"query": "retry", "glob": ["nowhere/*"]})
    assert status == 200 and none["hits"] == [] and none["unmatched"].endswith("passes --glob 'nowhere/*'")
    status, answer = served.request("POST", "/api/search", {"query": "retry", "kind": "movie"})
    assert status == 400 and answer["error"].startswith("kind='movie': unknown document kind")


@pytest.mark.parametrize("body, says", [
    ({"query": "x", "k": 1000}, "body.k: Input should be less than or equal to 100"),
    ({"query": "x" * 1001}, "body.query: String should have at most 1000 characters"),
    ({"query": "x", "candidates": 5000}, "body.candidates"),
    ({"query": "x", "window": 11}, "body.window"),
    ({"query": "x", "mode": "fuzzy"}, "body.mode"),
    ({"query": "x", "alpha": 2}, "body.alpha"),
    ({"query": ""}, "body.query"),
    ({"k": 3}, "body.query: Field required"),
    ({"query": "x", "path": "/etc/passwd"}, "body.path: Extra inputs are not permitted"),
])
def test_requests_beyond_the_limits_get_a_422_that_says_what(served, body, says):
    status, answer = served.request("POST", "/api/search", body)
    assert status == 422
    assert says in answer["error"] and "\n" not in answer["error"]


def test_malformed_json_and_oversized_bodies(served):
    status, answer = served.request("POST", "/api/search", b'{"query": "retry", k: 1}')
    assert status == 422 and answer["error"].startswith("body: malformed JSON (Expecting property name")
    status, _ = served.request("POST", "/api/search", json.dumps({"query": "x" * 20_000}).encode())
    assert status == 413


def test_a_document_and_a_chunk_with_its_neighbours(served):
    hit = served.request("POST", "/api/search", {"query": "quotas reset at midnight", "k": 1})[1]["hits"][0]
    status, document = served.request("GET", f"/api/documents/{quoted(hit['doc_id'])}")
    assert status == 200 and document["path"] == hit["path"]
    positions = [c["position"] for c in document["chunks"]]
    assert positions == sorted(positions) and len(positions) > 2 and all(c["context"] for c in document["chunks"])
    middle = document["chunks"][1]
    status, chunk = served.request("GET", f"/api/chunks/{quoted(middle['chunk_id'])}?window=1")
    assert status == 200
    assert chunk["chunk"]["text"] == middle["text"]
    assert [c["chunk_id"] for c in chunk["before"] + chunk["after"]] == [document["chunks"][0]["chunk_id"], document["chunks"][2]["chunk_id"]]


@pytest.mark.parametrize("path", ["/api/chunks/nope", "/api/documents/..%2F..%2Fetc%2Fpasswd", "/api/documents//etc/passwd",
                                  "/page/..%2F..%2Fservice.py", "/page/../http.py"])
def test_unknown_ids_and_paths_outside_the_index_are_404(served, path):
    status, answer = served.request("GET", path)
    assert status == 404, answer
    assert "root:" not in json.dumps(answer) and "import" not in json.dumps(answer)


def test_only_loopback_host_names_are_answered(served):
    """A web page that rebinds its own host name to 127.0.0.1 must not read the index."""
    assert served.request("GET", "/api/health", headers={"Host": "evil.example"})[0] == 400
    assert served.request("GET", "/api/health", headers={"Host": "localhost"})[0] == 200


def test_openapi_description_and_no_cdn_docs(served):
    status, spec = served.request("GET", "/openapi.json")
    assert status == 200 and {"/api/search", "/api/health", "/api/stats"} <= set(spec["paths"])
    assert served.request("GET", "/docs")[0] == 404


def test_stats_and_health(served):
    status, stats = served.request("GET", "/api/stats")
    assert status == 200 and stats["documents"] == 3 and stats["chunks"] > 3
    assert served.request("GET", "/api/health")[1]["generation"] == stats["generation"]


def test_concurrent_requests_all_answer_the_same(served):
    queries = ["retry backoff", "fair share between teams", "quota alerts", "journal port 7700"]
    expected = {q: served.request("POST", "/api/search", {"query": q})[1]["hits"] for q in queries}
    failures: list[str] = []

    def client(n):
        for i in range(6):
            q = queries[(n + i) % len(queries)]
            status, body = served.request("POST", "/api/search", {"query": q})
            if status != 200 or body["hits"] != expected[q]:
                failures.append(f"{q}: {status}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_a_rebuild_is_picked_up_without_restart_and_no_request_fails(served):
    before = served.request("GET", "/api/health")[1]["generation"]
    (served.corpus / "docs" / "tides.md").write_text("# Tides\n\nThe harbour gate closes two hours before the neap tide.\n")
    statuses: list[int] = []
    done = threading.Event()

    def keep_asking():
        while not done.is_set():
            statuses.append(served.request("POST", "/api/search", {"query": "harbour gate neap tide"})[0])

    asker = threading.Thread(target=keep_asking)
    asker.start()
    try:
        build = subprocess.run([sys.executable, "-m", "localcr", "index", str(served.corpus), "--index", str(served.index),
                                "--contexts", "structural", "--chunk-tokens", "48", "-q"],
                               env={**os.environ, "LOCALCR_CACHE_DIR": str(served.cache)}, capture_output=True, text=True)
        assert build.returncode == 0, build.stderr
        deadline = time.monotonic() + 30
        while served.request("GET", "/api/health")[1]["generation"] == before and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        done.set()
        asker.join()
    assert served.request("GET", "/api/health")[1]["generation"] != before
    hits = served.request("POST", "/api/search", {"query": "harbour gate neap tide", "k": 1})[1]["hits"]
    assert hits[0]["path"].endswith("tides.md")
    assert statuses and set(statuses) == {200}


def test_rerank_without_a_configured_reranker_is_a_clear_error_that_names_no_server_file(served):
    status, answer = served.request("POST", "/api/search", {"query": "retry", "rerank": True, "reranker": "absent"})
    assert status == 400 and answer["error"] == "reranker 'absent' is not available on this server (its log says why)"
    assert "models.toml" not in answer["error"]


def test_a_token_is_required_on_every_api_request_and_reranking_works(served, tiny_reranker_dir, tmp_path):
    """One more server (a token, and a registry with a tiny real cross-encoder) for both checks."""
    models = tmp_path / "models.toml"
    models.write_text((ROOT / "models.toml").read_text() + f'\n[reranker.tiny]\npath = "{tiny_reranker_dir}"\n')
    server = start_server(served.index, served.cache, token="s3cret-token", models=models)
    try:
        status, reranked = server.request("POST", "/api/search", {"query": "retry backoff", "rerank": True,
                                                                  "reranker": "tiny", "candidates": 10, "k": 3})
        assert status == 200, reranked
        assert [h["ranks"]["rerank"] for h in reranked["hits"]] == [1, 2, 3]
        assert server.request("GET", "/api/health")[0] == 200
        for wrong in ({"Authorization": "Bearer nope"}, {"Authorization": "s3cret-token"}):
            status, answer = server.request("POST", "/api/search", {"query": "retry"}, headers=wrong)
            assert status == 401 and "token" in answer["error"]
        assert server.request("POST", "/api/search", {"query": "retry"})[0] == 200
        status, answer = server.request("POST", "/api/ask", {"question": "retry?"}, headers={"Authorization": "Bearer nope"})
        assert status == 401 and "token" in answer["error"]
        assert server.request("GET", "/", headers={"Authorization": ""})[0] == 200  # the page itself is not secret
    finally:
        stop_server(server)


def _ask_lines(served, question: str, lines: int | None = None) -> list[dict]:
    """The JSON lines of POST /api/ask as they arrive (only the first `lines`, then the connection is dropped)."""
    import http.client

    host, port = served.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=300)
    connection.request("POST", "/api/ask", json.dumps({"question": question, "k": 3}), {"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "application/x-ndjson"
    events = []
    while lines is None or len(events) < lines:
        line = response.readline()
        if not line:
            break
        events.append(json.loads(line))
    connection.close()
    return events


def test_ask_streams_the_answer_and_a_client_gone_mid_answer_frees_the_llm(served):
    """The bundled 1.5B answers over HTTP: its sources first, then the text in pieces as it is written, then the checked
    answer. A client that leaves after the first line stops that answer, and the next question is answered."""
    events = _ask_lines(served, "How many times is a failed job retried?")
    assert events[0]["event"] == "sources" and events[-1]["event"] == "answer"
    assert sum(e["event"] == "text" for e in events) > 1  # streamed, not sent at the end
    answer = events[-1]
    assert not answer["refused"] and answer["citations"], answer
    assert all(s["path"].endswith("guide.md") for s in answer["sources"] if s["number"] in answer["citations"])
    assert _ask_lines(served, "Which port does the daemon listen on?", lines=1)[0]["event"] == "sources"
    again = _ask_lines(served, "How many times is a failed job retried?")[-1]  # waits for the LLM: freed, or a hang
    assert again["cached"] and again["answer"] == answer["answer"]
    status, body = served.request("POST", "/api/ask", {"question": ""})
    assert status == 422 and "body.question" in body["error"]


def test_binding_beyond_loopback_needs_a_token(served, monkeypatch):
    monkeypatch.delenv("LOCALCR_TOKEN", raising=False)
    line = error_line("serve", "--index", served.index, "--host", "0.0.0.0")
    assert "--token" in line and "LOCALCR_TOKEN" in line


def test_a_generation_that_fails_to_open_is_tried_once_and_the_next_one_is_served(indexed, tmp_path, monkeypatch):
    import shutil

    from localcr.serve.service import Service
    from localcr.store import _switch_marker as write_marker
    from localcr.store import read_marker

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(indexed.cache))
    directory = tmp_path / "index"
    shutil.copytree(indexed.index, directory)
    service = Service(directory)
    serving = service.index.store.generation
    opened = []
    real_open = service._open
    monkeypatch.setattr(service, "_open", lambda embedder: opened.append(1) or real_open(embedder))

    (directory / "gen-broken").mkdir()
    (directory / "gen-broken" / "manifest.json").write_text("{ not json")
    write_marker(directory, "gen-broken")
    for _ in range(3):
        assert service.index.store.generation == serving  # still answering from what it had
    assert len(opened) == 1

    shutil.copytree(directory / serving, directory / "gen-copy")
    write_marker(directory, "gen-copy")
    assert service.index.store.generation == "gen-copy" and len(opened) == 2
    assert read_marker(directory)["current"] == "gen-copy"
