"""Shared test set-up: no network for anyone, a private cache, a small corpus written by the tests,
helpers to run the CLI and to write PDF, DOCX and PPTX files. Tests that load a real model (the bundled embedder or LLM, a cross-encoder) are
marked `model`; `pytest -m "not model"` runs the others in seconds (see tests/README.md)."""
from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

import localcr  # noqa: F401  (switches the model hub off before any test imports transformers)

# The features llama.cpp reports on an x86 CPU with AVX2 and no AVX-512, and on one with AVX-512, for tests that pin
# the CPU's features ($LOCALCR_CPU_FEATURES, read by localcr.llm.cpu_features); the whole suite runs as on an AVX2 CPU
# with LOCALCR_CPU_FEATURES set to AVX2_FEATURES (tests/README.md).
AVX2_FEATURES = "SSE3 SSSE3 AVX AVX2 F16C FMA BMI2 LLAMAFILE OPENMP REPACK"
AVX512_FEATURES = "SSE3 SSSE3 AVX AVX_VNNI AVX2 F16C FMA BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 LLAMAFILE OPENMP REPACK"

CONNECT_ATTEMPTS: list[tuple] = []
LOOPBACK = {"allowed": False}  # set for tests marked `loopback` (a served index on this machine)


def _refuse(self, address, *args, **kwargs):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        if LOOPBACK["allowed"] and _is_loopback(address[0]):
            return _real_connect(self, address, *args, **kwargs)
        CONNECT_ATTEMPTS.append(address)
        raise OSError(f"network blocked in tests (tried {address})")
    return _real_connect(self, address, *args, **kwargs)


_real_connect = socket.socket.connect


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: connect() is given addresses, names were resolved before
        return False


