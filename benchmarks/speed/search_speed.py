"""Indexing and search speed on the codebase corpus: embeddings/s, hybrid latency p50/p95, search-process memory.

    .venv/bin/python benchmarks/speed/search_speed.py --data ../shared/data/anthropic-codebase
    .venv/bin/python benchmarks/speed/search_speed.py --data ../shared/data/anthropic-codebase \
        --runtimes --prose ../shared/data/xquad-en,../shared/data/xquad-de

Indexing runs with an empty embedding cache (every window is embedded), then into a new index with the
cache warm (what rebuilding costs), then once more over the first index with nothing changed (what a re-index
of an unchanged corpus costs). Search latency is measured in a separate process that opens the index,
warms up with one query, then runs all 248 queries; its peak resident memory is reported too.

--runtimes compares MiniLM on torch (sentence-transformers, the old path) with MiniLM on ONNX Runtime (float,
and quantised to 8 bits), in one run: a whole `localcr search` process per mode (wall time, median of 5 with a warm page cache, and peak RSS),
query embedding latency, windows/s and tokens/s indexing each set with a cold cache (and the ratio to a floor:
MiniLM's FLOPs per token over this machine's measured float32 GEMM rate), the same for the Universal Sentence
Encoder, Pass@5/10/20 of each set with each runtime, and windows/s of ONNX Runtime by batch size. Table to
stdout and benchmarks/results/search_speed-runtimes.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, parser, peak_rss_mb, table  # noqa: E402


def search_process(index: str, queries: str, mode: str) -> None:
    """Run inside the child: open, warm up, time every query, report latency and peak RSS as JSON."""
    from localcr.search import open_index

    texts = [json.loads(line)["query"] for line in open(queries) if line.strip()]
    started = time.perf_counter()
    idx = open_index(index)
    idx.search(texts[0], 20, mode=mode)
    first = time.perf_counter() - started
    idx.clear_query_cache()
    latencies = []
    for text in texts:
        t = time.perf_counter()
        idx.search(text, 20, mode=mode)
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    print(json.dumps({"open_and_first_s": first, "p50": latencies[len(latencies) // 2],
                      "p95": latencies[int(len(latencies) * 0.95)], "rss_mb": peak_rss_mb()}))


RUNTIMES = ("torch", "onnx", "onnx-int8")
CLI_CHILD = """import atexit, sys
from pathlib import Path
atexit.register(lambda: print("VmHWM", Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0], file=sys.stderr))
from localcr.cli import main
sys.argv = ["localcr"] + sys.argv[1:]
main()
"""


def registry_file(work: Path, runtime: str) -> Path:
    """The default registry with MiniLM's runtime set."""
    from localcr.models import DEFAULT_REGISTRY

    path = work / f"models-{runtime}.toml"
    path.write_text(DEFAULT_REGISTRY.read_text().replace("[embedder.minilm]\n", f'[embedder.minilm]\nruntime = "{runtime}"\n'))
    return path


