"""Does embedding a build's windows sorted by length (`Embedder.embed`) change their vectors? Only which windows share
a batch changes, and with it the rounding: how much, and whether any nearest-neighbour list moves.

    .venv/bin/python benchmarks/speed/embedding_order.py --data ../shared/data/financebench-dev/docs [--windows 640]

Windows of the first filing (170-word pieces with shorter ones mixed in, as a document's chunks end), embedded in calls
of 32 in document order (before) and sorted by length first (now), from an empty cache. Rows: the largest difference,
the least cosine, and how many of every 7th window taken as a query keep the same top 20 in the same order.
Table to stdout and benchmarks/results/embedding_order.md.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, table  # noqa: E402

CALL = 32  # windows a call, as Embedder.encode_batch gives for the default batch of 8


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--windows", type=int, default=640)
    args = p.parse_args()
    os.environ["LOCALCR_CACHE_DIR"] = tempfile.mkdtemp()
    import numpy as np

    from localcr.embeddings import Embedder
    from localcr.models import load_registry

    encode = Embedder(load_registry().require("embedder")).backend.encode
    words = sorted(path for path in args.data.iterdir() if path.is_file())[0].read_text(errors="ignore").split()
    texts, at, rng = [], 0, np.random.default_rng(0)
    while len(texts) < args.windows:
        n = int(rng.choice([170, 170, 170, 40, 90]))
        texts.append(" ".join(words[at:at + n]))
        at += n
    before = np.vstack([encode(texts[s:s + CALL]) for s in range(0, len(texts), CALL)])
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    now = np.empty_like(before)
    for s in range(0, len(order), CALL):
        now[order[s:s + CALL]] = encode([texts[i] for i in order[s:s + CALL]])
    queries = encode(texts[::7])
    same = (np.argsort(-(queries @ before.T), axis=1)[:, :20] == np.argsort(-(queries @ now.T), axis=1)[:, :20]).all(1)
    rows = [[len(texts), f"{np.abs(before - now).max():.2g}", f"{(before * now).sum(1).min():.8f}",
             f"{int(same.sum())} of {len(queries)}"]]
    out = f"machine: {machine()}\n\n" + table(["windows", "largest difference", "least cosine", "same top 20"], rows)
    (ROOT / "benchmarks" / "results" / "embedding_order.md").write_text(out + "\n")
    print(out)


if __name__ == "__main__":
    main()
