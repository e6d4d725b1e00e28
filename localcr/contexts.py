"""LLM-written chunk contexts (Anthropic's Contextual Retrieval), run by llama.cpp on the CPU.

For every chunk a local model reads the whole document, then the chunk, and writes one or two
sentences that situate the chunk in the document. The prompt puts the document first, so every
chunk of a document shares the same token prefix: the document is evaluated once into the KV
cache and each chunk then pays only for its own tokens and the tokens generated for it.

How the reuse is done: `LlamaRunner.complete` compares the new prompt with the tokens already in
the KV cache (`Llama.input_ids[:n_tokens]`), removes only the cache cells after the longest common
prefix (`kv_cache_seq_rm`) and evaluates the rest. The cache is created with `swa_full=True`:
Gemma 3 (and other sliding-window models) otherwise keep only the last `n_swa` positions of their
local-attention layers, and cutting such a cache back to an earlier position would silently
attend to missing cells. Every reuse is counted, so `ContextStats` shows what was served from cache.

Documents that do not fit the context window are never cut silently: the prompt keeps the head
of the document and a window of text around a group of consecutive chunks (`[...]` marks what is
left out), and the chunks of one group share that window as their prefix.

Every finished context is written to the diskcache at once (key: model fingerprint, PROMPT_VERSION,
generation settings, document sha, chunk sha); a killed run resumes where it stopped. n_ctx is not in
the key: only contexts written from a window are redone, and only when n_ctx grows. The raw model
output is what is cached, and the guard (`guard_context`) runs on it each time, so tightening the
guard never needs the model again.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError

# Bump whenever any prompt text, the windowing or the stop rules change: it is part of every cache key.
PROMPT_VERSION = "cr-2025.1"

# The published Contextual Retrieval prompt, split where the per-document prefix ends.
DOCUMENT_PROMPT = "<document>\n{document}\n</document>\n"
CHUNK_PROMPT = (
    "Here is the chunk we want to situate within the whole document\n"
    "<chunk>\n{chunk}\n</chunk>\n"
    "Please give a short succinct context to situate this chunk within the overall document for the purposes "
    "of improving search retrieval of the chunk. Answer only with the succinct context and nothing else."
)
# A base model has no template: the prompt ends where the answer should begin, and the answer ends at
# the first line break once some text is written (a context is one short paragraph).
# The answer is started for the model ("prefilled"): a base model then writes prose about the chunk
# instead of copying code or echoing the instruction. The prefill is part of the returned context.
COMPLETION_ANSWER = "\n\nSuccinct context:"
# Measured with Gemma 3 270M base: " defines" makes it name the code's types and functions; prose gets " is about".
COMPLETION_PREFILL = {"code": " This chunk defines", "text": " This chunk is about"}
COMPLETION_STOPS = ("\n", "</", "<chunk", "<document")
CHAT_STOPS = ("\n\n\n", "</context>")
ELISION = "\n[...]\n"
SEED = 1234
# Chunks of one document generated side by side on the shared document prefix (llama.cpp sequences in one
# unified KV cache): on a CPU one decode step for 8 sequences costs little more than for one.
DEFAULT_PARALLEL = 8


# --------------------------------------------------------------------------------------------- guard


@dataclass(frozen=True)
class GuardLimits:
    """What an acceptable context looks like; anything else falls back to the structural context."""

    min_chars: int = 12  # shorter (after cleaning) is "empty"
    max_chars: int = 800  # longer is "too long"
    max_copy_share: float = 0.5  # share of the context's word 4-grams found in the chunk
    max_copy_run: int = 120  # longest run of characters copied verbatim from the chunk
    max_echo_share: float = 0.4  # share of the context's word 3-grams taken from the instruction itself
    min_distinct_trigrams: float = 0.5  # distinct / all word 3-grams; lower is a loop
    min_compression: float = 0.25  # zlib size / text size for longer texts; lower is a loop


_PREFIX_RE = re.compile(
    r"^\s*(?:\*\*)?(?:succinct\s+context|short\s+context|context|answer|response)\s*(?:\*\*)?\s*[:\-]\s*(?:\*\*)?\s*",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"</?(?:context|answer|response)>", re.IGNORECASE)


def clean_context(raw: str, finished: bool = True) -> str:
    """The context without boilerplate: "Context:" prefixes, tags, quotes, line breaks, and, when the
    generation was cut by max_tokens, the trailing unfinished sentence (if a finished one comes before)."""
    text = _TAG_RE.sub(" ", raw)
    for _ in range(2):
        text = _PREFIX_RE.sub("", text.strip())
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    if not finished and text and text[-1] not in ".!?)\"'":
        cut = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
        if cut > 0:
            text = text[: cut + 1]
    return text


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text.lower())


def _ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def _longest_common_run(a: str, b: str) -> int:
    from difflib import SequenceMatcher

    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size


_INSTRUCTION_GRAMS = set(_ngrams(_words(CHUNK_PROMPT.format(chunk="") + " overall document whole document we want to place"), 3))


def guard_context(
    raw: str, chunk_text: str, limits: GuardLimits | None = None, finished: bool = True, prefill: str = ""
) -> tuple[str | None, str]:
    """Check one generated context: (cleaned context, "") if acceptable, else (None, reason) with reason
    one of "empty", "too_long", "repetitive", "echo" (restates the instruction), "copy". `prefill` is the
    start of the answer that the prompt wrote, not the model: it does not count as content.
    A pure function of its arguments."""
    limits = limits or GuardLimits()
    text = clean_context(raw, finished)
    written = text[len(prefill.strip()) :] if prefill.strip() and text.startswith(prefill.strip()) else text
    if len(written.strip()) < limits.min_chars or not re.search(r"[^\W\d_]{2}", written):
        return None, "empty"
    if len(text) > limits.max_chars:
        return None, "too_long"
    words = _words(text)
    grams = _ngrams(words, 3)
    if len(grams) >= 8 and len(set(grams)) / len(grams) < limits.min_distinct_trigrams:
        return None, "repetitive"
    if len(text) >= 120 and len(zlib.compress(text.encode())) / len(text.encode()) < limits.min_compression:
        return None, "repetitive"
    if len(grams) >= 3 and sum(g in _INSTRUCTION_GRAMS for g in grams) / len(grams) > limits.max_echo_share:
        return None, "echo"
    chunk_grams = set(_ngrams(_words(chunk_text), 4))
    grams4 = _ngrams(words, 4)
    if grams4 and sum(g in chunk_grams for g in grams4) / len(grams4) > limits.max_copy_share:
        return None, "copy"
    squashed_chunk = " ".join(chunk_text.split())
    if _longest_common_run(text, squashed_chunk) > min(limits.max_copy_run, max(40, len(text) // 2)) :
        return None, "copy"
    return text, ""


# --------------------------------------------------------------------------------------------- llama


@contextlib.contextmanager
def _quiet_stderr():
    """Silence llama.cpp while it loads: file descriptor 2 goes to a temporary file and sys.stderr (where
    llama-cpp-python's log callback prints) to a buffer. Yields a function returning what was written."""
    import io

    sys.stderr.flush()
    saved = os.dup(2)
    buffer = io.StringIO()
    captured: list[str] = []
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            with contextlib.redirect_stderr(buffer):
                yield lambda: "".join(captured)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace") + buffer.getvalue())


@dataclass
class Completion:
    text: str
    tokens: int  # generated
    finished: bool  # stopped by a stop rule, not by max_tokens or a detected loop
    reused: int  # prompt tokens served from the KV cache
    evaluated: int  # prompt tokens evaluated
    prompt_seconds: float
    generate_seconds: float


class _Captured(Exception):
    def __init__(self, prompt: bytes, add_bos: bool):
        self.prompt, self.add_bos = prompt, add_bos


class _CapturePrompt:
    """Stands in for a Llama when a llama-cpp-python chat handler is called, to catch the rendered prompt."""

    verbose = False

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False):
        raise _Captured(text, add_bos)


