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

from localcr.readers import READERS, Read, ReaderError

READ_TIMEOUT = 120.0  # seconds a batch of files may take; plain text of hundreds of MB reads in a few
# Files go to the workers in batches (a task per file costs more than reading a small file); a batch that
# crashes or hangs its worker is read again one file per task, to find the file at fault.
BATCH_FILES = 64
BATCH_BYTES = 4 << 20
# A scan's pages are recognised by OCR, seconds each: a batch gets this many more seconds per MiB of PDFs and images
# (a bi-level scan compresses to 30-50 KB a page; Tesseract itself is stopped after ocr.PAGE_TIMEOUT on one page).
OCR_SECONDS_PER_MIB = 300
_OCR_READERS = (READERS["pdf"], READERS["image"])


def read_files(files: list[tuple[Path, str]], timeout: float = READ_TIMEOUT) -> Iterator[tuple[Path, Read | str]]:
    """(path, what its reader read, or why the file is skipped) for each (path, reader name), in order."""
    if not files:
        return
    import pebble

    batches = _batches(files)
    workers = min(len(batches), len(os.sched_getaffinity(0)))
    context = multiprocessing.get_context("spawn")  # a fork would copy the threads of torch or llama.cpp
    with pebble.ProcessPool(max_workers=workers, initializer=_limit_memory, initargs=(_memory_limit(workers),),
                            context=context) as pool:
        def schedule(batch):
            limit = _time_limit(batch, timeout)
            return pool.schedule(_read_batch, args=([(str(path), reader) for path, reader in batch],), timeout=limit), limit

        futures = [(batch, *schedule(batch)) for batch in batches]
        for batch, future, limit in futures:
            outcome = _outcome(future, limit)
            if isinstance(outcome, str) and len(batch) > 1:
                singles = [schedule([file]) for file in batch]
                outcomes = [_outcome(single, single_limit) for single, single_limit in singles]
                yield from ((path, o if isinstance(o, str) else o[0]) for (path, _), o in zip(batch, outcomes))
            else:
                yield from zip((path for path, _ in batch), [outcome] if isinstance(outcome, str) else outcome)


def _outcome(future, timeout: float) -> list[Read | str] | str:
    """A batch's results, or why its worker gave none (which, for a batch of one, is why its file is skipped)."""
    import pebble

    try:
        return future.result()
    except TimeoutError:
        return f"reading took longer than {timeout:.0f} s (stopped)"
    except pebble.ProcessExpired as exc:
        return f"its reader crashed the worker process (exit code {exc.exitcode})"


def _time_limit(batch: list[tuple[Path, str]], timeout: float) -> float:
    """The seconds a batch may take: `timeout`, and time for OCR by the bytes of its PDFs and images."""
    return timeout + OCR_SECONDS_PER_MIB * sum(_size(path) for path, reader in batch if reader in _OCR_READERS) / (1 << 20)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # the worker will say why it cannot be read


def _batches(files: list[tuple[Path, str]]) -> list[list[tuple[Path, str]]]:
    batches, size = [[]], 0
    for file in files:
        nbytes = _size(file[0])
        if batches[-1] and (len(batches[-1]) >= BATCH_FILES or size + nbytes > BATCH_BYTES):
            batches.append([])
            size = 0
        batches[-1].append(file)
        size += nbytes
    return batches


def _memory_limit(workers: int) -> int:
    """Bytes of address space a worker may use: a quarter of the machine's memory shared by the workers,
    at least 1 GiB."""
    import psutil

    return max(1 << 30, psutil.virtual_memory().total // (4 * workers))


def _limit_memory(limit: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _read_batch(files: list[tuple[str, str]]) -> list[Read | str]:
    """Runs in a worker: each file's Read, or the reason it is skipped."""
    outcomes: list[Read | str] = []
    for path, reader in files:
        try:
            outcomes.append(_read(path, reader))
        except ReaderError as exc:
            outcomes.append(str(exc))
    return outcomes


def _read(path: str, reader: str) -> Read:
    """Runs in a worker: the file's bytes through the named reader; every failure becomes a ReaderError."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ReaderError(f"unreadable ({exc.strerror})") from None
    except MemoryError:
        raise ReaderError("too large to read within the worker's memory limit") from None
    read = read_with(reader, data)
    read.size = len(data)
    return read


def read_with(reader: str, data: bytes) -> Read:
    """Bytes through the named reader, in this process (a worker's: a file's, or a part of one such as a
    message's attachment); every failure becomes a ReaderError."""
    try:
        module, _, name = reader.partition(":")
        return getattr(importlib.import_module(module), name)(data)
    except ReaderError:
        raise
    except MemoryError:
        raise ReaderError("its reader ran out of memory (the worker's limit)") from None
    except Exception as exc:  # a reader's bug on hostile input costs this file only
        detail = " ".join(str(exc).split())[:200]
        raise ReaderError(f"its reader failed ({type(exc).__name__}: {detail})") from None
