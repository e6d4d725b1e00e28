"""Where expensive results live between runs: LLM contexts, embeddings, measured LLM speeds and synthetic
questions, one diskcache store each.

The cache is shared by every index on the machine (`$LOCALCR_CACHE_DIR`, default ~/.cache/localcr),
so re-indexing, resuming a killed run or building a second index of the same text pays nothing twice.
Keys always include the model's fingerprint, so changing a model never serves stale results; every entry
also carries a readable tag that names its model, by which `localcr cache` lists and prunes.

Everything cached is work that can be done again, so a damaged cache never stops a run: a store that
cannot be opened or read is moved aside and an empty one takes its place, an entry that cannot be read is
a miss, and one line on stderr says what will be recomputed. Each store is kept under a size limit
($LOCALCR_CACHE_LIMIT, default 20 GiB) by evicting its least recently used entries.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import sqlite3
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, TypeVar

import diskcache

from localcr.errors import ArgumentError, LocalcrError

# Every store, with what its loss costs: its entries are made again when next needed.
STORES = {
    "contexts": "cached LLM contexts will be generated again",
    "embeddings": "cached embeddings will be computed again",
    "rates": "the LLM and embedder speeds measured on this machine will be measured again",
    "questions": "cached synthetic questions will be generated again",
    "expansions": "cached query expansions will be generated again",
    "answers": "cached answers will be written again",
    "navigation": "cached outline navigations (and outlines' KV states) will be computed again",
    "ocr": "cached OCR text of scanned pages will be recognised again",
}
DEFAULT_LIMIT = 20 * 2**30
UNTAGGED = "untagged (older localcr)"
# Entries per transaction: batching makes reads and writes several times faster, and a short transaction
# does not hold up another localcr writing the same store.
BATCH = 1000
_SIZE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_AGE_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

T = TypeVar("T")


def cache_dir() -> Path:
    return Path(os.environ.get("LOCALCR_CACHE_DIR") or Path.home() / ".cache" / "localcr")


def cache_limit() -> int:
    """The size each store is kept under: $LOCALCR_CACHE_LIMIT ("50GiB", "500M", bytes; units of 1024), else 20 GiB."""
    text = os.environ.get("LOCALCR_CACHE_LIMIT", "").strip()
    if not text:
        return DEFAULT_LIMIT
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", text, re.IGNORECASE)
    if not match or float(match[1]) == 0:
        raise LocalcrError(f"LOCALCR_CACHE_LIMIT={text!r} is not a size: write e.g. 20GiB, 500MB or a number of bytes")
    return int(float(match[1]) * _SIZE_UNITS[match[2].lower()])


def key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def tag(model: str, *details: str) -> str:
    """The label stored with an entry: the model's name (what pruning by model matches), then what tells
    versions of its results apart, e.g. "qwen (fingerprint 1f2e..., prompt marked-2026.1)"."""
    return f"{model} ({', '.join(details)})" if details else model


def model_of(label: str) -> str:
    return label.partition(" (")[0]


def parse_age(text: str) -> float:
    """Seconds in an age such as "30d", "12h", "2w" or "90m"."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text)
    if not match:
        raise ArgumentError(("older_than", text), " is not an age: write e.g. 30d, 12h, 2w or 90m")
    return float(match[1]) * _AGE_UNITS[match[2]]


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file itself is broken (not a database, or corrupt), as opposed to busy or unreachable."""
    return (exc.sqlite_errorname or "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


class _CheckedDisk(diskcache.Disk):
    """Reads the entries of one store: an entry that cannot be read (its value file gone or unreadable, its
    bytes garbled) is a miss, said once per store, and is replaced when its result is next stored."""

    def __init__(self, directory, **settings):
        super().__init__(directory, **settings)
        self.store_dir = Path(directory)  # not `store`: Disk.store is the method that writes values
        self.warned = False

    def fetch(self, mode, filename, value, read):
        try:
            return super().fetch(mode, filename, value, read)
        except Exception as exc:  # unpickling garbage raises almost any type; every one means the same here
            if not self.warned:
                self.warned = True
                _warn(f"the cache store {self.store_dir} has an unreadable entry ({type(exc).__name__}: {exc}); "
                      f"treated as missing, it will be computed again")
            raise OSError("unreadable cache entry") from exc  # diskcache reads an OSError as a miss


@dataclass(frozen=True)
class Entries:
    """The entries of one store that carry one tag: how many, their size, when the first and last were written."""

    store: str
    tag: str | None  # None: written before entries were tagged
    count: int
    size: int  # bytes of keys and values, without the database's own overhead
    oldest: float
    newest: float

    @property
    def model(self) -> str | None:
        return model_of(self.tag) if self.tag else None

    @property
    def label(self) -> str:
        return self.tag or UNTAGGED


@dataclass(frozen=True)
class StoreUsage:
    name: str
    disk_bytes: int
    entries: list[Entries]

    @property
    def count(self) -> int:
        return sum(e.count for e in self.entries)


class Store:
    """One named store under the cache directory, opened on first use, that heals itself when damaged.

    Every operation that finds the store's database broken moves the store aside (renamed next to itself
    with the UTC time), says so in one line on stderr, and runs again on an empty store: callers only ever
    see a miss. Disk space is bounded by evicting the least recently used entries past `cache_limit()`."""

    def __init__(self, name: str):
        if name not in STORES:
            raise ValueError(f"unknown cache store {name!r}: name it in STORES, so that `localcr cache` sees it")
        self.name = name
        self.path = cache_dir() / name
        self._cache: diskcache.Cache | None = None

    def get(self, key: str):
        """The value stored under key, or None when there is none or it cannot be read."""
        return self._use(lambda cache: cache.get(key))

    def get_many(self, keys: Iterable[str]) -> list:
        """The values stored under keys (None where missing), many per transaction: a read of the LRU policy is a write."""
        values = []
        for batch in _batches(list(keys)):
            values += self._use(lambda cache: [cache.get(k) for k in batch], transaction=True)
        return values

    def set(self, key: str, value, tag: str) -> None:
        """Store value under key, labelled with `tag` (see `tag()`); committed at once, so a kill loses nothing."""
        self._use(lambda cache: cache.set(key, value, tag=tag))

    def set_many(self, items: Iterable[tuple[str, object]], tag: str) -> None:
        """Store (key, value) pairs, many per transaction: several times faster than one by one."""
        for batch in _batches(list(items)):
            self._use(lambda cache: [cache.set(k, v, tag=tag) for k, v in batch], transaction=True)

    def entries(self, before: float = math.inf) -> list[Entries]:
        """What the store holds by tag, counting only entries written before `before` (a time.time())."""
        rows = self._use(lambda cache: cache._sql(  # diskcache has no public query; its Cache table is stable
            "SELECT tag, COUNT(*), SUM(size + LENGTH(key) + IFNULL(LENGTH(value), 0)), MIN(store_time), MAX(store_time)"
            " FROM Cache WHERE store_time < ? GROUP BY tag ORDER BY tag IS NULL, tag", (before,)).fetchall())
        return [Entries(self.name, *row) for row in rows]

    def delete(self, groups: Iterable[Entries], before: float = math.inf) -> None:
        """Delete the entries of these groups (as `entries` returned them) written before `before`."""
        for group in groups:
            after = 0
            while rows := self._use(lambda cache: cache._sql(
                    "SELECT rowid, key FROM Cache WHERE tag IS ? AND store_time < ? AND rowid > ? ORDER BY rowid LIMIT ?",
                    (group.tag, before, after, BATCH)).fetchall()):
                self._use(lambda cache: [cache.delete(k) for _, k in rows], transaction=True)
                after = rows[-1][0]

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _use(self, action: Callable[[diskcache.Cache], T], transaction: bool = False) -> T:
        """action on the open store (in one transaction if asked); if the store turns out damaged, action runs
        again on an empty one that replaces it."""
        for attempt in (1, 2):
            try:
                if self._cache is None:
                    self._cache = diskcache.Cache(str(self.path), disk=_CheckedDisk, size_limit=cache_limit(),
                                                  eviction_policy="least-recently-used")
                if not transaction:
                    return action(self._cache)
                with self._cache.transact():
                    return action(self._cache)
            except sqlite3.DatabaseError as exc:
                if attempt == 2 or not _is_damage(exc):
                    raise
                self._set_aside(exc)

    def _set_aside(self, exc: sqlite3.Error) -> None:
        """Rename the damaged store next to itself (kept for inspection) so that the next use starts an empty one."""
        self.close()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        aside, n = self.path.with_name(f"{self.name}.damaged-{stamp}"), 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.name}.damaged-{stamp}-{n}")
        try:
            self.path.rename(aside)
        except OSError as error:
            raise LocalcrError(f"the cache store {self.path} is damaged ({exc}) and cannot be moved aside "
                               f"({error.strerror}): delete it") from None
        _warn(f"the cache store {self.path} was damaged ({exc}); moved it to {aside.name} and started an empty one: {STORES[self.name]}")


def _batches(items: list[T]) -> Iterable[list[T]]:
    for start in range(0, len(items), BATCH):
        yield items[start:start + BATCH]


def open_cache(name: str) -> Store:
    """The store `name` (one of STORES); nothing touches the disk before its first use."""
    return Store(name)


def _present() -> list[str]:
    """The stores that exist on disk (listing or pruning creates none)."""
    return [name for name in STORES if (cache_dir() / name).is_dir()]


def usage() -> list[StoreUsage]:
    """What each store holds, by tag, and its size on disk."""
    from localcr.store import disk_size

    result = []
    for name in _present():
        with Store(name) as store:
            entries = store.entries()
        result.append(StoreUsage(name, disk_size(store.path), entries))
    return result


def damaged_stores() -> list[Path]:
    """Stores moved aside because they were damaged: nothing reads them; they are kept until deleted by hand."""
    return sorted(cache_dir().glob("*.damaged-*"))


def prune(model: str | None = None, older_than: str | None = None, *, dry_run: bool = False) -> list[Entries]:
    """Delete the entries of `model` (its name as tags show it) and/or those written more than `older_than`
    ago ("30d", "12h"); with both, the entries that match both. Returns what was (with dry_run: would be)
    deleted, by store and tag."""
    if model is None and older_than is None:
        raise ArgumentError("name what to prune: ", ("model", model), " or ", ("older_than", older_than))
    before = time.time() - parse_age(older_than) if older_than is not None else math.inf
    pruned = []
    for name in _present():
        with Store(name) as store:
            chosen = [e for e in store.entries(before) if model is None or e.model == model]
            if not dry_run:
                store.delete(chosen, before)
        pruned += chosen
    return pruned