_SPLIT = "\u27e6localcr-split\u27e7"


class LlamaRunner:
    """One loaded GGUF model: prompt rendering, tokenisation, and completion with KV-cache prefix reuse."""

    def __init__(self, spec, *, seed: int = SEED, parallel: int = 1):
        import llama_cpp
        from llama_cpp import Llama

        self.spec = spec
        path = spec.resolve()
        n_threads = spec.n_threads or os.cpu_count() or 1
        import logging

        try:
            with _quiet_stderr() as log:
                self.llm = Llama(
                    model_path=str(path), n_ctx=spec.n_ctx, n_batch=spec.n_batch, n_threads=n_threads,
                    n_threads_batch=n_threads, seed=seed, logits_all=False, verbose=False, swa_full=True,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            detail = [line.strip() for line in log().splitlines() if line.strip()]
            why = detail[-1] if detail else str(exc)
            raise LocalcrError(
                f"{spec.where}: llama.cpp could not load {str(path)!r} ({why}): check that the file is a complete "
                "GGUF model supported by llama-cpp-python 0.3.36, and that n_ctx fits in memory"
            ) from None
        # llama-cpp-python maps llama.cpp's warnings to logging.ERROR and prints them unless the level is higher.
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
        self._llama_cpp = llama_cpp
        self.parallel = max(1, parallel)
        if self.parallel > 1:
            self._enable_parallel()
        self._vocab = self.llm._model.vocab
        # llama.cpp may pad the context it allocates (n_ctx() > requested), but llama-cpp-python sizes its
        # token buffer with the requested n_ctx: the smaller of the two is the real limit.
        self.n_ctx = min(self.llm.n_ctx(), len(self.llm.input_ids))
        self._chat = self._chat_renderer() if spec.prompt_style == "chat" else None

    # --- prompts

    def _chat_renderer(self) -> Callable[[str], tuple[str, bool]]:
        """A function from the user message to (prompt text, add_bos) using the model's chat template."""
        from llama_cpp import llama_chat_format

        spec = self.spec
        if spec.chat_format:
            try:
                handler = llama_chat_format.get_chat_completion_handler(spec.chat_format)
            except Exception:
                raise LocalcrError(
                    f"{spec.where} chat_format = {spec.chat_format!r} is not a llama-cpp-python chat format "
                    "(e.g. \"chatml\", \"gemma\", \"llama-3\", \"mistral-instruct\"); or leave it empty to use the GGUF's template"
                ) from None

            def render(message: str) -> tuple[str, bool]:
                try:
                    handler(llama=_CapturePrompt(), messages=[{"role": "user", "content": message}])
                except _Captured as captured:
                    return captured.prompt.decode("utf-8"), captured.add_bos
                raise RuntimeError("the chat handler produced no prompt")

            return render
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise LocalcrError(
                f"{spec.where}: prompt_style = \"chat\" but the GGUF has no chat template: set chat_format "
                "(e.g. \"chatml\") or prompt_style = \"completion\" for a base model"
            )
        eos = self.llm.detokenize([self.llm.token_eos()], special=True).decode("utf-8", "replace")
        bos = self.llm.detokenize([self.llm.token_bos()], special=True).decode("utf-8", "replace")
        try:
            formatter = llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        except Exception as exc:
            raise LocalcrError(f"{spec.where}: the GGUF's chat template does not parse ({exc}): set chat_format") from None

        def render(message: str) -> tuple[str, bool]:
            result = formatter(messages=[{"role": "user", "content": message}])
            return result.prompt, not result.added_special

        return render

    def render(self, prefix_message: str, suffix_message: str, prefill: str = "") -> tuple[list[int], list[int]]:
        """Tokens of the prompt for one user message = prefix_message + suffix_message, split where the prefix
        ends, so that every prompt with the same prefix_message starts with the same tokens. In completion
        style the suffix ends with COMPLETION_ANSWER and `prefill`, the start of the answer."""
        if self._chat is None:
            return self.tokenize(prefix_message, bos=True), self.tokenize(suffix_message + COMPLETION_ANSWER + prefill)
        try:
            text, add_bos = self._chat(prefix_message + _SPLIT + suffix_message)
        except LocalcrError:
            raise
        except Exception as exc:
            raise LocalcrError(
                f"{self.spec.where}: the chat template failed to render ({type(exc).__name__}: {exc}): "
                "set chat_format to a llama-cpp-python format or use prompt_style = \"completion\""
            ) from None
        if text.count(_SPLIT) != 1:
            raise LocalcrError(f"{self.spec.where}: the chat template rewrites the message text; set chat_format")
        head, tail = text.split(_SPLIT)
        return self.tokenize(head, bos=add_bos), self.tokenize(tail)

    def prefill(self, code: bool) -> str:
        """Text the prompt puts at the start of the answer (completion style only)."""
        return "" if self._chat is not None else COMPLETION_PREFILL["code" if code else "text"]

    @property
    def stops(self) -> tuple[str, ...]:
        return CHAT_STOPS if self._chat is not None else COMPLETION_STOPS

    def tokenize(self, text: str, bos: bool = False) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8", "replace"), add_bos=bos, special=self._chat is not None)

    def count(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=False))

    # --- generation

    def cached_prefix(self, tokens: list[int]) -> int:
        """How many leading tokens of `tokens` are already in the KV cache."""
        llm = self.llm
        n = min(llm.n_tokens, len(tokens))
        if n == 0:
            return 0
        import numpy as np

        have = llm.input_ids[:n]
        want = np.asarray(tokens[:n], dtype=have.dtype)
        diff = np.nonzero(have != want)[0]
        return int(diff[0]) if len(diff) else n

    def complete(
        self, prefix: list[int], suffix: list[int], *, max_tokens: int, stops: Iterable[str] | None = None,
        reuse: bool = True,
    ) -> Completion:
        """Generate after prefix + suffix, reusing the KV cache for the longest common prefix with the
        previous call unless reuse=False (then the cache is cleared and the whole prompt evaluated)."""
        llm = self.llm
        tokens = prefix + suffix
        if len(tokens) + max_tokens > self.n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens + {max_tokens} does not fit n_ctx {self.n_ctx}")
        keep = min(self.cached_prefix(tokens), len(tokens) - 1) if reuse else 0
        if keep > 0 and not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0  # a memory that cannot be cut back (recurrent models): evaluate everything
        if keep == 0:
            llm.reset()
            llm._ctx.kv_cache_clear()
        llm.n_tokens = keep
        started = time.perf_counter()
        llm.eval(tokens[keep:])
        evaluated_at = time.perf_counter()

        stops = tuple(stops if stops is not None else self.stops)
        spec = self.spec
        generated: list[int] = []
        text, finished = "", False
        stream = llm.generate(
            [], reset=False, temp=spec.temperature, repeat_penalty=spec.repeat_penalty,
            top_k=40, top_p=0.95, min_p=0.05,
        )
        try:
            for token in stream:
                if self._llama_cpp.llama_vocab_is_eog(self._vocab, token):
                    finished = True
                    break
                generated.append(token)
                text = llm.detokenize(generated, prev_tokens=tokens).decode("utf-8", "ignore")
                cut = _find_stop(text, stops)
                if cut is not None:
                    text, finished = text[:cut], True
                    break
                if len(generated) >= max_tokens or _looping(generated):
                    break
        finally:
            stream.close()
        done = time.perf_counter()
        return Completion(
            text=text, tokens=len(generated), finished=finished, reused=keep, evaluated=len(tokens) - keep,
            prompt_seconds=evaluated_at - started, generate_seconds=done - evaluated_at,
        )

    def _enable_parallel(self) -> None:
        """Swap the Llama's context for one holding `parallel` sequences in one unified KV cache, so that
        sequences copied from the document prefix share its cells instead of copying them."""
        from llama_cpp import _internals

        llm, lc = self.llm, self._llama_cpp
        params = lc.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_seq_max = self.parallel
        params.kv_unified = True
        with _quiet_stderr():
            ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        old, llm._ctx = llm._ctx, ctx
        old.close()
        llm.reset()
        self._pbatch = _internals.LlamaBatch(n_tokens=max(llm.n_batch, self.parallel), embd=0, n_seq_max=1, verbose=False)

    def fits_together(self, prefix: list[int], suffixes: list[list[int]], max_tokens: int) -> bool:
        """Whether these prompts, generated side by side on one shared prefix, fit the unified KV cache."""
        return len(prefix) + sum(len(s) + max_tokens for s in suffixes) + 8 <= self.n_ctx

    def _decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """Decode (seq_id, token, position, wants_logits) items as one llama.cpp batch."""
        b = self._pbatch.batch
        b.n_tokens = len(items)
        for i, (seq, token, pos, logits) in enumerate(items):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, pos, 1, logits
            b.seq_id[i][0] = seq
        code = self._llama_cpp.llama_decode(self.llm._ctx.ctx, b)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def complete_many(
        self, prefix: list[int], suffixes: list[list[int]], *, max_tokens: int, stops: Iterable[str] | None = None,
    ) -> list[Completion]:
        """Generate after prefix + each suffix, all side by side: the prefix is evaluated (or reused from the
        KV cache) once in sequence 0 and shared with the other sequences without copying; the suffixes are
        evaluated in shared batches, then one token per sequence is generated per decode step."""
        if self.parallel == 1 or len(suffixes) == 1:
            return [self.complete(prefix, suffix, max_tokens=max_tokens, stops=stops) for suffix in suffixes]
        assert len(suffixes) <= self.parallel and self.fits_together(prefix, suffixes, max_tokens)
        lc, llm = self._llama_cpp, self.llm
        mem = lc.llama_get_memory(llm._ctx.ctx)
        stops = tuple(stops if stops is not None else self.stops)
        spec = self.spec
        n = len(suffixes)
        started = time.perf_counter()
        for seq in range(1, self.parallel):
            lc.llama_memory_seq_rm(mem, seq, -1, -1)
        keep = min(self.cached_prefix(prefix), len(prefix) - 1)
        if keep > 0 and not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0
        if keep == 0:
            llm.reset()
            llm._ctx.kv_cache_clear()
        llm.n_tokens = keep
        llm.eval(prefix[keep:])
        length = len(prefix)
        for seq in range(1, n):
            lc.llama_memory_seq_cp(mem, 0, seq, -1, -1)

        samplers = [llm._init_sampler(temp=spec.temperature, repeat_penalty=spec.repeat_penalty) for _ in range(n)]
        last: list[int | None] = [None] * n
        pending = [(seq, token, length + i, i == len(suffix) - 1) for seq, suffix in enumerate(suffixes) for i, token in enumerate(suffix)]
        step = self._pbatch._n_tokens
        for at in range(0, len(pending), step):
            piece = pending[at : at + step]
            self._decode(piece)
            for index, (seq, _, _, logits) in enumerate(piece):
                if logits:
                    last[seq] = samplers[seq].sample(llm._ctx, index)
        evaluated_at = time.perf_counter()

        generated: list[list[int]] = [[] for _ in range(n)]
        texts, finished = [""] * n, [False] * n
        active = set(range(n))

        def consume(seq: int, token: int) -> None:
            if lc.llama_vocab_is_eog(self._vocab, token):
                finished[seq] = True
                active.discard(seq)
                return
            generated[seq].append(token)
            text = llm.detokenize(generated[seq], prev_tokens=prefix + suffixes[seq]).decode("utf-8", "ignore")
            cut = _find_stop(text, stops)
            if cut is not None:
                text, finished[seq] = text[:cut], True
                active.discard(seq)
            elif len(generated[seq]) >= max_tokens or _looping(generated[seq]):
                active.discard(seq)
            texts[seq] = text

        for seq in range(n):
            consume(seq, last[seq])
        while active:
            order = sorted(active)
            self._decode([(seq, generated[seq][-1], length + len(suffixes[seq]) + len(generated[seq]) - 1, True) for seq in order])
            for index, seq in enumerate(order):
                consume(seq, samplers[seq].sample(llm._ctx, index))
        done = time.perf_counter()

        # Leave the cache holding the prefix alone, so the next group or document can reuse what it shares.
        for seq in range(1, n):
            lc.llama_memory_seq_rm(mem, seq, -1, -1)
        llm._ctx.kv_cache_seq_rm(-1, length, -1)
        llm.n_tokens = length
        for sampler in samplers:
            sampler.close()
        prompt_share = (evaluated_at - started) / n
        gen_share = (done - evaluated_at) / n
        return [
            Completion(
                text=texts[seq], tokens=len(generated[seq]), finished=finished[seq],
                reused=keep if seq == 0 else length, evaluated=(length - keep if seq == 0 else 0) + len(suffixes[seq]),
                prompt_seconds=prompt_share, generate_seconds=gen_share,
            )
            for seq in range(n)
        ]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if getattr(self, "_pbatch", None) is not None:
                self._pbatch.close()
            self.llm._ctx.close()
        with contextlib.suppress(Exception):
            self.llm.close()


