"""Readers run in worker processes, so that no file can take a run down.

A reader is code meeting hostile input (a C library parsing a crafted PDF can segfault, a pathological file
can make a parser loop or eat memory). Each file is read in a process of a pool with a time limit and a
memory limit: a crash, a hang or an exhausted limit costs that file only, which is skipped with the reason.
The pool uses every core the process may run on, which also makes reading a large corpus faster.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
from concurrent.futures import TimeoutError
from pathlib import Path
from typing import Iterator

from localcr.readers import Read, ReaderError

READ_TIMEOUT = 120.0  # seconds one file may take; plain text of hundreds of MB reads in a few


def read_files(files: list[tuple[Path, str]], timeout: float = READ_TIMEOUT) -> Iterator[tuple[Path, Read | str]]:
    """(path, what its reader read, or why the file is skipped) for each (path, reader name), in order."""
    if not files:
        return
    import pebble

    workers = min(len(files), len(os.sched_getaffinity(0)))
    context = multiprocessing.get_context("spawn")  # a fork would copy the threads of torch or llama.cpp
    with pebble.ProcessPool(max_workers=workers, initializer=_limit_memory, initargs=(_memory_limit(workers),),
                            context=context) as pool:
        futures = [pool.schedule(_read, args=(str(path), reader), timeout=timeout) for path, reader in files]
        for (path, _), future in zip(files, futures):
            try:
                yield path, future.result()
            except ReaderError as exc:
                yield path, str(exc)
            except TimeoutError:
                yield path, f"reading took longer than {timeout:.0f} s (stopped)"
            except pebble.ProcessExpired as exc:
                yield path, f"its reader crashed the worker process (exit code {exc.exitcode})"


def _memory_limit(workers: int) -> int:
    """Bytes of address space a worker may use: a quarter of the machine's memory shared by the workers,
    at least 1 GiB."""
    import psutil

    return max(1 << 30, psutil.virtual_memory().total // (4 * workers))


def _limit_memory(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _read(path: str, reader: str) -> Read:
    """Runs in a worker: the file's bytes through the named reader; every failure becomes a ReaderError."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ReaderError(f"unreadable ({exc.strerror})") from None
    except MemoryError:
        raise ReaderError("too large to read within the worker's memory limit") from None
    try:
        module, _, name = reader.partition(":")
        read = getattr(importlib.import_module(module), name)(data)
    except ReaderError:
        raise
    except MemoryError:
        raise ReaderError("its reader ran out of memory (the worker's limit)") from None
    except Exception as exc:  # a reader's bug on hostile input costs this file only
        detail = " ".join(str(exc).split())[:200]
        raise ReaderError(f"its reader failed ({type(exc).__name__}: {detail})") from None
    read.size = len(data)
    return read
