"""The llama.cpp runtime: the one module that touches llama-cpp-python (and its private internals).

`load_llama` loads a GGUF file quietly, with one line saying why when llama.cpp cannot; `LlamaRunner` (contexts and
questions) and `RankRunner` (GGUF rerankers) build on it.

`LlamaRunner` loads a GGUF model quietly, renders prompts with the model's chat template (or as plain
completion text for base models), and generates with KV-cache reuse:

* `complete` compares the new prompt with the tokens already in the KV cache, removes only the cells
  after the longest common prefix (`kv_cache_seq_rm`) and evaluates the rest: consecutive prompts that
  share a document prefix pay for it once.
* `complete_many` generates several continuations of one shared prefix side by side: the prefix is
  evaluated once into sequence 0 of a unified KV cache and shared with the other sequences
  (`llama_memory_seq_cp` copies no cells in a unified cache), their suffixes are evaluated in shared
  batches, then each decode step advances every sequence by one token. On a CPU one step for eight
  sequences costs little more than for one.

Every prompt is evaluated in the same pieces whatever the cache held before (`_load_prefix`): cut after the chat
template's system turn (the part many prompts share) and where its prefix ends, and the cache is reused only up to
such a cut made the same way. llama.cpp's arithmetic depends on how a prompt is cut into batches (a prefix kept from a
prompt evaluated whole moved the next token's logits by up to 0.4), so reusing the cache wherever two prompts happened
to agree made an answer depend on the question asked before it. The prompt's last piece is evaluated again only to
give the logits a generation starts from, so those are kept: a second generation from the same prompt (a refusal
asked again under a grammar) evaluates nothing, and writes what it would after a fresh evaluation.

`count_work` keeps what llama.cpp evaluated, took from the KV cache and generated, and how often each model was
loaded, by model (`WORK`, and a file that `$LOCALCR_LLM_WORK` names): what the test suite adds up and prints.

The cache is created with `swa_full=True`: Gemma 3 (and other sliding-window models) otherwise keep only
the last `n_swa` positions of their local-attention layers, and cutting such a cache back to an earlier
position would silently attend to missing cells.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import io
import json
import logging
import os
import re
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from localcr.errors import LocalcrError
from localcr.threads import default_threads
from localcr.text import without_soft_hyphens

SEED = 1234
CHAT_STOPS = ("\n\n\n",)
_SPLIT = "\u27e6localcr-split\u27e7"
_USER = "\u27e6localcr-user\u27e7"  # where the user's message begins in a rendered chat prompt


def _without_markers(text: str) -> str:
    """A message without the markers `render` places in it: a document holding them must not break its prompt."""
    return text.replace(_SPLIT, "").replace(_USER, "")


def build_info() -> str:
    """Which llama.cpp build runs: the flags setup.sh chose (recorded in the venv), the CPU features it uses, and
    whether it can offload layers to a GPU (models.toml's n_gpu_layers matters only where it can)."""
    import llama_cpp

    try:
        stamp = (Path(sys.prefix) / ".llama-cpp-build").read_text().split(maxsplit=1)
        flags = stamp[1].strip() if len(stamp) > 1 else "default flags"
    except OSError:
        flags = "not built by setup.sh"
    gpu = ("GPU offload: yes (n_gpu_layers in models.toml)" if llama_cpp.llama_supports_gpu_offload()
           else "GPU offload: no (a CPU build)")
    pinned = f" (localcr reads {' '.join(cpu_features())}: ${CPU_FEATURES_VARIABLE})" if CPU_FEATURES_VARIABLE in os.environ else ""
    return f"llama-cpp-python {llama_cpp.__version__} ({flags}); CPU features in use: {' '.join(_built_features())}{pinned}; {gpu}"


# Pins the CPU features localcr reads (cpu_features), space- or comma-separated as llama.cpp names them: e.g.
# "SSE3 SSSE3 AVX AVX2 F16C FMA BMI2" makes an AVX-512 machine estimate as an AVX2-only CPU would.
CPU_FEATURES_VARIABLE = "LOCALCR_CPU_FEATURES"


def cpu_features() -> tuple[str, ...]:
    """The CPU features this llama.cpp build uses (AVX2, AVX512, NEON, ...), as llama.cpp reports them: the one
    place localcr reads them (typical LLM rates before a run has measured this machine's follow the CPU's kind).

    $LOCALCR_CPU_FEATURES pins them (llama.cpp's names, space- or comma-separated; an empty value: none), so that
    what depends on the CPU's kind can be run as on another CPU, such as the test suite with an AVX2-only CPU's
    features on an AVX-512 machine (tests/README.md). It changes what localcr estimates, not what llama.cpp runs."""
    pinned = os.environ.get(CPU_FEATURES_VARIABLE)
    return _built_features() if pinned is None else _pinned_features(pinned)


@functools.cache
def _built_features() -> tuple[str, ...]:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    return tuple(f.split("=")[0].split(":")[-1].strip() for f in info.split("|") if "= 1" in f)


@functools.cache
def _pinned_features(value: str) -> tuple[str, ...]:
    return tuple(value.replace(",", " ").split())


@contextlib.contextmanager
def quiet_stderr():
    """Silence llama.cpp while it loads: file descriptor 2 goes to a temporary file and sys.stderr (where
    llama-cpp-python's log callback prints) to a buffer. Yields a function returning what was written."""
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


# What llama.cpp did in this process, by role ("llm", "reranker") and model (`work_name`): {role: {name: {"evaluated":
# prompt tokens evaluated, "reused": prompt tokens taken from the KV cache (or restored from a stored state) instead,
# "generated": tokens generated, "loaded": models loaded, "again": of "evaluated", those of a prompt evaluated before}}}.
WORK: dict[str, dict[str, dict[str, int]]] = {}
WORK_VARIABLE = "LOCALCR_LLM_WORK"
_FIELDS = ("evaluated", "reused", "generated", "loaded", "again")
_EVALUATED: set[tuple[str, str]] = set()  # (model, prompt_key) of each prompt evaluated while a work file is named


def work_name(spec, path: Path) -> str:
    """The name a model's work is counted under: its bundled name, else its file's (whatever a registry calls it)."""
    return spec.params.get("bundled") or Path(path).name


def prompt_key(*pieces: Sequence[int]) -> str:
    """A short key of the tokens a call evaluated (the pieces of a batch apart), for count_work's "again"."""
    return hashlib.sha1(repr(tuple(map(tuple, pieces))).encode()).hexdigest()[:16]


def count_work(name: str, *, role: str = "llm", evaluated: int = 0, reused: int = 0, generated: int = 0,
               loaded: int = 0, prompt: Sequence[Sequence[int]] = ()) -> None:
    """Add to WORK, and where $LOCALCR_LLM_WORK names a file append the same counts to it as one JSON line (as they
    happen, so a process killed later has left what it did): how the test suite adds up the work of its workers and
    of the `localcr` processes they start (tests/conftest.py). Counted where llama.cpp is called: every prompt piece
    `_load_prefix` evaluates (complete, stream, choice, prefix_state, prompt_rate), the suffixes `complete_many`
    decodes side by side, each generation's tokens, and (role "reranker") the sequences a GGUF reranker scores; a KV
    state restored from the disk cache counts as reused. llama.cpp's own evaluation of each generated token as the
    next one's input is in "generated"; "loaded" counts each time a LlamaRunner loads the model (a load costs
    seconds, the same whoever asks). prompt: the token pieces evaluated; where a work file is named, their
    `prompt_key` goes with the line and "again" counts the tokens of a prompt evaluated before (in this process here,
    in every process of the file in read_work), work a cache of completions would have saved: the suite measures by
    it what sharing answers between its tests could save. With no file named nothing is hashed or remembered, so a
    long-running server keeps no set of its prompts."""
    path = os.environ.get(WORK_VARIABLE)
    key = prompt_key(*prompt) if path and prompt else ""
    totals = WORK.setdefault(role, {}).setdefault(name, dict.fromkeys(_FIELDS, 0))
    again = _seen_before(_EVALUATED, name, key, evaluated)
    counts = {"evaluated": evaluated, "reused": reused, "generated": generated, "loaded": loaded, "again": again}
    for field in _FIELDS:
        totals[field] += counts[field]
    if path:
        line = json.dumps({"role": role, "model": name, **counts, **({"prompt": key} if key else {})})
        with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


def _seen_before(evaluated: set[tuple[str, str]], model: str, prompt: str, tokens: int) -> int:
    """`tokens` where this model evaluated this prompt before (then remembered), else 0."""
    if not prompt or not tokens:
        return 0
    if (model, prompt) in evaluated:
        return tokens
    evaluated.add((model, prompt))
    return 0


def read_work(path: Path) -> dict[str, dict[str, dict[str, int]]]:
    """The counts `count_work` appended to a file, summed as WORK sums them (a line cut short by a kill is skipped)."""
    totals: dict[str, dict[str, dict[str, int]]] = {}
    evaluated: set[tuple[str, str]] = set()
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as file:
        for line in file:
            try:
                entry = json.loads(line)
                model = totals.setdefault(entry["role"], {}).setdefault(entry["model"], dict.fromkeys(_FIELDS, 0))
                entry["again"] = _seen_before(evaluated, entry["model"], entry.get("prompt", ""), entry["evaluated"])
                for field in _FIELDS:
                    model[field] += entry[field]
            except (ValueError, KeyError, TypeError):
                continue
    return totals


class _Captured(Exception):
    def __init__(self, prompt: bytes, add_bos: bool):
        self.prompt, self.add_bos = prompt, add_bos


class _CapturePrompt:
    """Stands in for a Llama when a llama-cpp-python chat handler is called, to catch the rendered prompt."""

    verbose = False

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False):
        raise _Captured(text, add_bos)


