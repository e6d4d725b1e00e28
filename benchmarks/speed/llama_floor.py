"""llama.cpp's own floor beside what localcr reaches: prompt evaluation and generation of each bundled LLM.

    .venv/bin/python benchmarks/speed/llama_floor.py [--llms qwen2.5-coder-1.5b,qwen2.5-coder-0.5b,gemma3-270m] [--repeats 3]

Cards, contexts, answers and navigation all ride on these two rates. For each model, on this machine's build of
llama-cpp-python, as llama-bench measures them (pp512: 512 prompt tokens evaluated from an empty KV cache; tg128:
128 tokens decoded one at a time, no sampling):

* floor, llama.cpp's defaults: `llama_cpp.Llama` with the threads localcr uses and llama.cpp's default batch sizes
  and attention (what a user of the bindings gets);
* floor, localcr's settings: the same model loaded by localcr (`LlamaRunner`: models.toml's n_batch, n_ubatch,
  flash_attn), evaluated and decoded through the bindings' `eval` as above;
* localcr: `LlamaRunner.complete` on the same 512-token prompt, 128 tokens written (greedy, stop strings checked,
  text detokenized as it comes: what a card, a context or an answer pays);
* and the rates localcr recorded on this machine while working (cards, contexts, answers: the cache's "rates").

Each rate is the best of --repeats runs (the floor is the fastest the build can go). Prompt: real prose (this
repository's README), the same tokens for every row. Table to stdout and benchmarks/results/llama_floor.md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, table  # noqa: E402

PROMPT_TOKENS, GENERATED_TOKENS = 512, 128


def bindings_rates(llm, tokens: list[int], repeats: int) -> tuple[float, float]:
    """pp512 and tg128 through the bindings' eval: the prompt from an empty cache, then one token at a time."""
    best_prompt = best_generate = 0.0
    for _ in range(repeats):
        llm.reset()
        llm._ctx.kv_cache_clear()
        started = time.perf_counter()
        llm.eval(tokens[:PROMPT_TOKENS])
        best_prompt = max(best_prompt, PROMPT_TOKENS / (time.perf_counter() - started))
        started = time.perf_counter()
        for token in tokens[PROMPT_TOKENS:PROMPT_TOKENS + GENERATED_TOKENS]:
            llm.eval([token])
        best_generate = max(best_generate, GENERATED_TOKENS / (time.perf_counter() - started))
    return best_prompt, best_generate


def localcr_rates(runner, tokens: list[int], repeats: int) -> tuple[float, float]:
    """pp and tg as `LlamaRunner.complete` reaches them: a 512-token prompt (cache cleared), 128 tokens written."""
    best_prompt = best_generate = 0.0
    for _ in range(repeats):
        out = runner.complete(tokens[:PROMPT_TOKENS], [], max_tokens=GENERATED_TOKENS, reuse=False)
        best_prompt = max(best_prompt, out.evaluated / out.prompt_seconds)
        if out.tokens:
            best_generate = max(best_generate, out.tokens / out.generate_seconds)
    return best_prompt, best_generate


def main() -> None:
    import argparse

    import llama_cpp

    from localcr.contexts.rates import ANSWER, recorded_rates
    from localcr.llm import LlamaRunner, quiet_stderr
    from localcr.models import load_registry

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--llms", default="qwen2.5-coder-1.5b,qwen2.5-coder-0.5b,gemma3-270m")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cache", help="the localcr cache whose recorded rates to show (default: localcr's)")
    args = p.parse_args()
    if args.cache:
        os.environ["LOCALCR_CACHE_DIR"] = args.cache
    registry = load_registry()
    text = (ROOT / "README.md").read_text()
    rows = []
    for name in args.llms.split(","):
        spec = registry.require("llm", name)
        runner = LlamaRunner(spec)
        try:
            tokens = runner.tokenize(text)
            ours_floor = bindings_rates(runner.llm, tokens, args.repeats)
            ours = localcr_rates(runner, tokens, args.repeats)
            threads = runner.threads
        finally:
            runner.close()
        with quiet_stderr():
            plain = llama_cpp.Llama(str(spec.resolve()), n_ctx=2048, n_threads=threads, verbose=False)
        try:
            default_floor = bindings_rates(plain, tokens, args.repeats)
        finally:
            plain.close()
        recorded = recorded_rates(spec, threads, 1, ANSWER)
        rows.append([name, threads, f"{default_floor[0]:.1f} / {default_floor[1]:.1f}",
                     f"{ours_floor[0]:.1f} / {ours_floor[1]:.1f}", f"{ours[0]:.1f} / {ours[1]:.1f}",
                     f"{100 * ours[0] / ours_floor[0]:.0f}% / {100 * ours[1] / ours_floor[1]:.0f}%",
                     f"{recorded.prompt:.1f} / {recorded.generate:.1f}" if recorded else "none recorded"])
        print(table(HEAD, rows[-1:]), file=sys.stderr)
    text = (f"machine: {machine()}; llama-cpp-python {llama_cpp.__version__}; localcr's settings from models.toml\n\n"
            + table(HEAD, rows))
    (ROOT / "benchmarks" / "results" / "llama_floor.md").write_text(text + "\n")
    print(text)


HEAD = ["model", "threads", "floor, llama.cpp defaults: pp512 / tg128 tok/s", "floor, localcr's settings: pp512 / tg128",
        "localcr's complete: pp / tg", "localcr of its floor", "recorded while working here: prompt / generate"]


if __name__ == "__main__":
    main()
