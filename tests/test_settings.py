"""Defaults that stay (localcr.settings): the index and k from an environment variable or the config file, a flag
over both, `localcr config`; and errors a bug report can use: exit codes 1, 2 and 130, --debug's traceback."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import error_line, run

from localcr.models import DEFAULT_REGISTRY

ROOT = Path(__file__).parent.parent


@pytest.fixture
def notes(tmp_path) -> Path:
    """Four short notes that all speak of backups: a search for them has four hits to cut at k."""
    root = tmp_path / "notes"
    root.mkdir()
    for n, where in enumerate(["the NAS", "a USB disk", "the cloud", "tape"]):
        (root / f"note{n}.md").write_text(f"# Backups {n}\n\nNightly backups go to {where} and are kept for a week.\n")
    return root


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    """Writes the user's config file (LOCALCR_CONFIG names it) and returns its path."""
    path = tmp_path / "config" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("LOCALCR_CONFIG", str(path))

    def write(text: str) -> Path:
        path.write_text(text)
        return path

    return write


def hits(*args) -> list[dict]:
    return [json.loads(line) for line in run("search", "nightly backups", "--json", *args).splitlines()]


@pytest.mark.model
def test_search_takes_the_index_and_k_from_the_variable_over_the_config_file_and_a_flag_over_both(
        notes, tmp_path, config_file, monkeypatch):
    index, elsewhere = tmp_path / "index", tmp_path / "no-index-here"
    run("index", notes, "--index", index, "-q", "--contexts", "structural")
    config_file(f'index = "{index}"\n\n[search]\nk = 1\n')
    assert len(hits()) == 1  # the file's index and k
    config_file(f'index = "{elsewhere}"\n\n[search]\nk = 1\n')
    monkeypatch.setenv("LOCALCR_INDEX", str(index))
    monkeypatch.setenv("LOCALCR_SEARCH_K", "2")
    assert len(hits()) == 2  # the variables over the file
    monkeypatch.setenv("LOCALCR_INDEX", str(elsewhere))
    assert f"{elsewhere}: no such index directory" in error_line("search", "nightly backups")
    assert len(hits("--index", index, "-k", 3)) == 3  # the flags over both
    assert {hit["path"] for hit in hits("--index", index, "-k", 4)} == {str(p) for p in notes.iterdir()}