def _one_share_of_the_cores_per_worker():
    """Under pytest-xdist, each worker runs on its own share of the cores (and so does every process it starts):
    llama.cpp, torch and ONNX Runtime size their thread pools by the cores a process may run on
    (localcr.threads.default_threads), and two unpinned workers each spinning two llama.cpp threads on two cores made
    the suite slower than one worker. With more workers than cores, each core takes every so many (tests/README.md)."""
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker or workers < 2 or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    number = int(worker.removeprefix("gw"))
    share = cores[number::workers] if workers <= len(cores) else [cores[number % len(cores)]]
    os.sched_setaffinity(0, share)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers a core where models load (pyproject's --maxprocesses caps it). Such a worker often
    waits (a server starting, Milvus answering, Chromium, a subprocess loading its models) and a second one computes
    on its core meanwhile: 253 s instead of 288 s on 2 AVX-512 cores. The quick group (`-m "not model"`) only
    computes: a worker a core (30 s, not 40)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores if config.option.markexpr.replace(" ", "") == "notmodel" else 2 * cores


# The files whose tests take longest (tests/README.md), longest first. xdist hands a worker a whole file at a time, in
# collection order (addopts: --no-loadscope-reorder, not by how many tests a file has): a long file handed out last
# kept one core busy while the other had nothing left to do. Ordered by their time on an AVX2 pair, where the bundled
# LLMs read prompts 4 times slower than on an AVX-512 one: a file's time on AVX-512 and 3 times its LLM's (on AVX-512,
# at cde97cf: test_ask 105 s of which 89 s in llama.cpp, test_computed_answers 69 and 62, test_staged 85 and 34,
# test_contexts 53 and 29, test_cli 48 and 23, test_milvus 100 and none), so that the files the LLM makes long
# start first there. test_sql and test_world_tables, which came later and ask the 1.5B most of their tests, were
# handed out last, in collection order: the suite took 498.4 s, 421.2 s once they were named here. At 3f3d7af a
# file's seconds in a worker of four were test_ask 180, test_computed_answers 180, test_sql 162, test_staged 150,
# test_world_tables 126, test_milvus 111, test_cli 104.
LONGEST_FIRST = ("test_ask.py", "test_computed_answers.py", "test_sql.py", "test_staged.py", "test_world_tables.py",
                 "test_contexts.py", "test_cli.py", "test_milvus.py", "test_page.py", "test_ray.py", "test_bundled.py",
                 "test_serve.py", "test_expansion.py", "test_segments.py", "test_formats.py", "test_onnx.py",
                 "test_full_disk.py", "test_mcp.py", "test_rerank.py", "test_watch.py", "test_sources.py",
                 "test_navigation.py", "test_eval_cli.py")


def pytest_collection_modifyitems(items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's own order is kept


def _no_user_settings():
    """The suite runs on localcr's own defaults whatever the person running it has set (localcr.settings): no
    setting's variable, no config file, no --debug; a test that needs one sets it."""
    from localcr.settings import SETTINGS

    for variable in [setting.env for setting in SETTINGS] + ["LOCALCR_DEBUG"]:
        os.environ.pop(variable, None)
    os.environ["LOCALCR_CONFIG"] = os.devnull


# The folder, named by the controller for the whole run, where every test process keeps the KV states of the answers'
# fixed instructions (`shared_instruction_states`; tests/shared_states.py says the same).
STATES_VARIABLE = "LOCALCR_TEST_INSTRUCTION_STATES"


def _count_llm_work(config):
    """The run's LLM work, counted by localcr.llm.count_work in every process that runs a model: the controller (the
    first process, or the only one with -n 0) names a fresh file in $LOCALCR_LLM_WORK before the xdist workers start,
    the workers and every `localcr` process they start inherit it and append to it, and pytest_terminal_summary adds
    it up. Counted: prompt tokens llama.cpp evaluated (the bundled LLMs; the tiny GGUF reranker's apart), those it
    took from the KV cache or a stored state instead, and tokens generated. Not counted: a process started with an
    environment of its own (test_mcp passes the variable on: `llm_work_env`), torch and ONNX models (MiniLM, the
    torch cross-encoder), and FakeCardRunner's cards, which run no model. The controller also names the folder of
    `shared_instruction_states`.
    With $LOCALCR_LLM_WORK set, the run writes there and keeps it (a JSON line a llama.cpp call); else in a
    temporary folder it removes at the end."""
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller named the file
    import tempfile

    from localcr.llm import WORK_VARIABLE

    if config.getoption("llm_work_by_test") and not getattr(config.option, "numprocesses", None):
        config.llm_work_by_test = {}  # nodeid: [prompt tokens evaluated, generated] (pytest_runtest_protocol)
    config.instruction_states = Path(tempfile.mkdtemp(prefix="localcr-test-states-"))
    os.environ[STATES_VARIABLE] = str(config.instruction_states)
    if os.environ.get(WORK_VARIABLE):  # named by whoever runs the suite: emptied now, and its lines kept afterwards
        config.llm_work, config.llm_work_kept = Path(os.environ[WORK_VARIABLE]), True
        config.llm_work.write_text("")
    else:
        config.llm_work, config.llm_work_kept = Path(tempfile.mkdtemp(prefix="localcr-llm-work-")) / "work.jsonl", False
        os.environ[WORK_VARIABLE] = str(config.llm_work)


def llm_work_env() -> dict[str, str]:
    """For a process started with an environment of its own: the variable that adds its LLM work to the run's."""
    from localcr.llm import WORK_VARIABLE

    return {WORK_VARIABLE: os.environ[WORK_VARIABLE]} if WORK_VARIABLE in os.environ else {}


def llm_work_line(totals: dict[str, dict[str, dict[str, int]]]) -> str:
    """"LLM work: N prompt tokens evaluated, M generated (by model: ...)" for localcr.llm.read_work's totals; the GGUF
    rerankers' tokens (a tiny random cross-encoder's, cheap) after it, apart; then how many times the LLMs were
    loaded, by model (each load seconds: `shared_llms`). "Of a prompt evaluated before" is what sharing completions
    between tests could save: a prompt the run evaluated already, in any test or process, evaluated again."""
    llms, rerankers = totals.get("llm", {}), totals.get("reranker", {})

    def total(models, field):
        return sum(counts[field] for counts in models.values())

    ranked = sorted(llms.items(), key=lambda item: -item[1]["evaluated"])
    by_model = "; ".join(f"{name} {counts['evaluated']:,} + {counts['generated']:,}" for name, counts in ranked)
    loads = "; ".join(f"{name} {counts['loaded']}" for name, counts in ranked if counts["loaded"])
    return (f"LLM work: {total(llms, 'evaluated'):,} prompt tokens evaluated ({total(llms, 'again'):,} of them of a "
            f"prompt evaluated before), {total(llms, 'generated'):,} generated "
            f"(by model, evaluated + generated: {by_model or 'none'}); {total(llms, 'reused'):,} prompt tokens taken "
            f"from the KV cache or a stored state; GGUF rerankers scored {total(rerankers, 'evaluated'):,} tokens; "
            f"models loaded: {total(llms, 'loaded')} ({loads or 'none'})")


def pytest_addoption(parser):
    parser.addoption("--llm-work-by-test", type=int, default=0, metavar="N",
                     help="after the LLM work line, the N tests whose LLM work was largest (prompt tokens evaluated, "
                          "then generated; a module's fixtures count in its first test); with -n 0")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With --llm-work-by-test, the LLM work each test adds to the run's file (setup, call and teardown, and the
    `localcr` processes it starts). Only in the controller, so only with -n 0: the workers of a run share the file."""
    path, by_test = getattr(item.config, "llm_work", None), getattr(item.config, "llm_work_by_test", None)
    if path is None or by_test is None:
        yield
        return
    start = path.stat().st_size if path.exists() else 0
    yield
    with open(path, "rb") as file:
        file.seek(start)
        added = file.read().decode("utf-8", "replace").splitlines()
    counts = [0, 0]
    for line in added:
        try:
            entry = json.loads(line)
            if entry["role"] == "llm":
                counts[0], counts[1] = counts[0] + entry["evaluated"], counts[1] + entry["generated"]
        except (ValueError, KeyError, TypeError):
            continue
    if any(counts):
        by_test[item.nodeid] = counts


def pytest_terminal_summary(terminalreporter, config):
    path = getattr(config, "llm_work", None)
    if path is not None:
        from localcr.llm import read_work

        terminalreporter.write_line(llm_work_line(read_work(path)))
    top = config.getoption("llm_work_by_test")
    if top and getattr(config, "llm_work_by_test", None) is None:
        terminalreporter.write_line("--llm-work-by-test: run with -n 0 (the workers of a run share the work file)")
    elif top:
        ranked = sorted(config.llm_work_by_test.items(), key=lambda item: (-item[1][0], -item[1][1]))[:top]
        for nodeid, (evaluated, generated) in ranked:
            terminalreporter.write_line(f"  {evaluated:7,} + {generated:5,}  {nodeid}")


def pytest_unconfigure(config):
    import shutil

    path = getattr(config, "llm_work", None)
    if path is not None and not config.llm_work_kept:
        shutil.rmtree(path.parent, ignore_errors=True)
    if getattr(config, "instruction_states", None) is not None:
        shutil.rmtree(config.instruction_states, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def shared_instruction_states():
    """The answers' fixed instructions (the reader's, the route's, each table plan's: 138 to 1,005 tokens of the 1.5B)
    are evaluated once a run, not once an xdist worker or a server: their KV states (LlamaRunner.keep_prefix, the
    "answers" store) go to one folder the whole run shares, as they go to the one cache of a user's machine, and a
    worker that finds a state there restores it. Keyed by model, build, n_ctx and tokens, a state restored is the one
    evaluating them wrote, so no answer changes; every other entry stays in the test's own cache. The `localcr serve`
    and `localcr mcp` processes the tests start share the folder too (tests/shared_states.py launches them); any
    other `localcr` process a test starts keeps its own states (its LOCALCR_CACHE_DIR's)."""
    from shared_states import share_instruction_states  # here: benchmarks import this file as tests.conftest

    undo = share_instruction_states(os.environ[STATES_VARIABLE])
    yield
    undo()


def pytest_configure(config):
    """Pin an xdist worker to its cores, set the user's settings aside, count the LLM work (`_count_llm_work`), then
    block every IPv4/IPv6 connection for the whole run; every test fails if it attempted one."""
    _one_share_of_the_cores_per_worker()
    _no_user_settings()
    _count_llm_work(config)
    config.addinivalue_line("markers", "loopback: may connect to loopback addresses (a server the test started); nothing else")
    config.addinivalue_line("markers", "model: loads a real model (the bundled embedder or LLM, a cross-encoder); seconds each")
    config.addinivalue_line("markers", "own_llm: loads its own LLM, not the one a worker's session shares "
                            "(conftest.shared_llms): the test checks what loading takes")
    config.addinivalue_line("markers", "measures_rates: a long LLM run measures this machine's LLM speeds first, as on "
                            "a machine with none recorded (conftest.rates_as_if_measured spares every other test)")
    config.addinivalue_line("markers", "milvus_server: runs against a real Milvus server (LOCALCR_MILVUS_URI's, or the "
                            "standalone 2.3.5 server of PyPI's milvus package, started by tests/test_milvus.py)")
    socket.socket.connect = _refuse
    socket.socket.connect_ex = _refuse


@pytest.fixture(autouse=True)
def no_connection_attempted(request):
    """Whatever order tests run in, each one fails if it tried to reach the network (tests marked `loopback`
    may reach this machine's loopback addresses, and only those)."""
    before = len(CONNECT_ATTEMPTS)
    LOOPBACK["allowed"] = request.node.get_closest_marker("loopback") is not None
    yield
    LOOPBACK["allowed"] = False
    assert CONNECT_ATTEMPTS[before:] == [], f"connection attempts: {CONNECT_ATTEMPTS[before:]}"


@pytest.fixture(scope="session", autouse=True)
def shared_embedders():
    """Every `localcr` command a test runs in this process loads its embedder once a session, not once a command
    (0.7-0.9 s for MiniLM on 2 loaded AVX2 cores, dozens of commands in test_cli and test_segments): a loaded
    embedder holds nothing between calls, so sharing it changes no result. Keyed by the whole model entry and
    its files' fingerprint, so a test's own models.toml, another runtime or a changed file loads its own."""
    import localcr.embeddings as embeddings

    load, loaded = embeddings.load_backend, {}

    def shared(spec, threads=None, purpose="build"):
        key = (repr(spec), spec.fingerprint(), threads, purpose)
        if key not in loaded:
            loaded[key] = load(spec, threads, purpose)
        return loaded[key]

    embeddings.load_backend = shared
    yield
    embeddings.load_backend = load


@pytest.fixture(scope="session", autouse=True)
def shared_llms():
    """The answerer, expander and navigator of every in-process `localcr` command and API call load their LLM once
    a session, not once a command: the 1.5B was loaded 13 times a run, 4.9 s each on two busy cores, 5 of them by
    test_sql's asks alone. A loaded model's answers do not depend on what its KV cache held before (greedy decoding;
    test_contexts checks the evaluation is the same), so sharing one changes no answer. Keyed like
    `shared_embedders`, by the model entry, its files' fingerprint and the sequences decoded side by side; `close()`
    leaves a shared model loaded. Only the entries of the repository's models.toml are shared, so a session keeps
    at most the bundled LLMs loaded, not every test's own registry's; a test marked `own_llm` (the time loading
    takes, said) loads its own."""
    import localcr.llm as llm
    from localcr.models import DEFAULT_REGISTRY

    runner, close, loaded = llm.OnDemandLlm.runner, llm.OnDemandLlm.close, {}

    def shared(self):
        if self._runner is None and not OWN_LLM["now"] and self.spec.registry == DEFAULT_REGISTRY:
            key = (repr(self.spec), self.spec.fingerprint(), self.PARALLEL)
            if key in loaded:
                self._say(self.loading())  # as a command says it, loaded or not
                self._runner = loaded[key]
            else:
                loaded[key] = runner.fget(self)
        return runner.fget(self)

    def kept_open(self):
        if any(self._runner is model for model in loaded.values()):
            self._runner = None
        else:
            close(self)

    llm.OnDemandLlm.runner, llm.OnDemandLlm.close = property(shared), kept_open
    yield
    llm.OnDemandLlm.runner, llm.OnDemandLlm.close = runner, close
    for model in loaded.values():
        model.close()


OWN_LLM = {"now": False}  # whether the running test is marked own_llm (`shared_llms`)


@pytest.fixture(autouse=True)
def own_llm(request):
    OWN_LLM["now"] = request.node.get_closest_marker("own_llm") is not None
    yield
    OWN_LLM["now"] = False


@pytest.fixture(autouse=True)
def rates_as_if_measured(request, monkeypatch):
    """A long LLM run on a machine with no recorded speeds measures them first (5-10 s a model, once a machine);
    every test has a cache of its own, so every such test would measure again. Only the tests of that
    measurement (marked `measures_rates`) do; the others estimate with the typical rates."""
    if request.node.get_closest_marker("measures_rates") is None:
        import localcr.contexts.run as context_run

        monkeypatch.setattr(context_run, "MEASURE_FROM_TOKENS", sys.maxsize)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.delenv("LOCALCR_MODELS", raising=False)


GUIDE = """# Orbit scheduler guide

Orbit runs batch jobs on a small cluster.

## Installing

Install the orbit package with pip and start the daemon with `orbitd --config orbit.toml`.
The daemon listens on port 7700 and writes its journal to /var/lib/orbit.

## Retries

A failed job is retried three times with exponential backoff. The backoff starts at two seconds
and doubles after every attempt. Set `max_retries` in the job file to change the limit.

## Quotas

Each team has a CPU quota measured in core-hours per day. When a team exceeds its quota, new jobs
wait in the pending queue until midnight UTC, when quotas reset.
"""

SCHEDULER = '''"""Pick the next job to run: fair share between teams, then priority, then age."""
import heapq


class FairScheduler:
    """Keeps one heap of pending jobs per team."""

    def __init__(self, teams):
        self.queues = {team: [] for team in teams}

    def submit(self, job):
        heapq.heappush(self.queues[job.team], (job.priority, job.submitted, job))

    def next_job(self, usage):
        """The least-served team's most urgent job."""
        team = min((t for t in self.queues if self.queues[t]), key=usage.get)
        return heapq.heappop(self.queues[team])[2]


def backoff_delay(attempt):
    return 2 ** attempt
'''

JOURNAL = """//! Append-only journal of job state changes, replayed at start-up.
use std::fs::File;

pub struct Journal {
    file: File,
}

impl Journal {
    pub fn append(&mut self, entry: &Entry) -> std::io::Result<()> {
        entry.write_to(&mut self.file)
    }

    pub fn replay(path: &str) -> Vec<Entry> {
        read_entries(path)
    }
}
"""


@pytest.fixture(scope="session")
def tiny_reranker_dir(tmp_path_factory) -> Path:
    """A real, randomly initialised BERT cross-encoder: no reranker weights exist on these machines."""
    from tiny_rerankers import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-reranker"))


@pytest.fixture(scope="session")
def spread_reranker_dir(tmp_path_factory) -> Path:
    """The tiny cross-encoder with weights ten times BERT's initial scale, so that passages' scores differ by tenths
    (not by 1e-5): what comparing two runtimes within a tolerance needs."""
    from tiny_rerankers import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("spread-reranker"), initializer_range=0.2)


