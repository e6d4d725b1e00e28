"""How many threads a model runtime (llama.cpp, ONNX Runtime, torch, numpy) computes on, apart from any runtime: an
embedder sizes its pool here without importing the LLM's module (localcr.llm), which a search never needs."""
from __future__ import annotations

import os
from pathlib import Path


def default_threads() -> int:
    """CPU threads for a model runtime: the physical cores this process may run on (llama.cpp gains nothing from SMT
    siblings, and more threads than cores makes every thread wait)."""
    try:
        allowed = os.sched_getaffinity(0)
    except AttributeError:  # not Linux
        allowed = set(range(os.cpu_count() or 1))
    cores = _cores_of(allowed)
    if cores is None:
        try:
            import psutil

            cores = min(len(allowed), psutil.cpu_count(logical=False) or len(allowed))
        except ImportError:
            cores = len(allowed)
    return max(1, cores)


def _cores_of(cpus: set[int]) -> int | None:
    """How many physical cores these logical CPUs are on, from Linux's sysfs (each CPU's list of the CPUs on its
    core), None where it does not say; read here rather than through psutil, whose import is some 12 ms of a search
    process's start."""
    try:
        return len({Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list").read_text().strip() for cpu in cpus})
    except OSError:
        return None
