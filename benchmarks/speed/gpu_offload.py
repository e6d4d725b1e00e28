"""pp512 / tg128 of one GGUF at each n_gpu_layers and flash attention setting: what offloading to a GPU gives.

    python benchmarks/speed/gpu_offload.py --model FILE.gguf [--layers=0,-1] [--repeats 3] [--threads N]

llama-bench's two rates, measured as llama_floor.py measures them (its `bindings_rates`: pp512 is 512 prompt tokens
in one batch from an empty KV cache, tg128 is 128 tokens decoded one at a time, no sampling; each the best of
--repeats), through `llama_cpp.Llama` loaded with n_gpu_layers (0: every layer on the CPU; -1: every layer that fits
on the GPU) and flash attention off and on. A build without GPU offload ignores n_gpu_layers, so there only 0 is
measured. Speed depends on the model's tensor shapes and quant types, not on their values: the zero-weight copy
zero_weights.py makes runs at the real model's rates and can travel where the real file cannot (gpu_build.sh).
Prompt: this repository's README, tokenized by the model. Table to stdout.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import machine, table  # noqa: E402
from llama_floor import GENERATED_TOKENS, PROMPT_TOKENS, bindings_rates  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, type=Path, help="a GGUF file (the real model or its zero-weight copy)")
    p.add_argument("--layers", default="0,-1", help="n_gpu_layers values to measure, comma-separated")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="CPU threads (default: all)")
    args = p.parse_args()

    import llama_cpp

    offload = llama_cpp.llama_supports_gpu_offload()
    layers = [int(n) for n in args.layers.split(",")] if offload else [0]
    text = (HERE.parents[1] / "README.md").read_text()
    rows = []
    for n_gpu_layers in layers:
        for flash_attn in (False, True):
            started = time.perf_counter()
            llm = llama_cpp.Llama(str(args.model), n_gpu_layers=n_gpu_layers, flash_attn=flash_attn, n_ctx=2048,
                                  n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
            loaded = time.perf_counter() - started
            try:
                tokens = llm.tokenize(text.encode())[:PROMPT_TOKENS + GENERATED_TOKENS]
                prompt, generate = bindings_rates(llm, tokens, args.repeats)
            finally:
                llm.close()
            rows.append([n_gpu_layers, "on" if flash_attn else "off", f"{loaded:.1f}", prompt, generate])
            print(table(HEAD, rows[-1:]), file=sys.stderr, flush=True)
    print(f"machine: {machine()}; llama-cpp-python {llama_cpp.__version__}, GPU offload "
          f"{'supported' if offload else 'not supported (a CPU build: n_gpu_layers ignored)'}; {args.threads} threads; "
          f"model {args.model.name}; best of {args.repeats}\n")
    print(table(HEAD, rows))


HEAD = ["n_gpu_layers", "flash attention", "load s", f"pp{PROMPT_TOKENS} tok/s", f"tg{GENERATED_TOKENS} tok/s"]


if __name__ == "__main__":
    main()
