"""sentence-transformers models (MiniLM, E5, BGE ...) on torch: a model directory, its own tokenizer, the CPU.

The reference the ONNX Runtime path (`onnx`) is checked against, and the runtime of models its export does not
cover; importing sentence-transformers takes seconds, so this module is imported only to embed with it."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from localcr.embeddings.backend import Backend
from localcr.errors import LocalcrError
from localcr.models import ModelSpec


class SentenceTransformersBackend(Backend):
    added_tokens = 2  # [CLS] and [SEP]

    def __init__(self, spec: ModelSpec, path: Path, threads: int | None = None, purpose: str = "build"):
        import torch  # slow imports, seconds: only when embedding with this runtime
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        from localcr.threads import default_threads

        torch.set_num_threads(threads or default_threads())
        transformers_logging.set_verbosity_error()  # length warnings are expected: windows handle long text
        transformers_logging.disable_progress_bar()
        try:
            self.model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises many types; the user needs one line
            raise LocalcrError(f"{spec.where}: cannot load the embedder from {path} ({type(exc).__name__}: {exc})") from None
        self.spec = spec
        self.max_length = min(spec.max_length, self.model.max_seq_length or spec.max_length)
        self.model.max_seq_length = self.max_length
        self.tokenizer = self.model.tokenizer
        self.dimension = self.model.get_embedding_dimension()

    def count_tokens(self, texts: list[str]) -> list[int]:
        encoded = self.tokenizer(texts, add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def clip(self, text: str, n: int) -> str:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"][:n]
        return self.tokenizer.decode(ids)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.spec.batch_size, normalize_embeddings=self.spec.normalize,
                                 convert_to_numpy=True, show_progress_bar=False)
