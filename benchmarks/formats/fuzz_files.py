"""Thousands of mutated files of every supported format through `localcr index`, in a subprocess each batch.

    .venv/bin/python benchmarks/formats/fuzz_files.py [--per-format 500] [--seed 1] [--timeout 900]

Each format's sample (Markdown with front matter, HTML with a script, Python, Rust, reST, text in UTF-8,
Windows-1252 and UTF-16, a PDF and a DOCX file as the tests write them) is mutated --per-format times (flipped, deleted, inserted and repeated bytes, cuts)
and the batch is indexed by `localcr index` in a fresh process. A batch is a *crash* if the process dies with
a traceback or an exit code other than 0 (indexed) or 2 (one clear error line: e.g. no file of the batch was
readable), a *hang* if it outlives
--timeout. The table (files, documents indexed, files skipped, warnings, crashes, hangs, seconds) goes to
stdout and benchmarks/results/fuzz_files.md. The mutations are those of tests/test_fuzz.py.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from _common import machine, table  # noqa: E402
from test_fuzz import _binary_samples, _mutate  # noqa: E402

TEXTS = {  # file name -> (text, encoding)
    "guide.md": ("---\ntitle: Operations guide\n---\n# Guide\n\n## Retries\n\nA failed job is retried three times, "
                 "waiting `backoff` seconds.\n\n```toml\nretries = 3\n```\n", "utf-8"),
    "page.html": ("<!doctype html><html><head><meta charset=utf-8><title>Status</title><script>alert(1)</script>"
                  "</head><body><h1>Status</h1><p>All <b>systems</b> &amp; services up.</p><ul><li>db</li></ul></body></html>",
                  "utf-8"),
    "scheduler.py": ('"""Picks the next job."""\n\nclass FairScheduler:\n    def next_job(self, queue):\n'
                     "        return min(queue, key=lambda j: j.last_run)\n", "utf-8"),
    "journal.rs": ("/// An append-only journal.\npub struct Journal { path: PathBuf }\n\nimpl Journal {\n"
                   "    pub fn append(&mut self, line: &str) -> io::Result<()> { Ok(()) }\n}\n", "utf-8"),
    "notes.rst": ("Notes\n=====\n\nThe daemon restarts nightly.\n\n.. note:: Keep the journal.\n", "utf-8"),
    "menu-utf8.txt": ("Café menu: crème brûlée, 寿司, Größe.\n", "utf-8"),
    "menu-cp1252.txt": ("Café menu: crème brûlée, Größe und Übermaß.\n", "cp1252"),
    "menu-utf16.txt": ("Café menu: crème brûlée, 寿司.\n", "utf-16"),
}


def samples() -> dict[str, bytes]:
    return {**{name: text.encode(encoding) for name, (text, encoding) in TEXTS.items()}, **_binary_samples()}


def run_batch(name: str, sample: bytes, count: int, rng: random.Random, timeout: float) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        stem, suffix = os.path.splitext(name)
        for n in range(count):
            (docs / f"{stem}-{n:05d}{suffix}").write_bytes(_mutate(sample, rng))
        env = {**os.environ, "LOCALCR_CACHE_DIR": str(Path(tmp) / "cache")}
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-m", "localcr", "index", str(docs), "--index", str(Path(tmp) / "index"),
                                   "-q", "--contexts", "structural"], capture_output=True, text=True, timeout=timeout,
                                  env=env, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return [name, count, "", "", "", 0, 1, time.perf_counter() - started]
        seconds = time.perf_counter() - started
    out = done.stdout + done.stderr
    crashed = done.returncode not in (0, 2) or "Traceback" in out
    if crashed:
        print(f"{name}: exit {done.returncode}\n{out[-3000:]}", file=sys.stderr)
    indexed = re.search(r"indexed (\d+) documents", out)
    summary = re.search(r"(\d+) files? skipped", out)  # a batch of which nothing was readable has no summary
    skipped = int(summary[1]) if summary else sum(line.endswith(", skipped") for line in out.splitlines())
    warnings = sum(line.startswith("warning:") for line in out.splitlines())
    return [name, count, indexed[1] if indexed else 0, skipped, warnings, int(crashed), 0, seconds]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--per-format", type=int, default=500, help="mutated files per format (default 500)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900, help="seconds a batch may take before it counts as a hang")
    args = p.parse_args()
    rng = random.Random(args.seed)
    rows = []
    for name, sample in samples().items():
        rows.append(run_batch(name, sample, args.per_format, rng, args.timeout))
        print(rows[-1], file=sys.stderr)
    totals = ["all", *(sum(int(r[i] or 0) for r in rows) for i in range(1, 7)), sum(r[7] for r in rows)]
    head = ["format", "files", "indexed", "skipped", "warnings", "crashes", "hangs", "seconds"]
    text = (f"# Mutated files through `localcr index`\n\n{machine()}; seed {args.seed}\n\n"
            + table(head, rows + [totals]) + "\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "fuzz_files.md").write_text(text)


if __name__ == "__main__":
    main()
