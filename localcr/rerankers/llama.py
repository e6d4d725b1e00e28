"""A GGUF reranker run by llama.cpp with rank pooling: no torch, no FlagEmbedding.

GGUF cross-encoders (bge-reranker-v2-m3, jina-reranker conversions) carry their classification head as `cls` /
`cls.output` tensors, which llama.cpp applies to the [CLS] position when the context pools by rank; conversions
of LLM rerankers (Qwen3-Reranker) carry a `rerank` prompt template instead, which is filled in here as llama.cpp's
server fills it. Truncation follows the FlagEmbedding path: the query keeps at most 3/4 of `max_length` tokens and
the passage fills the rest.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from localcr.errors import LocalcrError
from localcr.gguf_file import read_gguf_header
from localcr.llm import RankRunner
from localcr.models import ModelSpec
from localcr.rerankers.base import Reranker, query_budget


class LlamaReranker(Reranker):
    """A GGUF reranker file, scored by llama.cpp; scores are the classification head's raw output."""

    def __init__(self, spec: ModelSpec, path: Path):
        self.spec, self.path = spec, path
        header = read_gguf_header(path)
        if not (header.has_classifier or "tokenizer.chat_template.rerank" in header.metadata):
            raise LocalcrError(
                f"{spec.where} {str(path)!r} is a GGUF {header.architecture or 'model'} without a classification head "
                "or rerank template, so it cannot score query-passage pairs: a GGUF reranker is a converted "
                "cross-encoder such as bge-reranker-v2-m3"
            )
        # One call holds at most max_length tokens: short pairs share a call, but an encoder's attention (and its
        # mask) spans the whole call, so a call costs the square of its tokens, and wider calls were slower here
        # (20 pairs of 300 tokens, tiny model, one core: 337 ms in calls of 512 tokens, 1,492 ms in calls of 2,048).
        self.runner = RankRunner(spec, path, batch_size=spec.batch_size, batch_tokens=spec.max_length)
        self.batch_size = spec.batch_size
        self.max_length = min(spec.max_length, self.runner.n_ctx_train or spec.max_length)
        self._template: tuple[list[int], list[int], list[int]] | None = None
        if self.runner.template is not None:  # "...{query}...{document}...": the tokens around the two
            head, _, tail = self.runner.template.partition("{document}")
            before, _, between = head.partition("{query}")
            self._template = tuple(self.runner.tokenize(part, special=True) for part in (before, between, tail))
            overhead = sum(map(len, self._template))
        else:
            overhead = self.runner.pair_overhead
        self.query_max_length = query_budget(self.max_length, overhead)
        self._overhead = overhead
        if self.query_max_length < 1:
            raise LocalcrError(f"{spec.where} max_length = {spec.max_length} is too small: use at least 16")

    def sequences(self, query: str, passages: Sequence[str]) -> list[list[int]]:
        """The token sequence of each query-passage pair, cut to max_length (the passage's tail goes first)."""
        runner = self.runner
        q = runner.tokenize(query)[: self.query_max_length]
        room = self.max_length - self._overhead - len(q)
        if self._template is None:
            return [runner.pair(q, runner.tokenize(p)[:room]) for p in passages]
        before, between, tail = self._template
        return [before + q + between + runner.tokenize(p)[:room] + tail for p in passages]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        return self.runner.score(self.sequences(query, passages))
