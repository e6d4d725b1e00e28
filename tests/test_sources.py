"""Models already on the machine: fake Ollama, LM Studio and Hugging Face cache stores laid out as those tools lay
them out, resolved by name from models.toml, listed by `localcr models --discover`, and every miss or damaged
store said in one line. The GGUF files here are headers the `gguf` package writes (what discovery reads); the model
tests point an Ollama name at the bundled Gemma 3 270M and at the tiny GGUF reranker, and run them."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import run

from localcr.errors import LocalcrError
from localcr.models import load_registry


def fake_gguf(path: Path, architecture: str, *, pooling: int | None = None, chat: bool = False,
              tensors: tuple[str, ...] = ("token_embd.weight",)) -> Path:
    """A GGUF file with the header fields discovery reads and tiny tensors."""
    import gguf
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), architecture)
    if pooling is not None:
        writer.add_pooling_type(gguf.PoolingType(pooling))
    if chat:
        writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    writer.add_token_list(["a", "b", "c"])
    for name in tensors:
        writer.add_tensor(name, np.zeros((2, 2), dtype="float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def ollama_store(root: Path, name: str, blob_source: Path | None = None) -> Path:
    """Ollama's layout for `name` (model[:tag]): a manifest listing a template layer and the model layer, the model's
    blob named by its sha256 (a link to blob_source, or a fake GGUF)."""
    model, _, tag = name.partition(":")
    parts = (["registry.ollama.ai", "library"][: 3 - len(model.split("/"))]) + model.split("/")
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    staged = blob_source or fake_gguf(root / "staging.gguf", "qwen2", chat=True)
    digest = hashlib.sha256(staged.read_bytes()).hexdigest() if blob_source is None else hashlib.sha256(name.encode()).hexdigest()
    blob = blobs / f"sha256-{digest}"
    if blob_source is None:
        staged.rename(blob)
    elif not blob.exists():
        blob.symlink_to(blob_source)
    manifest = root / "manifests" / Path(*parts) / (tag or "latest")
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + "0" * 64, "size": 2},
        "layers": [{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "1" * 64, "size": 10},
                   {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": 1}]}))
    return blob


def hf_cache_repo(cache: Path, repo: str, files: dict[str, str], revision: str = "abc123") -> Path:
    """The Hugging Face cache's layout: files in blobs/, the snapshot's entries linking to them, refs/main naming it."""
    folder = cache / ("models--" + repo.replace("/", "--"))
    snapshot = folder / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (folder / "blobs").mkdir()
    for name, text in files.items():
        blob = folder / "blobs" / hashlib.sha256(text.encode()).hexdigest()
        blob.write_text(text)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision)
    return snapshot


def registry(tmp_path: Path, role: str, **location: str) -> Path:
    toml = tmp_path / "models.toml"
    keys = "".join(f"{key} = {json.dumps(value)}\n" for key, value in location.items())
    toml.write_text(f"[{role}.m]\n{keys}", encoding="utf-8")
    return toml


def resolve(tmp_path: Path, role: str, **location: str) -> Path:
    return load_registry(registry(tmp_path, role, **location)).require(role, "m").resolve()


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """Empty stores in tmp_path: Ollama's through $OLLAMA_MODELS, the HF cache through $HF_HUB_CACHE, LM Studio's
    under a home directory of its own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "ollama"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HOME", raising=False)
    return tmp_path


def test_ollama_names_resolve_to_the_model_layers_blob(stores):
    root = stores / "ollama"
    for name, written in (("qwen2.5:7b-instruct", "qwen2.5:7b-instruct"), ("gemma3", "gemma3:latest"),
                          ("someone/coder:q4", "someone/coder:q4"), ("example.com/team/model:v1", "example.com/team/model:v1")):
        blob = ollama_store(root, written)
        assert resolve(stores, "llm", ollama=name) == blob
    assert resolve(stores, "llm", ollama="gemma3:latest") == resolve(stores, "llm", ollama="gemma3")


