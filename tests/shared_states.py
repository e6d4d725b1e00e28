"""The run's one folder of the answers' fixed instructions' KV states (conftest.shared_instruction_states), in the test
process and in the `localcr` processes a test starts: `python tests/shared_states.py ARGS` is `python -m localcr ARGS`
with the states of the folder $LOCALCR_TEST_INSTRUCTION_STATES names restored, and those it evaluates stored there
(`conftest.start_server` and test_mcp's server start it so: each `localcr serve` and `localcr mcp` evaluated the
reader's, the route's and the table plans' instructions again in a cache of its own). Everything else the process
caches stays in its own LOCALCR_CACHE_DIR, as before."""
from __future__ import annotations

import os
import runpy
import sys
import threading
from pathlib import Path
from typing import Callable

# The folder, named by the controller for the whole run, where every test process keeps the KV states of the answers'
# fixed instructions (conftest.STATES_VARIABLE).
STATES_VARIABLE = "LOCALCR_TEST_INSTRUCTION_STATES"
LAUNCHER = Path(__file__).resolve()


def share_instruction_states(folder: str | Path) -> Callable[[], None]:
    """Send the "answers" store's KV prefix states (LlamaRunner.keep_prefix) to `folder`: keyed by model, build, n_ctx and
    tokens, a state restored is the one evaluating them wrote, so no answer changes. Returns what undoes it."""
    import localcr.cache as cache
    from localcr.llm import LlamaRunner

    keep, own_dir, inside = LlamaRunner.keep_prefix, cache.cache_dir, threading.local()

    def states_dir() -> Path:
        return Path(folder) if getattr(inside, "store", None) == "answers" else own_dir()

    def shared_keep(self, tokens, store, *args, **kwargs):
        inside.store = store
        try:
            return keep(self, tokens, store, *args, **kwargs)
        finally:
            inside.store = None

    cache.cache_dir, LlamaRunner.keep_prefix = states_dir, shared_keep

    def undo() -> None:
        cache.cache_dir, LlamaRunner.keep_prefix = own_dir, keep

    return undo


def localcr_command(*args: str) -> list[str]:
    """The command line of `localcr ARGS` in a process of its own that shares the run's instruction states."""
    return [sys.executable, str(LAUNCHER), *args]


if __name__ == "__main__":
    if sys.path and Path(sys.path[0]).resolve() == LAUNCHER.parent:
        sys.path[0] = os.getcwd()  # as `python -m localcr` runs: the working directory first, not tests/
    if os.environ.get(STATES_VARIABLE):
        share_instruction_states(os.environ[STATES_VARIABLE])
    sys.argv = ["localcr", *sys.argv[1:]]
    runpy.run_module("localcr", run_name="__main__", alter_sys=True)