@pytest.fixture(scope="session")
def spread_reranker_gguf(spread_reranker_dir, tmp_path_factory) -> Path:
    """spread_reranker_dir as a GGUF file (tests/tiny_rerankers.py), for llama.cpp's rank pooling."""
    from tiny_rerankers import write_bert_reranker_gguf

    return write_bert_reranker_gguf(spread_reranker_dir, tmp_path_factory.mktemp("spread-gguf") / "tiny-reranker.gguf")


@pytest.fixture
def corpus(tmp_path) -> Path:
    """A small project tree: Markdown, Python, Rust, binary files, a Latin-1 file and an ignored folder."""
    root = tmp_path / "orbit"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / ".git").mkdir()
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "src" / "scheduler.py").write_text(SCHEDULER)
    (root / "src" / "journal.rs").write_text(JOURNAL)
    (root / "docs" / "logo.gif").write_bytes(b"GIF89a\0\0\0")  # images localcr does not read (PNG, JPEG and TIFF are scans)
    (root / "docs" / "dump.txt").write_bytes(b"\0\1\2 not text")
    (root / "docs" / "notes.txt").write_bytes("Caf\xe9 menu: the daemon restarts nightly.\n".encode("latin-1"))
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


@pytest.fixture
def small_corpus(tmp_path) -> Path:
    """Three text files of the corpus: a Markdown guide, Python and Rust."""
    root = tmp_path / "orbit"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "src" / "scheduler.py").write_text(SCHEDULER)
    (root / "src" / "journal.rs").write_text(JOURNAL)
    return root


