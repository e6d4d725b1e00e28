"""Fuzzing the parts that meet untrusted input: file bytes, document text, queries, search settings.

Nothing but LocalcrError (or a reader's ReaderError, which becomes a skipped file) may escape, and the
invariants hold for any input: offsets point at the text, displayed text has no control characters.
Random Unicode here includes lone surrogates (what undecodable command-line bytes become) and
right-to-left marks.
"""
from __future__ import annotations

import dataclasses
import io
import random
import zipfile

import pytest
from conftest import make_pdf, saved
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from localcr.chunking import chunk_document
from localcr.documents import Document, load_paths
from localcr.errors import LocalcrError
from localcr.evaluation import SearchConfig, describe, parse_config
from localcr.lexical import tokenize
from localcr.readers import ReaderError, html, office, pdf, plain
from localcr.structure import structural_contexts
from localcr.text import identifier_parts, printable, spell_out_identifiers, words

ANY_CHARACTER = st.characters(blacklist_categories=())  # surrogates and every control character included
TEXTS = st.one_of(
    st.text(ANY_CHARACTER, max_size=400),
    st.text(st.sampled_from("# \n\n```\tdef class fn ( ) { } ; : - * _ é 日本 \u200f\u202e \x1b[31m"), max_size=400),
)
KINDS = ["text", "markdown", "rst", "html", "code:py", "code:rs", "code"]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=2000))
def test_readers_turn_any_bytes_into_text_or_a_reason(data):
    for reader in (plain.read, html.read, pdf.read, office.read_docx, office.read_pptx):
        try:
            read = reader(data)
        except ReaderError as exc:
            assert str(exc)
        else:
            assert isinstance(read.text, str) and isinstance(read.encoding, str)


def _word_count(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


@FUZZ
@given(TEXTS, st.sampled_from(KINDS), st.integers(8, 60), st.integers(0, 7))
def test_chunks_and_structural_contexts_of_any_text(text, kind, max_tokens, overlap):
    doc = Document(doc_id="d", path="d", kind=kind, text=text, size=len(text))
    chunks = chunk_document(doc, _word_count, max_tokens, overlap)
    for chunk in chunks:
        assert doc.text[chunk.start:chunk.end] == chunk.text
    structural_contexts(doc, chunks)
    assert all(isinstance(c.context, str) for c in chunks)


@FUZZ
@given(TEXTS)
def test_tokenising_and_display_of_any_text(text):
    assert all(isinstance(t, str) and t for t in tokenize(text))
    for word in words(text):
        identifier_parts(word)
    spell_out_identifiers(text)
    shown = printable(text)
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) < 0xA0 for c in shown)


# Configurations as a person writes them: a mode and options, some of which contradict each other (fusion off hybrid,
# alpha without fusion=weighted, an option given twice), so that as many parse as fail.
WRITTEN_CONFIGS = st.builds(
    lambda mode, options: ",".join([mode, *options]),
    st.sampled_from(["hybrid", "Dense", " lexical "]),
    st.lists(st.sampled_from(["fusion=weighted", "fusion=RRF", "alpha=0.7", "alpha = 1", "rerank", "expand=yes",
                              "navigate=off", "rerank=true", "window=2", "candidates=40", "glob=docs/**", "glob=!*.md",
                              "kind=markdown", "lang=de", "name=mine"]), max_size=6),
)
BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}


def _written(spec: str) -> dict:
    """What a configuration that parsed was written to set, read off its text: the mode, and each option given
    (every glob, in order)."""
    mode, *options = [part.strip() for part in spec.split(",")]
    said: dict = {"mode": mode.lower()}
    for option in options:
        key, sep, value = (side.strip() for side in option.partition("="))
        key = key.lower()
        if key == "glob":
            said["glob"] = (*said.get("glob", ()), value)
        elif key in ("rerank", "expand", "navigate"):
            said[key] = BOOLEAN_WORDS[value.lower()] if sep else True
        elif key in ("window", "candidates"):
            said[key] = int(value)
        elif key == "alpha":
            said[key] = float(value)
        else:  # fusion is lower-cased; kind, lang and name are kept as written
            said[key] = value.lower() if key == "fusion" else value
    return said


@FUZZ
@given(st.text(ANY_CHARACTER, max_size=60) | WRITTEN_CONFIGS
       | st.text(st.sampled_from("hybriddenslexcal,=.0123456789 fusionweightedalpharerankwindowcandidatesname"), max_size=60))
@example("Hybrid, fusion=weighted, alpha=0.25, rerank, window=2, candidates=40, glob=docs/**, glob=!*.md, kind=markdown, "
         "lang=de, name=best")
