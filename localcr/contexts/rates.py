"""This machine's LLM speeds: measured once, updated by every long run, and used to say how long a run will take
before it starts."""
from __future__ import annotations

from typing import Callable, NamedTuple

from localcr.contexts.stats import ContextStats
from localcr.documents import Document
from localcr.errors import LocalcrError
from localcr.llm import LlamaRunner, cpu_features


class LlmRates(NamedTuple):
    """What a model reached on this machine: prompt and generated tokens per second, and the tokens it wrote
    for one context (None until a run has measured it)."""

    prompt: float
    generate: float
    tokens_per_context: float | None = None


# Typical rates of a 1.5B Q4_K_M model (a file of TYPICAL_MODEL_BYTES) on 2 cores, for a short run on a machine with
# no rates recorded. AVX-512 pairs differ by more than the factor of 2 an estimate may miss by: an Intel Xeon pair
# reads 78 prompt tokens/s (llama.cpp's floor) and writes 25 side by side, an AMD EPYC pair 185 and 38 (where 65 and
# 25 put its demo at 70 s and it took 33): these are the middle of the two (geometric means), within 1.6 times of
# either. AVX2: the AVX2 pair of "llama.cpp settings" in benchmarks/results/superseded/notebook-2026-11.md (21 prompt
# tokens/s with flash attention, 9-10 generated side by side; at those rates the demo's contexts take about 160 s, and
# that pair took 2 min 49 s over the whole demo); llama.cpp built for AVX2 reads 95 on the EPYC's cores: a recent AVX2
# CPU can be 4 times faster.
TYPICAL_RATES = LlmRates(120.0, 31.0)
TYPICAL_AVX2_RATES = LlmRates(21.0, 10.0)
TYPICAL_MODEL_BYTES = 1_117_320_768
# A run that evaluates this many prompt tokens or more (50 s at typical AVX-512 rates, 5 min at AVX2's) first
# measures the rates when none are recorded: a few hundred tokens, about 20 s for the 1.5B on 2 AVX2 cores, once.
# A shorter run (the demo's 11 contexts) is estimated with the typical rates: measuring would cost it a fifth.
MEASURE_FROM_TOKENS = 6000


# The kinds of work whose rates are recorded apart from contexts' (""): each has prompts of its own length, one
# sequence where contexts run eight side by side, and an answer's generation follows a grammar, several times slower
# a token. One pool of rates for all had the cards of 27 reports announced at 35 min (they took 5: the last answer's
# rate stood for a card's), and answers at 60 s that took 20.
CARD = "card"
ANSWER = "answer"


def _rates_key(spec, threads: int, parallel: int, work: str = "") -> str:
    from localcr.cache import key

    return key("llm-rates", spec.fingerprint(), str(threads), str(parallel), *([work] if work else []))


def recorded_rates(spec, threads: int, parallel: int, work: str = "") -> LlmRates | None:
    """The rates this model last reached on this machine with these threads and side-by-side sequences, for this
    kind of work (CARD, ANSWER; "" for contexts), if any (entries of earlier versions, and measured ones, hold the
    two speeds only)."""
    from localcr.cache import open_cache

    with open_cache("rates") as cache:
        rates = cache.get(_rates_key(spec, threads, parallel, work))
    return LlmRates(*rates) if isinstance(rates, (tuple, list)) and len(rates) in (2, 3) else None


def llm_rates(runner: LlamaRunner, work: str = "") -> LlmRates | None:
    return recorded_rates(runner.spec, runner.threads, runner.parallel, work)


def typical_rates(spec) -> LlmRates:
    """The typical rates of this CPU's kind (AVX2 at best, or AVX-512 and anything else) scaled to this model's file
    size: on a CPU both rates fall about in proportion to the weights read per token, so a 4.7 GB 7B model is
    estimated about 4 times slower than the 1.1 GB 1.5B. AVX-512's rates put the demo's contexts at 55 s, and an
    AVX2 pair took nearly three minutes over the whole demo."""
    try:
        scale = TYPICAL_MODEL_BYTES / max(1, spec.resolve().stat().st_size)
    except (OSError, LocalcrError):
        scale = 1.0
    features = cpu_features()
    typical = TYPICAL_AVX2_RATES if "AVX2" in features and "AVX512" not in features else TYPICAL_RATES
    return LlmRates(typical.prompt * scale, typical.generate * scale)