def cli_search(models: Path, index: Path, query: str, mode: str, repeats: int = 5) -> tuple[float, float]:
    """Median wall seconds and peak RSS (MB) of a whole `localcr search` process."""
    walls, rss = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CLI_CHILD, "--models", str(models), "search", query, "--index",
                              str(index), "--mode", mode, "-k", "5"], capture_output=True, text=True, check=True)
        walls.append(time.perf_counter() - started)
        rss.append(int(out.stderr.split("VmHWM")[-1].split()[0]) / 1024)
    return sorted(walls)[len(walls) // 2], max(rss)


def gemm_gflops() -> float:
    """This machine's float32 matrix-multiply rate through numpy's BLAS, at MiniLM's shapes (a batch of windows
    through a feed-forward layer)."""
    import numpy as np

    a, b = np.random.rand(32 * 128, 384).astype(np.float32), np.random.rand(384, 1536).astype(np.float32)
    a @ b
    started, n = time.perf_counter(), 20
    for _ in range(n):
        a @ b
    return 2 * a.shape[0] * 384 * 1536 * n / (time.perf_counter() - started) / 1e9


def minilm_flops_per_token(mean_tokens: float, layers: int = 6, d: int = 384, ffn: int = 1536) -> float:
    """Multiply-adds x 2 per token: the four attention projections, the feed-forward pair, and attention over the
    window (scores and weighted sum)."""
    return layers * 2 * (4 * d * d + 2 * d * ffn + 2 * mean_tokens * d)


def compare_runtimes(args) -> None:
    from dataclasses import replace

    from localcr import evaluation
    from localcr.documents import import_prechunked
    from localcr.embeddings import Embedder
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index
    from localcr.structure import structural_contexts

    work = args.work / "runtimes"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sets = [args.data] + [Path(p) for p in args.prose.split(",") if p]
    models = {runtime: registry_file(work, runtime) for runtime in RUNTIMES}
    gflops = gemm_gflops()
    speed_rows, quality_rows, query_rows, cli_rows = [], [], [], []
    for runtime in (*RUNTIMES, "use"):
        registry = load_registry(models.get(runtime, models["onnx"]))
        embedder_name = "use-multilingual" if runtime == "use" else "minilm"
        os.environ["LOCALCR_CACHE_DIR"] = str(work / f"cache-{runtime}")  # cold: every window embedded
        for data in (sets[:2] if runtime == "use" else sets):
            chunks_file, queries_file = corpus_files(data)
            directory = work / f"index-{data.name}-{runtime}"
            started = time.perf_counter()
            summary = build_index([str(chunks_file)], directory, registry, embedder=embedder_name, contexts="structural",
                                  progress=False, log=lambda m: None)
            seconds = time.perf_counter() - started
            index = Index(directory, registry)
            docs = import_prechunked(chunks_file)
            chunks = [c for d in docs for c in d.given_chunks]
            for d in docs:
                structural_contexts(d, d.given_chunks)
            tokens = sum(index.embedder.count_tokens([w.text for w in index.embedder.windows(chunks)])) + 2 * summary.windows
            floor = "-" if runtime == "use" else f"{tokens / seconds / (gflops * 1e9 / minilm_flops_per_token(tokens / summary.windows)):.2f}"
            speed_rows.append([data.name, embedder_name, runtime, summary.windows, f"{seconds:.1f}",
                               f"{summary.embedded / seconds:.1f}", f"{tokens / seconds:.0f}", floor])
            if runtime == "use":
                continue
            queries = evaluation.load_queries(queries_file, index)
            configs = [evaluation.parse_config(c) for c in ("dense", "hybrid")]
            for result in evaluation.evaluate(index, queries, configs, (5, 10, 20), progress=False):
                quality_rows.append([data.name, result.config.name, runtime,
                                     " / ".join(f"{100 * result.metrics[f'pass@{k}']:.2f}" for k in (5, 10, 20))])
            print(speed_rows[-1], quality_rows[-2:], file=sys.stderr)
        if runtime == "use":
            continue
        started = time.perf_counter()
        embedder = Embedder(registry.require("embedder", "minilm"))
        loaded = time.perf_counter() - started
        texts = [json.loads(line)["query"] for line in corpus_files(args.data)[1].read_text().splitlines() if line.strip()]
        embedder.embed_query(texts[0])
        latencies = []
        for text in texts:
            t = time.perf_counter()
            embedder.embed_query(text)
            latencies.append((time.perf_counter() - t) * 1000)
        latencies.sort()
        query_rows.append([runtime, f"{loaded:.2f}", f"{latencies[len(latencies) // 2]:.1f}", f"{latencies[int(len(latencies) * 0.95)]:.1f}"])
        code_index = work / f"index-{args.data.name}-{runtime}"
        for mode in ("hybrid", "dense", "lexical"):
            wall, rss = cli_search(models[runtime], code_index, texts[1], mode)
            cli_rows.append([mode, runtime, f"{wall:.2f}", f"{rss:.0f}"])
        print(query_rows[-1], cli_rows[-3:], file=sys.stderr)
    batch_rows = []
    os.environ["LOCALCR_CACHE_DIR"] = str(work / "cache-batches")
    registry = load_registry(models["onnx"])
    docs = import_prechunked(corpus_files(args.data)[0])
    for d in docs:
        structural_contexts(d, d.given_chunks)
    probe = Embedder(registry.require("embedder", "minilm"))
    windows = [w.text for w in probe.windows([c for d in docs for c in d.given_chunks])][:512]
    for batch in (8, 16, 32, 64, 128):
        probe.backend.spec = replace(probe.spec, params={**probe.spec.params, "batch_size": batch})
        started = time.perf_counter()
        probe.backend.encode(windows)
        batch_rows.append([batch, f"{len(windows) / (time.perf_counter() - started):.1f}"])
    text = "\n\n".join([
        f"machine: {machine()}; float32 GEMM {gflops:.0f} GFLOP/s (numpy); structural contexts; cold embedding cache",
        table(["`localcr search` process (code set)", "runtime", "wall s (median of 5)", "peak RSS MB"], cli_rows),
        table(["query embedding", "load s", "p50 ms", "p95 ms"], query_rows),
        table(["indexing set", "embedder", "runtime", "windows", "seconds", "windows/s", "tokens/s", "of floor"], speed_rows),
        table(["set", "config", "runtime", "Pass@5 / 10 / 20"], quality_rows),
        table(["ONNX Runtime batch size (512 code windows)", "windows/s"], batch_rows)])
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / "search_speed-runtimes.md").write_text(text + "\n")


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--search-child", nargs=3, help=argparse.SUPPRESS)
    p.add_argument("--runtimes", action="store_true", help="compare MiniLM on torch and on ONNX Runtime (see above)")
    p.add_argument("--prose", default="", help="with --runtimes: comma-separated prose sets to index and evaluate too")
    args = p.parse_args()
    if args.search_child:
        return search_process(*args.search_child)
    if args.runtimes:
        return compare_runtimes(args)
    chunks, queries = corpus_files(args.data)
    work = args.work / "search_speed"  # its own: --work is shared with the other benchmarks' (slow) context caches
    shutil.rmtree(work, ignore_errors=True)
    os.environ["LOCALCR_CACHE_DIR"] = str(work / "cache")
    from localcr.index import build_index
    from localcr.models import load_registry

    registry = load_registry()
    index = work / "index"
    rows = []
    builds = (("cold cache", index), ("warm cache, new index", work / "index-warm"), ("re-index, nothing changed", index))
    for label, directory in builds:
        started = time.perf_counter()
        summary = build_index([str(chunks)], directory, registry, progress=False, log=lambda m: None)
        seconds = time.perf_counter() - started
        rows.append([label, summary.chunks, summary.windows, summary.embedded, f"{seconds:.1f}",
                     f"{summary.embedded / seconds:.1f}" if summary.embedded else "-"])
    search_rows = []
    for mode in ("hybrid", "dense", "lexical"):
        child = subprocess.run([sys.executable, __file__, "--data", str(args.data), "--search-child", str(index), str(queries), mode],
                               capture_output=True, text=True, check=True)
        r = json.loads(child.stdout.strip().splitlines()[-1])
        search_rows.append([mode, f"{r['p50']:.1f}", f"{r['p95']:.1f}", f"{r['open_and_first_s']:.1f}", f"{r['rss_mb']:.0f}"])
    text = "\n\n".join([f"machine: {machine()}",
                         table(["indexing", "chunks", "windows", "embedded", "seconds", "embeddings/s"], rows),
                         table(["search (k=20, 248 queries)", "p50 ms", "p95 ms", "open + first query s", "peak RSS MB"], search_rows)])
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / "search_speed.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