@example("dense,expand=no,navigate,window=0")
@example("lexical")
def test_search_configurations_parse_to_what_they_say_or_fail_cleanly(spec):
    """A configuration either fails with a LocalcrError or sets exactly what its text says, every other setting
    staying its default; its name is the name it was given, else its canonical spelling, which parses back to it."""
    try:
        cfg = parse_config(spec)
    except LocalcrError:
        return
    said = _written(spec)
    for field in dataclasses.fields(SearchConfig):
        if field.name != "name":
            assert getattr(cfg, field.name) == said.get(field.name, field.default), (spec, field.name)
    assert cfg.name == said.get("name", describe(cfg))
    again = parse_config(describe(cfg))
    assert dataclasses.replace(again, name=cfg.name, alpha=cfg.alpha) == cfg
    assert again.alpha == pytest.approx(cfg.alpha, rel=1e-5)  # written with 6 significant digits


SAMPLES = {
    "guide.md": "---\ntitle: Guide\n---\n# Guide\n\n## Retries\n\nA failed job is retried three times.\n",
    "page.html": "<html><head><title>T</title><script>x()</script></head><body><h1>A</h1><p>b &amp; c</p></body></html>",
    "tool.py": "class Scheduler:\n    def next_job(self):\n        return None  # nothing to run\n",
    "notes.txt": "Café menu: crème brûlée.\n",
}


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """Random edits of the kinds that break parsers: flipped, deleted, inserted or repeated bytes, or a cut. In
    a zip container (DOCX, PPTX) half the time one member is edited and the container rebuilt, so that the
    parser behind the zip layer (which a raw edit almost always fails at its checksum) is reached too."""
    if data.startswith(b"PK") and rng.random() < 0.5:
        return _mutate_member(data, rng)
    return _mutate_bytes(data, rng)


def _mutate_member(data: bytes, rng: random.Random) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    chosen = rng.randrange(len(members))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for n, (info, content) in enumerate(members):
            target.writestr(info, _mutate_bytes(content, rng) if n == chosen else content)
    return out.getvalue()


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        where = rng.randrange(len(data) + 1)
        edit = rng.randrange(5)
        if edit == 0 and data:
            data[min(where, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif edit == 1:
            del data[where:where + rng.randint(1, 16)]
        elif edit == 2:
            data[where:where] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif edit == 3:
            data[where:where] = data[where:where + rng.randint(1, 32)] * rng.randint(2, 50)
        else:
            data = data[:where]
    return bytes(data)


def _binary_samples() -> dict[str, bytes]:
    import docx

    memo = docx.Document()
    memo.add_heading("Memo", 1)
    memo.add_paragraph("A failed job is retried three times.")
    memo.add_table(rows=1, cols=2).rows[0].cells[0].text = "retries"
    return {"manual.pdf": make_pdf([["A failed job is retried", "three times."], ["Backoff doubles."]], title="Manual"),
            "memo.docx": saved(memo)}


def test_mutated_files_of_every_format_are_read_or_skipped_with_a_reason(tmp_path):
    rng = random.Random(20261122)
    encodings = {"notes.txt": ["utf-8", "cp1252", "utf-16"]}
    samples = [(name, encoding, text.encode(encoding)) for name, text in SAMPLES.items()
               for encoding in encodings.get(name, ["utf-8"])]
    samples += [(name, "bytes", data) for name, data in _binary_samples().items()]
    written = []
    for n in range(40):
        for name, encoding, data in samples:
            path = tmp_path / f"{n:02d}-{encoding}-{name}"
            path.write_bytes(_mutate(data, rng))
            written.append(path)
    report = load_paths([tmp_path])
    read = {d.path for d in report.documents} | {s.path for s in report.skipped}
    assert read == {str(p) for p in written}
    assert all(s.reason for s in report.skipped)


@pytest.mark.model
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(query=st.text(ANY_CHARACTER, max_size=200), mode=st.sampled_from(["hybrid", "dense", "lexical"]))
@example(query="\ud800", mode="hybrid")  # a lone surrogate had reached the embedder's tokenizer
def test_any_query_searches_or_fails_cleanly(small_index, query, mode):
    try:
        hits = small_index.search(query, 3, mode=mode)
    except LocalcrError:
        return
    assert len(hits) <= 3


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    from localcr import build_index, load_registry, open_index

    docs = tmp_path_factory.mktemp("fuzz-docs")
    for name, text in SAMPLES.items():
        (docs / name).write_text(text)
    directory = tmp_path_factory.mktemp("fuzz") / "index"
    build_index([str(docs)], directory, load_registry(), progress=False, log=lambda message: None)
    return open_index(directory)
