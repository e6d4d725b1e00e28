"""The documentation holds together: every relative link of the README, docs/, BENCHMARKS.md and benchmarks/README.md
resolves (file and heading), every benchmark script they name exists and answers `--help`, and benchmarks/README.md
lists every script. No model is loaded: the scripts' `--help` exits before any work."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
PAGES = [ROOT / "README.md", ROOT / "BENCHMARKS.md", ROOT / "CHANGELOG.md", BENCHMARKS / "README.md",
         ROOT / "tests" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SCRIPT = re.compile(r"benchmarks/[\w/]+\.(?:py|sh)\b")


def scripts() -> list[Path]:
    """Every benchmark script: what is not a helper, a data set or a result."""
    return sorted(path for path in BENCHMARKS.rglob("*") if path.suffix in {".py", ".sh"}
                  and not path.name.startswith("_") and not {"results", "data"} & set(path.relative_to(BENCHMARKS).parts))


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a Markdown page's headings (lower case, punctuation dropped, spaces to hyphens)."""
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        fenced ^= line.startswith("```")
        if not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            found.add(re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-"))
    return found


def test_every_relative_link_resolves():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def sources() -> list[Path]:
    """The project's own text files: where a benchmark's path may be written (raw results keep the paths of their
    time, and `.venv` is not the project's)."""
    folders = [ROOT / "localcr", ROOT / "tests", ROOT / "docs", ROOT / "setup", BENCHMARKS]
    found = [path for folder in folders for path in folder.rglob("*") if path.suffix in {".py", ".md", ".sh", ".toml"}
             and BENCHMARKS / "results" not in path.parents]
    return found + [path for path in ROOT.iterdir() if path.suffix in {".md", ".toml", ".sh"}]


def test_every_benchmark_named_exists():
    """A script's path in the docs, a docstring or a comment still names it: what moved is followed everywhere."""
    missing = sorted({f"{path.relative_to(ROOT)}: {name}" for path in sources() for name in SCRIPT.findall(path.read_text())
                      if not (ROOT / name).exists()})
    assert not missing, "\n".join(missing)


def test_benchmarks_readme_lists_every_script():
    listed = (BENCHMARKS / "README.md").read_text()
    unlisted = [str(path.relative_to(ROOT)) for path in scripts() if str(path.relative_to(ROOT)) not in listed]
    assert not unlisted, f"not in benchmarks/README.md: {unlisted}"


# Each script run as `python SCRIPT --help` would run it (its folder first on sys.path, run as __main__), one after
# another in one process so that the imports they share load once; what a script imported from benchmarks/ or
# tests/ is forgotten before the next, so none passes on another's imports.
HELP_RUNNER = r"""
import contextlib, io, json, runpy, sys
from pathlib import Path
base, root, results = list(sys.path), sys.argv[1], {}
for path in sys.argv[2:]:
    sys.argv, sys.path[:] = [path, "--help"], [str(Path(path).parent)] + base[1:]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        code = "finished without exiting"
    except SystemExit as exit:
        code = exit.code
    except BaseException as error:
        code = repr(error)
    results[path] = [code, out.getvalue()]
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith((root + "/benchmarks", root + "/tests")):
            del sys.modules[name]
print(json.dumps(results))
"""


def test_every_benchmark_script_answers_help():
    python = [path for path in scripts() if path.suffix == ".py"]
    run = subprocess.run([sys.executable, "-c", HELP_RUNNER, str(ROOT), *map(str, python)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    failed = {Path(path).relative_to(ROOT): code for path, (code, out) in json.loads(run.stdout).items()
              if code not in (0, None) or "usage:" not in out}
    for shell in (path for path in scripts() if path.suffix == ".sh"):
        done = subprocess.run(["bash", str(shell), "--help"], capture_output=True, text=True, timeout=30)
        if done.returncode or not done.stdout.strip():
            failed[shell.relative_to(ROOT)] = done.returncode
    assert not failed, failed


def test_a_benchmark_runs_the_localcr_beside_it_and_so_do_the_processes_it_starts(tmp_path):
    """Run from a worktree without PYTHONPATH, benchmarks/speed/estimates.py imported the virtual environment's
    editable localcr (the main checkout's) and measured its card estimates, not the branch's."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    script = tmp_path / "script.py"  # a script of benchmarks/ as run: its folder, not the checkout, on sys.path
    script.write_text(f"import subprocess, sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\nimport _common, localcr\n"
                      "print(localcr.__file__)\n"
                      "subprocess.run([sys.executable, '-c', 'import localcr; print(localcr.__file__)'], check=True)\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(ROOT / "localcr" / "__init__.py")] * 2