Renderer = Callable[[list[dict]], tuple[str, bool]]


def load_grammar(text: str):
    """A GBNF grammar for `LlamaRunner.stream`'s output, parsed without llama.cpp printing it."""
    from llama_cpp import LlamaGrammar

    with quiet_stderr():
        return LlamaGrammar.from_string(text, verbose=False)


def _model_bytes(text: str) -> bytes:
    """Text as a model's tokenizer is given it: words a soft hyphen splits joined (a language model would read
    `dan` and `gerous`), unencodable characters (lone surrogates) replaced."""
    return without_soft_hyphens(text).encode("utf-8", "replace")


def shared_start(a, b) -> int:
    """How many leading tokens two token sequences share (the part of a prompt the KV cache can keep)."""
    import numpy as np

    n = min(len(a), len(b))
    diff = np.nonzero(np.asarray(a[:n], dtype=np.int64) != np.asarray(b[:n], dtype=np.int64))[0]
    return int(diff[0]) if len(diff) else n


def load_llama(spec, path: Path, threads: int, **params):
    """A llama_cpp.Llama over the GGUF file at `path`, loaded without llama.cpp's log on stderr; a LocalcrError
    with llama.cpp's last word on why it could not. The entry's n_gpu_layers goes to llama.cpp, whose own default
    (0) would keep every layer of a CUDA or Metal build on the CPU; a CPU build ignores it."""
    from llama_cpp import Llama

    try:
        with quiet_stderr() as log:
            llm = Llama(model_path=str(path), n_threads=threads, n_threads_batch=threads, n_gpu_layers=spec.n_gpu_layers,
                        verbose=False, **params)
    except (ValueError, RuntimeError, OSError) as exc:
        detail = [line.strip() for line in log().splitlines() if line.strip()]
        why = detail[-1] if detail else str(exc)
        raise LocalcrError(
            f"{spec.where}: llama.cpp could not load {str(path)!r} ({why}): check that the file is a complete "
            "GGUF model supported by llama-cpp-python 0.3.36, and that n_ctx fits in memory"
        ) from None
    # llama-cpp-python maps llama.cpp's warnings to logging.ERROR and prints them unless the level is higher.
    logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
    return llm


