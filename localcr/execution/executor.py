"""The interface every place of execution implements: what a build hands over (LLM contexts, embeddings) and
gets back, identical wherever it runs."""
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
    spreads_documents = False  # whether one write_contexts call shares its documents among several workers

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
