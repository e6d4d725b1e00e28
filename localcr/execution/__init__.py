"""Where the expensive per-document work of a build runs: LLM contexts and embeddings.

One interface, `Executor`, with two implementations:

* `local.LocalExecutor`: in this process, as localcr always did (the default).
* `ray.RayExecutor`: on Ray actors (`localcr index --ray auto|ADDRESS`). The driver (this process) keeps
  everything else: it reads, chunks, checks the caches, sends only the misses to the actors (whole documents
  per task, so an LLM evaluates a document once and writes all its chunks' contexts on it), writes what comes
  back to the caches (workers never touch a cache: on a cluster they have none) and builds the segment.

`open_executor(None)` is the local one; Ray is imported only when an address is given.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import numpy as np

    from localcr.contexts import ContextStats
    from localcr.documents import Chunk, Document
    from localcr.embeddings import Embedder
    from localcr.models import ModelSpec


class Executor:
    """Runs a build's LLM contexts and embeddings; results are identical wherever they run."""

    name = "executor"

    def write_contexts(self, docs: list[Document], chunks_by_doc: dict[str, list[Chunk]], spec: ModelSpec, *,
                       composition: str, progress: bool, log: Callable[[str], None]) -> ContextStats:
        """Give every chunk its LLM context (as localcr.contexts.write_llm_contexts: cached ones first,
        composed with the structural context, the structural one kept on a fallback)."""
        raise NotImplementedError

    def embed(self, model: Embedder, texts: list[str], progress=None) -> tuple[np.ndarray, int]:
        """The vectors of texts (from the embeddings cache where possible) and how many were computed."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the executor holds (actors, a Ray instance it started)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def open_executor(ray: str | None = None, **options) -> Executor:
    """This process (ray=None), or Ray: "auto" starts a local Ray instance, anything else is the address of a
    running cluster (host:port or ray://host:port). A Ray that is missing or unreachable is a LocalcrError."""
    if ray is None:
        from localcr.execution.local import LocalExecutor

        return LocalExecutor()
    from localcr.execution.ray import RayExecutor

    return RayExecutor(ray, **options)
