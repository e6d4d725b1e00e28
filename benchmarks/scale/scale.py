"""The index layer at scale: build, open, search and change costs as the chunk count grows.

    .venv/bin/python benchmarks/scale/scale.py [--data ../shared/data/anthropic-codebase] [--sizes 10000,100000,1000000]

Synthetic corpora, so the numbers are the index's and not the embedder's: chunks of 120 words drawn
Zipf-distributed from the vocabulary of --data's corpus (or of pseudo-words without --data), in documents of
8 chunks, with random unit vectors (384-d, MiniLM's size) as embeddings. For each size it writes a generation
with localcr.store, then, in a fresh process, opens it as `localcr search` does (time and peak RSS) and runs
200 queries (3-6 vocabulary words each, with a random query vector: query embedding is excluded) in each
mode. "One change" is what applying one changed document (8 chunks) costs in the index layer: checking the
kept segments' files against their records, reading the live documents' records, writing a segment of the new version, and publishing a generation that tombstones
the old one (reading, chunking and embedding the changed file are not included; the search columns are
measured after it, on the two segments, once the writes are on disk: the page cache holds what was just
written, as on a machine that built its own index). Peak RSS is the search process's own, split at the end into
anonymous memory and the pages of memory-mapped files it touched; dense recall@150 is the share of the 150
nearest live windows (exact search over the stored vectors) that the dense graphs return, for 50 random
query vectors (random vectors are HNSW's hardest case: real embeddings cluster). With --compact, the time to
merge everything into one segment. The table goes to stdout and benchmarks/results/scale.md.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, machine, table  # noqa: E402

WORDS_PER_CHUNK = 120
CHUNKS_PER_DOC = 8
DIMENSION = 384
QUERIES = 200


def vocabulary(data: Path | None, size: int = 30_000) -> tuple[list[str], np.ndarray]:
    """Words and the cumulative sums of their Zipf probabilities (a word is drawn by searching a uniform draw
    in them, which np.random's choice with p= would recompute for every chunk): the corpus's words by
    frequency, or pseudo-words."""
    if data:
        chunks, _ = corpus_files(data)
        text = " ".join(c["content"] for d in json.loads(chunks.read_text()) for c in d["chunks"])
        words = [w for w, _ in Counter(re.findall(r"[A-Za-z_][A-Za-z0-9_]{1,}", text)).most_common(size)]
    else:
        rng = np.random.default_rng(1)
        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        words = sorted({"".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(size)})
    ranks = np.arange(1, len(words) + 1)
    return words, np.cumsum(1 / ranks) / (1 / ranks).sum()


def synthetic(doc_id: str, n: int, rng, vocab: np.ndarray, cdf: np.ndarray):
    """A document of n synthetic chunks, their indexed texts and their vectors."""
    from localcr.documents import Chunk, Document

    chunks, texts = [], []
    drawn = np.minimum(np.searchsorted(cdf, rng.random((n, WORDS_PER_CHUNK))), len(vocab) - 1)
    for position in range(n):
        text = " ".join(vocab[drawn[position]])
        chunks.append(Chunk(chunk_id=f"{doc_id}#{position}", doc_id=doc_id, position=position, start=0, end=len(text),
                            text=text, context=f"File {doc_id}.", context_source="structural"))
        texts.append(f"File {doc_id}.\n{text}")
    vectors = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    doc = Document(doc_id=doc_id, path=doc_id, kind="text", text=" ".join(texts), size=0, language="en")
    return doc, chunks, texts, vectors


def change_one(directory: Path, words: list[str], cdf: np.ndarray) -> float:
    """Replace doc0 with a new version through a segment and a tombstone, as a re-index does; seconds."""
    from localcr import store
    from localcr.lexical import LexicalIndex

    began = time.perf_counter()
    with store.writer_lock(directory):
        marker = store.read_marker(directory)
        manifest = store.current_manifest(directory, marker)
        sound, damaged = store.check_segments(directory, manifest)  # the files of the segments kept, as recorded
        assert not damaged, damaged
        manifest = {**manifest, "segments": sound}
        stored = store.live_documents(directory, manifest)
        doc, chunks, texts, vectors = synthetic("doc0.txt", CHUNKS_PER_DOC, np.random.default_rng(99), np.array(words), cdf)
        segment = store.write_segment(directory, [doc], {doc.doc_id: chunks}, vectors, np.arange(len(chunks)),
                                      LexicalIndex.build(texts))
        old = stored["doc0.txt"].segment
        segments = [{**s, "dead": s["dead"] + ["doc0.txt"], "dead_chunks": s["dead_chunks"] + CHUNKS_PER_DOC}
                    if s["name"] == old else s for s in manifest["segments"]]
        store.publish(directory, marker, {**manifest, "segments": segments + [segment]})
    return time.perf_counter() - began


def build(directory: Path, n_chunks: int, words: list[str], cdf: np.ndarray) -> dict:
    """Write one generation of n_chunks synthetic chunks; the seconds each part took."""
    from localcr import store
    from localcr.lexical import LexicalIndex
    from localcr.models import load_registry

    rng = np.random.default_rng(n_chunks)
    vocab = np.array(words)
    docs, chunks_by_doc, texts, vectors = [], {}, [], []
    for d in range(-(-n_chunks // CHUNKS_PER_DOC)):
        doc, chunks, doc_texts, doc_vectors = synthetic(f"doc{d}.txt", min(CHUNKS_PER_DOC, n_chunks - d * CHUNKS_PER_DOC), rng, vocab, cdf)
        docs.append(doc)
        chunks_by_doc[doc.doc_id] = chunks
        texts.extend(doc_texts)
        vectors.append(doc_vectors)
    vectors = np.concatenate(vectors)
    spec = load_registry().require("embedder", "minilm")
    manifest = {"localcr": "scale", "created": "", "sources": [], "documents": len(docs), "chunks": n_chunks,
                "windows": n_chunks, "embedder": {"name": spec.name, "id": f"{spec.name}:{spec.fingerprint()}",
                                                  "dimension": DIMENSION, "max_length": 256, "chosen": ""},
                "chunking": {}, "contexts": {}, "skipped": [], "languages": ["en"]}
    began = time.perf_counter()
    lexical = LexicalIndex.build(texts)
    bm25 = time.perf_counter() - began
    began = time.perf_counter()
    with store.writer_lock(directory):
        store.write_generation(directory, store.read_marker(directory), manifest, docs, chunks_by_doc, vectors,
                               np.arange(n_chunks), lexical)
    return {"bm25": bm25, "write": time.perf_counter() - began}


SEARCHER = r"""
import json, sys, time
import numpy as np
sys.path.append(sys.argv[3])  # appended: no module of benchmarks/ may shadow the standard library
from _common import peak_rss_mb, rss_parts_mb
began = time.perf_counter()
from localcr.search import Index
from localcr.models import load_registry

class QueryVectors:
    '''Stands in for the embedder: random unit query vectors (the benchmark measures the index only).'''
    def __init__(self, spec, dimension):
        self.spec, self.id = spec, f"{spec.name}:{spec.fingerprint()}"
        self.rng = np.random.default_rng(0)
        self.dimension = dimension
    def embed_query(self, query):
        v = self.rng.standard_normal(self.dimension).astype(np.float32)
        return v / np.linalg.norm(v)

registry = load_registry()
index = Index(sys.argv[1], registry, embedder=QueryVectors(registry.require("embedder", "minilm"), 384))
index.embedder, index.store.warm(), index.store.n_chunks
opened = time.perf_counter() - began
queries = json.loads(sys.argv[2])
out = {"open": opened}
for mode in ("dense", "lexical", "hybrid"):
    times = []
    for q in queries:
        t = time.perf_counter()
        index.search(q, 20, mode=mode)
        times.append((time.perf_counter() - t) * 1000)
    out[mode] = [float(np.percentile(times, 50)), float(np.percentile(times, 95))]
out["rss_mb"] = peak_rss_mb()
out["anon_mb"], out["file_mb"] = rss_parts_mb()
# Recall of the dense side, after the memory figures (exact search maps every segment's vectors): of the 150
# live windows nearest a query vector, the share the graphs return.
from localcr import store
rng, recalls = np.random.default_rng(1), []
live = index.store.live[index.store.window_rows]
vectors = [np.load(seg.path / store.VECTORS, mmap_mode="r") for seg in index.store.segments]
for _ in range(RECALL_QUERIES):
    q = rng.standard_normal(384).astype(np.float32)
    q /= np.linalg.norm(q)
    similarity = np.concatenate([v @ q for v in vectors])
    similarity[~live] = -np.inf
    exact = set(np.argpartition(-similarity, 149)[:150].tolist())
    found, _ = index.store.dense_index.knn_query(q, k=150)
    recalls.append(len(exact & set(found[0].tolist())) / 150)
out["recall"] = float(np.mean(recalls))
print(json.dumps(out))
"""
RECALL_QUERIES = 50
SEARCHER = SEARCHER.replace("RECALL_QUERIES", str(RECALL_QUERIES))


def main() -> None:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, help="a public set whose vocabulary the synthetic texts use")
    p.add_argument("--sizes", default="10000,100000", help="chunk counts (1000000: about 50 minutes on 2 cores, most of it the dense graph's build, and 45 more with --compact)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    p.add_argument("--compact", action="store_true", help="also time a full compaction")
    p.add_argument("--search-only", action="store_true",
                   help="only re-run the searches on the indexes an earlier run left in --work (alone, or after "
                        "dropping the page cache); the table is printed, not saved")
    args = p.parse_args()
    words, cdf = vocabulary(args.data)
    rng = np.random.default_rng(7)
    queries = [" ".join(rng.choice(words[50:5000], rng.integers(3, 7))) for _ in range(QUERIES)]
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        directory = args.work / f"scale-{n}"
        built = "-", "-", "-"
        if args.search_only:
            if not directory.exists():
                raise SystemExit(f"{directory}: no index to search; run without --search-only first")
        else:
            if directory.exists():
                import shutil

                shutil.rmtree(directory)
            began = time.perf_counter()
            costs = build(directory, n, words, cdf)
            total = time.perf_counter() - began
            change = change_one(directory, words, cdf)
            built = f"{total:.1f}", f"{costs['bm25'] + costs['write']:.1f}", f"{change:.2f}"
        os.sync()  # the searches must not share the disk with the write-back of the gigabytes just written
        searched = subprocess.run([sys.executable, "-c", SEARCHER, str(directory), json.dumps(queries), str(ROOT / "benchmarks")],
                                  capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if searched.returncode:
            raise SystemExit(searched.stderr)
        s = json.loads(searched.stdout.strip().splitlines()[-1])
        compaction = ""
        if args.compact and not args.search_only:
            from localcr.index import compact

            began = time.perf_counter()
            compact(directory)
            compaction = f"{time.perf_counter() - began:.1f}"
        rows.append([f"{n:,}", *built, f"{s['open']:.2f}",
                     f"{s['rss_mb']:.0f} ({s['anon_mb']:.0f} + {s['file_mb']:.0f})",
                     *(f"{s[m][0]:.1f} / {s[m][1]:.1f}" for m in ("dense", "lexical", "hybrid")), f"{s['recall']:.3f}",
                     compaction or "-"])
        print(rows[-1], file=sys.stderr)
    head = ["chunks", "generate + build s", "rebuild whole s", "one change s", "open s",
            "peak RSS MB (anonymous + file-backed at the end)", "dense p50/p95 ms", "lexical p50/p95 ms",
            "hybrid p50/p95 ms", "dense recall@150", "compaction s"]
    text = (f"# The index layer at scale (segments)\n\n{machine()}; {WORDS_PER_CHUNK}-word "
            f"chunks, {DIMENSION}-d random unit vectors, {QUERIES} queries per mode, k=20, 150 candidates\n\n"
            + table(head, rows) + "\n")
    print(text)
    if not args.search_only:
        (ROOT / "benchmarks" / "results" / "scale.md").write_text(text)


if __name__ == "__main__":
    main()
