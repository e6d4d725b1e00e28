"""A search at the speed of a command (issue 85): the wall seconds of a whole `localcr search` process, against
Python's own start, for this tree and (--base) a git revision before it.

    .venv/bin/python benchmarks/speed/cli_search.py --data benchmarks/data/ordinary-en --base 755be01
    .venv/bin/python benchmarks/speed/cli_search.py --data ../shared/data/anthropic-codebase --base 755be01

The set at --data (its folder of documents, or its pre-chunked corpus) is indexed once with structural contexts
(no LLM), by this tree, and searched for its first query; each command runs --runs times, the commands taking turns
so that a change in the machine's load falls on all of them alike: `python -c pass`, and the `localcr` console
script's search in each mode from each tree (and, with --env, from this tree with those variables set: e.g.
OPENBLAS_THREAD_TIMEOUT=28, OpenBLAS's own default, which localcr's replaces). Every process is run as an installed localcr runs: its bytecode compiled once (under --work, by
PYTHONPYCACHEPREFIX, in a warm-up run that is not timed) and the files in the page cache. Reported: median and
fastest wall seconds, the median's difference from Python's start (the figure issue 85 bounds at 0.3 s), median CPU
seconds (user + system) and the largest peak RSS (Linux carries this process's own high-water mark into a child's,
so a peak at or below it is shown as "<=" it). Table to stdout and benchmarks/results/cli_search-SET.md.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import ROOT, machine, parser, peak_rss_mb, sources, table, write_results  # noqa: E402
from speed.staged_build import export  # noqa: E402

MODES = ("hybrid", "dense", "lexical")


def environment(tree: Path, work: Path) -> dict:
    """A child's environment: localcr from `tree`, bytecode kept under work (whatever PYTHONDONTWRITEBYTECODE says)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(work / "pycache"),
            "LOCALCR_CACHE_DIR": str(work / "cache")}


def timed(command: list[str], env: dict) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one process, waited for with wait4 for its own resource usage."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            errors.seek(0)
            raise SystemExit(f"{' '.join(command)} failed: {errors.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=21, help="timed runs of each command")
    p.add_argument("--base", help="also time the search of this git revision (its tree exported under --work)")
    p.add_argument("--env", default="", metavar="NAME=VALUE,...",
                   help="also time this tree's search with these environment variables set")
    args = p.parse_args()
    work = args.work / "cli-search"
    shutil.rmtree(work / "pycache", ignore_errors=True)
    source, queries = sources(args.data)
    query = json.loads(queries.read_text().splitlines()[0])["query"]
    index = work / f"index-{args.data.name}"
    shutil.rmtree(index, ignore_errors=True)
    localcr = str(Path(sys.executable).parent / "localcr")  # the console script a user runs
    built = subprocess.run([localcr, "index", source, "--index", str(index), "--contexts", "structural"],
                           env=environment(ROOT, work), check=True, capture_output=True, text=True).stdout
    extra = dict(pair.split("=", 1) for pair in args.env.split(",") if pair)
    trees = {"this": (ROOT, {})} | ({f"this, {args.env}": (ROOT, extra)} if extra else {})
    if args.base:
        trees[args.base] = (export(args.base, work / f"tree-{args.base}"), {})
    commands = {("python -c pass", "-"): ([sys.executable, "-c", "pass"], environment(ROOT, work))}
    for name, (tree, variables) in trees.items():
        for mode in MODES:
            commands[(f"localcr search --mode {mode}", name)] = (
                [localcr, "search", query, "--index", str(index), "--mode", mode], environment(tree, work) | variables)
    for command, env in commands.values():  # bytecode written, files read into the page cache
        timed(command, env)
    load_before = os.getloadavg()
    runs: dict = {key: [] for key in commands}
    for _ in range(args.runs):
        for key, (command, env) in commands.items():
            runs[key].append(timed(command, env))
    load_after = os.getloadavg()
    median = lambda values: sorted(values)[len(values) // 2]  # noqa: E731
    start = median([wall for wall, _, _ in runs[("python -c pass", "-")]])
    own = peak_rss_mb()
    rows = []
    for (label, tree), results in runs.items():
        walls, rss = [wall for wall, _, _ in results], max(rss for _, _, rss in results)
        rows.append([label, tree, f"{median(walls):.3f}", f"{min(walls):.3f}",
                     "-" if tree == "-" else f"{median(walls) - start:.3f}",
                     f"{median([cpu for _, cpu, _ in results]):.3f}", f"{rss:.0f}" if rss > own else f"<= {own:.0f}"])
    text = "\n\n".join([
        f"machine: {machine()}; load average {' / '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' / '.join(f'{x:.2f}' for x in load_after)} after",
        f"index: {source}, structural contexts ({built.splitlines()[0]}); query {query!r}; {args.runs} runs of each "
        "command, taking turns; bytecode compiled, page cache warm",
        table(["command", "tree", "median s", "fastest s", "median over python's start s", "median CPU s", "peak RSS MB"],
              rows)])
    print(text)
    write_results("cli_search", args.data.name, text + "\n")


if __name__ == "__main__":
    main()