class OnDemandLlm:
    """A task done with one LLM, loaded on its first need and kept until `close()`: the answerer, the expander and
    the navigator. A subclass sets VERSION (its prompt's version, which labels its cache entries), PARALLEL (the
    sequences it decodes side by side) and `loading()`, the line said when the model loads."""

    VERSION = ""
    PARALLEL = 1

    def __init__(self, spec, *, runner=None, log: Callable[[str], None] | None = None):
        self.spec, self._runner, self._log = spec, runner, log

    def loading(self) -> str:
        return f"{self.spec.name}: loaded once per process"

    @property
    def runner(self) -> "LlamaRunner":
        if self._runner is None:
            self._say(self.loading())
            self._runner = LlamaRunner(self.spec, parallel=self.PARALLEL)
        return self._runner

    def _say(self, message: str) -> None:
        if self._log is not None:
            self._log(message)

    def _tag(self) -> str:
        """The label of this task's cache entries: the LLM and the prompt's version (what `localcr cache` lists)."""
        from localcr.cache import tag

        return tag(self.spec.name, f"fingerprint {self.spec.fingerprint()}", self.VERSION)

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def resolved_llm(registry, name: str | None):
    """The named LLM's spec, or the registry's default one, its file checked now: a missing or tampered file is one
    line before any work, not after it."""
    spec = registry.require("llm", name)
    spec.resolve()
    return spec


