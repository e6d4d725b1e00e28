"""The documentation holds together: every relative link of the README, docs/, CONTRIBUTING.md, BENCHMARKS.md,
CHANGELOG.md and benchmarks/README.md resolves (file and heading), every benchmark script they name exists and
answers `--help`, benchmarks/README.md lists every script and no two of its modules import each other,
docs/commands.md names every option of every command, the README's figures are BENCHMARKS.md's, and BENCHMARKS.md
stays a results page. No model is loaded: the scripts' `--help` exits before any work."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
PAGES = [ROOT / "README.md", ROOT / "BENCHMARKS.md", ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md",
         BENCHMARKS / "README.md", ROOT / "tests" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A reference-style link's definition, `[label]: target` on a line of its own (CHANGELOG's versions).
REFERENCE = re.compile(r"^\[[^\]]+\]:\s+(\S+)", re.MULTILINE)
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
    """Inline links and reference definitions alike; a link that leaves the repository is its host's (CHANGELOG's
    compare and release pages), not a file here."""
    broken = []
    for page in PAGES:
        text = page.read_text()
        for target in LINK.findall(text) + REFERENCE.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if ROOT not in resolved.parents and resolved != ROOT:
                continue
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


def _benchmark_modules() -> dict[str, Path]:
    """Every module of benchmarks/ (scripts and helpers, not results or data), by its path without suffix."""
    return {str(path.relative_to(BENCHMARKS).with_suffix("")): path for path in BENCHMARKS.rglob("*.py")
            if not {"results", "data"} & set(path.relative_to(BENCHMARKS).parts)}


def _benchmark_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of benchmarks/ a module imports anywhere in it, as a script run from its folder finds them: a
    sibling by its name (`long_documents`), another folder's by folder and name (`retrieval.long_documents`),
    `_common` from benchmarks/."""
    import ast

    folder = name.rpartition("/")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                 else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
        for imported in names:
            for candidate in (imported.replace(".", "/"), f"{folder}/{imported}" if folder else imported):
                if candidate in modules and candidate != name:
                    found.add(candidate)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the import graph, as the modules it passes through, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [])):
            return found
    return None


def test_no_two_benchmark_modules_import_each_other():
    """_common.py and retrieval/long_documents.py imported each other once: a helper two modules need lives where
    neither imports the other."""
    modules = _benchmark_modules()
    graph = {name: _benchmark_imports(name, path, modules) for name, path in modules.items()}
    assert graph["retrieval/fusion"] >= {"_common"}  # the check reads imports as the scripts make them
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), "the check finds a circle"


def _command_sections() -> dict[str, str]:
    """docs/commands.md cut at its `## localcr NAME` headings (the name in backticks): {NAME: the section's text}."""
    text = (ROOT / "docs" / "commands.md").read_text()
    parts = re.split(r"^## `localcr ([\w-]+)`\s*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def _spelled(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_every_command_and_option_is_documented():
    """Each command of `localcr` has its section in docs/commands.md, naming each of its options (the long form, or
    the short one where it has no other), as the command line itself defines them; the group's own options are
    named before the first section."""
    import click

    from localcr.cli import cli

    sections = _command_sections()
    missing = [f"localcr {name}: no section" for name in sorted(set(cli.commands) - set(sections))]
    for name, command in sorted(cli.commands.items()):
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            spellings = param.opts + param.secondary_opts
            wanted = [s for s in spellings if s.startswith("--")] or spellings
            missing += [f"localcr {name} {s}" for s in wanted if not _spelled(s, sections.get(name, ""))]
    preamble = (ROOT / "docs" / "commands.md").read_text().split("\n## ", 1)[0]
    missing += [f"localcr {s}" for param in cli.params for s in param.opts if s.startswith("--")
                and not _spelled(s, preamble)]
    assert not missing, "not in docs/commands.md:\n" + "\n".join(missing)


def _section(page: Path, heading: str) -> str:
    text = page.read_text()
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_the_readme_figures_are_benchmarks_figures():
    """A figure the README's "How well it works" restates is written as BENCHMARKS.md writes it, so the two cannot
    drift apart (model sizes such as 1.5B are names, not figures)."""
    benchmarks = (ROOT / "BENCHMARKS.md").read_text()
    figures = re.findall(r"(?<![\w.])\d[\d,]*\.\d+(?![\w.])", _section(ROOT / "README.md", "How well it works"))
    assert len(figures) > 10
    assert not [f for f in figures if not _spelled(f, benchmarks)], "README figures not in BENCHMARKS.md"


# What a results page does not hold: the notebook's "part N" and issue numbers, a session's point of view, the
# machines' paths (benchmarks/results/superseded/notebook-2026-11.md keeps the notebook as it was).
NOT_ON_THE_RESULTS_PAGE = {
    "a part number": r"(?i)\bparts? (?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                     r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|\d+)\b",
    "an issue number": r"(?i)\bissues? #?\d+|(?<![\w/&])#\d+\b",
    "a machine path": r"(?<![\w.])/(?:work|tmp|home|root|Users)/",
    "a session": r"(?i)\bthis session\b|\bsession's\b|heavy[- ](?:job )?lock",
    "the first person": r"\b(?:I|we|We|our|Our|my|My)\b",
}


def test_benchmarks_md_is_a_results_page():
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert len(text.splitlines()) <= 800
    found = [f"{what}: {match.group(0)!r}" for what, pattern in NOT_ON_THE_RESULTS_PAGE.items()
             for match in re.finditer(pattern, text)]
    assert not found, "\n".join(found)
    assert "## Tried and not adopted" in text and "## Machines and method" in text
