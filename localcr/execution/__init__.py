"""Where the expensive per-document work of a build runs: LLM contexts and embeddings.

One interface, `executor.Executor`, with two implementations:

* `local.LocalExecutor`: in this process, as localcr always did (the default).
* `ray.RayExecutor`: on Ray actors (`localcr index --ray auto|ADDRESS`). The driver (this process) keeps
  everything else: it reads, chunks, checks the caches, sends only the misses to the actors (whole documents
  per task, so an LLM evaluates a document once and writes all its chunks' contexts on it), writes what comes
  back to the caches (workers never touch a cache: on a cluster they have none) and builds the segment.

`open_executor(None)` is the local one; Ray is imported only when an address is given.
"""
from __future__ import annotations

from localcr.execution.executor import Executor

__all__ = ["Executor", "open_executor"]


def open_executor(ray: str | None = None, **options) -> Executor:
    """This process (ray=None), or Ray: "auto" starts a local Ray instance, anything else is the address of a
    running cluster (host:port or ray://host:port). A Ray that is missing or unreachable is a LocalcrError."""
    if ray is None:
        from localcr.execution.local import LocalExecutor

        return LocalExecutor()
    from localcr.execution.ray import RayExecutor

    return RayExecutor(ray, **options)