@pytest.mark.model
def test_index_with_no_index_builds_in_the_data_directory_where_every_command_finds_it(notes, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    default = tmp_path / "data" / "localcr" / "index"
    assert f"into {default} in" in run("index", notes, "-q", "--contexts", "structural")
    assert json.loads(run("stats", "--json"))["directory"] == str(default)
    assert hits()[0]["path"].startswith(str(notes))


def test_config_shows_each_setting_and_where_it_came_from(config_file, tmp_path, monkeypatch):
    path = config_file('index = "~/from-file"\nllm = "qwen2.5-coder-0.5b"\n\n[search]\nk = 8\n')
    monkeypatch.setenv("LOCALCR_ASK_K", "4")
    shown = json.loads(run("--models", DEFAULT_REGISTRY, "config", "--json"))
    assert shown["file"] == str(path) and shown["file_exists"]
    settings = {name: (s["value"], s["source"], s["where"]) for name, s in shown["settings"].items()}
    assert settings == {
        "index": (str(Path.home() / "from-file"), "file", str(path)),
        "models": (str(DEFAULT_REGISTRY), "flag", "--models"),
        "embedder": (None, "default", ""),
        "llm": ("qwen2.5-coder-0.5b", "file", str(path)),
        "reranker": (None, "default", ""),
        "search.k": (8, "file", str(path)),
        "ask.k": (4, "env", "LOCALCR_ASK_K"),
    }
    monkeypatch.setenv("LOCALCR_INDEX", str(tmp_path / "from-env"))
    lines = run("config").splitlines()
    assert lines[0] == f"config file: {path}"
    assert f"index     {tmp_path / 'from-env'}  (env LOCALCR_INDEX)" in lines
    assert "search.k  8  (file)" in lines and "embedder  the registry's [defaults]  (default)" in lines
    assert "[default: 8; x>=1]" in run("search", "--help")  # a command's help shows the setting in force
    monkeypatch.delenv("LOCALCR_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert run("config").splitlines()[0] == f"config file: {tmp_path / 'xdg' / 'localcr' / 'config.toml'} (none there)"


def test_ask_k_defaults_to_what_the_api_reads():
    from localcr.answers.reader import DEFAULT_SOURCES
    from localcr.settings import SETTINGS

    assert {s.name: s.default for s in SETTINGS}["ask.k"] == DEFAULT_SOURCES


@pytest.mark.parametrize("text, says", [
    ("index = \n", "not valid TOML (Invalid value (at line 1, column 9)): fix the syntax"),
    ("colour = 1\n", "unknown setting 'colour'; the settings are index, models, embedder, llm, reranker, search.k, ask.k"),
    ('[search]\nk = "ten"\n', "search.k: 'ten' is not a whole number >= 1"),
    ("index = 3\n", "index: 3 is not a path in quotes"),
])
def test_a_malformed_config_file_is_one_line_naming_the_file(config_file, text, says):
    path = config_file(text)
    assert error_line("search", "anything") == f"localcr: error: {path}: {says}"


def test_a_bad_variable_or_model_name_is_one_line_naming_where_it_was_set(config_file, monkeypatch):
    path = config_file('llm = "nope"\n')
    assert error_line("stats").startswith(f"localcr: error: {DEFAULT_REGISTRY}: no llm named 'nope' (configured: ")
    assert error_line("stats").endswith(f"), as {path} asks")
    monkeypatch.setenv("LOCALCR_SEARCH_K", "ten")
    assert error_line("config") == "localcr: error: LOCALCR_SEARCH_K: 'ten' is not a whole number >= 1"


def test_a_runtime_error_exits_1_and_a_usage_error_2(tmp_path):
    assert error_line("stats", "--index", tmp_path / "nowhere").endswith("no such index directory; build one with "
                                                                         f"`localcr index PATH --index {tmp_path / 'nowhere'}`")
    for args in (["search", "q", "--nope"], ["search"], ["search", "q", "--mode", "nope"]):
        out = run(*args, code=2)
        assert out.startswith("Usage: ") and "search [OPTIONS] QUERY" in out and "\nError: " in out
        assert "localcr: error" not in out


@pytest.mark.parametrize("asked", [["--debug"], "LOCALCR_DEBUG"])
def test_debug_prints_the_traceback_after_the_one_line(tmp_path, monkeypatch, asked):
    if asked == "LOCALCR_DEBUG":
        monkeypatch.setenv("LOCALCR_DEBUG", "1")
    lines = run(*(asked if isinstance(asked, list) else []), "stats", "--index", tmp_path / "nowhere", code=1).splitlines()
    assert lines[0].startswith("localcr: error: ") and lines[1] == "Traceback (most recent call last):"
    assert lines[-1] == f"localcr.errors.LocalcrError: {lines[0].removeprefix('localcr: error: ')}"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe")
def test_ctrl_c_exits_130_with_one_line(tmp_path):
    """A real SIGINT to a `localcr` blocked reading its config file: a named pipe whose writer (this test) writes
    nothing. The child gets SIGINT's default action back, as a terminal's shell starts it: a run of the suite in
    the background of a script ignores SIGINT, and a child inherits that."""
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    env = {**os.environ, "LOCALCR_CONFIG": str(fifo), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "localcr", "config"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline, writer = time.monotonic() + 60, None
    try:
        while writer is None:  # opening the write end succeeds once localcr has opened the read end
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        if writer is not None:
            os.close(writer)
    assert process.returncode == 130 and out == ""
    assert err.splitlines() == ["localcr: interrupted; the index holds what was committed before, and finished work is "
                                "cached: the same command goes on from there"]