@pytest.fixture
def reports_corpus(tmp_path) -> Path:
    """corpus/: fifteen 2021 reports that answer "quarterly revenue report" well, twelve 2022 ones that answer it less
    well (none in its top 10), a Python file, a text file and a German report: what filters pick from."""
    root = tmp_path / "corpus"
    for year, count, text in [("2021", 15, "Quarterly revenue grew; revenue by quarter, revenue guidance and revenue "
                                           "recognition are the subject of this revenue report."),
                              ("2022", 12, "The board met in spring. Revenue is mentioned once among other business.")]:
        folder = root / "reports" / year
        folder.mkdir(parents=True)
        for n in range(count):
            (folder / f"r{n:02d}.md").write_text(f"# Report {year}-{n}\n\n{text} Item {n} of {year}.\n")
    (root / "src").mkdir()
    (root / "src" / "revenue.py").write_text('def revenue(quarter):\n    """Revenue of a quarter."""\n    return quarter * 2\n')
    (root / "notes.txt").write_text("Revenue notes: nothing to report.\n")
    (root / "bericht.md").write_text("# Bericht\n\nDer Umsatz wuchs im dritten Quartal deutlich, und der Vorstand ist "
                                     "mit dem Ergebnis der Abteilung sehr zufrieden, wie der Bericht zeigt.\n")
    return root


