"""The server's query batcher: concurrent requests' queries embedded together, each request given its own vector."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from localcr.embeddings import Embedder
from localcr.models import load_registry
from localcr.serve.batching import QueryBatcher


class FailingEmbedder:
    """Stands for an embedder (what QueryBatcher uses of one) whose model fails on every batch. The first batch waits
    until `release` is set, as a forward pass takes its time, so that requests made meanwhile queue behind it; every
    batch it was asked for is in `batches`."""

    id, spec = "failing", None

    def __init__(self):
        self.batches: list[list[str]] = []
        self.release = threading.Event()

    def embed_queries(self, queries):
        self.batches.append(list(queries))
        if len(self.batches) == 1:
            self.release.wait(timeout=30)
        raise RuntimeError("the model fell over")


@pytest.fixture(scope="module")
def minilm():
    return Embedder(load_registry().require("embedder", "minilm"))


@pytest.mark.model
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


def test_a_model_error_reaches_every_waiting_request_and_the_batcher_goes_on():
    failing = FailingEmbedder()
    batcher = QueryBatcher(failing, max_batch=8)
    queries = [f"question {n}" for n in range(6)]
    start, errors = threading.Barrier(len(queries)), {}

    def ask(query):
        start.wait()  # every request at once, as concurrent clients of a server
        try:
            batcher.embed_query(query)
        except RuntimeError as exc:
            errors[query] = str(exc)

    threads = [threading.Thread(target=ask, args=(q,), daemon=True) for q in queries]  # a lost one fails, not hangs
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while sum(map(len, failing.batches)) + len(batcher._queued) < len(queries) and time.monotonic() < deadline:
        time.sleep(0.005)  # until the first batch is running and every other request waits behind it
    failing.release.set()
    for t in threads:
        t.join(timeout=max(0.0, deadline + 10 - time.monotonic()))
    assert errors == {q: "the model fell over" for q in queries}  # every waiting request got the model's error ...
    assert sorted(q for batch in failing.batches for q in batch) == sorted(queries)  # ... each asked once ...
    # ... in one batch or two (the first, then all that waited behind it): never one query a pass
    assert len(failing.batches) <= 2, failing.batches

    with pytest.raises(RuntimeError, match="fell over"):  # and the batcher goes on: the next request is embedded
        batcher.embed_query("anything")
    assert failing.batches[-1] == ["anything"]
