"""LLM contexts on Ray actors: 1 and 2 actors of one local Ray instance, each from an empty cache.

    .venv/bin/python benchmarks/scale/ray_contexts.py --data ../shared/data/anthropic-codebase [--docs 6] [--llm gemma3-270m]

Takes the first --docs documents of codebase_chunks.json (the same subset every run; their given chunks),
gives them structural contexts, then writes their LLM contexts as `localcr index --ray auto` does
(localcr.execution.ray: the driver checks the cache and sends whole documents to actors of 1 CPU each, one
llama.cpp thread per actor), once per actor count, each time into a new empty LOCALCR_CACHE_DIR. Checks that
every run wrote the same contexts, and prints a table (to stdout and benchmarks/results/ray_contexts.md):
wall seconds (actors started and their model loaded included), the part after the actors were ready,
contexts per second, and per actor.

Paper estimate for N machines (printed with this run's numbers): a context costs one actor 1/r seconds
(r = contexts/s per actor, measured here), and the driver's own share (cache lookups and writes, pickling
whole documents) is milliseconds per document, so N machines of c cores, one actor per core, write C
contexts in about  load + max(C / (N * c * r), T_doc)  seconds, where load is one model load (all actors
load side by side) and T_doc the time of the longest single document (a document is never split: its
KV-cached prefix is the point). Past N * c = the number of documents more machines add nothing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, machine, parser, table  # noqa: E402


def run(executor, docs, spec, actors: int) -> tuple[dict, float, float, object]:
    """Contexts of docs written on `actors` actors from an empty cache: (contexts by chunk id, wall s, s after the
    actors were ready, stats)."""
    from localcr.structure import structural_contexts

    chunks_by_doc = {d.doc_id: [replace(c) for c in d.given_chunks] for d in docs}
    for d in docs:
        structural_contexts(d, chunks_by_doc[d.doc_id])
    ready = []
    executor.actors = actors
    executor.log = lambda message: (ready.append(time.perf_counter()), print(message, file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="localcr-ray-bench-") as cache:
        os.environ["LOCALCR_CACHE_DIR"] = cache
        started = time.perf_counter()
        stats = executor.write_contexts(docs, chunks_by_doc, spec, composition="structural+llm", progress=True,
                                        log=lambda message: print(message, file=sys.stderr))
        ended = time.perf_counter()
    wall, after_ready = ended - started, ended - (ready[0] if ready else started)
    assert stats.cached == 0 and stats.generated == stats.chunks, stats.summary()
    contexts = {c.chunk_id: (c.context, c.context_source) for cs in chunks_by_doc.values() for c in cs}
    return contexts, wall, after_ready, stats


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=6, help="the first N documents of the corpus (default 6: 32 chunks)")
    p.add_argument("--llm", default="gemma3-270m", help="LLM name from models.toml (default: the fast Gemma 3 270M)")
    p.add_argument("--actors", default="1,2", help="actor counts to run, in order (default 1,2)")
    args = p.parse_args()
    from localcr.documents import load_paths
    from localcr.execution.ray import RayExecutor
    from localcr.models import load_registry

    chunks_file, _ = corpus_files(args.data)
    docs = [d for d in load_paths([str(chunks_file)]).documents if d.given_chunks][: args.docs]
    spec = load_registry(None).require("llm", args.llm)
    counts = [int(n) for n in args.actors.split(",")]
    n_chunks = sum(len(d.given_chunks) for d in docs)
    print(f"{len(docs)} documents, {n_chunks} chunks, {sum(len(d.text) for d in docs)} characters; llm {spec.name}",
          file=sys.stderr)
    rows, first = [], None
    with RayExecutor("auto") as executor:
        for n in counts:
            contexts, wall, after_ready, stats = run(executor, docs, spec, n)
            if first is None:
                first = contexts
            same = "yes" if contexts == first else f"NO ({sum(contexts[k] != first[k] for k in first)} differ)"
            rate = stats.generated / wall
            rows.append([n, wall, after_ready, f"{rate:.2f}", f"{rate / n:.2f}", f"{stats.generated_tokens}",
                         f"{stats.fallbacks}", same])
            print(stats.summary(), file=sys.stderr)
    head = ["actors", "wall s", "s after actors ready", "contexts/s", "per actor", "generated tokens", "fallbacks",
            f"same contexts as {counts[0]} actor(s)"]
    # The rate of one actor alone: with more actors than documents of similar size, the longest document bounds
    # the wall time, which a per-actor rate of that row would charge to every actor.
    per_actor = float(rows[0][4]) if counts[0] == 1 else float(rows[-1][4])
    estimate = "\n".join(
        f"- {machines} machine(s) of 8 cores, 737 chunks (the whole codebase set): about "
        f"{737 / (machines * 8 * per_actor):.0f} s of generation + one model load, if no document takes longer alone"
        for machines in (1, 4, 16))
    text = "\n".join([
        f"# LLM contexts on Ray actors ({spec.name})", "",
        f"`benchmarks/scale/ray_contexts.py --data {args.data} --docs {args.docs} --llm {args.llm}`: the first {len(docs)} documents "
        f"({n_chunks} chunks) of codebase_chunks.json, each run from an empty cache on one local Ray instance "
        f"(actors of 1 CPU, one llama.cpp thread each). Machine: {machine()}.", "",
        table(head, rows), "",
        f"Paper estimate from one actor's rate ({per_actor:.2f} contexts/s; see the script's docstring):", estimate, "",
    ])
    print(text)
    out = ROOT / "benchmarks" / "results" / "ray_contexts.md"
    out.write_text(text)
    print(f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