def run(*args, code=0) -> str:
    """The `localcr` command in this process: its output, after checking its exit code."""
    from localcr.cli import cli

    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def error_line(*args) -> str:
    """The one-line error of a `localcr` command that must fail with exit code 1, a runtime error's (click's usage
    errors exit 2, with its own lines: none of these)."""
    out = run(*args, code=1).strip()
    assert "Traceback" not in out
    line = out.splitlines()[-1]
    assert line.startswith("localcr: error: ")
    return line


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal PDF written by hand: one page per entry, each a list of text lines in Helvetica; a page
    with no lines is a grey box, a page with no text layer as a scan has."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        shown = b" ".join(b"(%s) '" % line.encode("latin-1") for line in lines)
        ops = b"BT /F1 11 Tf 72 720 Td 14 TL " + shown + b" ET" if lines else b"0.5 g 72 72 400 600 re f"
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(ops), ops))
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % len(objects))
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    if title:
        objects.append(b"<< /Title (%s) >>" % title.encode("latin-1"))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    info = b" /Info %d 0 R" % len(objects) if title else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


def saved(document) -> bytes:
    """A python-docx or python-pptx document as the bytes of its file."""
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


HOSTILE = """# Release notes

The <script>document.title = 'owned'</script> tag and <img src=x onerror="document.title='owned'"> must show
as text. \U0001f642 Version 2 adds quota alerts for every team.

## Changes in version 2

- alerts by mail when a team nears its limit
- a *faster* release page
"""


