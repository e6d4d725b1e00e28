"""LLM-written chunk contexts (Anthropic's Contextual Retrieval): the package's interface.

For every chunk a local model reads the whole document and writes one or two sentences that situate the
chunk in it. Two prompt layouts (`PROMPTS`, chosen by the llm's `prompt` setting in models.toml):

* "marked" (default): the document is shown once with a light marker where each chunk begins
  (`<chunk 7>`); each chunk's request is a short instruction naming its marker and quoting its first
  words. Every document token is evaluated once, and a chunk costs only its ~40-token request.
* "published": the published prompt, document first and then the chunk repeated in full with the
  instruction. Kept for comparison: every chunk's text is evaluated twice.

Either way the document is the shared prefix of all its chunks' prompts: it is evaluated once into the KV
cache and the chunks are generated side by side on it (`LlamaRunner.complete_many`). A document that does
not fit the context window is never cut silently: the prompt keeps its head and a window around a group of
consecutive chunks (`[...]` marks what is left out), and the chunks of one group share that window.

Every finished context is written to the diskcache at once (key: model fingerprint, layout and its version,
generation settings, document sha, chunk sha); a killed run resumes where it stopped. n_ctx is not in the
key: only contexts written from a window are redone, and only when n_ctx grows. The raw model output is
cached and the guard (`localcr.guard`) runs on it each time, so tightening the guard never needs the model.

The parts: `modes` (what a build situates chunks with: structure, cards, the LLM), `prompts` (layouts, markers,
rendering), `windows` (long documents), `keys` (cache keys), `rates` (this machine's speeds and the time estimate),
`stats` (what a run did and cost), `run` (the driver, the guard's verdicts, composition), `cards` (one sentence per
document, the cheap tier: see there) and `imported` (contexts written elsewhere, from JSONL).
"""
from __future__ import annotations

from importlib import import_module

# Each name of the interface and the part that defines it. A part is imported when one of its names is first asked
# for, not with the package: the model registry reads the prompt layouts' names (localcr.models) and the command line
# the modes, and a search that loads the registry must not import the LLM runtime, the guard and the readers that
# writing contexts needs.
_PARTS = {name: part for part, names in {
    "imported": ("load_contexts_file",),
    "keys": ("context_key", "context_tag", "settings_signature", "store_context"),
    "modes": ("CARD_MODES", "CONTEXT_MODES", "DEFAULT_CONTEXTS", "LLM_MODES"),
    "prompts": ("DEFAULT_PROMPT", "LANGUAGE_REQUEST", "PROMPTS", "PromptLayout", "language_clause"),
    "rates": ("llm_rates", "measure_rates", "record_rates"),
    "run": ("COMPOSITIONS", "DEFAULT_COMPOSITION", "DEFAULT_PARALLEL", "add_work", "apply_generated", "compose",
            "generate_document", "pending_contexts", "write_llm_contexts"),
    "stats": ("ContextStats",),
}.items() for name in names}
__all__ = sorted(_PARTS)


def __getattr__(name: str):
    part = _PARTS.get(name)
    if part is None:
        raise AttributeError(f"module 'localcr.contexts' has no attribute {name!r}")
    value = getattr(import_module(f"localcr.contexts.{part}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PARTS))
