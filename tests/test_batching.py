"""The server's query batcher: concurrent requests' queries embedded together, each request given its own vector."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from localcr.embeddings import Embedder
from localcr.models import load_registry
from localcr.serve.batching import QueryBatcher

pytestmark = pytest.mark.model


class FailingEmbedder(Embedder):
    def embed_queries(self, queries):
        raise RuntimeError("the model fell over")


@pytest.fixture(scope="module")
def minilm():
    return Embedder(load_registry().require("embedder", "minilm"))


def test_concurrent_queries_each_get_the_vector_of_a_lone_query(minilm):
    queries = [f"how does the scheduler treat team {n} when its quota runs out?" for n in range(24)]
    expected = {q: minilm.embed_query(q) for q in queries}
    batcher = QueryBatcher(minilm, max_batch=8)
    got: dict[str, np.ndarray] = {}

    def ask(query):
        got[query] = batcher.embed_query(query)

    threads = [threading.Thread(target=ask, args=(q,)) for q in queries]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got.keys() == expected.keys()
    for query in queries:
        np.testing.assert_allclose(got[query], expected[query], atol=1e-5)


def test_a_model_error_reaches_every_waiting_request_and_the_batcher_goes_on(minilm):
    failing = FailingEmbedder(minilm.spec)
    batcher = QueryBatcher(failing)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="fell over"):
            batcher.embed_query("anything")