class LlamaRunner:
    """One loaded GGUF model: prompt rendering, tokenisation, and completion with KV-cache prefix reuse."""

    def __init__(self, spec, *, seed: int = SEED, parallel: int = 1):
        import llama_cpp

        self.spec = spec
        self.threads = spec.n_threads or default_threads()
        path = spec.resolve()
        self.work_name = work_name(spec, path)
        self.llm = load_llama(
            spec, path, self.threads, n_ctx=spec.n_ctx, n_batch=spec.n_batch,
            n_ubatch=min(spec.n_ubatch, spec.n_batch), seed=seed, logits_all=False, swa_full=True, flash_attn=spec.flash_attn,
        )
        self._llama_cpp = llama_cpp
        self.parallel = max(1, parallel)
        if self.parallel > 1:
            self._enable_parallel()
        self._vocab = self.llm._model.vocab
        # llama.cpp may pad the context it allocates (n_ctx() > requested), but llama-cpp-python sizes its
        # token buffer with the requested n_ctx: the smaller of the two is the real limit.
        self.n_ctx = min(self.llm.n_ctx(), len(self.llm.input_ids))
        self._heads: set[tuple[int, ...]] = set()  # rendered prompts' starts up to the user's message (a system turn)
        self._splits: tuple[int, ...] = ()  # where the KV cache's tokens were cut into evaluations (their ends)
        # The last prompt generated from, and the logits its evaluation ended with: a second generation from the same
        # prompt (a refusal asked again under a grammar) starts from them instead of evaluating its last piece again.
        self._prompt_logits: tuple[tuple[int, ...], object] | None = None
        self._render_chat = self._chat_renderer() if spec.prompt_style == "chat" else None
        count_work(self.work_name, loaded=1)

    @property
    def is_chat(self) -> bool:
        """Whether prompts go through a chat template (instruct models) or are plain text (base models)."""
        return self._render_chat is not None

    # --- prompts

    def _chat_renderer(self) -> Renderer:
        """A function from chat messages to (prompt text, add_bos) using the model's chat template."""
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

            def render_named(messages: list[dict]) -> tuple[str, bool]:
                try:
                    handler(llama=_CapturePrompt(), messages=messages)
                except _Captured as captured:
                    return captured.prompt.decode("utf-8"), captured.add_bos
                raise RuntimeError("the chat handler produced no prompt")

            return render_named
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

        def render_template(messages: list[dict]) -> tuple[str, bool]:
            result = formatter(messages=messages)
            return result.prompt, not result.added_special

        return render_template

    def render(self, prefix_message: str, suffix_message: str, system: str = "") -> tuple[list[int], list[int]]:
        """Tokens of the prompt for one user message = prefix_message + suffix_message, split where the prefix
        ends, so that every prompt with the same prefix_message (and system message) starts with the same
        tokens. A base model (completion style) gets the plain text, system message first."""
        if self._render_chat is None:
            head = f"{system}\n\n" if system else ""
            prefix = self.tokenize(head + prefix_message, bos=True)
            self._add_head(self.tokenize(head, bos=True), prefix)
            return prefix, self.tokenize(suffix_message)
        prefix_message, suffix_message = _without_markers(prefix_message), _without_markers(suffix_message)
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": _USER + prefix_message + _SPLIT + suffix_message}]
        try:
            text, add_bos = self._render_chat(messages)
        except LocalcrError:
            raise
        except Exception as exc:
            raise LocalcrError(
                f"{self.spec.where}: the chat template failed to render ({type(exc).__name__}: {exc}): "
                "set chat_format to a llama-cpp-python format or use prompt_style = \"completion\""
            ) from None
        if text.count(_SPLIT) != 1 or text.count(_USER) > 1:
            raise LocalcrError(f"{self.spec.where}: the chat template rewrites the message text; set chat_format")
        head, tail = text.split(_SPLIT)
        start, found, rest = head.partition(_USER)
        prefix = self.tokenize(start + rest, bos=add_bos)
        if found:
            self._add_head(self.tokenize(start, bos=add_bos), prefix)
        return prefix, self.tokenize(tail)

    def _add_head(self, head: list[int], prefix: list[int]) -> None:
        """Remember a rendered prompt's start up to the user's message, where its tokens are those of the prompt: a cut
        every prompt that starts with it is evaluated at (`_cuts`), so prompts with one system turn share it."""
        if 0 < len(head) < len(prefix) and prefix[:len(head)] == head:
            self._heads.add(tuple(head))

    def tokenize(self, text: str, bos: bool = False) -> list[int]:
        return self.llm.tokenize(_model_bytes(text), add_bos=bos, special=self.is_chat)

    def count(self, text: str) -> int:
        return len(self.llm.tokenize(_model_bytes(text), add_bos=False, special=False))

    def detokenize(self, tokens: list[int]) -> str:
        return self.llm.detokenize(tokens, special=True).decode("utf-8", "replace")

    # --- generation

    def cached_prefix(self, tokens: list[int]) -> int:
        """How many leading tokens of `tokens` are already in the KV cache."""
        return shared_start(self.llm.input_ids[: self.llm.n_tokens], tokens)

    def prompt_rate(self, tokens: list[int]) -> float:
        """Tokens per second evaluating `tokens` from an empty KV cache (for benchmarks and estimates)."""
        started = time.perf_counter()
        self._load_prefix(tokens, reuse=False)
        return len(tokens) / (time.perf_counter() - started)

    def generation_rate(self, prefix: list[int], suffixes: list[list[int]], max_tokens: int = 48) -> float:
        """Generated tokens per second, all sequences together, continuing `prefix` + each suffix side by side
        (the prefix is loaded first, untimed; nothing stops a sequence before max_tokens but its end token)."""
        self.complete_many(prefix, suffixes[:1], max_tokens=2, stops=())
        done = self.complete_many(prefix, suffixes, max_tokens=max_tokens, stops=())
        return sum(d.tokens for d in done) / sum(d.generate_seconds for d in done)

    def prefix_state(self, tokens: list[int]) -> bytes:
        """The KV state of `tokens` as bytes (evaluated now unless already cached), to restore in another process
        with `restore_prefix`: a fixed prompt prefix is then evaluated once per machine, not once per process."""
        self._load_prefix(tokens, logits=False)
        lc, ctx = self._llama_cpp, self.llm._ctx.ctx
        size = lc.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = lc.llama_state_seq_get_data(ctx, buffer, size, 0)
        return bytes(buffer[:written])

    def restore_prefix(self, tokens: list[int], state: bytes) -> bool:
        """Put back a prefix_state of exactly these tokens as the KV cache; False (and an empty cache) where this
        context cannot take it (another model, build or n_ctx wrote it)."""
        lc, llm = self._llama_cpp, self.llm
        llm.reset()
        llm._ctx.kv_cache_clear()
        self._splits, self._prompt_logits = (), None
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if not state or lc.llama_state_seq_set_data(llm._ctx.ctx, buffer, len(state), 0) == 0:
            llm._ctx.kv_cache_clear()
            return False
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)
        self._splits = self._cuts(tokens)  # as prefix_state evaluated them
        count_work(self.work_name, reused=len(tokens))
        return True

    def keep_prefix(self, tokens: list[int], store: str, label: str, *purpose: str,
                    before_evaluating: Callable[[int], None] | None = None) -> str:
        """Make the KV cache hold `tokens`, a prompt prefix many prompts share (an instruction, a document's
        outline): "kept" where it already does, "restored" from the state an earlier process left in the disk
        cache `store`, else "evaluated" now and its state stored there (labelled `label`) for the next process.
        purpose: what the prefix is for; the state's key adds the model, its build, n_ctx and the tokens.
        before_evaluating: told how many tokens are about to be evaluated (to say what it will cost)."""
        if self._holds(tokens):
            return "kept"
        from llama_cpp import __version__ as llama_cpp_version

        from localcr.cache import key, open_cache

        state_key = key("prefix-state", "evaluated at its cuts", *purpose, self.spec.fingerprint(), str(self.n_ctx),
                        str(self.spec.flash_attn), llama_cpp_version, *map(str, tokens))
        with open_cache(store) as cache:
            state = cache.get(state_key)
            if isinstance(state, bytes) and self.restore_prefix(tokens, state):
                return "restored"
            if before_evaluating is not None:
                before_evaluating(len(tokens) - self.reused(tokens, logits=False))
            cache.set(state_key, self.prefix_state(tokens), label)
        return "evaluated"

    def _cuts(self, tokens: list[int], prefix: int = 0) -> tuple[int, ...]:
        """Where `tokens` are cut into evaluations: after a remembered head, where a prefix of `prefix` tokens ends, and at
        the end; a function of the prompt alone, so that it is evaluated the same way whatever ran before."""
        n = len(tokens)
        cuts = {len(head) for head in self._heads if len(head) < n and tuple(tokens[:len(head)]) == head}
        return tuple(sorted(cuts | {cut for cut in (prefix, n) if 0 < cut <= n}))

    def _reusable(self, tokens: list[int], cuts: tuple[int, ...], held: int | None = None,
                  splits: tuple[int, ...] | None = None) -> int:
        """The longest start of `tokens` the KV cache holds as their own evaluation would make it: it ends at a cut of
        both, and the cache's tokens up to there were cut where these are (held, splits: another cache's)."""
        held = self.cached_prefix(tokens) if held is None else held
        splits = self._splits if splits is None else splits
        for cut in reversed(cuts):
            if cut <= held and [c for c in splits if c <= cut] == [c for c in cuts if c <= cut]:
                return cut
        return 0

    def reused_after(self, before: list[int], tokens: list[int]) -> int:
        """How many of a prefix's tokens the KV cache serves when it is loaded right after `before` (each loaded as
        `complete_many` loads its prefix): what an estimate may leave out of what is evaluated."""
        return self._reusable(tokens, self._cuts(tokens), shared_start(before, tokens), self._cuts(before))

    def reused(self, tokens: list[int], prefix: int = 0, logits: bool = True) -> int:
        """How many leading tokens of `tokens` loading them (`_load_prefix`, `stream`) takes from the KV cache: less
        than `cached_prefix` where the cache holds more of them than ends at a cut (the last question's sources
        start as this one's do, yet are evaluated again): what an estimate leaves out of what is evaluated."""
        cuts = self._cuts(tokens, prefix)
        if logits and self._logits_kept(tokens, cuts):
            return len(tokens)
        return self._reusable(tokens, cuts if not logits else cuts[:-1])

    def _logits_kept(self, tokens: list[int], cuts: tuple[int, ...]) -> bool:
        """Whether the KV cache holds `tokens` evaluated at these cuts (perhaps with a generation after them) and the
        logits their evaluation ended with are kept: generating from them again needs no evaluation. They are the
        logits evaluating the last piece again would give, so the second generation is the one it would be."""
        return (self._prompt_logits is not None and self._prompt_logits[0] == tuple(tokens)
                and self._reusable(tokens, cuts) == len(tokens))

    def _holds(self, tokens: list[int]) -> bool:
        """Whether the KV cache holds `tokens` (and perhaps more) as their own evaluation would make them."""
        return len(tokens) > 0 and self.reused(tokens, logits=False) == len(tokens)

    def _load_prefix(self, tokens: list[int], reuse: bool = True, prefix: int = 0, logits: bool = True) -> int:
        """Make sequence 0 of the KV cache hold exactly `tokens`, evaluated piece by piece at `_cuts` (prefix: where the
        prompt's shared part ends), reusing what the cache holds evaluated the same way; with logits (to generate
        from), the last piece is evaluated in any case. Returns how many tokens were reused."""
        llm = self.llm
        cuts = self._cuts(tokens, prefix)
        if reuse and logits and self._logits_kept(tokens, cuts) and llm._ctx.kv_cache_seq_rm(-1, len(tokens), -1):
            llm.n_tokens = len(tokens)  # what was generated after them is dropped; their logits are put back
            self._output_logits()[:] = self._prompt_logits[1]
            count_work(self.work_name, reused=len(tokens))
            return len(tokens)
        self._prompt_logits = None
        keep = self.reused(tokens, prefix, logits) if reuse else 0
        if keep > 0 and not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0  # a memory that cannot be cut back (recurrent models): evaluate everything
        if keep == 0:
            llm.reset()
            llm._ctx.kv_cache_clear()
        llm.n_tokens = keep
        self._splits = tuple(c for c in cuts if c <= keep)
        start = keep  # a cut (or 0): the pieces after it are evaluated one by one
        for end in cuts[len(self._splits):]:
            llm.eval(tokens[start:end])
            self._splits, start = self._splits + (end,), end
        count_work(self.work_name, evaluated=len(tokens) - keep, reused=keep, prompt=(tokens,))
        if logits:
            self._prompt_logits = (tuple(tokens), self._output_logits().copy())
        return keep

    def _output_logits(self):
        """The logits the last evaluation ended with, as a writable view of llama.cpp's buffer (what sampling reads)."""
        import numpy as np

        pointer = self._llama_cpp.llama_get_logits_ith(self.llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.llm.n_vocab(),))

    def choice(self, prefix: list[int], suffix: list[int], options: Iterable[str]) -> dict[str, float]:
        """Each option's log-probability as the model's next token after prefix + suffix (by the option's first
        token: options must begin with different ones): a choice among a few words in one evaluation, nothing
        sampled, so that the margin between two can be held to a threshold measured on a benchmark."""
        import numpy as np

        self._load_prefix(prefix + suffix, True, prefix=len(prefix))
        logits = self._output_logits().astype(np.float64)
        top = logits.max()
        normaliser = top + np.log(np.exp(logits - top).sum())
        return {option: float(logits[self.llm.tokenize(option.encode(), add_bos=False, special=False)[0]] - normaliser)
                for option in options}

    def complete(
        self, prefix: list[int], suffix: list[int], *, max_tokens: int, stops: Iterable[str] | None = None,
        reuse: bool = True, grammar=None, repeat_penalty: float | None = None,
    ) -> Completion:
        """Generate after prefix + suffix, reusing the KV cache for the longest common prefix with the
        previous call unless reuse=False (then the cache is cleared and the whole prompt evaluated); grammar and
        repeat_penalty: as for `stream`."""
        for item in self.stream(prefix, suffix, max_tokens=max_tokens, stops=stops, reuse=reuse, grammar=grammar,
                                repeat_penalty=repeat_penalty):
            if isinstance(item, Completion):
                return item
        raise AssertionError("stream ended without its Completion")

    def stream(
        self, prefix: list[int], suffix: list[int], *, max_tokens: int, stops: Iterable[str] | None = None,
        reuse: bool = True, grammar=None, repeat_penalty: float | None = None,
    ) -> Iterator[str | Completion]:
        """`complete` as it happens: the text in pieces as soon as the tokens exist (held back only where it
        could still be the start of a stop string), then the Completion. grammar: a llama_cpp.LlamaGrammar
        the output must follow. repeat_penalty: instead of the model's (llama.cpp weighs it against the last 64
        tokens generated, not the prompt's). Closing the generator early stops generation."""
        llm, spec = self.llm, self.spec
        tokens = prefix + suffix
        if len(tokens) + max_tokens > self.n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens + {max_tokens} does not fit n_ctx {self.n_ctx}")
        started = time.perf_counter()
        keep = self._load_prefix(tokens, reuse, prefix=len(prefix))
        evaluated_at = time.perf_counter()
        decoder = _Decoder(self, tokens, max_tokens, stops)
        generated = llm.generate(
            [], reset=False, temp=spec.temperature, top_k=40, top_p=0.95, min_p=0.05, grammar=grammar,
            repeat_penalty=spec.repeat_penalty if repeat_penalty is None else repeat_penalty,
        )
        sent = 0
        try:
            for token in generated:
                going = decoder.add(token)
                safe = len(decoder.text) if not going else len(decoder.text) - held_back(decoder.text, decoder.stops)
                if safe > sent:
                    yield decoder.text[sent:safe]
                    sent = safe
                if not going:
                    break
        finally:
            generated.close()
            count_work(self.work_name, generated=len(decoder.tokens))
        if len(decoder.text) > sent:
            yield decoder.text[sent:]
        done = time.perf_counter()
        yield Completion(
            text=decoder.text, tokens=len(decoder.tokens), finished=decoder.finished, reused=keep,
            evaluated=len(tokens) - keep, prompt_seconds=evaluated_at - started, generate_seconds=done - evaluated_at,
        )

    def _enable_parallel(self) -> None:
        """Swap the Llama's context for one holding `parallel` sequences in one unified KV cache, so that
        sequences copied from the document prefix share its cells instead of copying them."""
        from llama_cpp import _internals

        llm, lc = self.llm, self._llama_cpp
        params = lc.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_seq_max = self.parallel
        params.kv_unified = True
        with quiet_stderr():
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
        """Generate after prefix + each suffix, all side by side (see the module docstring)."""
        if self.parallel == 1 or len(suffixes) == 1:
            return [self.complete(prefix, suffix, max_tokens=max_tokens, stops=stops) for suffix in suffixes]
        assert len(suffixes) <= self.parallel and self.fits_together(prefix, suffixes, max_tokens)
        lc, llm, spec = self._llama_cpp, self.llm, self.spec
        self._prompt_logits = None  # the sequences' own evaluations replace the logits buffer
        mem = lc.llama_get_memory(llm._ctx.ctx)
        n, length = len(suffixes), len(prefix)
        started = time.perf_counter()
        for seq in range(1, self.parallel):
            lc.llama_memory_seq_rm(mem, seq, -1, -1)
        keep = self._load_prefix(prefix, logits=False)  # the suffixes' last tokens give the logits
        for seq in range(1, n):
            lc.llama_memory_seq_cp(mem, 0, seq, -1, -1)

        samplers = [llm._init_sampler(temp=spec.temperature, repeat_penalty=spec.repeat_penalty) for _ in range(n)]
        decoders = [_Decoder(self, prefix + suffix, max_tokens, stops) for suffix in suffixes]
        first: list[int] = [0] * n
        pending = [(seq, token, length + i, i == len(suffix) - 1) for seq, suffix in enumerate(suffixes) for i, token in enumerate(suffix)]
        step = self._pbatch._n_tokens
        for at in range(0, len(pending), step):
            piece = pending[at : at + step]
            self._decode(piece)
            for index, (seq, _, _, logits) in enumerate(piece):
                if logits:
                    first[seq] = samplers[seq].sample(llm._ctx, index)
        evaluated_at = time.perf_counter()

        active = [seq for seq in range(n) if decoders[seq].add(first[seq])]
        while active:
            self._decode([(seq, decoders[seq].tokens[-1], length + len(suffixes[seq]) + len(decoders[seq].tokens) - 1, True)
                          for seq in active])
            active = [seq for index, seq in enumerate(active) if decoders[seq].add(samplers[seq].sample(llm._ctx, index))]
        done = time.perf_counter()

        # Leave the cache holding the prefix alone, so the next group or document can reuse what it shares.
        for seq in range(1, n):
            lc.llama_memory_seq_rm(mem, seq, -1, -1)
        llm._ctx.kv_cache_seq_rm(-1, length, -1)
        llm.n_tokens = length
        for sampler in samplers:
            sampler.close()
        count_work(self.work_name, evaluated=len(pending), generated=sum(len(d.tokens) for d in decoders),
                   prompt=(prefix, *suffixes))
        prompt_share, gen_share = (evaluated_at - started) / n, (done - evaluated_at) / n
        return [
            Completion(
                text=d.text, tokens=len(d.tokens), finished=d.finished,
                reused=keep if seq == 0 else length, evaluated=(length - keep if seq == 0 else 0) + len(suffixes[seq]),
                prompt_seconds=prompt_share, generate_seconds=gen_share,
            )
            for seq, d in enumerate(decoders)
        ]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if getattr(self, "_pbatch", None) is not None:
                self._pbatch.close()
            self.llm._ctx.close()
        with contextlib.suppress(Exception):
            self.llm.close()


