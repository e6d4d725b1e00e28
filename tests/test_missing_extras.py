"""An optional package that is not installed (pymilvus for a Milvus index, Ray for `index --ray`) is one line naming
the extra to install, with exit code 1 (a runtime error's) and nothing built.

Each runs the real `localcr` command (`python -m localcr`) in a process where the package cannot be imported, whether
or not this machine has it: a finder first on sys.meta_path refuses it as Python refuses a package that is not
there. These tests sit here, not in tests/test_milvus.py or tests/test_ray.py, whose module-level importorskip of
that very package would skip them exactly on the machines where they matter."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import localcr

ROOT = Path(localcr.__file__).resolve().parent.parent

# Run before anything else in the child: the packages named are as absent as on a machine that never installed them
# (`import pymilvus`, `from pymilvus import MilvusClient`, `import ray.util` all raise ModuleNotFoundError) ...
ABSENT = '''import sys

class Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {packages!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
'''
# ... then the command runs as `python -m localcr ARGS` runs it.
LOCALCR = '''import runpy
sys.argv = ["localcr", *sys.argv[1:]]
runpy.run_module("localcr", run_name="__main__", alter_sys=True)
'''


def localcr_without(packages: set[str], *args) -> subprocess.CompletedProcess:
    """`localcr ARGS` in its own process, with `packages` unimportable there."""
    return subprocess.run([sys.executable, "-c", ABSENT.format(packages=packages) + LOCALCR, *map(str, args)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The failed command's error: exit code 1, no traceback, the last line of stderr (a log line such as the
    embedder chosen may come before it)."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("localcr: error: "), result.stderr
    return line


@pytest.mark.parametrize("package", ["pymilvus", "ray"])
def test_the_package_is_unimportable_in_that_process(package):
    """What the tests below rely on: the package is gone there even on a machine that has it."""
    code = ABSENT.format(packages={package}) + f"import {package}\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1 and f"ModuleNotFoundError: No module named '{package}'" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["search", "quotas"], ["stats"], ["index", "DOCS", "-q"]])
def test_pymilvus_not_installed_names_the_extra(command, small_corpus, tmp_path):
    location = f"milvus-lite:{tmp_path}/m.db/orbit"
    args = [small_corpus if arg == "DOCS" else arg for arg in command]
    line = one_error_line(localcr_without({"pymilvus"}, *args, "--index", location))
    assert line == f"localcr: error: {location}: a Milvus index needs pymilvus: pip install 'localcr[milvus]'"
    assert not (tmp_path / "m.db").exists()


def test_ray_not_installed_is_one_line_and_the_index_is_not_built(small_corpus, tmp_path):
    index = tmp_path / "index"
    result = localcr_without({"ray"}, "index", small_corpus, "--index", index, "-q", "--contexts", "none", "--ray", "auto")
    assert one_error_line(result) == ("localcr: error: --ray needs Ray, which is not installed: pip install "
                                      "'localcr[ray]' (or 'ray>=2.40')")
    assert not (index / "segments").exists()
