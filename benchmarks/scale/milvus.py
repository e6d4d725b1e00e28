"""The same sets through Milvus Lite and the local store: Pass@k, index time and query latency, and ingestion at scale.

    .venv/bin/python benchmarks/scale/milvus.py --data ../shared/data/anthropic-codebase --data ../shared/data/xquad-en
    .venv/bin/python benchmarks/scale/milvus.py --ingest 100000     # the stand-in's ingestion rate and latency at 100 K

Per set: one local index (structural contexts; its build fills the embedding cache, then the timed build is a
--rebuild that reads every vector from it, as each Milvus build does; a Milvus build's time includes waiting for
Lite to index the collection, as a build on a server waits), then Milvus Lite collections with each lexical leg: Milvus's BM25 function (Lite: the standard analyzer, statistics per segment) and sparse vectors of
localcr's own BM25 analysis (--lexical client). Dense search is the same model and vectors on both, so its rows
show what the stores' nearest-neighbour search changes; lexical rows explain the hybrid differences.

--ingest N: N synthetic chunks (texts of the code set repeated, random unit vectors) written into a Lite collection
as a build writes them, then dense and lexical queries against it: the test stand-in's figures, not a cluster's.
Output: stdout and benchmarks/results/milvus*.md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, table  # noqa: E402

KS = (5, 10, 20)
CONFIGS = ("hybrid", "lexical", "dense")
INGEST_HEAD = ["chunks", "lexical", "write s", "chunks/s", "then indexed s", "dense p50 ms", "lexical p50 ms"]
LEXICAL = {"function": "BM25 function (standard analyzer)", "client": "client sparse (localcr's BM25)"}


def quality(args) -> str:
    from localcr import evaluation
    from localcr.backends.milvus.build import wait_for_indexes
    from localcr.backends.milvus.connection import Connection
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    rows = []
    for data in args.data:
        chunks, queries_file = corpus_files(data)
        local = args.work / f"milvus-local-{data.name}"
        build_index([str(chunks)], local, registry, contexts="structural", progress=False, log=lambda m: None)
        stores = [("local store", str(local), None)] + [
            (f"Milvus Lite, {LEXICAL[kind]}", f"milvus-lite:{args.work / 'milvus.db'}/{data.name.replace('-', '_')}_{kind}", kind)
            for kind in LEXICAL]
        for label, location, lexical in stores:
            started = time.monotonic()
            build_index([str(chunks)], location, registry, contexts="structural", progress=False, log=lambda m: None,
                        rebuild=True, lexical=lexical)
            if lexical:  # searches timed on the built indexes, as a server's build waits for them (Lite's does not)
                connection = Connection(location)
                wait_for_indexes(connection, connection.aliased(), log=lambda m: None)
            built = time.monotonic() - started
            index = Index(location, registry)
            queries = evaluation.load_queries(queries_file, index)
            results = evaluation.evaluate(index, queries, [evaluation.parse_config(c) for c in CONFIGS], KS, progress=False)
            for result in results:
                rows.append([data.name, label, result.config.name, *(100 * result.metrics[f"pass@{k}"] for k in KS),
                             f"{built:.1f}" if result.config.name == "hybrid" else "", f"{result.latency_ms['p50']:.1f}"])
            print(table(["set", "store", "search", *(f"Pass@{k}" for k in KS), "index s", "query p50 ms"], rows[-3:]), flush=True)
    return table(["set", "store", "search", *(f"Pass@{k}" for k in KS), "index s", "query p50 ms"], rows)


def ingestion(args) -> str:
    """Write N synthetic chunks into a Lite collection as a build does, then time queries against it."""
    import json
    from types import SimpleNamespace

    import numpy as np

    from localcr.backends.milvus import MilvusBackend
    from localcr.backends.milvus.build import entities, insert, move_alias, new_generation, set_manifest, wait_for_indexes
    from localcr.backends.milvus.connection import LAYOUT, Connection
    from localcr.backends.milvus.terms import TermCounts
    from localcr.documents import Chunk, Document

    n = args.ingest
    texts = [c["content"] for d in json.loads((args.code / "codebase_chunks.json").read_text()) for c in d["chunks"]]
    per_doc = 10
    docs = [Document(doc_id=f"d{i}", path=f"d{i}", kind="text", text="", size=0, language="en") for i in range(-(-n // per_doc))]
    chunks = [Chunk(chunk_id=f"d{i // per_doc}#{i % per_doc}", doc_id=f"d{i // per_doc}", position=i % per_doc, start=0,
                    end=0, text=texts[i % len(texts)]) for i in range(n)]
    vectors = np.random.default_rng(0).standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks_by_doc = {d.doc_id: [] for d in docs}
    for c in chunks:
        chunks_by_doc[c.doc_id].append(c)
    made = SimpleNamespace(chunks=chunks, chunks_by_doc=chunks_by_doc, vectors=vectors, window_rows=np.arange(n))
    location = f"milvus-lite:{args.work / 'ingest.db'}/synthetic"
    connection = Connection(location)
    rows = []
    for kind in ("function", "client"):
        started = time.monotonic()
        terms = TermCounts(["en"]) if kind == "client" else None
        if terms:
            terms.add([f"\n{c.text}" for c in chunks], ["en"] * n)
        written_rows = entities(docs, made, terms and terms.weights(terms.mean_length()))
        generation = new_generation(connection, 384, kind)
        insert(connection, generation, written_rows)
        if terms:
            terms.write(connection, generation)
        written = time.monotonic() - started
        wait_for_indexes(connection, generation, log=lambda m: None)  # Lite searches unsealed rows in Python
        indexed = time.monotonic() - started - written
        manifest = {"layout": LAYOUT, "embedder": {"dimension": 384}, "lexical": {"kind": kind, "analyzer": "standard"},
                    "chunks": n, "windows": n, "languages": ["en"]}
        set_manifest(connection, generation, manifest)
        connection.call("load_collection", generation)
        move_alias(connection, generation, connection.aliased())
        backend = MilvusBackend(location)
        dense, lexical = [], []
        for i, q in enumerate(vectors[:30]):
            t = time.perf_counter()
            backend.dense_ranked(q, 150)
            dense.append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            backend.lexical_ranked(texts[i].split("\n")[0][:80] or "function", 150)
            lexical.append(1000 * (time.perf_counter() - t))
        rows.append([n, LEXICAL[kind], f"{written:.0f}", f"{n / written:.0f}", f"{indexed:.0f}", f"{np.median(dense):.0f}",
                     f"{np.median(lexical):.0f}"])
        print(table(INGEST_HEAD, rows[-1:]), flush=True)
    return table(INGEST_HEAD, rows)


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, action="append", default=[], help="a public set directory (repeatable)")
    p.add_argument("--ingest", type=int, help="write this many synthetic chunks into Milvus Lite and time queries")
    p.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data" / "anthropic-codebase",
                   help="where --ingest takes its texts (the code set)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    args = p.parse_args()
    if not args.data and not args.ingest:
        p.error("name sets with --data, or --ingest N")
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    args.work.mkdir(parents=True, exist_ok=True)
    text = f"machine: {machine()}\n\n" + (quality(args) if args.data else ingestion(args))
    print(text)
    out = Path(__file__).resolve().parents[1] / "results" / ("milvus.md" if args.data else f"milvus-ingest-{args.ingest}.md")
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
