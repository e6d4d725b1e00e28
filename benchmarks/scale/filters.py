"""What a filter costs: search latency with a filter keeping 1% and one keeping 50% of an index, beside the
unfiltered search, on the local store.

    nice .venv/bin/python benchmarks/scale/filters.py [--chunks 100000] [--work /tmp/localcr-bench] [--milvus milvus://HOST:PORT [--milvus-only]]

The index is benchmarks/scale/scale.py's synthetic one (documents of 8 chunks of 120 Zipf-drawn words, random unit
vectors; reused from --work when an earlier run left it there), searched in this process with random query
vectors (query embedding excluded) and 3-6 vocabulary words, k=20 and 150 candidates per leg. The filters are
globs on the document ids doc0.txt ... docN.txt: `doc*00.txt` keeps every hundredth document (1%), `doc*[02468].txt`
every other one (50%). Each filter's first search also works out which rows pass (then cached for the index's
generation): that cost is its own column. Dense recall@150: the share of the 150 nearest passing live windows
(exact, over the stored vectors) that the filtered dense leg returns, for 50 random query vectors. The table goes to
stdout and benchmarks/results/filters.md (with --milvus-only, filters-milvus.md).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, table  # noqa: E402
from scale import DIMENSION, build, vocabulary  # noqa: E402

FILTERS = {"none": None, "1% (doc*00.txt)": "doc*00.txt", "50% (doc*[02468].txt)": "doc*[02468].txt"}
QUERIES = 200
MILVUS_QUERIES = 50  # a search on a real server waits for its Strong consistency (a few hundred ms)
RECALL_QUERIES = 50
K = 20


class QueryVectors:
    """Stands in for the embedder: random unit query vectors (the benchmark measures the index only)."""

    def __init__(self, spec):
        self.id = f"{spec.name}:{spec.fingerprint()}"
        self.rng = np.random.default_rng(0)

    def embed_query(self, query):
        v = self.rng.standard_normal(DIMENSION).astype(np.float32)
        return v / np.linalg.norm(v)


def dense_recall(index, glob: str | None) -> float:
    """Of the 150 nearest passing live windows (exact), the share the filtered dense leg returns."""
    from localcr import store
    from localcr.filters import Filter

    reader = index.store
    passing = reader.live[reader.window_rows]
    selection = None
    if glob:
        selection = reader.select(Filter.of([glob]))
        passing = passing & selection.windows
    vectors = [np.load(seg.path / store.VECTORS, mmap_mode="r") for seg in reader.segments]
    rng, recalls = np.random.default_rng(1), []
    for _ in range(RECALL_QUERIES):
        q = rng.standard_normal(DIMENSION).astype(np.float32)
        q /= np.linalg.norm(q)
        similarity = np.concatenate([v @ q for v in vectors])
        similarity[~passing] = -np.inf
        wanted = min(150, int(passing.sum()))
        exact = set(np.argpartition(-similarity, wanted - 1)[:wanted].tolist())
        found, _ = reader.dense_index.knn_query(q, k=wanted, passing=None if selection is None else selection.windows)
        recalls.append(len(exact & set(found[0].tolist())) / wanted)
    return float(np.mean(recalls))


def milvus_rows(uri: str, n_chunks: int, words: list[str], cdf: np.ndarray) -> list[list]:
    """The dense leg with each filter on a dense-only Milvus index (--lexical none: what a 2.3 server holds) of the
    same synthetic documents, written once into collection filters_N; each search pays for its filter's expression
    (kind and language are the server's; globs list the documents' ids and paths to match them: not cached, since a
    change writes into the same collection)."""
    from types import SimpleNamespace

    from localcr.backends.milvus import MilvusBackend
    from localcr.backends.milvus.build import entities, insert, move_alias, new_generation, set_manifest, wait_for_indexes
    from localcr.backends.milvus.connection import LAYOUT, Connection
    from localcr.filters import Filter
    from scale import CHUNKS_PER_DOC, synthetic

    location = f"{uri.rstrip('/')}/filters_{n_chunks}"
    connection = Connection(location)
    if connection.aliased() is None:
        began = time.perf_counter()
        rng, vocab = np.random.default_rng(n_chunks), np.array(words)
        docs, chunks_by_doc, vectors = [], {}, []
        for d in range(-(-n_chunks // CHUNKS_PER_DOC)):
            doc, chunks, _, doc_vectors = synthetic(f"doc{d}.txt", min(CHUNKS_PER_DOC, n_chunks - d * CHUNKS_PER_DOC), rng, vocab, cdf)
            docs.append(doc)
            chunks_by_doc[doc.doc_id] = chunks
            vectors.append(doc_vectors)
        made = SimpleNamespace(chunks=[c for d in docs for c in chunks_by_doc[d.doc_id]], chunks_by_doc=chunks_by_doc,
                               vectors=np.concatenate(vectors), window_rows=np.arange(n_chunks))
        generation = new_generation(connection, DIMENSION, "none")
        insert(connection, generation, entities(docs, made, None))
        wait_for_indexes(connection, generation, log=lambda message: print(message, file=sys.stderr))
        set_manifest(connection, generation, {"layout": LAYOUT, "embedder": {"dimension": DIMENSION}, "lexical": {"kind": "none"},
                                              "chunks": n_chunks, "windows": n_chunks, "languages": ["en"]})
        connection.call("load_collection", generation)
        move_alias(connection, generation, None)
        print(f"wrote {location} in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    backend = MilvusBackend(location)
    rng, rows = np.random.default_rng(0), []
    for label, glob in FILTERS.items():
        taken = []
        for _ in range(MILVUS_QUERIES):
            q = rng.standard_normal(DIMENSION).astype(np.float32)
            t = time.perf_counter()
            selection = backend.select(Filter.of([glob])) if glob else None
            found = backend.dense_ranked(q / np.linalg.norm(q), 150, selection)
            taken.append((time.perf_counter() - t) * 1000)
        assert found
        rows.append([label, f"{np.percentile(taken, 50):.1f} / {np.percentile(taken, 95):.1f}"])
        print(rows[-1], file=sys.stderr)
    return rows


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    p.add_argument("--milvus", metavar="milvus://HOST:PORT", help="also (only, with --milvus-only) the dense leg on this "
                   "Milvus server, in a dense-only collection filters_N written once")
    p.add_argument("--milvus-only", action="store_true")
    args = p.parse_args()
    from localcr.filters import Filter
    from localcr.models import load_registry
    from localcr.search import Index

    words, cdf = vocabulary(None)
    milvus = ""
    if args.milvus:
        from localcr.backends.milvus.connection import Connection

        server = Connection(f"{args.milvus.rstrip('/')}/probe").server_version
        milvus = (f"\n\n## The dense leg on Milvus {server} ({args.milvus}), dense-only collection, {args.chunks:,} chunks\n\n"
                  + table(["filter", "filter expression + dense search p50/p95 ms"], milvus_rows(args.milvus, args.chunks, words, cdf)))
        if args.milvus_only:
            print(milvus)
            (ROOT / "benchmarks" / "results" / "filters-milvus.md").write_text(f"{machine()}{milvus}\n")
            return
    directory = args.work / f"scale-{args.chunks}"
    if not (directory / "localcr-index.json").exists():
        began = time.perf_counter()
        build(directory, args.chunks, words, cdf)
        print(f"built {directory} in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    registry = load_registry()
    index = Index(directory, registry, embedder=QueryVectors(registry.require("embedder", "minilm")))
    index.store.warm()
    rng = np.random.default_rng(7)
    queries = [" ".join(rng.choice(words[50:5000], rng.integers(3, 7))) for _ in range(QUERIES)]
    rows = []
    for label, glob in FILTERS.items():
        selected = "-"
        if glob:
            began = time.perf_counter()
            selection = index.store.select(Filter.of([glob]))
            selected = f"{(time.perf_counter() - began) * 1000:.0f}"
            share = f"{selection.rows.sum() / index.store.n_chunks:.1%}"
        else:
            share = "100%"
        times = {}
        for mode in ("dense", "lexical", "hybrid"):
            taken = []
            for q in queries:
                t = time.perf_counter()
                found = index.search(q, K, mode=mode, glob=[glob] if glob else None)
                taken.append((time.perf_counter() - t) * 1000)
                assert mode != "dense" or len(found) == K  # (BM25 ranks only chunks holding a query word)
            times[mode] = f"{np.percentile(taken, 50):.1f} / {np.percentile(taken, 95):.1f}"
        rows.append([label, share, selected, *times.values(), f"{dense_recall(index, glob):.3f}"])
        print(rows[-1], file=sys.stderr)
    head = ["filter", "chunks kept", "selection ms (first search)", "dense p50/p95 ms", "lexical p50/p95 ms",
            "hybrid p50/p95 ms", "dense recall@150"]
    text = (f"# What a filter costs (local store)\n\n{machine()}; {args.chunks:,} synthetic chunks in documents of 8, "
            f"{DIMENSION}-d random unit vectors, {QUERIES} queries per mode, k={K}, 150 candidates\n\n" + table(head, rows) + milvus + "\n")
    print(text)
    (ROOT / "benchmarks" / "results" / "filters.md").write_text(text)


if __name__ == "__main__":
    main()
