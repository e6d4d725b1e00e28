"""The interface of a model family (one module each: onnx, sbert, use): count and clip tokens, turn texts into
vectors. Its own module, so a backend and the package that loads it do not import each other."""
from __future__ import annotations

import numpy as np


class Backend:
    """What a model family provides to the Embedder."""

    dimension: int
    max_length: int  # tokens of one text the model reads (its own limit, if lower than the registry's)
    added_tokens: int  # special tokens the model puts around every text

    def count_tokens(self, texts: list[str]) -> list[int]:
        raise NotImplementedError

    def clip(self, text: str, n: int) -> str:
        """The text cut to its first n tokens."""
        raise NotImplementedError

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError
