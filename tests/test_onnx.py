"""MiniLM on ONNX Runtime against its reference, sentence-transformers on torch: the same windows, the same vectors
(cosine >= 0.9999), and a hybrid search that never imports torch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from conftest import GUIDE, SCHEDULER

from localcr.bundled import verified
from localcr.documents import import_prechunked
from localcr.embeddings import RUNTIME_NAMES, Embedder, runtime
from localcr.embeddings.onnx import OnnxBackend, unsupported
from localcr.embeddings.onnx_export import (MIN_COSINE_INT8, _check_weights, checked_copy, copy_files, copy_path, is_checked,
                                            load_onnx_backend, quantize)
from localcr.errors import LocalcrError
from localcr.models import EMBEDDER_BACKENDS, load_registry
from localcr.search import Index
from localcr.structure import structural_contexts

TORCH_FAMILY = ("torch", "transformers", "sentence_transformers")
QUERIES = ["how are retries configured?", "FairScheduler quota", "Wo liegt der größte Hafen Europas?",
           "北京烤鸭", "what does run_target return when the queue is full and the job has no owner " * 12]


def _prechunked(tmp_path):
    """A corpus in the shared sets' pre-chunked format: code, prose in three languages, a chunk longer than
    MiniLM reads, odd characters."""
    docs = {"scheduler.py": SCHEDULER, "guide.md": GUIDE,
            "hafen.md": "# Hamburg\n\nDer Hamburger Hafen ist einer der größten Häfen Europas. Straße, Ærø, naïve café.",
            "beijing.md": "# 北京\n\n北京烤鸭是北京的传统名菜，以色泽红艳、肉质细嫩而闻名。",
            "long.md": "# Long\n\n" + " ".join(f"Paragraph {n}: the scheduler_retry_limit and RetryPolicy(max=3)." for n in range(80)),
            "odd.txt": "tabs\tand \x00 controls \u200b zero-width, emoji 🚀, ﬁ ligature, Ｆｕｌｌｗｉｄｔｈ"}
    corpus = []
    for n, (name, text) in enumerate(docs.items()):
        pieces = [p for p in text.split("\n\n") if p.strip()]
        corpus.append({"doc_id": name, "original_uuid": f"u{n}", "content": text,
                       "chunks": [{"chunk_id": f"{name}#{i}", "original_index": i, "content": p} for i, p in enumerate(pieces)]})
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(corpus))
    chunks = []
    for doc in import_prechunked(path):
        structural_contexts(doc, doc.given_chunks)
        chunks += doc.given_chunks
    return chunks


@pytest.fixture(scope="module")
def minilm():
    spec = load_registry().require("embedder", "minilm")
    return Embedder(spec), Embedder(replace(spec, params={**spec.params, "runtime": "torch"}))


@pytest.mark.model
def test_onnx_runtime_reproduces_sentence_transformers_windows_and_vectors(minilm, tmp_path):
    fast, reference = minilm
    assert type(fast.backend).__name__ == "OnnxBackend" and type(reference.backend).__name__ == "SentenceTransformersBackend"
    assert fast.id == reference.id and fast.dimension == reference.dimension == 384
    assert fast.max_length == reference.max_length == 256
    chunks = _prechunked(tmp_path)
    windows = fast.windows(chunks)
    assert [(w.chunk_row, w.text) for w in windows] == [(w.chunk_row, w.text) for w in reference.windows(chunks)]
    assert len(windows) > len(chunks)  # the long chunk was split, so clipping and counting were compared too
    texts = [w.text for w in windows] + [c.context * 20 for c in chunks]  # and text past the model's length
    assert fast.count_tokens(texts) == reference.count_tokens(texts)
    assert fast.backend.clip(texts[-1], 40) == reference.backend.clip(texts[-1], 40)
    for got, expected in ((fast.backend.encode(texts), reference.backend.encode(texts)),
                          (fast.embed_queries(QUERIES), reference.embed_queries(QUERIES))):
        assert got.shape == expected.shape and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
        assert (got * expected).sum(axis=1).min() >= 0.9999
    one_by_one = np.vstack([fast.embed_query(q) for q in QUERIES])  # padding in a batch changes nothing
    assert (one_by_one * fast.embed_queries(QUERIES)).sum(axis=1).min() >= 0.99999


def _modules_after(args: list[str]) -> list[str]:
    """The heavy modules a `localcr` command imported, run in a fresh process."""
    code = ("import sys\nfrom localcr.cli import main\nsys.argv = ['localcr'] + sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
            f"print(sorted(m for m in {TORCH_FAMILY + ('onnxruntime', 'tokenizers')!r} if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=os.environ, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stderr.strip().splitlines()[-1].replace("'", '"'))


@pytest.mark.model
def test_a_hybrid_search_does_not_import_torch_and_a_lexical_one_no_model_runtime(indexed):
    index = str(indexed.index)
    assert _modules_after(["search", "retries", "--index", index, "--mode", "hybrid"]) == ["onnxruntime", "tokenizers"]
    assert _modules_after(["search", "retries", "--index", index, "--mode", "dense"]) == ["onnxruntime", "tokenizers"]
    for args in (["search", "retries", "--index", index, "--mode", "lexical"], ["stats", "--index", index], ["--help"], ["cache"]):
        assert _modules_after(args) == [], args


@pytest.mark.model
def test_a_session_runs_as_its_embedder_is_used(indexed):
    """A build's threads spin and its weights are packed; an opened index's threads wait without spinning; the
    command line's one-query search packs no weights either (localcr.embeddings.PURPOSES)."""
    def options(backend) -> tuple[str, str]:
        session = backend.session.get_session_options()
        return tuple(session.get_session_config_entry(f"session.{name}") for name in ("intra_op.allow_spinning",
                                                                                        "disable_prepacking"))

    spec = load_registry().require("embedder", "minilm")
    assert options(Embedder(spec).backend) == ("1", "0")
    assert options(Index(indexed.index).embedder.backend) == ("0", "0")
    assert options(Index(indexed.index, one_query=True).embedder.backend) == ("0", "1")
    with pytest.raises(ValueError, match="purpose 'other'"):
        Embedder(spec, purpose="other")


@pytest.mark.model
def test_a_missing_copy_is_exported_checked_and_stamped_and_a_changed_one_is_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_MODELS_DIR", str(tmp_path / "models"))
    spec = load_registry().require("embedder", "minilm")
    backend = load_onnx_backend(spec, spec.resolve())  # no copy in this models directory: made now
    copy = copy_path(spec)
    graph, weights = copy_files(copy)
    assert copy.parent.parent == tmp_path / "models" / "onnx" and is_checked(copy)
    assert sorted(p.name for p in copy.parent.iterdir()) == sorted(f"{p.name}{s}" for p in (graph, weights) for s in ("", ".sha256"))
    assert weights.stat().st_size > 50 * graph.stat().st_size  # the weights are beside the graph, not in it
    assert backend.encode(["retries"]).shape == (1, 384)
    with open(weights, "ab") as f:
        f.write(b"\0")
    assert verified(graph) and not is_checked(copy)  # so the next load exports it again


@pytest.mark.model
def test_the_8_bit_copy_quantises_every_weight_product_the_same_way_each_time_and_stays_near_the_float_one(minilm, tmp_path):
    fast, _ = minilm
    path = fast.spec.resolve()
    float_copy = checked_copy(fast.spec, path)
    first, second = tmp_path / "first" / "model.onnx", tmp_path / "second" / "model.onnx"
    for target in (first, second):
        target.parent.mkdir()
        quantize(float_copy, target)
    # the same files each time: its vectors' cache key is the float model's fingerprint and "int8"
    assert [f.read_bytes() for f in copy_files(first)] == [f.read_bytes() for f in copy_files(second)]
    import onnx

    kinds = {node.op_type for node in onnx.load(first).graph.node}
    assert {"MatMulInteger", "QAttention"} <= kinds and not {"MatMul", "Attention"} & kinds
    vectors = OnnxBackend(fast.spec, path, first).encode(QUERIES)
    assert float(min((vectors * fast.backend.encode(QUERIES)).sum(axis=1))) >= MIN_COSINE_INT8


def test_weights_that_are_not_the_bundled_ones_are_refused(tmp_path):
    spec = load_registry().require("embedder", "minilm")
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    with pytest.raises(LocalcrError, match=r"not the file the bundled package carries .*re-run \./setup\.sh"):
        _check_weights(spec, tmp_path)


def test_models_the_export_does_not_cover_run_on_torch(tmp_path):
    spec = load_registry().require("embedder", "minilm")
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Transformer"}, '
                                           '{"type": "sentence_transformers.models.Pooling"}]')
    assert unsupported(tmp_path) is None and runtime(spec, tmp_path) == "onnx"
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Dense"}]')
    assert "sentence_transformers.models.Dense" in unsupported(tmp_path) and runtime(spec, tmp_path) == "torch"
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Transformer"}]')
    (tmp_path / "config.json").write_text('{"model_type": "t5"}')
    assert "'t5'" in unsupported(tmp_path) and runtime(spec, tmp_path) == "torch"
    assert runtime(replace(spec, params={**spec.params, "runtime": "onnx"}), tmp_path) == "onnx"  # asked for: its error says why
    with pytest.raises(LocalcrError, match=r"ONNX Runtime cannot run .*'t5'.*set runtime = \"torch\""):
        load_onnx_backend(spec, tmp_path)


def test_every_runtime_of_the_registry_has_a_name_for_localcr_models():
    assert {r for runtimes in EMBEDDER_BACKENDS.values() for r in runtimes} == set(RUNTIME_NAMES)


def test_the_registry_does_not_import_the_embedding_code():
    code = "import sys, localcr.models; print('localcr.embeddings' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