def test_ollama_misses_and_damage_are_one_line(stores):
    root = stores / "ollama"
    blob = ollama_store(root, "qwen2.5:7b-instruct")
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / "qwen2.5" / "7b-instruct"

    def error(name: str = "qwen2.5:7b-instruct") -> str:
        with pytest.raises(LocalcrError) as caught:
            resolve(stores, "llm", ollama=name)
        message = str(caught.value)
        assert "\n" not in message and "[llm.m]" in message
        return message

    missing = error("llama3:8b")
    assert str(root / "manifests" / "registry.ollama.ai" / "library" / "llama3" / "8b") in missing
    assert "$OLLAMA_MODELS" in missing and "ollama pull llama3:8b" in missing and "/usr/share/ollama" not in missing
    assert "not an Ollama model name" in error("../../etc:passwd")
    manifest.write_text("{not json")
    assert "is not a readable Ollama manifest" in error()
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.license", "digest": "x"}]}))
    assert "lists no model layer" in error()
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "../../x"}]}))
    assert "not a sha256 digest" in error()
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                                "digest": "sha256:" + "f" * 64}]}))
    assert f"blob sha256-{'f' * 64}, which is not in {root / 'blobs'}" in error()
    (root / "blobs" / f"sha256-{'e' * 64}").write_bytes(b"junk")  # a blob that is no GGUF file
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                                "digest": "sha256:" + "e" * 64}]}))
    assert "is not a GGUF file" in error()
    assert blob.is_file()
    # and `localcr models` shows such a model as missing, with the line, not a traceback
    out = run("--models", registry(stores, "llm", ollama="llama3:8b"), "models")
    assert "MISSING" in out and "ollama pull llama3:8b" in out and "Traceback" not in out


def test_hub_ids_resolve_only_against_the_local_cache(stores, monkeypatch):
    snapshot = hf_cache_repo(stores / "hf", "BAAI/bge-reranker-base", {"config.json": '{"architectures": ["XLMRobertaForSequenceClassification"]}'})
    assert resolve(stores, "reranker", hub="BAAI/bge-reranker-base") == snapshot
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(stores / "hf-home"))
    moved = hf_cache_repo(stores / "hf-home" / "hub", "BAAI/bge-reranker-base", {"config.json": "{}"}, revision="def456")
    assert resolve(stores, "reranker", hub="BAAI/bge-reranker-base") == moved
    with pytest.raises(LocalcrError) as caught:
        resolve(stores, "reranker", hub="BAAI/bge-reranker-v2-m3")
    message = str(caught.value)
    assert "\n" not in message and "not in the local Hugging Face cache" in message and "never downloads" in message
    assert str(stores / "hf-home" / "hub" / "models--BAAI--bge-reranker-v2-m3") in message
    assert "huggingface-cli download BAAI/bge-reranker-v2-m3" in message
    out = run("--models", registry(stores, "reranker", hub="BAAI/bge-reranker-v2-m3"), "models")
    assert "MISSING" in out and "not in the local Hugging Face cache" in out and "Traceback" not in out
    # a path written as a hub id says to use hub =
    with pytest.raises(LocalcrError, match="write hub = 'BAAI/bge-reranker-base'"):
        resolve(stores, "reranker", path="BAAI/bge-reranker-base")


def test_a_cached_gguf_repository_gives_its_model_file_and_a_dangling_link_is_named(stores):
    snapshot = hf_cache_repo(stores / "hf", "Qwen/Qwen2.5-7B-Instruct-GGUF", {"README.md": "x"})
    gguf = fake_gguf(stores / "staging" / "q.gguf", "qwen2", chat=True)
    (snapshot / "qwen2.5-7b-instruct-q4_k_m.gguf").symlink_to(gguf)
    assert resolve(stores, "llm", hub="Qwen/Qwen2.5-7B-Instruct-GGUF") == snapshot / "qwen2.5-7b-instruct-q4_k_m.gguf"
    gguf.unlink()
    with pytest.raises(LocalcrError, match="points at a blob that is missing from the cache"):
        resolve(stores, "llm", hub="Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf")


