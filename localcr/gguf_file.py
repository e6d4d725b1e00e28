"""What a GGUF file says about itself (architecture, pooling, tensor names), read from its header without loading it.

`localcr models --discover` sorts the GGUF files it finds by role from this, and a GGUF reranker is checked before
llama.cpp loads it: reading a header takes milliseconds, loading a model seconds. Arrays (the vocabulary) are
skipped, except for their length.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from localcr.errors import LocalcrError

# GGUF value types: struct format of the fixed-size ones; 8 is a string, 9 an array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# llama.cpp's `enum llama_pooling_type`: what an encoder's output is; RANK means a classification head scores pairs.
POOLING_RANK = 4
# Encoder architectures llama.cpp runs: embedders, or rerankers when they carry a classification head.
ENCODER_ARCHITECTURES = {"bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2",
                         "jina-bert-v3", "eurobert", "t5encoder", "gemma-embedding"}


@dataclass(frozen=True)
class GGUFHeader:
    metadata: dict[str, Any]  # scalars and strings as values; an array as ("array", length)
    tensors: frozenset[str]

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def pooling(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.pooling_type")
        return value if isinstance(value, int) else None

    @property
    def has_classifier(self) -> bool:
        """A classification head that llama.cpp's rank pooling applies (cross-encoders; Qwen3-Reranker conversions)."""
        return bool({"cls.weight", "cls.output.weight"} & self.tensors)

    @property
    def role(self) -> str:
        """llm, embedder or reranker, as far as the header tells."""
        if self.pooling == POOLING_RANK or self.has_classifier or "tokenizer.chat_template.rerank" in self.metadata:
            return "reranker"
        if self.architecture in ENCODER_ARCHITECTURES or self.pooling not in (None, 0):
            return "embedder"
        return "llm"


def read_gguf_header(path: str | Path) -> GGUFHeader:
    """The header of a GGUF file; a LocalcrError (one line) for anything that is not a complete GGUF header."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"GGUF":
                raise LocalcrError(f"{path} is not a GGUF file (no GGUF magic)")
            version, n_tensors, n_kv = _unpack(f, "<IQQ")
            if version not in (2, 3):
                raise LocalcrError(f"{path} is GGUF version {version}; llama.cpp reads versions 2 and 3")
            metadata = {}
            for _ in range(n_kv):
                key = _string(f)
                metadata[key] = _value(f, _unpack(f, "<I")[0])
            tensors = []
            for _ in range(n_tensors):
                tensors.append(_string(f))
                (n_dims,) = _unpack(f, "<I")
                f.seek(8 * n_dims + 4 + 8, 1)  # dimensions, type, offset
    except OSError as exc:
        raise LocalcrError(f"{path} cannot be read ({exc.strerror or exc})") from None
    except (struct.error, UnicodeDecodeError, ValueError, MemoryError):
        raise LocalcrError(f"{path} is a damaged or truncated GGUF file (its header does not parse)") from None
    return GGUFHeader(metadata, frozenset(tensors))


def _unpack(f: BinaryIO, fmt: str) -> tuple:
    size = struct.calcsize(fmt)
    data = f.read(size)
    if len(data) != size:
        raise struct.error("truncated")
    return struct.unpack(fmt, data)


def _string(f: BinaryIO) -> str:
    (length,) = _unpack(f, "<Q")
    if length > 1 << 24:
        raise ValueError("implausible string length")
    data = f.read(length)
    if len(data) != length:
        raise struct.error("truncated")
    return data.decode("utf-8")


def _value(f: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _unpack(f, "<" + _SCALARS[kind])[0]
    if kind == _STRING:
        return _string(f)
    if kind != _ARRAY:
        raise ValueError(f"unknown GGUF value type {kind}")
    item_kind, count = _unpack(f, "<IQ")
    if item_kind in _SCALARS:
        f.seek(struct.calcsize(_SCALARS[item_kind]) * count, 1)
    elif item_kind == _STRING:
        for _ in range(count):
            (length,) = _unpack(f, "<Q")
            f.seek(length, 1)
    else:
        for _ in range(count):
            _value(f, item_kind)
    return ("array", count)