class FakeCardRunner:
    """Stands for the LLM in card writing (localcr.contexts.cards), for tests of the plumbing around it: reads the
    company off a report's cover (or the title line before it) in no time, and calls `before_card` (a test's hook: it searches mid-run, or raises
    KeyboardInterrupt as a kill would) before each card."""

    written: list[str] = []
    before_card = staticmethod(lambda company: None)

    def __init__(self, spec, **options):
        self.spec, self.n_ctx, self.is_chat, self.threads, self.parallel = spec, 4096, True, 1, 1
        self.last: list[int] = []  # the last prompt, whose start the next one reuses (as llama.cpp's KV cache)

    def tokenize(self, text: str, bos: bool = False) -> list[int]:
        return list(text.encode())

    def detokenize(self, tokens: list[int]) -> str:
        return bytes(tokens).decode(errors="ignore")

    def render(self, prefix_message: str, suffix_message: str, system: str = ""):
        return self.tokenize(prefix_message), self.tokenize(suffix_message)

    def complete(self, prefix, suffix, max_tokens, stops):
        prompt = prefix + suffix
        company = re.search(r"\n(?:Title: )?(.+?) Inc\.", self.detokenize(prompt)).group(1)
        FakeCardRunner.before_card(company)
        FakeCardRunner.written.append(company)
        reused, self.last = len(os.path.commonprefix([self.last, prompt])), prompt
        return SimpleNamespace(text=f"Subject: {company} Inc.\nKind: Annual report\nPeriod: fiscal year ended December 31, 2024",
                               finished=True, tokens=14, evaluated=len(prompt) - reused, reused=reused, prompt_seconds=0.01,
                               generate_seconds=0.01)

    def prompt_rate(self, tokens: list[int]) -> float:  # what measure_rates finds: 1,000 tokens/s
        return 1000.0

    def generation_rate(self, prefix: list[int], suffixes: list[list[int]], max_tokens: int = 48) -> float:
        return 1400.0  # a card's 14 tokens in 0.01 s

    def close(self) -> None:
        pass