class RankRunner:
    """A GGUF reranker in llama.cpp with rank pooling: each query-passage token sequence goes through the model
    and its classification head to one score. Sequences are evaluated several at a time, up to `batch_size`
    sequences and `batch_tokens` tokens per llama.cpp call."""

    def __init__(self, spec, path: Path, *, batch_size: int, batch_tokens: int):
        import llama_cpp

        self.spec, self.batch_size = spec, batch_size
        self.threads = default_threads()
        self.work_name = work_name(spec, path)
        # flash attention: calls of 400-512 tokens 2-4x faster on the tiny test model (one core), scores still within
        # 2e-3 of torch's logits (tests/test_rerank.py)
        self.llm = load_llama(spec, path, self.threads, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_RANK,
                              n_ctx=batch_tokens, n_batch=batch_tokens, n_ubatch=batch_tokens, flash_attn=True)
        self._llama_cpp = llama_cpp
        self.batch_tokens = batch_tokens
        self.n_ctx_train = self.llm._model.n_ctx_train()
        vocab = self.llm._model.vocab
        self.bos = llama_cpp.llama_vocab_bos(vocab) if llama_cpp.llama_vocab_get_add_bos(vocab) else None
        self.eos = llama_cpp.llama_vocab_eos(vocab) if llama_cpp.llama_vocab_get_add_eos(vocab) else None
        self.sep = llama_cpp.llama_vocab_sep(vocab) if llama_cpp.llama_vocab_get_add_sep(vocab) else None
        template = llama_cpp.llama_model_chat_template(self.llm._model.model, b"rerank")
        self.template = template.decode("utf-8") if template else None
        # freed when the reranker goes, or before the interpreter tears down the modules llama-cpp-python's own
        # destructor needs (it fails with a TypeError on stderr at exit otherwise)
        weakref.finalize(self, self.llm.close)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return self.llm.tokenize(_model_bytes(text), add_bos=False, special=special)

    def pair(self, query: list[int], passage: list[int]) -> list[int]:
        """One query-passage sequence in the model's own format, as llama.cpp's server builds it: BOS query EOS SEP
        passage EOS, each special token where the vocabulary asks for it ([CLS] q [SEP] d [SEP] for BERT,
        <s> q </s></s> d </s> for XLM-RoBERTa). Where EOS is not added the passage still ends with SEP, as
        the model's own tokenizer ends a pair (llama.cpp's server leaves it out)."""
        specials = [t for t in (self.eos, self.sep) if t is not None and t >= 0]
        head = [self.bos] if self.bos is not None and self.bos >= 0 else []
        end = [self.eos] if self.eos is not None and self.eos >= 0 else specials[-1:]
        return head + query + specials + passage + end

    @property
    def pair_overhead(self) -> int:
        """Special tokens `pair` adds around a query and a passage."""
        return len(self.pair([], []))

    def score(self, sequences: list[list[int]]) -> list[float]:
        """One score per token sequence (each at most batch_tokens long), in the given order."""
        lc, llm = self._llama_cpp, self.llm
        order = sorted(range(len(sequences)), key=lambda i: -len(sequences[i]))  # longest first: batches fill evenly
        scores = [0.0] * len(sequences)
        batch: list[int] = []
        for index in order + [None]:
            full = len(batch) == self.batch_size or (
                index is not None and sum(len(sequences[i]) for i in batch) + len(sequences[index]) > self.batch_tokens)
            if batch and (index is None or full):
                llm._batch.reset()
                for seq, i in enumerate(batch):
                    llm._batch.add_sequence(sequences[i], seq, True)
                llm._ctx.kv_cache_clear()  # a causal reranker keeps a cache; an encoder has none
                llm._ctx.decode(llm._batch)
                count_work(self.work_name, role="reranker", evaluated=sum(len(sequences[i]) for i in batch))
                for seq, i in enumerate(batch):
                    scores[i] = float(lc.llama_get_embeddings_seq(llm._ctx.ctx, seq)[0])
                batch = []
            if index is not None:
                batch.append(index)
        return scores


