"""Bundled models carried as GGUF slices: assembly, hash checks, clear errors, and the real Qwen chat path."""
from __future__ import annotations

import hashlib
import sys
import types

import pytest

from localcr import bundled as B
from localcr import contexts as C
from localcr.contexts import prompts as P
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.llm import LlamaRunner
from localcr.models import load_registry


def _parts(tmp_path, blobs):
    paths = []
    for i, blob in enumerate(blobs, 1):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(blob)
        paths.append(path)
    return paths


def test_assemble_concatenates_checks_and_stamps(tmp_path):
    blobs = [b"GGUF" + b"a" * 1000, b"b" * 5000, b"c" * 7]
    whole = b"".join(blobs)
    target = tmp_path / "models" / "m.gguf"
    B.assemble(_parts(tmp_path, blobs), target, len(whole), hashlib.sha256(whole).hexdigest(), progress=False)
    assert target.read_bytes() == whole
    assert B.verified(target, hashlib.sha256(whole).hexdigest())
    target.write_bytes(whole[:-1] + b"X")  # tampered after assembly: no longer verified, so it is rebuilt
    assert not B.verified(target, hashlib.sha256(whole).hexdigest())


def test_a_damaged_part_is_a_clear_error_and_leaves_no_file(tmp_path):
    blobs = [b"GGUF" + b"a" * 1000, b"b" * 5000]
    good = hashlib.sha256(b"".join(blobs)).hexdigest()
    parts = _parts(tmp_path, [blobs[0], b"b" * 4999 + b"!"])
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(LocalcrError, match=r"m.gguf: .*damaged or was replaced; re-run ./setup.sh") as info:
        B.assemble(parts, target, 6004, good, progress=False)
    assert "\n" not in str(info.value)
    assert list(target.parent.iterdir()) == []  # nothing half-written stays behind


def test_a_missing_part_package_names_the_package_and_the_fix():
    ghost = B.SlicedGGUF(package="localcr-no-such-model", version="1.0", parts=2, filename="ghost.gguf", size=1, sha256="0" * 64)
    with pytest.raises(LocalcrError, match=r"localcr-no-such-model-part1==1.0 is not installed: re-run ./setup.sh"):
        ghost.path(progress=False)


def test_bundled_model_packages_are_pinned_and_hash_checked_by_setup():
    lines = [line for line in open(B.Path(__file__).parent.parent / "bundled-models.txt") if line.strip() and not line.startswith("#")]
    assert len(lines) == B.QWEN_CODER_15B.parts + B.QWEN_CODER_05B.parts + 1  # and the multilingual sentence encoder
    assert all("==" in line and "--hash=sha256:" in line for line in lines)


def test_a_model_its_own_package_assembles_is_checked_once_until_it_changes(tmp_path, monkeypatch):
    """Gemma's package hashes its whole GGUF on every `assemble()`: localcr stamps the check and calls it again only
    when the file changes (a second in every process that named the model)."""
    target, checks = tmp_path / "model.gguf", []
    target.write_bytes(b"GGUF weights")

    def assemble():
        checks.append(target)
        return target

    package = types.SimpleNamespace(default_output_path=lambda: target, assemble=assemble,
                                    EXPECTED_SHA256=hashlib.sha256(b"GGUF weights").hexdigest())
    monkeypatch.setitem(sys.modules, "fake_model_package", package)
    path = B._assembled_by_its_package("fake_model_package")
    assert path() == path() == target and len(checks) == 1
    target.write_bytes(b"GGUF weights, changed")
    assert path() == target and len(checks) == 2


@pytest.mark.model
def test_bundled_qwen_loads_and_writes_a_context_through_its_chat_template(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm", "qwen2.5-coder-0.5b")
    text = ("# Orbit scheduler\n\nOrbit runs batch jobs.\n\n## Retries\n\nA failed job is retried three times with "
            "exponential backoff starting at ten seconds.\n")
    start = text.index("## Retries")
    doc = Document(doc_id="guide.md", path="guide.md", kind="markdown", text=text, size=len(text))
    chunk = Chunk(chunk_id="guide.md#1", doc_id="guide.md", position=1, start=start, end=len(text), text=text[start:],
                  context="File guide.md.", context_source="structural")
    runner = LlamaRunner(spec)
    try:
        assert runner.is_chat
        prompter = P.Prompter(runner, spec)
        rendered = runner.detokenize(prompter.prefix(text) + prompter.suffix(P.Group(text, [chunk], False), chunk))
        assert "<|im_start|>user\n<document>" in rendered and rendered.endswith("<|im_start|>assistant\n")
        stats = C.write_llm_contexts([doc], {doc.doc_id: [chunk]}, spec, progress=False, runner=runner)
    finally:
        runner.close()
    assert stats.generated == 1 and stats.generated_tokens > 3
    assert chunk.context_source in ("llm", "fallback")
    assert chunk.context.startswith("File guide.md.")


@pytest.mark.model
def test_default_llm_gives_each_chunk_its_own_context_without_markers(tmp_path, monkeypatch):
    """The default model and layout on a small guide: one context per chunk, the document evaluated once."""
    from test_contexts import _corpus  # pytest puts tests/ on sys.path

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm")
    assert spec.prompt == "marked" and spec.prompt_style == "chat"
    doc, chunks = _corpus()
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, composition="llm")
    assert stats.generated == 4 and stats.prefixes == 1 and stats.fallbacks <= 1
    written = [c.context for c in chunks if c.context_source == "llm"]
    assert len(set(written)) == len(written) >= 3  # no two chunks share a context
    assert not any("<chunk" in c.context or "chunk 2" in c.context.lower() for c in chunks)
    # Each request is a short instruction of the same size whatever the chunk: its text is evaluated once, in the document.
    assert stats.chunk_tokens / len(chunks) < 100
