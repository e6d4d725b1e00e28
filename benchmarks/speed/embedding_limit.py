"""Embedding at the CPU's limit (issue 60): MiniLM's windows/s on long reports' windows (filings chunked at 380
tokens, about two windows a chunk) against the float32 floor, by ONNX Runtime session option, batch size (for long
and for short windows) and sequence bucketing (windows sorted by length over the whole set, not only within each
call of the build's 32 texts).

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/embedding_limit.py \\
        --data /work/shared/data/financebench-dev/docs --docs 2 --windows 600

Every row embeds the same windows (structural contexts, as a build writes them) with the float copy, the best of
--repeats; "of floor" is tokens/s over this machine's float32 GEMM rate (numpy, MiniLM's shapes) divided by MiniLM's
FLOPs a token at the windows' mean length, as in search_speed.py --runtimes. "largest difference" is the largest
absolute difference of a vector's component from the build's own way's.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser, table  # noqa: E402
from speed.search_speed import gemm_gflops, minilm_flops_per_token  # noqa: E402

# name -> SessionOptions changes against localcr's (intra-op threads = physical cores, one inter-op thread, every
# graph optimisation, sequential execution, the memory arena on)
SESSIONS = {
    "localcr's options": {},
    "1 intra-op thread": {"intra_op_num_threads": 1},
    "memory arena off": {"enable_cpu_mem_arena": False},
    "memory pattern off": {"enable_mem_pattern": False},
    "graph optimisation: basic": {"graph_optimization_level": "ORT_ENABLE_BASIC"},
    "graph optimisation: extended": {"graph_optimization_level": "ORT_ENABLE_EXTENDED"},
    "graph optimisation: none": {"graph_optimization_level": "ORT_DISABLE_ALL"},
    "parallel execution, 2 inter-op threads": {"execution_mode": "ORT_PARALLEL", "inter_op_num_threads": 2},
    "threads do not spin": {"config": {"session.intra_op.allow_spinning": "0"}},
}


def filing_windows(data: Path, n_docs: int, limit: int, embedder) -> list[str]:
    """The dense windows of the first n filings as a build makes them (long untitled prose, 380-token chunks,
    structural contexts), the first `limit` of them."""
    from localcr.chunking import chunk_document
    from localcr.documents import load_paths
    from localcr.pipeline import LONG_PROSE_FACTOR, default_chunk_tokens
    from localcr.structure import structural_contexts

    size = LONG_PROSE_FACTOR * default_chunk_tokens(embedder.max_length)
    chunks = []
    for doc in load_paths([str(p) for p in sorted(data.glob("*.txt"))[:n_docs]]).documents:
        doc_chunks = chunk_document(doc, embedder.count_tokens, size, size // 8)
        structural_contexts(doc, doc_chunks)
        chunks += doc_chunks
    return [w.text for w in embedder.windows(chunks)][:limit]


def session(model_file: Path, threads: int, changes: dict):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = threads, 1, 3
    for name, value in changes.items():
        if name == "config":
            for key, setting in value.items():
                options.add_session_config_entry(key, setting)
        elif name == "graph_optimization_level":
            options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, value)
        elif name == "execution_mode":
            options.execution_mode = getattr(onnxruntime.ExecutionMode, value)
        else:
            setattr(options, name, value)
    return onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])


def timed(backend, texts: list[str], per_call: int, repeats: int) -> tuple[float, np.ndarray]:
    """The best seconds of `repeats` passes encoding texts `per_call` at a time (as Embedder.embed calls the backend),
    and the vectors."""
    backend.encode(texts[:per_call])  # warm: the first run of a session allocates
    best, vectors = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        vectors = np.vstack([backend.encode(texts[s:s + per_call]) for s in range(0, len(texts), per_call)])
        best = min(best, time.perf_counter() - started)
    return best, vectors


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=2, help="how many filings (the first, by name)")
    p.add_argument("--windows", type=int, default=600, help="how many of their windows to embed in each row")
    p.add_argument("--repeats", type=int, default=2, help="passes per row (the best is kept)")
    p.add_argument("--batches", default="1,2,4,8,16,32", help="batch sizes to try")
    args = p.parse_args()
    from localcr.embeddings import Embedder
    from localcr.embeddings.onnx_export import checked_copy
    from localcr.threads import default_threads
    from localcr.models import load_registry

    embedder = Embedder(load_registry().require("embedder", "minilm"))
    backend, spec = embedder.backend, embedder.spec
    model_file, threads = checked_copy(spec, spec.resolve()), default_threads()
    texts = filing_windows(args.data, args.docs, args.windows, embedder)
    lengths = np.array(backend.count_tokens(texts)) + backend.added_tokens
    gflops = gemm_gflops()
    per_call = embedder.encode_batch

    def row(label: str, part: list[str], reference: np.ndarray | None, per: int = per_call) -> np.ndarray:
        seconds, vectors = timed(backend, part, per, args.repeats)
        tokens = sum(min(n, backend.max_length) for n in backend.count_tokens(part)) + backend.added_tokens * len(part)
        floor = gflops * 1e9 / minilm_flops_per_token(tokens / len(part))
        difference = "-" if reference is None else f"{float(np.abs(vectors - reference).max()):.1e}"
        rows.append([label, len(part), f"{tokens / len(part):.0f}", f"{len(part) / seconds:.1f}", f"{tokens / seconds:.0f}",
                     f"{tokens / seconds / floor:.2f}", difference])
        print(rows[-1], flush=True)
        return vectors

    rows: list[list] = []
    backend.session = session(model_file, threads, {})
    reference = row(f"the build's way: batches of {spec.batch_size}, sorted within each call of {per_call}", texts, None)
    row(f"bucketed: all windows sorted by length, batches of {spec.batch_size}", texts, reference, per=len(texts))
    long = [t for t, n in zip(texts, lengths) if n >= backend.max_length * 3 // 4]
    short = [t for t, n in zip(texts, lengths) if n < backend.max_length // 2]
    for batch in map(int, args.batches.split(",")):
        backend.spec = replace(spec, params={**spec.params, "batch_size": batch})
        row(f"batch {batch}, all windows bucketed", texts, reference, per=len(texts))
        for label, part in (("long", long), ("short", short)):
            if part:
                row(f"batch {batch}, {label} windows only", part, None, per=len(part))
    backend.spec = spec
    for label, changes in SESSIONS.items():
        backend.session = session(model_file, threads, changes)
        row(f"session: {label} (bucketed, batch {spec.batch_size})", texts, reference, per=len(texts))
    print(f"\nmachine: {machine()}; float32 GEMM {gflops:.0f} GFLOP/s (numpy); {args.docs} filings, {len(texts)} windows "
          f"({len(long)} of {backend.max_length * 3 // 4}+ tokens, {len(short)} under {backend.max_length // 2}); "
          f"{threads} threads")
    print(table(["embedding", "windows", "mean tokens", "windows/s", "tokens/s", "of floor", "largest difference"], rows))


if __name__ == "__main__":
    main()
