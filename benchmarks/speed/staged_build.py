"""Searchable at once (issue 43): seconds until the first search answers and until the last card is in, for a build
that commits its structural index first and each card as it comes, against the single run of the code before it
(a git revision, run from an exported tree, every process started outside the repository so that its tree is the
one imported); then the two indexes compared chunk by chunk (contexts, vectors).

    .venv/bin/python benchmarks/speed/staged_build.py --data ../shared/data/financebench-dev/docs --docs 5 --base d48099d

Each build runs in its own process with an empty cache (no card or embedding comes from an earlier run); while it
runs, this script waits for the index marker and times one `localcr search` from then. In the staged build each
commit is timed (its documents, chunks, seconds, segments after it) by wrapping localcr.index's _Commits.commit.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
QUERY = "total revenue for the fiscal year"


def export(revision: str, target: Path) -> Path:
    """The tree of a git revision, for running the code as it was."""
    if not target.exists():
        target.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True, capture_output=True).stdout
        tar = target / "tree.tar"
        tar.write_bytes(archive)
        with tarfile.open(tar) as t:
            t.extractall(target)
        tar.unlink()
    return target


def copy_filings(data: Path, n: int, docs: Path) -> Path:
    """The first n filings of a set, by name, copied into docs (emptied first); a symlink that leads out of the tree
    fails to load."""
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True)
    for path in sorted(data.glob("*.txt"))[:n]:
        shutil.copy(path, docs / path.name)
    return docs


def cold_build_env(tree: Path, index: Path, cache: Path) -> dict:
    """The environment of a build from `tree` with no index and an empty cache at these paths (both emptied here),
    so a timed build computes everything."""
    shutil.rmtree(index, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return {**os.environ, "PYTHONPATH": str(tree), "LOCALCR_CACHE_DIR": str(cache)}


def timed_build(tree: Path, docs: Path, index: Path, cache: Path, commit_log: Path | None) -> dict:
    """Run `localcr index` from `tree`; the seconds until the index marker appears, until a search answers, and
    until the build ends."""
    env = cold_build_env(tree, index, cache)
    code = ("import sys, time, json, localcr.pipeline as p, localcr.index as ix\n"
            "log = open(sys.argv[1], 'a') if sys.argv[1] else None\n"
            "if log and hasattr(ix, '_Commits'):\n"
            "    commit = ix._Commits.commit\n"
            "    def timed(self, docs, made, *a):\n"
            "        t = time.monotonic(); commit(self, docs, made, *a)\n"
            "        log.write(json.dumps({'at': time.time(), 'seconds': time.monotonic() - t, 'documents': len(docs),\n"
            "                              'chunks': sum(len(made.chunks_by_doc[d.doc_id]) for d in docs),\n"
            "                              'segments': len(self.segments)}) + '\\n'); log.flush()\n"
            "    ix._Commits.commit = timed\n"
            "from localcr.cli import cli\n"
            "cli(sys.argv[2:])\n")
    started = time.time()
    process = subprocess.Popen([sys.executable, "-c", code, str(commit_log or ""), "index", str(docs), "--index", str(index), "-q"],
                               env=env, cwd=index.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    times: dict = {}

    def watch():
        while process.poll() is None and not (index / "localcr-index.json").exists():
            time.sleep(0.2)
        if not (index / "localcr-index.json").exists():
            return
        times["marker"] = time.time() - started
        search = subprocess.run([sys.executable, "-m", "localcr", "search", QUERY, "--index", str(index), "--json", "-k", "1"],
                                env=env, cwd=index.parent, capture_output=True, text=True)
        if search.returncode == 0:
            times["first_search"] = time.time() - started
            times["search_during_build"] = process.poll() is None

    watcher = threading.Thread(target=watch)
    watcher.start()
    out, err = process.communicate()
    times["end"] = time.time() - started
    watcher.join()
    if process.returncode:
        raise SystemExit(f"build failed: {err}")
    times["summary"] = out
    if commit_log and commit_log.exists():
        times["commits"] = [json.loads(line) for line in commit_log.read_text().splitlines()]
        for c in times["commits"]:
            c["at"] = round(c["at"] - started, 1)
    return times


def by_chunk(index: Path, tree: Path) -> dict:
    """chunk_id -> (context, its windows' vectors) of an index, read with the code of `tree`."""
    code = ("import sys, pickle, numpy as np\nfrom localcr.store import StoreReader\n"
            "r = StoreReader(sys.argv[1])\nvectors, rows = r.live_vectors()\ndocs, chunks = r.stored_documents()\n"
            "ordered = [c for d in docs for c in chunks[d.doc_id]]\nout = {}\n"
            "for c in ordered: out[c.chunk_id] = [c.context, []]\n"
            "for v, row in zip(vectors, rows): out[ordered[row].chunk_id][1].append(v)\n"
            "pickle.dump(out, sys.stdout.buffer)\n")
    import pickle

    done = subprocess.run([sys.executable, "-c", code, str(index)], env={**os.environ, "PYTHONPATH": str(tree)},
                          cwd=index.parent, capture_output=True, check=True)
    return pickle.loads(done.stdout)


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=5, help="how many filings (the first, by name)")
    p.add_argument("--base", default="d48099d", help="the revision whose single run is the baseline")
    p.add_argument("--builds", default="staged,single", help="which builds to run (a build not run is read from --work)")
    args = p.parse_args()
    work = args.work / "staged"
    docs = copy_filings(args.data, args.docs, work / "docs")
    base = export(args.base, work / f"tree-{args.base}")
    rows = {}
    for name, tree in (("staged", ROOT), ("single", base)):
        if name not in args.builds.split(","):
            continue
        log = work / f"commits-{name}.jsonl"
        log.unlink(missing_ok=True)
        rows[name] = timed_build(tree, docs, work / f"ix-{name}", work / f"cache-{name}", log)
        print(name, json.dumps({k: v for k, v in rows[name].items() if k != "summary"}), rows[name]["summary"], flush=True)
    staged, single = by_chunk(work / "ix-staged", ROOT), by_chunk(work / "ix-single", base)
    same_ids = staged.keys() == single.keys()
    contexts = sum(staged[i][0] == single[i][0] for i in staged if i in single)
    worst = max((float(np.abs(np.array(a) - np.array(b)).max()) for i in staged if i in single
                 for a, b in zip(staged[i][1], single[i][1])), default=0.0)
    windows = all(len(staged[i][1]) == len(single[i][1]) for i in staged if i in single)
    print(f"\nmachine: {machine()}; load average {os.getloadavg()}")
    print(f"chunks: {len(staged)} staged, {len(single)} single; same chunk ids: {same_ids}; same contexts: {contexts} of "
          f"{len(staged)}; same windows per chunk: {windows}; largest vector difference: {worst:.2e}")
    for name, r in rows.items():
        print(f"{name}: first search answered at {r.get('first_search', float('nan')):.0f} s "
              f"(during the build: {r.get('search_during_build')}), build ended at {r['end']:.0f} s")


if __name__ == "__main__":
    main()
