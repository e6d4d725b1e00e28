"""llama.cpp settings for context writing, measured: prompt-evaluation rate by prompt length and flash
attention, and batched generation rate by the number of sequences decoded side by side.

    .venv/bin/python benchmarks/speed/llm_settings.py --data ../shared/data/anthropic-codebase [--llm NAME]

Prompts are real text (the corpus's documents, concatenated) cut to each length; each is evaluated from an
empty KV cache. Generation: `parallel` sequences continue one shared 1,024-token prefix, 48 tokens each
(greedy). The table goes to stdout and benchmarks/results/llm_settings.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine  # noqa: E402

from localcr.llm import LlamaRunner  # noqa: E402
from localcr.models import ModelSpec, load_registry  # noqa: E402


def with_params(spec: ModelSpec, **params) -> ModelSpec:
    return replace(spec, params={**spec.params, **params})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="directory holding codebase_chunks.json")
    parser.add_argument("--llm", help="llm name in models.toml (default: the registry's default)")
    parser.add_argument("--lengths", default="1024,4096,8192")
    parser.add_argument("--ubatch", default="256,512", help="n_ubatch values, each tried without and with flash attention")
    parser.add_argument("--parallel", default="1,4,8,16")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "llm_settings.md"))
    args = parser.parse_args()

    spec = load_registry().require("llm", args.llm)
    text = "\n\n".join(d["content"] for d in json.loads((args.data / "codebase_chunks.json").read_text()))
    lengths = [int(x) for x in args.lengths.split(",")]
    lines = [f"# llama.cpp settings: {spec.name}", "", f"machine: {machine()}", "",
             "| setting | " + " | ".join(f"prompt tok/s @ {n}" for n in lengths) + " |",
             "|---|" + "---|" * len(lengths)]
    for flash in (False, True):
        for ubatch in (int(x) for x in args.ubatch.split(",")):
            runner = LlamaRunner(with_params(spec, flash_attn=flash, n_ubatch=ubatch, n_ctx=max(lengths) + 256))
            try:
                tokens = runner.tokenize(text)
                rates = [runner.prompt_rate(tokens[:n]) for n in lengths]
            finally:
                runner.close()
            lines.append(f"| flash_attn={flash}, n_ubatch={ubatch} | " + " | ".join(f"{r:.1f}" for r in rates) + " |")
            print(lines[-1], file=sys.stderr)

    lines += ["", "| sequences side by side | generated tok/s (all sequences) |", "|---|---|"]
    widths = [int(x) for x in args.parallel.split(",")]
    runner = LlamaRunner(with_params(spec, n_ctx=4096), parallel=max(widths))
    try:
        prefix = runner.tokenize(text)[:1024]
        question = runner.tokenize("\nSummarise what comes next.")
        for width in widths:
            suffixes = [question + runner.tokenize(f" Part {i}.") for i in range(width)]
            lines.append(f"| {width} | {runner.generation_rate(prefix, suffixes):.1f} |")
            print(lines[-1], file=sys.stderr)
    finally:
        runner.close()
    out = "\n".join(lines) + "\n"
    print(out)
    Path(args.out).write_text(out)


if __name__ == "__main__":
    main()
