"""Does where a prompt is cut into batches change the next token's logits? Why the LLM runtime evaluates every prompt
at fixed cuts (`LlamaRunner._load_prefix`).

    .venv/bin/python benchmarks/answers/prompt_cuts.py --data ../shared/data/anthropic-codebase [--llm qwen2.5-coder-1.5b]

A 900-token prompt P of the code set's text is evaluated from an empty KV cache; then again after other prompts,
reusing the cache as the runtime once did (wherever the two prompts agree) and as it does now (only at a cut both
were evaluated at). Rows: the largest difference of P's last-token logits from the first evaluation's.
Table to stdout and benchmarks/results/prompt_cuts.md.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, table  # noqa: E402

SHARED, LENGTH = 437, 900  # P's first SHARED tokens are the other prompt's too


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--llm", help="the LLM (default: models.toml's)")
    args = p.parse_args()
    import numpy as np

    from localcr.llm import LlamaRunner
    from localcr.models import load_registry

    spec = load_registry().require("llm", args.llm)
    text = "\n\n".join(d["content"] for d in json.loads((args.data / "codebase_chunks.json").read_text()))
    runner = LlamaRunner(spec)
    llm = runner.llm
    tokens = runner.tokenize(text)
    shared, rest, other = tokens[:SHARED], tokens[SHARED:LENGTH], tokens[2 * LENGTH:2 * LENGTH + LENGTH - SHARED]

    def evaluate(*pieces, keep: int = 0):
        """Evaluate these pieces one call each, keeping the first `keep` tokens the cache holds."""
        if keep:
            llm._ctx.kv_cache_seq_rm(-1, keep, -1)
        else:
            llm.reset()
            llm._ctx.kv_cache_clear()
        llm.n_tokens, done = keep, 0
        for piece in pieces:
            if done >= keep:
                llm.eval(piece)
            done += len(piece)
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm._n_vocab,)).astype(np.float64)

    try:
        whole = evaluate(shared + rest)
        again = evaluate(shared + rest)
        evaluate(shared + other)
        reused_anywhere = evaluate(shared, rest, keep=SHARED)  # the old way: the other prompt's cells, then the rest
        at_cuts = evaluate(shared, rest)
        evaluate(shared, other)
        reused_at_cut = evaluate(shared, rest, keep=SHARED)  # now: both prompts were cut where P is reused
    finally:
        runner.close()
    rows = [["P evaluated whole, twice from an empty cache", f"{np.abs(again - whole).max():.2g}"],
            [f"P's first {SHARED} tokens kept from a prompt that evaluated them whole, the rest evaluated",
             f"{np.abs(reused_anywhere - whole).max():.2g}"],
            [f"P cut at {SHARED}, from an empty cache, against the same cut after another prompt cut there",
             f"{np.abs(reused_at_cut - at_cuts).max():.2g}"]]
    out = f"machine: {machine()}\nLLM: {spec.name}\n\n" + table(["how P was evaluated", "largest logit difference"], rows)
    (ROOT / "benchmarks" / "results" / "prompt_cuts.md").write_text(out + "\n")
    print(out)


if __name__ == "__main__":
    main()
