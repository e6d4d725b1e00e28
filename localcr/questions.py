"""Synthetic questions for `make-qa`: a local LLM writes questions that a chunk answers.

Each question's relevant set is the chunk it was written from. The prompt shows the chunk (with the
document's name) and starts a numbered list of questions, which even a small base model continues;
lines that are empty, too short or long, copied from the chunk, repeated, or not questions are dropped.
Raw generations are cached like contexts (model fingerprint, prompt version, settings, chunk), so a
second make-qa run is instant.
"""
from __future__ import annotations

import re
import sys
from typing import Callable

from localcr.contexts import settings_signature
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.guard import ngrams, words
from localcr.llm import LlamaRunner

QUESTIONS_VERSION = "qa-2025.1"
QUESTION_PROMPT = (
    "Here is a passage from {name}:\n<passage>\n{chunk}\n</passage>\n"
    "Write {n} short question{s} that a user might search for and that this passage answers. "
    "Each question must be specific to this passage.\n"
)
COMPLETION_START = "\nQuestions:\n1."
STOPS = ("\n\n", "</", "<passage")
_DEICTIC = re.compile(r"(?i)\b(?:this|the|that|above|given)\s+(?:passage|chunk|text|document|section|excerpt|snippet|code)\b")
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022]|Q\d*[:.)]|Question\s*\d*[:.)])\s*", re.IGNORECASE)


def parse_questions(raw: str, chunk_text: str, limit: int) -> list[str]:
    """The acceptable questions in a generation, in order, at most `limit`: one per line, numbering
    removed; each has 3 to 40 words, ends with "?" (added if the line is a plain question without one),
    does not point at "this passage" (a search query cannot), is not mostly copied from the chunk,
    and is not a repeat."""
    found: list[str] = []
    chunk_grams = set(ngrams(words(chunk_text), 5))
    for line in raw.splitlines():
        text = " ".join(_NUMBERED.sub("", line).split()).strip("\"'` ")
        if "?" in text:
            text = text[: text.index("?") + 1]
        elif re.match(r"(?i)^(what|which|how|why|when|where|who|whom|whose|is|are|does|do|can|should|in|on)\b", text) and not text.endswith(":"):
            text = text.rstrip(".") + "?"
        else:
            continue
        if not 3 <= len(text.split()) <= 40 or not re.search(r"[^\W\d_]{3}", text):
            continue
        if _DEICTIC.search(text):  # "What is the purpose of this passage?" retrieves nothing in particular
            continue
        grams = ngrams(words(text), 5)
        if grams and sum(g in chunk_grams for g in grams) / len(grams) > 0.6:
            continue
        three = ngrams(words(text), 3)
        if len(three) >= 6 and len(set(three)) / len(three) < 0.6:
            continue
        if any(text.lower() == other.lower() for other in found):
            continue
        found.append(text)
        if len(found) >= limit:
            break
    return found


def _spread(items: list, limit: int | None) -> list:
    """`limit` items evenly spread over the list (all of them when limit is None or large)."""
    if limit is None or limit >= len(items):
        return list(items)
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def make_questions(
    chunks_by_doc: dict[str, list[Chunk]],
    documents: list[Document],
    spec,
    per_chunk: int = 1,
    *,
    limit: int | None = None,
    progress: bool = True,
    min_chars: int = 80,
    runner: LlamaRunner | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
) -> list[dict]:
    """Questions written by the llm for chunks of the corpus: [{"query": str, "relevant": [chunk_id]}].

    per_chunk questions are asked for each chunk; limit caps the number of chunks asked, spread evenly over
    the corpus (so a small limit still covers many documents); chunks shorter than min_chars are skipped.
    Chunks for which the model writes nothing usable simply add no question."""
    from tqdm import tqdm

    from localcr.cache import key, open_cache, tag

    if per_chunk < 1:
        raise LocalcrError("questions per chunk must be at least 1")
    names = {d.doc_id: d.doc_id for d in documents}
    candidates = [c for d in documents for c in chunks_by_doc.get(d.doc_id, []) if len(c.text.strip()) >= min_chars]
    chosen = _spread(candidates, limit)
    if not chosen:
        raise LocalcrError("no chunk is long enough to ask questions about")

    fingerprint = spec.fingerprint()
    cache = open_cache("questions")
    cache_tag = tag(spec.name, f"fingerprint {fingerprint}", f"questions {QUESTIONS_VERSION}")
    own_runner = runner is None
    results: list[dict] = []
    bar = tqdm(total=len(chosen), unit="chunk", desc="questions", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    try:
        for chunk in chosen:
            cache_key = key("questions", fingerprint, QUESTIONS_VERSION, settings_signature(spec), str(per_chunk), names.get(chunk.doc_id, ""), chunk.sha)
            raw = cache.get(cache_key)
            if not isinstance(raw, str):
                if runner is None:
                    runner = LlamaRunner(spec)
                raw = _generate(runner, spec, names.get(chunk.doc_id, chunk.doc_id), chunk, per_chunk)
                cache.set(cache_key, raw, cache_tag)
            for question in parse_questions(raw, chunk.text, per_chunk):
                results.append({"query": question, "relevant": [chunk.chunk_id]})
            bar.update(1)
            bar.set_postfix_str(f"{len(results)} questions", refresh=False)
            if on_chunk is not None:
                on_chunk(chunk)
    finally:
        bar.close()
        cache.close()
        if own_runner and runner is not None:
            runner.close()
    return results


def _generate(runner: LlamaRunner, spec, name: str, chunk: Chunk, n: int) -> str:
    """The raw generation for one chunk ("" when not even a shortened chunk fits the context window)."""
    max_tokens = min(spec.max_tokens * n, 48 * n)
    room = runner.n_ctx - max_tokens - 8
    text = chunk.text.strip()
    for _ in range(3):
        message = QUESTION_PROMPT.format(name=name, chunk=text, n=n, s="" if n == 1 else "s")
        if not runner.is_chat:
            prompt = runner.tokenize(message + COMPLETION_START, bos=True)
        else:
            prefix, suffix = runner.render(message, "")
            prompt = prefix + suffix
        if len(prompt) <= room:
            break
        text = text[: int(len(text) * room / len(prompt) * 0.85)]  # keep the chunk's start: the questions are about it
    else:
        return ""
    if not runner.is_chat:
        # The list is numbered: it ends at question n + 1, a blank line, or markup.
        stops, start = STOPS + (f"\n{n + 1}.",) + (("\n",) if n == 1 else ()), "1."
    else:
        stops, start = ("\n\n\n",), ""
    done = runner.complete(prompt[:1], prompt[1:], max_tokens=max_tokens, stops=stops)
    return start + done.text
