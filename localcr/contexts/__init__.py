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

The parts: `prompts` (layouts, markers, rendering), `windows` (long documents), `keys` (cache keys), `rates` (this
machine's speeds and the time estimate), `stats` (what a run did and cost), `run` (the driver, the guard's
verdicts, composition), `cards` (one sentence per document, the cheap tier: see there) and `imported` (contexts
written elsewhere, from JSONL).
"""
from localcr.contexts.imported import load_contexts_file
from localcr.contexts.keys import context_key, context_tag, settings_signature, store_context
from localcr.contexts.prompts import DEFAULT_PROMPT, LANGUAGE_REQUEST, PROMPTS, PromptLayout, language_clause
from localcr.contexts.rates import llm_rates, measure_rates, record_rates
from localcr.contexts.run import (COMPOSITIONS, DEFAULT_COMPOSITION, DEFAULT_PARALLEL, add_work, apply_generated, compose,
                                  generate_document, pending_contexts, write_llm_contexts)
from localcr.contexts.stats import ContextStats

__all__ = [
    "COMPOSITIONS", "DEFAULT_COMPOSITION", "DEFAULT_PARALLEL", "DEFAULT_PROMPT", "LANGUAGE_REQUEST", "PROMPTS",
    "ContextStats", "PromptLayout", "add_work", "apply_generated", "compose", "context_key", "context_tag",
    "generate_document", "language_clause", "llm_rates", "load_contexts_file", "measure_rates", "pending_contexts",
    "record_rates", "settings_signature", "store_context", "write_llm_contexts",
]