class _Decoder:
    """The text of one generation as tokens arrive, and whether it has ended (end-of-generation token,
    a stop string, max_tokens, or a loop)."""

    def __init__(self, runner: LlamaRunner, prompt: list[int], max_tokens: int, stops: Iterable[str] | None):
        self.runner, self.prompt, self.max_tokens = runner, prompt, max_tokens
        self.stops = tuple(stops if stops is not None else CHAT_STOPS)
        self.tokens: list[int] = []
        self.text, self.finished = "", False

    def add(self, token: int) -> bool:
        """Take one generated token; False once the generation is over."""
        runner = self.runner
        if runner._llama_cpp.llama_vocab_is_eog(runner._vocab, token):
            self.finished = True
            return False
        self.tokens.append(token)
        self.text = runner.llm.detokenize(self.tokens, prev_tokens=self.prompt).decode("utf-8", "ignore")
        cut = find_stop(self.text, self.stops)
        if cut is not None:
            self.text, self.finished = self.text[:cut], True
            return False
        return len(self.tokens) < self.max_tokens and not (looping(self.tokens) and not in_a_number(self.text))


def find_stop(text: str, stops: tuple[str, ...]) -> int | None:
    """Where the answer ends: the first stop string after the first non-blank character."""
    lead = len(text) - len(text.lstrip())
    if lead == len(text):
        return None
    found = [i for i in (text.find(s, lead) for s in stops) if i >= 0]
    return min(found) if found else None


def held_back(text: str, stops: tuple[str, ...]) -> int:
    """How many characters at the end of `text` could still grow into a stop string (not shown until they cannot)."""
    longest = 0
    for stop in stops:
        for n in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:n]):
                longest = n
                break
    return longest


_NUMBER_TAIL = re.compile(r"(?<![\d.,'])\d[\d.,' ]{0,23}$")


def in_a_number(text: str) -> bool:
    """Whether the text ends inside a figure of at most 24 characters: Qwen writes a digit a token, so "1000" or
    "1,000,000" repeats a token or a few as a loop does, and a query's "> 1000" was cut to "> 100"."""
    return bool(_NUMBER_TAIL.search(text))


def looping(tokens: list[int], min_repeats: int = 3, max_period: int = 16) -> bool:
    """True when the tail of the generation is one short token sequence repeated: a loop that only max_tokens would end."""
    n = len(tokens)
    for period in range(1, max_period + 1):
        span = period * min_repeats
        if span > n or (period == 1 and n < 8):
            continue
        tail = tokens[n - span :]
        if tail == tail[:period] * min_repeats:
            return True
    return False