def test_lm_studio_files_by_publisher_and_repository(stores):
    folder = stores / "home" / ".lmstudio" / "models" / "lmstudio-community" / "Qwen2.5-7B-Instruct-GGUF"
    model = fake_gguf(folder / "Qwen2.5-7B-Instruct-Q4_K_M.gguf", "qwen2", chat=True)
    fake_gguf(folder / "mmproj-model-f16.gguf", "clip")  # a vision projector is not the model
    assert resolve(stores, "llm", lmstudio="lmstudio-community/Qwen2.5-7B-Instruct-GGUF") == model
    fake_gguf(folder / "Qwen2.5-7B-Instruct-Q8_0.gguf", "qwen2")
    with pytest.raises(LocalcrError, match=r"holds 2 GGUF files \(Qwen2.5-7B-Instruct-Q4_K_M.gguf, Qwen2.5-7B-Instruct-Q8_0.gguf\)"):
        resolve(stores, "llm", lmstudio="lmstudio-community/Qwen2.5-7B-Instruct-GGUF")
    assert resolve(stores, "llm", lmstudio="lmstudio-community/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q8_0.gguf").name.endswith("Q8_0.gguf")
    with pytest.raises(LocalcrError, match=r"not in .*\.lmstudio/models or .*lm-studio/models: download it in LM Studio"):
        resolve(stores, "llm", lmstudio="nobody/nothing")


def test_an_entry_names_exactly_one_location(stores):
    with pytest.raises(LocalcrError, match=r"needs exactly one of .* \(it has path, ollama\)"):
        load_registry(registry(stores, "llm", path="/x.gguf", ollama="qwen2.5"))


def test_discover_lists_every_store_by_role_with_the_lines_to_use_each(stores):
    ollama_store(stores / "ollama", "qwen2.5:7b-instruct")
    lmstudio = stores / "home" / ".lmstudio" / "models"
    fake_gguf(lmstudio / "gpustack" / "bge-reranker-v2-m3-GGUF" / "bge-reranker-v2-m3-Q8_0.gguf", "bert", pooling=4,
              tensors=("token_embd.weight", "cls.weight", "cls.output.weight"))
    fake_gguf(lmstudio / "nomic-ai" / "nomic-embed-text-v1.5-GGUF" / "nomic-embed-text-v1.5.Q8_0.gguf", "nomic-bert", pooling=1)
    hf = stores / "hf"
    hf_cache_repo(hf, "BAAI/bge-reranker-base", {"config.json": json.dumps(
        {"architectures": ["XLMRobertaForSequenceClassification"], "id2label": {"0": "LABEL_0"}})})
    hf_cache_repo(hf, "sentence-transformers/all-MiniLM-L6-v2", {"config.json": '{"architectures": ["BertModel"]}', "modules.json": "[]"})
    hf_cache_repo(hf, "Qwen/Qwen2.5-0.5B-Instruct", {"config.json": '{"architectures": ["Qwen2ForCausalLM"]}'})
    hf_cache_repo(hf, "broken/config", {"config.json": "{not json"})

    found = json.loads(run("models", "--discover", "--json"))
    rows = {(m["source"], m["name"]): m for m in found["models"]}
    assert found["looked_in"]["Ollama"] == str(stores / "ollama")
    assert set(rows) == {("ollama", "qwen2.5:7b-instruct"),
                         ("lmstudio", "gpustack/bge-reranker-v2-m3-GGUF/bge-reranker-v2-m3-Q8_0.gguf"),
                         ("lmstudio", "nomic-ai/nomic-embed-text-v1.5-GGUF/nomic-embed-text-v1.5.Q8_0.gguf"),
                         ("hub", "BAAI/bge-reranker-base"), ("hub", "sentence-transformers/all-MiniLM-L6-v2"),
                         ("hub", "Qwen/Qwen2.5-0.5B-Instruct")}
    roles = {key: (m["role"], m["runnable"]) for key, m in rows.items()}
    assert roles[("ollama", "qwen2.5:7b-instruct")] == ("llm", True)
    assert roles[("lmstudio", "gpustack/bge-reranker-v2-m3-GGUF/bge-reranker-v2-m3-Q8_0.gguf")] == ("reranker", True)
    assert roles[("lmstudio", "nomic-ai/nomic-embed-text-v1.5-GGUF/nomic-embed-text-v1.5.Q8_0.gguf")] == ("embedder", False)
    assert roles[("hub", "BAAI/bge-reranker-base")] == ("reranker", True)
    assert roles[("hub", "sentence-transformers/all-MiniLM-L6-v2")] == ("embedder", True)
    assert roles[("hub", "Qwen/Qwen2.5-0.5B-Instruct")] == ("llm", False)
    assert rows[("ollama", "qwen2.5:7b-instruct")]["toml"] == ['[llm."qwen2.5-7b-instruct"]', 'ollama = "qwen2.5:7b-instruct"',
                                                               'prompt_style = "chat"']
    # every line printed for a runnable model makes a registry entry that resolves to that model
    for (source, name), m in rows.items():
        if m["runnable"]:
            toml = stores / f"{source}.toml"
            toml.write_text("\n".join(m["toml"]) + "\n")
            registry_ = load_registry(toml)
            (spec,) = registry_.models[m["role"]].values()
            assert spec.resolve() == Path(m["path"])

    text = run("models", "--discover")
    assert "never downloads" in text and "\nllm:\n" in text and "\nreranker:\n" in text and "\nembedder:\n" in text
    assert '      hub = "BAAI/bge-reranker-base"' in text
    assert "cannot run (safetensors weights: localcr runs LLMs as GGUF" in text