@pytest.fixture
def fake_llm(monkeypatch):
    """Cards written by FakeCardRunner in this process (FakeCardRunner.written lists them in order)."""
    monkeypatch.setattr("localcr.llm.LlamaRunner", FakeCardRunner)
    monkeypatch.setattr(FakeCardRunner, "written", [])
    return FakeCardRunner


@dataclass
class Served:
    """A `localcr serve` process on a free loopback port, over an index of a small corpus."""

    url: str
    index: Path
    corpus: Path
    process: subprocess.Popen
    cache: Path
    token: str | None = None

    def request(self, method: str, path: str, body: bytes | dict | None = None, headers: dict | None = None):
        """(status, parsed JSON or text) of one HTTP request."""
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        headers = {"Content-Type": "application/json", **(headers or {})}
        if self.token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode("utf-8", "replace")


@contextmanager
def loopback_allowed():
    """For fixtures that start a server before any test runs (the per-test switch is not set yet)."""
    before, LOOPBACK["allowed"] = LOOPBACK["allowed"], True
    try:
        yield
    finally:
        LOOPBACK["allowed"] = before


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(index: Path, cache: Path, *, token: str | None = None, corpus: Path | None = None,
                 models: Path | None = None) -> Served:
    """`localcr serve` in its own process (the real command, sharing the run's instruction states:
    tests/shared_states.py), once its health endpoint answers."""
    from shared_states import localcr_command

    port = free_port()
    env = {**os.environ, "LOCALCR_CACHE_DIR": str(cache)}
    env.pop("LOCALCR_TOKEN", None)
    args = localcr_command(*(["--models", str(models)] if models else []),
                           "serve", "--index", str(index), "--port", str(port))
    if token:
        args += ["--token", token]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    served = Served(f"http://127.0.0.1:{port}", index, corpus or index, process, cache, token)
    deadline = time.monotonic() + 120
    with loopback_allowed():
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"localcr serve exited: {process.stderr.read()}")
            try:
                if served.request("GET", "/api/health")[0] == 200:
                    return served
            except OSError:
                time.sleep(0.3)
    process.kill()
    raise RuntimeError("localcr serve did not answer within 120 s")


