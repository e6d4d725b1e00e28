"""What writing LLM contexts costs, and what the contexts are worth, in one run.

    .venv/bin/python benchmarks/speed/context_speed.py --data ../shared/data/anthropic-codebase \
        [--docs 15 --chunks 100] [--modes a,b] [--llm NAME] [--work DIR]

Takes the first documents of codebase_chunks.json until there are at least --docs documents and --chunks
chunks (the same subset every run; `--docs 90 --chunks 737` is the whole corpus) and writes their contexts:

  (a) published  the published prompt (document, then the chunk again, then the instruction), one chunk at a
                 time, each reusing the document prefix from the KV cache (localcr's path before the marked layout)
  (b) default    the llm's configured layout and localcr's side-by-side generation (as `localcr index` runs it)
  (c) floor      every document token evaluated once at the prompt rate measured on this machine, plus (b)'s
                 per-chunk request tokens at that rate, plus (b)'s generated tokens at the batched generation
                 rate measured here (a calibration pass: no overhead of any kind)

Then each mode's contexts are put into an index of the whole corpus (chunks outside the subset keep their
structural contexts) and hybrid Pass@5/10/20 is measured on the queries whose gold chunks all lie in the
subset, beside the same measure for structural contexts alone (the reference LLM contexts must beat to be
worth their cost). Contexts go to the cache in --work (so an interrupted run resumes, and benchmarks/retrieval/ablation.py reuses
them); the time and tokens of every run of a mode are kept in a ledger beside the cache, so the table reports
the sum over an interrupted run and its resumptions.
The table goes to stdout and benchmarks/results/context_speed-<llm>-<N>docs.md.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, first_documents, machine, parser, peak_rss_mb, structural_chunks, subset_quality  # noqa: E402

MODES = {"a": "published, one chunk at a time", "b": "default layout, side by side"}


class Ledger:
    """The time and tokens of every run of one mode on one subset, kept in --work so that a run interrupted and
    resumed (the context cache) still reports the wall time of all its parts. Updated after every context."""

    FIELDS = ("generated", "prefix_tokens_evaluated", "chunk_tokens", "generated_tokens", "prompt_seconds", "generate_seconds")

    def __init__(self, path: Path):
        self.path = path
        self.runs = json.loads(path.read_text()) if path.exists() else []
        self.runs.append({"seconds": 0.0, **dict.fromkeys(self.FIELDS, 0)})
        self.started = time.perf_counter()

    def update(self, stats) -> None:
        """Record the run so far (stats: the run's live counters; a killed run keeps what it recorded last)."""
        run = self.runs[-1]
        run["seconds"] = time.perf_counter() - self.started
        run.update({f: getattr(stats, f) for f in self.FIELDS})
        self.path.write_text(json.dumps(self.runs, indent=1))

    def total(self, field: str):
        return sum(run.get(field, 0) for run in self.runs)  # the first runs did not record the seconds


def write(mode: str, docs, spec, runner, C, ledger: Ledger):
    """Contexts for the subset in one mode: (stats, {chunk_id: context}, seconds)."""
    chunks_by_doc = structural_chunks(docs)
    stats = C.ContextStats()
    C.write_llm_contexts(docs, chunks_by_doc, spec, runner=runner, reuse=True, progress=True,
                         composition=C.DEFAULT_COMPOSITION, stats=stats, on_chunk=lambda _: ledger.update(stats))
    ledger.update(stats)
    print(f"\n[{mode}] {MODES[mode]}\n{stats.summary()}", file=sys.stderr)
    return stats, {c.chunk_id: c.context for cs in chunks_by_doc.values() for c in cs}, ledger.total("seconds")


def planned_prompt_tokens(runner, spec, docs, C) -> int:
    """The prompt tokens localcr's time estimate counts for writing every context of the subset afresh."""
    chunks_by_doc = structural_chunks(docs)
    from localcr.contexts.run import Run

    run = Run(runner, spec, spec.fingerprint(), None, None, C.ContextStats(), C.DEFAULT_COMPOSITION, True, None, None)
    return run.prompt_tokens([(d, chunks_by_doc[d.doc_id], chunks_by_doc[d.doc_id]) for d in docs])


def calibrate(runner, docs, C) -> tuple[float, float]:
    """(prompt tok/s on 1,536 tokens of the subset from an empty cache, batched generation tok/s), recorded as
    this machine's rates, so the timed run does not measure them again for its estimate."""
    return tuple(C.measure_rates(runner, docs, prompt_tokens=1536, generate_tokens=48))[:2]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=15, help="at least this many documents (default 15)")
    p.add_argument("--chunks", type=int, default=100, help="at least this many chunks (default 100)")
    p.add_argument("--modes", default="a,b", help="modes to run: a, b or a,b (c is computed)")
    p.add_argument("--llm", help="llm name in models.toml (default: the registry's default)")
    args = p.parse_args()
    chunks_file, queries_file = corpus_files(args.data)
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr import contexts as C
    from localcr.documents import import_prechunked
    from localcr.llm import LlamaRunner
    from localcr.models import load_registry

    base = load_registry().require("llm", args.llm)
    docs = first_documents(import_prechunked(chunks_file), args.docs, args.chunks)
    n_chunks = sum(len(d.given_chunks) for d in docs)
    specs = {"a": replace(base, params={**base.params, "prompt": "published"}), "b": base}
    runs = {}
    for mode in args.modes.split(","):
        parallel = 1 if mode == "a" else C.DEFAULT_PARALLEL
        runner = LlamaRunner(specs[mode], parallel=parallel)
        try:
            measured = calibrate(runner, docs, C)  # before the ledger starts: the timed run finds the rates recorded
            if mode == "b":
                rates, planned = measured, planned_prompt_tokens(runner, specs[mode], docs, C)
            ledger = Ledger(args.work / f"ledger-{mode}-{len(docs)}docs.json")
            runs[mode] = write(mode, docs, specs[mode], runner, C, ledger) + (ledger,)
            doc_tokens = sum(runner.count(d.text) for d in docs)
        finally:
            runner.close()
    peak = peak_rss_mb()

    rows = []
    for mode, (stats, contexts, seconds, ledger) in runs.items():
        timed = ledger.total("generated")
        time_cell = f"{seconds:.0f}" if timed == stats.chunks else f"{seconds:.0f} for {timed} of {stats.chunks} (rest cached earlier)"
        [[p5, p10, p20]], nq = subset_quality(chunks_file, queries_file, docs, contexts, args.work / "quality", f"{mode}-{len(docs)}")
        rows.append([f"({mode}) {MODES[mode]}", time_cell, ledger.total("prefix_tokens_evaluated") + ledger.total("chunk_tokens"),
                     ledger.total("generated_tokens"), f"{p5:.1f} / {p10:.1f} / {p20:.1f}", stats.fallbacks])
    if "b" in runs:
        ledger = runs["b"][3]
        requests, generated = ledger.total("chunk_tokens"), ledger.total("generated_tokens")
        floor = (doc_tokens + requests) / rates[0] + generated / rates[1]
        evaluated_b = ledger.total("prefix_tokens_evaluated") + requests
        rows.append(["(c) floor", f"{floor:.0f}", doc_tokens + requests, generated, "", ""])
    [[p5, p10, p20]], nq = subset_quality(chunks_file, queries_file, docs, {}, args.work / "quality", f"structural-{len(docs)}")
    rows.append(["structural contexts, no LLM (quality reference)", "", "", "", f"{p5:.1f} / {p10:.1f} / {p20:.1f}", ""])
    head = ["mode", "seconds", "prompt tokens evaluated", "tokens generated", f"hybrid Pass@5/10/20 ({nq} queries)", "guard fallbacks"]
    lines = [
        f"# Context writing: {base.name}, n_ctx {base.n_ctx}, max_tokens {base.max_tokens}, parallel {C.DEFAULT_PARALLEL}",
        "", f"{len(docs)} documents, {n_chunks} chunks (first documents of codebase_chunks.json); {machine()}; "
        f"peak RSS {peak:.0f} MiB", "",
        "| " + " | ".join(head) + " |", "|" + "---|" * len(head),
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
    ]
    if "b" in runs:
        lines += ["", f"- rates measured here: prompt {rates[0]:.1f} tok/s (1,536 tokens from empty), batched generation "
                  f"{rates[1]:.1f} tok/s ({C.DEFAULT_PARALLEL} sequences); document tokens {doc_tokens}",
                  f"- the time estimate printed before a fresh run counts {planned} prompt tokens for (b)"
                  + (f" (evaluated: {evaluated_b})" if runs["b"][3].total("generated") == runs["b"][0].chunks else "")]
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "benchmarks" / "results" / f"context_speed-{base.name}-{len(docs)}docs.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
