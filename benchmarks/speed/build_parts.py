"""Where a default build's time goes: `localcr index` over the first --docs filings with an empty cache, in a process
of its own, with the wall-clock seconds of each part summed (no profiler: a profiler's cost falls on Python code,
not on ONNX Runtime or llama.cpp, and would move the shares).

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/build_parts.py \\
        --data /work/shared/data/financebench-dev/docs --docs 10

The parts overlap where one calls another (embedding holds the encoder's time, commits hold compactions and
BM25 postings); "other" is the build less embedding, cards, the cards' estimate, windows and commits: reading,
chunking, loading models.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser, table  # noqa: E402
from speed.staged_build import ROOT, cold_build_env, copy_filings  # noqa: E402

# (module, owner, attribute, part): each wrapped to add its seconds and calls to the part.
PARTS = [
    ("localcr.index", "_Commits", "commit", "commits (all)"),
    ("localcr.index", None, "compact", "compactions"),
    ("localcr.lexical", "Postings", "build", "BM25 postings analysed"),
    ("localcr.lexical", "Postings", "merged", "BM25 postings merged"),
    ("localcr.embeddings", "Embedder", "windows", "windows"),
    ("localcr.embeddings", "Embedder", "embed", "embedding"),
    ("localcr.embeddings", "Embedder", "_encode", "encoder"),
    ("localcr.contexts.cards", "CardWriter", "write", "cards written"),
    ("localcr.contexts.cards", "CardWriter", "seconds_for", "cards' estimate"),
]

# Run in the build's process: wraps the parts, runs the CLI, writes the sums to argv[1] as JSON at exit.
TIMED = """
import atexit, collections, importlib, json, sys, time
if __name__ == "__main__":
    spent, calls = collections.defaultdict(float), collections.Counter()
    def timed(f, part):
        def run(*a, **k):
            began = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[part] += time.perf_counter() - began
                calls[part] += 1
        return run
    for module, owner, name, part in PARTS:
        where = importlib.import_module(module)
        where = getattr(where, owner) if owner else where
        if hasattr(where, name):
            setattr(where, name, timed(getattr(where, name), part))
    began = time.perf_counter()
    atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(
        {"build": time.perf_counter() - began, "parts": {p: [spent[p], calls[p]] for p in spent}})))
    from localcr.cli import cli
    cli(sys.argv[2:])
"""


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=10, help="how many filings (the first, by name)")
    args = p.parse_args()
    work = args.work / "build-parts"
    docs = copy_filings(args.data, args.docs, work / "docs")
    index, cache, out = work / "index", work / "cache", work / "parts.json"
    env = cold_build_env(ROOT, index, cache)
    code = f"PARTS = {PARTS!r}\n{TIMED}"
    subprocess.run([sys.executable, "-c", code, str(out), "index", str(docs), "--index", str(index), "-q"], env=env,
                   cwd=work, check=True)
    found = json.loads(out.read_text())
    build, parts = found["build"], found["parts"]
    named = ("embedding", "cards written", "cards' estimate", "windows", "commits (all)")
    other = build - sum(parts.get(name, [0])[0] for name in named)
    rows = [["build", f"{build:.1f}", 1, "100%"]]
    rows += [[part, f"{seconds:.2f}", n, f"{seconds / build:.1%}"] for part, (seconds, n) in
             sorted(parts.items(), key=lambda item: -item[1][0])]
    rows.append(["other (reading, chunking, loading models)", f"{other:.1f}", "", f"{other / build:.1%}"])
    print(f"machine: {machine()}; {args.docs} filings, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(table(["part", "seconds", "calls", "of the build"], rows))


if __name__ == "__main__":
    main()
