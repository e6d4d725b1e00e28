"""How many threads a model runtime (llama.cpp, ONNX Runtime, torch, numpy) computes on, apart from any runtime: an
embedder sizes its pool here without importing the LLM's module (localcr.llm), which a search never needs."""
from __future__ import annotations

import os


def default_threads() -> int:
    """CPU threads for a model runtime: the cores this process may run on (llama.cpp gains nothing from SMT
    siblings, and more threads than cores makes every thread wait)."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        available = os.cpu_count() or 1
    try:
        import psutil

        physical = psutil.cpu_count(logical=False) or available
    except ImportError:
        physical = available
    return max(1, min(available, physical))