def stop_server(served: Served) -> None:
    served.process.terminate()
    try:
        served.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        served.process.kill()


@dataclass
class Indexed:
    """An index built by the real `localcr index` in its own process, with the cache it used."""

    corpus: Path
    index: Path
    cache: Path


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Indexed:
    """The small corpus plus a document holding HTML and script tags, indexed (module-wide, for a server to load)."""
    root = tmp_path_factory.mktemp("served")
    corpus, index, cache = root / "orbit", root / "index", root / "cache"
    (corpus / "docs").mkdir(parents=True)
    (corpus / "src").mkdir()
    (corpus / "docs" / "guide.md").write_text(GUIDE)
    (corpus / "docs" / "release.md").write_text(HOSTILE)
    (corpus / "src" / "scheduler.py").write_text(SCHEDULER)
    build = subprocess.run([sys.executable, "-m", "localcr", "index", str(corpus), "--index", str(index),
                            "--contexts", "structural", "--chunk-tokens", "48", "-q"],
                           env={**os.environ, "LOCALCR_CACHE_DIR": str(cache)}, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return Indexed(corpus, index, cache)


@pytest.fixture(scope="module")
def served(indexed) -> Served:
    """`localcr serve` over the `indexed` corpus (module-wide: the server loads the embedder once)."""
    server = start_server(indexed.index, indexed.cache, corpus=indexed.corpus)
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def answerer(index):
    """One answerer (the registry's LLM, loaded once) for a module's `index` fixture: the ask tests share its model
    and its instruction's KV state."""
    from localcr.answers.reader import load_answerer

    answerer = load_answerer(index.registry)
    yield answerer
    answerer.close()


@contextlib.contextmanager
def headless_chromium(profile, host_rules: str = "MAP * ~NOTFOUND"):
    """Debian's Chromium under its chromedriver, headless and cut off from every host but what `host_rules` lets
    through (skipped, saying what to install, where either is missing): the browser tests' one way to start it."""
    import shutil
    import subprocess

    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    def binary(*names: str) -> str | None:
        return next((found for name in names if (found := shutil.which(name) or (
            f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None))), None)

    chromium, chromedriver = binary("chromium", "chromium-browser"), binary("chromedriver")
    if not (chromium and chromedriver):
        missing = " and ".join(name for name, found in (("chromium", chromium), ("chromedriver", chromedriver))
                               if not found)
        reason = (f"no {missing} on this machine: install the Debian packages chromium and chromium-driver "
                  "(./setup.sh --test)")
        print(reason)
        pytest.skip(reason)
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900",
                f"--user-data-dir={profile}",
                # nothing but this machine: no background requests, and no name resolves
                "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps",
                "--disable-domain-reliability", "--disable-client-side-phishing-detection",
                f"--host-resolver-rules={host_rules}"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium refuses to start its sandbox as root
    # The driver is given by path, so Selenium never runs Selenium Manager (selenium/webdriver/common/
    # driver_finder.py skips it when Service has a path); SE_OFFLINE keeps it from downloading if it ever did.
    service = Service(executable_path=chromedriver, log_output=subprocess.DEVNULL)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")
        with loopback_allowed():  # chromedriver is driven over loopback HTTP, before any test's switch is set
            driver = webdriver.Chrome(options=options, service=service)
    assert driver.service.path == chromedriver
    try:
        yield driver
    finally:
        with loopback_allowed():
            driver.quit()
