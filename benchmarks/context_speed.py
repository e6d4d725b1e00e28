"""How much the document-prefix KV-cache reuse saves when writing LLM contexts, measured in one run.

    .venv/bin/python benchmarks/context_speed.py --data ../shared/data/anthropic-codebase [--docs 10 --chunks 80]

Takes the first documents of codebase_chunks.json until there are at least --docs documents and --chunks
chunks (the same subset every run), loads the llm once, and compares:

  naive    every chunk's whole prompt (document + chunk) evaluated from an empty KV cache
  localcr  write_llm_contexts as indexing runs it: each document prefix evaluated once, its chunks reuse it
           and are generated side by side (--parallel)
  ideal    each document's tokens once + each chunk's prompt tokens + the generated tokens, priced at the
           prompt-evaluation and generation rates the naive run measured (no overhead of any kind)

Greedy decoding makes both real modes write nearly the same contexts; the script counts how many are
identical (batched decoding changes float rounding, so a near-tie can flip a token). The table goes to stdout and to
benchmarks/results/context_speed.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from localcr import contexts as C  # noqa: E402
from localcr.documents import import_prechunked  # noqa: E402
from localcr.models import load_registry  # noqa: E402


def subset(documents, min_docs: int, min_chunks: int):
    chosen, total = [], 0
    for doc in documents:
        if len(chosen) >= min_docs and total >= min_chunks:
            break
        chosen.append(doc)
        total += len(doc.given_chunks or [])
    return chosen


def run(mode: str, docs, spec, runner, *, reuse: bool, use_cache: bool):
    chunks_by_doc = {d.doc_id: [_copy(c) for c in d.given_chunks] for d in docs}
    stats = C.write_llm_contexts(docs, chunks_by_doc, spec, progress=True, reuse=reuse, runner=runner, use_cache=use_cache)
    outputs = {c.chunk_id: (c.context_source, c.context) for cs in chunks_by_doc.values() for c in cs}
    print(f"\n[{mode}]\n{stats.summary()}", file=sys.stderr)
    return stats, outputs


def _copy(chunk):
    from dataclasses import replace

    return replace(chunk, context="", context_source="structural")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="directory holding codebase_chunks.json")
    parser.add_argument("--docs", type=int, default=10, help="at least this many documents (default 10)")
    parser.add_argument("--chunks", type=int, default=80, help="at least this many chunks (default 80)")
    parser.add_argument("--llm", help="llm name in models.toml (default: the registry's default)")
    parser.add_argument("--models", help="models.toml to use")
    parser.add_argument("--parallel", type=int, default=C.DEFAULT_PARALLEL,
                        help=f"chunks generated side by side by localcr (default {C.DEFAULT_PARALLEL})")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "context_speed.md"))
    args = parser.parse_args()

    os.environ["LOCALCR_CACHE_DIR"] = tempfile.mkdtemp(prefix="localcr-bench-")  # throwaway: nothing cached before
    spec = load_registry(args.models).require("llm", args.llm)
    docs = subset(import_prechunked(Path(args.data) / "codebase_chunks.json"), args.docs, args.chunks)
    n_chunks = sum(len(d.given_chunks) for d in docs)
    load_before = os.getloadavg()

    started = time.perf_counter()
    runner = C.LlamaRunner(spec, parallel=args.parallel)
    load_seconds = time.perf_counter() - started
    try:
        naive, naive_out = run("naive", docs, spec, runner, reuse=False, use_cache=False)
        ours, ours_out = run("localcr", docs, spec, runner, reuse=True, use_cache=True)
    finally:
        runner.close()
    load_after = os.getloadavg()

    prompt_rate = (naive.prefix_tokens_evaluated + naive.chunk_tokens) / naive.prompt_seconds
    gen_rate = naive.generated_tokens / naive.generate_seconds
    # Ideal: every document prefix once, every chunk's own prompt tokens, the generated tokens; no overhead.
    ideal_prompt = ours.prefix_tokens_evaluated + ours.chunk_tokens
    ideal_seconds = ideal_prompt / prompt_rate + ours.generated_tokens / gen_rate
    ideal_share = 1 - ideal_prompt / naive.prompt_tokens  # naive.prompt_tokens = every prompt in full
    same = sum(naive_out[k] == ours_out[k] for k in naive_out)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def row(mode, seconds, evaluated, share, generated):
        return (f"| {mode} | {seconds:.1f} | {n_chunks / seconds:.2f} | {evaluated} | {share:.1%} | {generated} | "
                f"{naive.seconds / seconds:.2f}x | {seconds / ideal_seconds:.2f} |")

    lines = [
        f"# Context writing speed: {spec.name} ({spec.source}), n_ctx {spec.n_ctx}, max_tokens {spec.max_tokens}",
        "",
        f"{len(docs)} documents, {n_chunks} chunks (first documents of codebase_chunks.json); "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, n_threads {spec.n_threads or os.cpu_count()}; "
        f"model load {load_seconds:.1f} s (not counted below).",
        "",
        "| mode | seconds | chunks/s | prompt tok evaluated | cache share | generated tokens | speed-up vs naive | ratio to ideal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        row("naive (whole prompt per chunk)", naive.seconds, naive.prefix_tokens_evaluated + naive.chunk_tokens, naive.cache_share,
            naive.generated_tokens),
        row("localcr (document prefix reused)", ours.seconds, ours.prefix_tokens_evaluated + ours.chunk_tokens, ours.cache_share,
            ours.generated_tokens),
        row("ideal (no overhead)", ideal_seconds, ideal_prompt, ideal_share, ours.generated_tokens),
        "",
        f"- rates measured in the naive run: prompt evaluation {prompt_rate:.0f} tok/s, generation {gen_rate:.1f} tok/s",
        f"- localcr: prompt evaluation {ours.prompt_seconds:.1f} s, generation {ours.generate_seconds:.1f} s, "
        f"other {ours.seconds - ours.prompt_seconds - ours.generate_seconds:.1f} s; {ours.prefixes} prefixes evaluated; "
        f"{ours.windowed_documents} documents windowed; parallel {args.parallel}",
        f"- cache share ceiling for this subset (each document evaluated exactly once): {ideal_share:.1%}",
        f"- contexts identical in naive and localcr runs: {same}/{n_chunks}; "
        f"guard fallbacks {ours.fallbacks} ({', '.join(f'{k} {v}' for k, v in sorted(ours.fallback_reasons.items())) or 'none'})",
        f"- peak RSS {peak_rss:.0f} MiB; load average before {load_before[0]:.2f}, after {load_after[0]:.2f}",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
