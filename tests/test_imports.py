"""No import circle between localcr's modules, read statically from the source with `ast`.

Every import counts, wherever it stands: at module level, inside a function (localcr defers torch, Ray and the
model runtimes to first use, and such an import is as much a dependency as one at the top: the two modules
still cannot be read or changed apart, and the circle only waits for the first call to close) and under
`TYPE_CHECKING` (a type named in a signature is part of the module's interface). What does not count is the
package a module sits in being imported first by Python: a package's `__init__` is its interface and imports its
parts, and a part imports its siblings, never the `__init__` of its own package.

And what a command imports, run as a user runs it: `localcr search` imports only what a search runs (issue 85), no
answering, no LLM runtime, no readers, no build, no server and none of the heavy packages behind them.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run

import localcr

ROOT = Path(localcr.__file__).parent


def module_files() -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package (a package by its __init__.py)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The localcr modules a module imports anywhere in its source (`from pkg import part` names the module
    pkg.part when there is one, else pkg)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
    return (found & modules.keys()) - {name}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in graph:
        if start in order:
            continue
        work = [(start, iter(sorted(graph[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in order:
                    order[step] = low[step] = len(order)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], order[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_import_circle_between_localcr_modules():
    modules = module_files()
    graph = {name: imported(name, path, modules) for name, path in modules.items()}
    assert import_circles(graph) == []


def test_the_walk_sees_imports_inside_functions_and_type_checking(tmp_path):
    """The check itself: a circle closed only by a function-level import, or a TYPE_CHECKING one, is found."""
    files = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py", "pkg.c": tmp_path / "c.py"}
    files["pkg.a"].write_text("from pkg.b import thing\n")
    files["pkg.b"].write_text("def later():\n    from pkg import a\n")
    files["pkg.c"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import thing\n")
    graph = {name: imported(name, path, files) for name, path in files.items()}
    assert graph == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert import_circles(graph) == [["pkg.a", "pkg.b"]]


# What a search never runs: answering, the LLM and its runtime, reading files, building an index, serving,
# evaluating, and the packages behind them (each one to several hundred ms of imports before a search of a few ms).
NOT_FOR_A_SEARCH = ("localcr.answers", "localcr.llm", "localcr.readers", "localcr.pipeline", "localcr.index",
                    "localcr.contexts.run", "localcr.serve", "localcr.evaluation", "llama_cpp", "torch",
                    "sentence_transformers", "transformers", "fastapi", "uvicorn", "starlette", "mcp", "ray", "pymilvus")

# A fresh interpreter that imports the command line and runs one command through click's runner, then says what
# the command printed and every module it imported.
RUN_COMMAND = """
import json, sys
from click.testing import CliRunner
from localcr.cli import main, cli
result = CliRunner().invoke(cli, sys.argv[1:])
print(json.dumps({"code": result.exit_code, "output": result.output, "modules": sorted(sys.modules)}))
"""


def command_in_a_fresh_process(*args) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN_COMMAND, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def not_for_a_search(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in NOT_FOR_A_SEARCH)]


def test_a_search_that_finds_no_index_imports_nothing_it_does_not_run(tmp_path):
    """The command line, the settings and the model registry (which names the LLMs and their prompt layouts) import
    none of it: no model is loaded, so this runs in the quick group."""
    ran = command_in_a_fresh_process("search", "how are retries configured", "--index", tmp_path / "none")
    assert ran["code"] == 1 and "no such index directory" in ran["output"]
    assert not_for_a_search(ran["modules"]) == []


@pytest.mark.model
def test_a_hybrid_search_imports_only_what_a_search_runs(small_corpus, tmp_path):
    index = tmp_path / "index"
    run("index", small_corpus, "--index", index, "--contexts", "structural", "-q")
    ran = command_in_a_fresh_process("search", "how are retries configured", "--index", index, "-k", 2)
    assert ran["code"] == 0 and ran["output"].startswith("1. ") and "dense " in ran["output"].splitlines()[0], ran["output"]
    assert "localcr.embeddings.onnx" in ran["modules"] and "localcr.lexical" in ran["modules"]  # both legs ran
    assert "usearch" not in ran["modules"]  # a small segment is searched exhaustively, its graph never opened
    assert not_for_a_search(ran["modules"]) == []


def test_the_check_sees_a_module_a_search_does_not_run():
    """The check itself: a part of a package named, or the package, is caught; a module that only shares a prefix
    of its name is not."""
    assert not_for_a_search(["localcr.answers", "localcr.readers.pdf", "torch._C", "localcr.search",
                             "localcr.indexing", "mcpx"]) == ["localcr.answers", "localcr.readers.pdf", "torch._C"]
