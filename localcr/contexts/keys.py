"""Cache keys: a context is cached by model fingerprint, prompt layout and version, generation settings, document
and chunk. n_ctx is not in the key: only contexts written from a window are redone, and only when n_ctx grows."""
from __future__ import annotations

from localcr.contexts.prompts import language_clause, layout_of
from localcr.documents import Chunk, Document


def settings_signature(spec, repeat_penalty: float | None = None) -> str:
    """The generation settings that change what the model writes (n_threads, n_batch do not); repeat_penalty:
    where a task writes with its own, not the model's."""
    penalty = spec.repeat_penalty if repeat_penalty is None else float(repeat_penalty)
    return f"{spec.prompt_style}|{spec.chat_format}|{spec.max_tokens}|{spec.temperature}|{penalty}"


def context_key(fingerprint: str, spec, doc: Document, chunk: Chunk) -> str:
    from localcr.cache import key

    layout = layout_of(spec)
    parts = ["context", fingerprint, layout.name, layout.version, settings_signature(spec), doc.sha, chunk.sha]
    if clause := language_clause(spec, doc.language):
        parts.append(clause)  # only then: keys of English documents stay what they were before the clause existed
    return key(*parts)


def context_tag(fingerprint: str, spec) -> str:
    """The label of a context in the cache: the LLM and the prompt version, by which `localcr cache` lists and prunes."""
    from localcr.cache import tag

    return tag(spec.name, f"fingerprint {fingerprint}", f"prompt {layout_of(spec).version}")


def usable(entry, spec) -> bool:
    """A cached entry is used unless it was written from a window and n_ctx has grown since."""
    return isinstance(entry, dict) and not (entry.get("windowed") and entry.get("n_ctx", 0) < spec.n_ctx)


def store_context(cache, fingerprint: str, spec, doc: Document, chunk: Chunk, entry: dict, cache_tag: str | None = None) -> None:
    """Write one generated context's entry to the cache (a skip depends on n_ctx: never cached)."""
    if cache is not None and not entry.get("skipped"):
        cache.set(context_key(fingerprint, spec, doc, chunk), entry, cache_tag or context_tag(fingerprint, spec))
