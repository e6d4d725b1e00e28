"""A zero-weight copy of a GGUF model: the same metadata (tokenizer included), tensor names, shapes and quant types,
every tensor's bytes zero.

    .venv/bin/python benchmarks/speed/zero_weights.py SOURCE.gguf COPY.gguf

llama.cpp's speed depends on the shapes and types it computes with, not on the values, so the copy runs at the real
model's prompt and generation rates (BENCHMARKS.md, "Indexing": the LLM on a GPU) while it compresses to the size
of its metadata: the bundled 1.5B (1.1 GB) travels as about 2 MB where a real file cannot go (gpu_build.sh). Its
output means nothing (all logits equal). The copy is written sparse: the metadata, then a hole up to the source's
size; gguf's reader gives where the tensor data starts.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path


def zero_copy(source: Path, copy: Path) -> int:
    """Write `copy`: `source`'s bytes up to its tensor data, then zeros to the same length; returns that offset."""
    from gguf import GGUFReader

    data_offset = GGUFReader(source).data_offset
    with open(source, "rb") as f, open(copy, "wb") as out:
        out.write(f.read(data_offset))
        out.truncate(os.path.getsize(source))
    return data_offset


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path)
    p.add_argument("copy", type=Path)
    args = p.parse_args()
    offset = zero_copy(args.source, args.copy)
    print(f"{args.copy}: {args.source.name}'s first {offset} bytes (metadata, tensor table), then "
          f"{os.path.getsize(args.copy) - offset} zero bytes")


if __name__ == "__main__":
    main()
