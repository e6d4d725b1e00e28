"""Cross-encoder reranking: a model reads the query and a candidate chunk together and scores how well one answers
the other. Two runtimes sit behind one interface:

* a GGUF file (`path = "....gguf"`, an Ollama or LM Studio model) runs in llama.cpp with rank pooling
  (localcr.rerankers.llama): no torch, so a `localcr search --rerank` process starts in well under a second;
* a Hugging Face model directory (BAAI/bge-reranker-base and its kin) runs in FlagEmbedding on torch
  (localcr.rerankers.flag).

Which one is decided by what `models.toml` points at, a file or a directory. Each runtime is imported only when a
reranker is built, so commands that do not rerank pay for neither.
"""
from __future__ import annotations

from localcr.models import Registry
from localcr.rerankers.base import Reranker, one_line, query_budget

__all__ = ["Reranker", "load_reranker", "one_line", "query_budget"]


def load_reranker(registry: Registry, name: str | None = None) -> Reranker:
    """The named reranker, or the registry's default one; a LocalcrError saying how to add one if none is configured."""
    spec = registry.require("reranker", name)
    path = spec.resolve()  # LocalcrError for a missing file or directory, a hub id not in the cache, no config.json
    if path.is_file():
        from localcr.rerankers.llama import LlamaReranker

        return LlamaReranker(spec, path)
    from localcr.rerankers.flag import FlagEmbeddingReranker

    return FlagEmbeddingReranker(spec, path)
