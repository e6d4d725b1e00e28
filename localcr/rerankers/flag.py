"""A BGE-style reranker directory, loaded through FlagEmbedding on torch, scores query-chunk pairs.

FlagEmbedding is imported only when such a reranker is built (its import takes seconds). The model loads from its
local directory only (`import localcr` has switched the model hub off).

Scoring follows `FlagReranker.compute_score` (the query keeps at most 3/4 of `max_length` word pieces, the
chunk fills the rest, raw logits are the scores) but runs its own batch loop: the library's loop first scores
the longest batch once more to probe GPU memory, retries forever on some errors, and draws two progress bars per
call, none of which suits scoring ~150 candidates per query on a CPU. tests/test_rerank.py checks that both give
the same scores.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from localcr.errors import LocalcrError
from localcr.models import ModelSpec
from localcr.rerankers.base import Reranker, one_line, query_budget

# Position-embedding tables of these model types reserve padding_idx + 1 = 2 slots (RoBERTa family).
_OFFSET_POSITIONS = {"roberta": 2, "xlm-roberta": 2, "camembert": 2, "xlm-roberta-xl": 2}


class FlagEmbeddingReranker(Reranker):
    """A Hugging Face cross-encoder directory run by FlagEmbedding's loader and torch; scores are raw logits."""

    def __init__(self, spec: ModelSpec, path: Path):
        self.spec, self.path = spec, path
        _check_config(spec, self.path)
        try:
            import torch
            from FlagEmbedding import FlagReranker
        except ImportError as exc:  # pragma: no cover - setup.sh installs both
            raise LocalcrError(f"reranking needs FlagEmbedding and torch ({one_line(exc)}): run ./setup.sh") from None
        from transformers.utils import logging as transformers_logging

        # as quiet as when the torch embedder, loaded first, set this for both: no "Loading weights" bar in the
        # output, no length warnings (candidates are cut to max_length on purpose)
        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()

        self.device = "cuda:0" if spec.fp16 and torch.cuda.is_available() else "cpu"
        self.fp16 = self.device != "cpu"  # half precision only helps (and only works well) on a GPU
        try:
            flag = FlagReranker(
                str(self.path),
                use_fp16=self.fp16,
                devices=self.device,
                batch_size=spec.batch_size,
                max_length=spec.max_length,
                normalize=False,
            )
        except Exception as exc:  # noqa: BLE001 - anything the loaders raise means "not a usable reranker"
            raise LocalcrError(
                f"{spec.where} {str(self.path)!r} cannot be loaded as a cross-encoder reranker ({one_line(exc)}): "
                "it must hold a complete Hugging Face model (config.json, weights, tokenizer files)"
            ) from None
        self._flag = flag  # kept so tests (and callers who want it) can reach FlagEmbedding's own compute_score
        self.tokenizer = flag.tokenizer
        self.model = flag.model
        if self.model.config.num_labels != 1:
            raise LocalcrError(
                f"{spec.where} {str(self.path)!r} is a classifier with {self.model.config.num_labels} labels, "
                "not a reranker (a cross-encoder reranker has exactly one output score)"
            )
        self.model = (self.model.half() if self.fp16 else self.model.float()).to(self.device).eval()
        self._torch = torch

        self.max_length = min(spec.max_length, _model_limit(self.model.config, self.tokenizer))
        specials = self.tokenizer.num_special_tokens_to_add(pair=True)
        self.query_max_length = query_budget(self.max_length, specials)
        if self.query_max_length < 1:
            raise LocalcrError(f"{spec.where} max_length = {spec.max_length} is too small: use at least 16")
        self.batch_size = spec.batch_size

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in the passages' order; query + passage are cut to `max_length` word pieces."""
        if not passages:
            return []
        tok = self.tokenizer
        q_ids = tok(query, add_special_tokens=False, truncation=True, max_length=self.query_max_length)["input_ids"]
        if len(q_ids) >= self.query_max_length:  # possibly cut: use the words that were kept, as FlagEmbedding does
            query = tok.decode(q_ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        encoded = tok(
            [query] * len(passages),
            list(passages),
            truncation="only_second",
            max_length=self.max_length,
            padding=False,
        )
        rows = [{key: encoded[key][i] for key in encoded.keys()} for i in range(len(passages))]
        # Longest first, so each batch pads little.
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i]["input_ids"]))
        scores = [0.0] * len(rows)
        torch = self._torch
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch_idx = order[start : start + self.batch_size]
                batch = [rows[i] for i in batch_idx]
                inputs = tok.pad({key: [row[key] for row in batch] for key in batch[0]}, padding=True, return_tensors="pt")
                logits = self.model(**inputs.to(self.device), return_dict=True).logits.view(-1).float()
                for i, value in zip(batch_idx, logits.cpu().tolist()):
                    scores[i] = value
        return scores


def _check_config(spec: ModelSpec, path: Path) -> None:
    """Refuse, before the slow load, directories that hold some other kind of model."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LocalcrError(f"{spec.where} {str(path / 'config.json')!r} is not readable JSON ({one_line(exc)})") from None
    if not isinstance(config, dict):
        raise LocalcrError(f"{spec.where} {str(path / 'config.json')!r} is not a model configuration")
    architectures = config.get("architectures") or []
    if architectures and not any(str(a).endswith("ForSequenceClassification") for a in architectures):
        raise LocalcrError(
            f"{spec.where} {str(path)!r} holds a {', '.join(map(str, architectures))} model, not a cross-encoder: "
            "a reranker directory holds a ...ForSequenceClassification model such as BAAI/bge-reranker-base "
            "(LLM-based rerankers such as bge-reranker-v2-gemma are not supported)"
        )


def _model_limit(config: Any, tokenizer: Any) -> int:
    """The most word pieces the model can read at once."""
    limits = []
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions - _OFFSET_POSITIONS.get(getattr(config, "model_type", ""), 0))
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    return min(limits) if limits else 512
