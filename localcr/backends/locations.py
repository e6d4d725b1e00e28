"""How an --index value says where the index lives (see localcr.backends): apart from the backends themselves, so
that the build (localcr.index), which the Milvus backend calls, can tell without importing them."""
from __future__ import annotations

from pathlib import Path

MILVUS_SCHEMES = ("milvus://", "milvus+https://", "milvus-lite:")


def is_milvus(location: str | Path) -> bool:
    """Whether an --index value names a Milvus collection rather than a local directory."""
    return str(location).startswith(MILVUS_SCHEMES)