def _find_stop(text: str, stops: tuple[str, ...]) -> int | None:
    """Where the answer ends: the first stop string after the first non-blank character."""
    lead = len(text) - len(text.lstrip())
    if lead == len(text):
        return None
    found = [i for i in (text.find(s, lead) for s in stops) if i >= 0]
    return min(found) if found else None


def _looping(tokens: list[int], min_repeats: int = 3, max_period: int = 16) -> bool:
    """True when the tail of the generation is one short token sequence repeated: a loop that only max_tokens would end."""
    n = len(tokens)
    for period in range(1, max_period + 1):
        span = period * min_repeats
        if span > n or (period == 1 and n < 8):
            continue
        tail = tokens[n - span :]
        if tail == tail[:period] * min_repeats and (period > 1 or n >= 8):
            return True
    return False


# --------------------------------------------------------------------------------------------- windows


@dataclass
class _Group:
    """Consecutive chunks of one document that share one prompt prefix."""

    doc_text: str  # the document as the prompt shows it (whole, or head + window)
    chunks: list[Chunk]
    windowed: bool
    code: bool = False


def _spans(doc: Document, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Character span of every chunk in the document; chunks not found verbatim sit after their predecessor."""
    spans, cursor = [], 0
    for chunk in chunks:
        if chunk.start >= 0 and chunk.end >= chunk.start:
            spans.append((chunk.start, chunk.end))
            cursor = chunk.end
        else:
            start = min(cursor, len(doc.text))
            spans.append((start, min(len(doc.text), start + len(chunk.text))))
            cursor = spans[-1][1]
    return spans


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """Move window edges to line boundaries when that costs little."""
    if start > 0:
        nl = text.find("\n", start, start + 200)
        if nl >= 0:
            start = nl + 1
    if end < len(text):
        nl = text.rfind("\n", max(start, end - 200), end)
        if nl > start:
            end = nl
    return start, end


def plan_windows(doc: Document, chunks: list[Chunk], doc_budget_chars: int, head_chars: int, group_share: float = 0.6) -> list[_Group]:
    """Split the chunks of a document too long for the prompt into groups of consecutive chunks, each with a
    view of the document of at most doc_budget_chars: its head, then a window around the group.

    A group spans at most group_share of the window, so every chunk keeps some text on both sides,
    while consecutive chunks still share one evaluated prefix."""
    text = doc.text
    if len(text) <= doc_budget_chars:
        return [_Group(text, list(chunks), False)]
    head_chars = min(head_chars, doc_budget_chars // 4)
    window = max(1, doc_budget_chars - head_chars - len(ELISION) * 2)
    spans = _spans(doc, chunks)
    groups: list[_Group] = []
    i = 0
    while i < len(chunks):
        first = spans[i][0]
        j = i + 1
        while j < len(chunks) and spans[j][1] - first <= window * group_share:
            j += 1
        last = max(end for _, end in spans[i:j])
        pad = max(0, (window - (last - first)) // 2)
        start = max(0, first - pad)
        end = min(len(text), start + window)
        start = max(0, end - window)
        if start <= head_chars:
            end = min(len(text), doc_budget_chars)
            body = text[:end]
        else:
            start, end = _snap(text, start, end)
            hs, he = _snap(text, 0, head_chars)
            body = text[:he] + ELISION + text[start:end]
        if end < len(text):
            body += ELISION.rstrip("\n")
        groups.append(_Group(body, list(chunks[i:j]), True))
        i = j
    return groups


# --------------------------------------------------------------------------------------------- stats


@dataclass
class ContextStats:
    documents: int = 0
    chunks: int = 0
    cached: int = 0  # served from diskcache without running the model
    generated: int = 0
    fallbacks: int = 0  # guard rejections (or chunks too long for n_ctx): the structural context is kept
    prefix_tokens_evaluated: int = 0  # document-prefix tokens the model evaluated
    prefix_tokens_reused: int = 0  # prompt tokens served from the KV cache instead of evaluated
    chunk_tokens: int = 0  # per-chunk prompt tokens evaluated (chunk text + instruction)
    generated_tokens: int = 0
    windowed_documents: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0  # spent evaluating prompt tokens
    generate_seconds: float = 0.0  # spent generating
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    prefixes: int = 0  # distinct document prefixes (whole documents or windows) prompts were built on

    @property
    def prompt_tokens(self) -> int:
        return self.prefix_tokens_evaluated + self.prefix_tokens_reused + self.chunk_tokens

    @property
    def cache_share(self) -> float:
        """Share of all prompt tokens that were served from the KV cache (0 when nothing was generated)."""
        total = self.prompt_tokens
        return self.prefix_tokens_reused / total if total else 0.0

    def summary(self) -> str:
        rate = self.generated / self.seconds if self.seconds else 0.0
        gen_rate = self.generated_tokens / self.generate_seconds if self.generate_seconds else 0.0
        prompt_rate = (self.prefix_tokens_evaluated + self.chunk_tokens) / self.prompt_seconds if self.prompt_seconds else 0.0
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.fallback_reasons.items())) or "none"
        return "\n".join([
            f"contexts: {self.chunks} chunks in {self.documents} documents ({self.windowed_documents} windowed to fit n_ctx)",
            f"  from cache {self.cached}, generated {self.generated}, fallbacks {self.fallbacks} ({reasons})",
            f"  prompt tokens: {self.prefix_tokens_evaluated} document-prefix evaluated, {self.prefix_tokens_reused} served from KV cache, "
            f"{self.chunk_tokens} chunk tokens evaluated; cache share {self.cache_share:.1%}",
            f"  generated tokens: {self.generated_tokens} ({gen_rate:.1f} tok/s); prompt evaluation {prompt_rate:.0f} tok/s",
            f"  time: {self.seconds:.1f} s ({rate:.2f} chunks/s generated)",
        ])


# --------------------------------------------------------------------------------------------- main API


def settings_signature(spec) -> str:
    """The generation settings that change what the model writes (n_threads, n_batch do not)."""
    return f"{spec.prompt_style}|{spec.chat_format}|{spec.max_tokens}|{spec.temperature}|{spec.repeat_penalty}"


def context_key(fingerprint: str, spec, doc: Document, chunk: Chunk) -> str:
    from localcr.cache import key

    return key("context", fingerprint, PROMPT_VERSION, settings_signature(spec), doc.sha, chunk.sha)


def _apply(chunk: Chunk, entry: dict, guard: GuardLimits | None, stats: ContextStats) -> None:
    text, reason = guard_context(entry.get("raw", ""), chunk.text, guard, entry.get("finished", True), entry.get("prefill", ""))
    if entry.get("skipped"):
        text, reason = None, entry["skipped"]
    if text is None:
        chunk.context_source = "fallback"
        stats.fallbacks += 1
        stats.fallback_reasons[reason] = stats.fallback_reasons.get(reason, 0) + 1
    else:
        chunk.context, chunk.context_source = text, "llm"


def write_llm_contexts(
    documents: list[Document],
    chunks_by_doc: dict[str, list[Chunk]],
    spec,
    *,
    progress: bool = True,
    guard: GuardLimits | None = None,
    limit: int | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
    reuse: bool = True,
    runner: LlamaRunner | None = None,
    use_cache: bool = True,
    parallel: int = DEFAULT_PARALLEL,
) -> ContextStats:
    """Set chunk.context to an LLM-written context (context_source "llm") for every chunk of `documents`;
    when the guard rejects the output, keep the chunk's current context and set context_source "fallback".

    Each context is written to the diskcache as soon as it is generated, so a killed run resumes without
    regenerating anything. limit: generate at most this many contexts in this call (the rest keep their
    context); on_chunk: called after each generated context is stored; reuse=False evaluates every prompt
    from scratch, one chunk at a time (the naive baseline of benchmarks); parallel: how many chunks of a
    document are generated side by side on its shared prefix (1 = one after another); runner: an already
    loaded model to use (not closed here; its own `parallel` applies)."""
    from tqdm import tqdm

    from localcr.cache import open_cache

    started = time.perf_counter()
    stats = ContextStats()
    docs = [d for d in documents if chunks_by_doc.get(d.doc_id)]
    unknown = set(chunks_by_doc) - {d.doc_id for d in documents}
    if any(chunks_by_doc[u] for u in unknown):
        raise LocalcrError(f"chunks of unknown documents: {', '.join(sorted(unknown)[:3])}")
    stats.documents = len(docs)
    stats.chunks = sum(len(chunks_by_doc[d.doc_id]) for d in docs)

    fingerprint = spec.fingerprint()
    cache = open_cache("contexts") if use_cache else None
    todo: list[tuple[Document, list[Chunk]]] = []
    for doc in docs:
        missing = []
        for chunk in chunks_by_doc[doc.doc_id]:
            entry = cache.get(context_key(fingerprint, spec, doc, chunk)) if cache is not None else None
            # A context written from a window of the document is redone once n_ctx grows past the one it had.
            if isinstance(entry, dict) and not (entry.get("windowed") and entry.get("n_ctx", 0) < spec.n_ctx):
                stats.cached += 1
                _apply(chunk, entry, guard, stats)
            else:
                missing.append(chunk)
        if missing:
            todo.append((doc, missing))

    own_runner = runner is None and bool(todo)
    bar = tqdm(
        total=stats.chunks, initial=stats.cached, unit="chunk", desc="contexts", file=sys.stderr,
        disable=not progress, dynamic_ncols=True, smoothing=0.1,
    )
    try:
        if todo:
            runner = runner or LlamaRunner(spec, parallel=parallel)
            _check_room(runner, spec)
            budget_left = limit
            for doc, missing in todo:
                if budget_left is not None and budget_left <= 0:
                    break
                groups = _groups_for(runner, spec, doc, missing)
                for group in groups:
                    group.code = doc.is_code
                if any(g.windowed for g in groups):
                    stats.windowed_documents += 1
                for group in groups:
                    stats.prefixes += 1
                    prefix = runner.render(DOCUMENT_PROMPT.format(document=group.doc_text), "")[0]
                    queue = list(group.chunks)
                    while queue and (budget_left is None or budget_left > 0):
                        # As many chunks as may run side by side (and as the limit allows), sharing the prefix.
                        take = runner.parallel if reuse else 1
                        if budget_left is not None:
                            take = min(take, budget_left)
                        batch = queue[:take]
                        suffixes = [_suffix(runner, group, c) for c in batch]
                        while len(batch) > 1 and not runner.fits_together(prefix, suffixes, spec.max_tokens):
                            batch, suffixes = batch[:-1], suffixes[:-1]
                        queue = queue[len(batch):]
                        entries = _generate(runner, spec, group, prefix, suffixes, reuse, stats)
                        for chunk, entry in zip(batch, entries):
                            if cache is not None and not entry.get("skipped"):  # a skip depends on n_ctx: not cached
                                cache.set(context_key(fingerprint, spec, doc, chunk), entry)
                        for chunk, entry in zip(batch, entries):
                            stats.generated += 1
                            _apply(chunk, entry, guard, stats)
                            if budget_left is not None:
                                budget_left -= 1
                            bar.update(1)
                            if stats.generate_seconds:
                                bar.set_postfix_str(f"{stats.generated_tokens / stats.generate_seconds:.1f} gen tok/s", refresh=False)
                            if on_chunk is not None:
                                on_chunk(chunk)
    finally:
        bar.close()
        if own_runner and runner is not None:
            runner.close()
        if cache is not None:
            cache.close()
        stats.seconds = time.perf_counter() - started
    return stats


def _check_room(runner: LlamaRunner, spec) -> None:
    prefix, suffix = runner.render(DOCUMENT_PROMPT.format(document=""), CHUNK_PROMPT.format(chunk=""))
    need = len(prefix) + len(suffix) + spec.max_tokens + 8
    if need > runner.n_ctx:
        raise LocalcrError(
            f"{spec.where}: n_ctx = {runner.n_ctx} leaves no room for a chunk: the prompt alone takes {len(prefix) + len(suffix)} "
            f"tokens and max_tokens = {spec.max_tokens}; raise n_ctx or lower max_tokens"
        )


def _groups_for(runner: LlamaRunner, spec, doc: Document, chunks: list[Chunk]) -> list[_Group]:
    """The whole document as one prefix if it fits beside the longest chunk's prompt, else windows."""
    empty_prefix, _ = runner.render(DOCUMENT_PROMPT.format(document=""), "")
    prefill = runner.prefill(doc.is_code)
    suffix_max = max(len(runner.render("", CHUNK_PROMPT.format(chunk=c.text), prefill)[1]) for c in chunks)
    room = runner.n_ctx - spec.max_tokens - len(empty_prefix) - suffix_max - 8
    doc_tokens = runner.count(doc.text)
    if doc_tokens <= room:
        return [_Group(doc.text, list(chunks), False)]
    if room <= 0:
        room = 0
    chars_per_token = len(doc.text) / max(1, doc_tokens)
    for shrink in (0.95, 0.85, 0.7, 0.5, 0.3):
        budget = int(room * chars_per_token * shrink)
        groups = plan_windows(doc, chunks, budget, head_chars=int(256 * chars_per_token))
        if all(runner.count(g.doc_text) <= room for g in groups):
            return groups
    return [_Group("", list(chunks), True)]


def _suffix(runner: LlamaRunner, group: _Group, chunk: Chunk) -> list[int]:
    return runner.render("", CHUNK_PROMPT.format(chunk=chunk.text), runner.prefill(group.code))[1]


def _generate(runner: LlamaRunner, spec, group: _Group, prefix: list[int], suffixes: list[list[int]], reuse: bool,
              stats: ContextStats) -> list[dict]:
    """Generate the contexts of chunks that share one prefix (side by side when the runner allows);
    returns their cache entries and counts the tokens."""
    prefill = runner.prefill(group.code).lstrip()
    fit = [len(prefix) + len(s) + spec.max_tokens <= runner.n_ctx for s in suffixes]
    todo = [s for s, ok in zip(suffixes, fit) if ok]
    if not todo:
        done = []
    elif reuse:
        done = runner.complete_many(prefix, todo, max_tokens=spec.max_tokens)
    else:
        done = [runner.complete(prefix, s, max_tokens=spec.max_tokens, reuse=False) for s in todo]
    results, it = [], iter(zip(todo, done))
    for ok in fit:
        if not ok:
            results.append({"raw": "", "finished": False, "tokens": 0, "skipped": "too_long"})
            continue
        suffix, out = next(it)
        from_prefix = min(out.reused, len(prefix))
        stats.prefix_tokens_reused += out.reused
        stats.prefix_tokens_evaluated += len(prefix) - from_prefix
        stats.chunk_tokens += len(suffix) - (out.reused - from_prefix)
        stats.generated_tokens += out.tokens
        stats.prompt_seconds += out.prompt_seconds
        stats.generate_seconds += out.generate_seconds
        results.append({"raw": prefill + out.text, "prefill": prefill, "finished": out.finished, "tokens": out.tokens,
                        "windowed": group.windowed, "n_ctx": spec.n_ctx})
    return results


# --------------------------------------------------------------------------------------------- import


def load_contexts_file(path, chunks: list[Chunk], *, warn: Callable[[str], None] | None = None) -> int:
    """Set contexts from a JSONL file of {"chunk_id": ..., "context": ...} lines (context_source "imported").
    Returns how many chunks got one; a bad line is a LocalcrError naming the line; unknown chunk ids are
    counted and reported through `warn` (default: a line on stderr) and skipped."""
    import json

    path = Path(path)
    by_id = {c.chunk_id: c for c in chunks}
    found, unknown = 0, []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LocalcrError(f"{path}: no such contexts file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LocalcrError(f"{path}: cannot read the contexts file ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LocalcrError(f"{path}:{number}: not valid JSON ({exc.msg}): each line must be {{\"chunk_id\": ..., \"context\": ...}}") from None
        if not isinstance(record, dict) or "chunk_id" not in record or "context" not in record:
            raise LocalcrError(f"{path}:{number}: each line must be an object with \"chunk_id\" and \"context\"")
        if not isinstance(record["context"], str):
            raise LocalcrError(f"{path}:{number}: \"context\" must be a string")
        chunk = by_id.get(str(record["chunk_id"]))
        if chunk is None:
            unknown.append(str(record["chunk_id"]))
            continue
        chunk.context, chunk.context_source = record["context"].strip(), "imported"
        found += 1
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        message = f"{path}: {len(unknown)} context(s) for unknown chunk ids skipped ({shown})"
        if warn is None:
            print(f"warning: {message}", file=sys.stderr)
        else:
            warn(message)
    return found
