"""Lexical first, every window embedded once (issue 60): for a build with the defaults over long untitled filings
(each gets a card), the seconds until a search first answers, until every chunk has its vector (dense 100%), until
the last card is committed and until the build ends, and the windows computed against the windows live at the end;
for this tree and for a git revision before it (run from an exported tree, see staged_build.py).

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/lexical_first.py \\
        --data /work/shared/data/financebench-dev/docs --docs 8 --base f1ee1fc --builds base

Each build runs in its own process with an empty cache. Every commit is logged with the coverage it published
(documents still waiting for their cards, documents without vectors: the manifest's `pending` and
`contexts.unembedded`, none of which a revision before issue 60 records: it embedded every document before its
first commit). A watcher times one default `localcr search` from the moment the index marker appears. A build not
run this time is read back from the results file in --work, so the two can be run under separate locks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser, table  # noqa: E402
from speed.staged_build import QUERY, ROOT, by_chunk, cold_build_env, copy_filings, export  # noqa: E402

# Wraps localcr.index's _Commits.commit to log each commit with the coverage it published.
HOOK = """
import sys, time, json, localcr.index as ix
from localcr import store
log = open(sys.argv[1], 'a')
commit = ix._Commits.commit
def logged(self, docs, made, *rest):
    commit(self, docs, made, *rest)
    manifest = store.current_manifest(self.directory, store.read_marker(self.directory))
    contexts = manifest.get('contexts', {})
    log.write(json.dumps({'at': time.time(), 'documents': len(docs), 'pending': len(contexts.get('pending', [])),
                          'unembedded': len(contexts.get('unembedded', [])),
                          'windows': sum(s['windows'] for s in manifest['segments'])}) + '\\n')
    log.flush()
ix._Commits.commit = logged
from localcr.cli import cli
cli(sys.argv[2:])
"""


def timed_build(tree: Path, docs: Path, index: Path, cache: Path, commit_log: Path) -> dict:
    """Run `localcr index` with the defaults from `tree`: the seconds to each milestone, and the windows."""
    env = cold_build_env(tree, index, cache)
    commit_log.unlink(missing_ok=True)
    started = time.time()
    process = subprocess.Popen([sys.executable, "-c", HOOK, str(commit_log), "index", str(docs), "--index", str(index), "-q"],
                               env=env, cwd=index.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    times: dict = {}

    def watch():
        while process.poll() is None and not (index / "localcr-index.json").exists():
            time.sleep(0.2)
        search = subprocess.run([sys.executable, "-m", "localcr", "search", QUERY, "--index", str(index), "--json", "-k", "1"],
                                env=env, cwd=index.parent, capture_output=True, text=True)
        if search.returncode == 0:
            times["first_search"] = round(time.time() - started, 1)
            times["search_note"] = search.stderr.strip().splitlines()[-1:] or [""]

    watcher = threading.Thread(target=watch)
    watcher.start()
    out, err = process.communicate()
    times["end"] = round(time.time() - started, 1)
    watcher.join()
    if process.returncode:
        raise SystemExit(f"build failed: {err}")
    commits = [json.loads(line) for line in commit_log.read_text().splitlines()]
    for c in commits:
        c["at"] = round(c["at"] - started, 1)
    times["commits"] = commits
    times["dense_complete"] = next((c["at"] for c in commits if not c["unembedded"]), None)
    times["last_card"] = next((c["at"] for c in commits if not c["pending"]), None)
    times["computed"] = int(out.split("embeddings: ", 1)[1].split(" computed", 1)[0])
    stats = subprocess.run([sys.executable, "-m", "localcr", "stats", "--index", str(index), "--json"], env=env,
                           cwd=index.parent, capture_output=True, text=True, check=True)
    info = json.loads(stats.stdout)
    times["live"], times["chunks"] = info["windows"], info["chunks"]
    times["summary"] = out
    times["announced"] = [line for line in err.splitlines() if ", about " in line]  # the estimates it said, to check
    return times


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=8, help="how many filings (the first, by name)")
    p.add_argument("--base", default="f1ee1fc", help="the revision before lexical-first builds")
    p.add_argument("--builds", default="base,this", help="which builds to run: base, this (the others are read back)")
    args = p.parse_args()
    work = args.work / "lexical-first"
    docs = copy_filings(args.data, args.docs, work / "docs")
    words = sum(len(p.read_text(errors="replace").split()) for p in docs.iterdir())
    results_file = work / f"results-{args.docs}.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    for name in args.builds.split(","):
        tree = ROOT if name == "this" else export(args.base, work / f"tree-{args.base}")
        results[name] = timed_build(tree, docs, work / f"ix-{name}", work / f"cache-{name}", work / f"commits-{name}.jsonl")
        results[name]["load"] = os.getloadavg()
        print(name, json.dumps({k: v for k, v in results[name].items() if k not in ("summary", "commits")}), flush=True)
        print(results[name]["summary"], *results[name]["announced"], sep="\n", flush=True)
        results_file.write_text(json.dumps(results, indent=1))
    print(f"\nmachine: {machine()}; {args.docs} filings, {words:,} words")
    rows = [[name, r.get("first_search"), r.get("dense_complete"), r.get("last_card"), r["end"], r["computed"], r["live"],
             f"{r['computed'] / max(r['live'], 1):.2f}", r["chunks"], " ".join(f"{x:.1f}" for x in r["load"])]
            for name, r in results.items()]
    print(table(["build", "first search s", "dense 100% s", "last card s", "end s", "windows computed", "windows live",
                 "computed/live", "chunks", "load avg"], rows))
    if {"base", "this"} <= results.keys():  # the same index at the end: chunks, contexts, windows and vectors
        this, base = by_chunk(work / "ix-this", ROOT), by_chunk(work / "ix-base", export(args.base, work / f"tree-{args.base}"))
        same = [i for i in this if i in base and this[i][0] == base[i][0] and len(this[i][1]) == len(base[i][1])]
        worst = max((float(np.abs(np.array(a) - np.array(b)).max()) for i in same for a, b in zip(this[i][1], base[i][1])),
                    default=0.0)
        print(f"final indexes: {len(this)} chunks here, {len(base)} before; same ids: {this.keys() == base.keys()}; "
              f"same contexts and windows: {len(same)}; largest vector difference: {worst:.2e}")


if __name__ == "__main__":
    main()
