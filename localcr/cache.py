"""Where expensive results live between runs: LLM contexts and embeddings, in diskcache stores.

The cache is shared by every index on the machine (`$LOCALCR_CACHE_DIR`, default ~/.cache/localcr),
so re-indexing, resuming a killed run or building a second index of the same text pays nothing twice.
Keys always include the model's fingerprint, so changing a model never serves stale results.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import diskcache


def cache_dir() -> Path:
    return Path(os.environ.get("LOCALCR_CACHE_DIR") or Path.home() / ".cache" / "localcr")


def open_cache(name: str) -> diskcache.Cache:
    """A named store under the cache directory; diskcache commits every write at once, so a kill loses nothing."""
    return diskcache.Cache(str(cache_dir() / name), size_limit=2**36, eviction_policy="none")


def key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
