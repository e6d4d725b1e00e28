"""`localcr serve`: the real server in its own process on a free loopback port, exercised over HTTP."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.model, pytest.mark.loopback]


def test_search_returns_hits_with_contexts_and_matches(served):
    status, body = served.request("POST", "/api/search", {"query": "how long is the retry backoff?", "k": 3})
    assert status == 200, body
    top = body["hits"][0]
    assert top["path"].endswith("guide.md") and "backoff" in top["text"]
    assert "guide.md" in top["context"] and "Retries" in top["context"]
    assert any(top["text"][a:b].lower() == "backoff" for a, b in top["matches"]["text"])
