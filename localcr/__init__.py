"""localcr: Contextual Retrieval that runs fully offline on one CPU.

    import localcr

    localcr.build_index(["docs/"], "my-index", localcr.load_registry())
    for hit in localcr.open_index("my-index").search("how are retries configured?", k=5):
        print(hit.path, hit.score, hit.text)

Importing localcr switches Hugging Face hub access off before anything can import
transformers or sentence-transformers: models load from local files or not at all.
The API's names (and `__version__`, read from the installed package's metadata) are imported when first used, so
`import localcr` itself stays fast: a `localcr search` imports only what it runs.
"""
import os

for _flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_flag] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# OpenBLAS, numpy's BLAS, starts a thread per core when numpy is imported, and each spins for work for about 0.1 s
# (2^28 cycles) before it sleeps: a search does no BLAS work, and on a busy 2-core machine that thread took the
# search's core (a hybrid `localcr search` process over 5 files 0.337 -> 0.273 s, BENCHMARKS.md). Its idle threads
# sleep at once instead (2^4 cycles, the least it takes); a matrix product still runs on all of them.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from importlib import import_module as _import_module  # noqa: E402

from localcr.errors import LocalcrError  # noqa: E402

_LAZY = {
    "build_index": "localcr.index",
    "open_index": "localcr.search",
    "Hit": "localcr.search",
    "load_registry": "localcr.models",
}
__all__ = ["build_index", "open_index", "load_registry", "Hit", "LocalcrError", "__version__"]


def __getattr__(name: str):
    if name == "__version__":  # importing importlib.metadata takes some 35 ms, which a search has no need of
        from importlib.metadata import version

        globals()[name] = version("localcr")
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'localcr' has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