def test_discover_with_no_stores_says_where_it_looked(stores, monkeypatch):
    text = run("models", "--discover")
    assert str(stores / "ollama") in text and str(stores / "hf") in text and "no models found there" in text
    monkeypatch.delenv("OLLAMA_MODELS")  # then the user's store, and the Linux service's
    assert f"{stores / 'home' / '.ollama' / 'models'}, /usr/share/ollama/.ollama/models" in run("models", "--discover")


@pytest.mark.model
def test_an_ollama_name_runs_the_bundled_gemma_through_llama_cpp(stores):
    from localcr.llm import LlamaRunner

    gemma = load_registry().require("llm", "gemma3-270m").resolve()
    blob = ollama_store(stores / "ollama", "gemma3:270m", blob_source=gemma)
    toml = registry(stores, "llm", ollama="gemma3:270m")
    spec = load_registry(toml).require("llm", "m")
    assert spec.resolve() == blob
    runner = LlamaRunner(spec)
    try:
        done = runner.complete(runner.tokenize("The capital of France is", bos=True), [], max_tokens=4)
        assert done.tokens > 0
    finally:
        runner.close()
    out = run("--models", toml, "models")
    assert "present" in out and str(blob) in out and "speed here: not measured yet" in out


@pytest.mark.model
def test_a_gguf_reranker_named_by_ollama_runs_in_llama_cpp(stores, spread_reranker_gguf):
    from localcr.rerankers import load_reranker

    ollama_store(stores / "ollama", "tiny-reranker:f32", blob_source=spread_reranker_gguf)
    toml = registry(stores, "reranker", ollama="tiny-reranker:f32")
    reranker = load_reranker(load_registry(toml), "m")
    assert type(reranker).__name__ == "LlamaReranker"
    by_path = load_reranker(load_registry(registry(stores, "reranker", path=str(spread_reranker_gguf))), "m")
    passages = ["the scheduler retries failed jobs", "fn main() {}"]
    assert reranker.score("retries", passages) == by_path.score("retries", passages)
    assert "llama.cpp, rank pooling (GGUF)" in run("--models", toml, "models")