def _store_rates(runner: LlamaRunner, rates: LlmRates, work: str = "") -> None:
    from localcr.cache import open_cache, tag

    with open_cache("rates") as cache:
        cache.set(_rates_key(runner.spec, runner.threads, runner.parallel, work), tuple(r for r in rates if r is not None),
                  tag(runner.spec.name, f"fingerprint {runner.spec.fingerprint()}", *([work] if work else [])))


def machine_rates(runner: LlamaRunner, documents: list[Document], measure: bool, work: str,
                  log: Callable[[str], None] | None = None) -> LlmRates | None:
    """The rates this runner's kind (its threads and side-by-side sequences) last reached on this machine; where
    none are recorded and `measure`, measured now on the documents (once: they are recorded) and said in `log`."""
    rates = llm_rates(runner)
    if rates is None and measure:
        if log:
            log(f"{work}: measuring {runner.spec.name}'s speed on this machine (once)")
        rates = measure_rates(runner, documents)
    return rates


def measure_rates(runner: LlamaRunner, documents: list[Document], prompt_tokens: int = 256,
                  generate_tokens: int = 16) -> LlmRates:
    """Measure and record the prompt rate (`prompt_tokens` of the documents from an empty KV cache) and the
    batched generation rate (the runner's parallel sequences side by side on them, `generate_tokens` each)."""
    need = prompt_tokens + 4 * runner.parallel
    sample = runner.tokenize("\n".join(d.text[:8000] for d in documents[:16]))
    sample = (sample * (need // max(1, len(sample)) + 1))[:need]  # a tiny corpus is repeated to fill the sample
    prefix, rest = sample[:prompt_tokens], sample[prompt_tokens:]
    prompt = runner.prompt_rate(prefix)
    generate = runner.generation_rate(prefix, [rest[4 * i:4 * i + 4] for i in range(runner.parallel)],
                                      max_tokens=generate_tokens)
    rates = LlmRates(prompt, generate)
    _store_rates(runner, rates)
    return rates


def record_work(runner: LlamaRunner, work: str, evaluated: int, prompt_seconds: float, generated: int,
                generate_seconds: float, outputs: int = 1) -> None:
    """Remember the rates of some work of one kind (CARD, ANSWER) and the tokens of one output (a card, an answer),
    each the mean of this measure and the last recorded: one answer's pace varies with the machine's load and its
    length with the question. Each is measured where the work holds enough of it (200 prompt tokens, 10 generated),
    else stays as recorded: a refusal measures the prompt rate (unrecorded, refusals had the next answers announced
    at typical rates, twice what they took), an answer over short sources its length. outputs=0: the tokens are no
    output of a typical length (an answer's refusal: counted, refusals had answers announced at half their time)."""
    known = llm_rates(runner, work)
    timed_prompt = evaluated >= 200 and prompt_seconds > 0
    if known is None and not timed_prompt:
        return
    before = known or typical_rates(runner.spec)
    prompt = evaluated / prompt_seconds if timed_prompt else before.prompt
    generate = generated / generate_seconds if generated >= 10 and generate_seconds > 0 else before.generate
    length = generated / outputs if outputs else before.tokens_per_context
    rates = LlmRates(prompt, generate, length)
    if known is not None and known.tokens_per_context:
        rates = LlmRates(*((now + then) / 2 for now, then in zip(rates, known)))
    _store_rates(runner, rates, work)


def record_rates(runner: LlamaRunner, stats: ContextStats) -> None:
    """Remember the rates of a run long enough to measure them, for the next run's estimate."""
    evaluated = stats.prefix_tokens_evaluated + stats.chunk_tokens
    if evaluated < 500 or stats.prompt_seconds <= 0 or stats.generate_seconds <= 0 or stats.generated_tokens < 50:
        return
    _store_rates(runner, LlmRates(evaluated / stats.prompt_seconds, stats.generated_tokens / stats.generate_seconds,
                                  stats.generated_tokens / max(1, stats.generated)))
