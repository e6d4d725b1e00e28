"""A Milvus collection as a localcr index: for corpora and query loads that outgrow one machine (a cluster shards,
replicates and serves it), with the same commands as a local index. Needs `pip install 'localcr[milvus]'`
(pymilvus, and milvus-lite for the embedded stand-in the tests run against).

Layout. The index's name (COLLECTION in milvus://HOST:PORT/COLLECTION) is an alias; it points at one collection,
a generation, named COLLECTION__<time>_<random>. The generation holds one entity per dense window (a chunk too
long for the embedder has several): its vector, and on the chunk's first window (window 0) the chunk itself, its
passage (context, newline, text: what BM25 reads, as in the local store) and, on a document's first chunk, the
document's record as JSON; every entity carries its document's path, kind and language, which a filter selects by
(localcr.filters: kind and language compared by the server, globs matched here and named by document id). The
build's manifest (the local store's manifest.json) is a collection property.

Writes. A whole build (the first, --rebuild, other settings) fills a new generation, then moves the alias: a
build killed before that leaves the alias, and so every search, on the previous generation; the next build
drops what it left. A change deletes the changed and removed documents' entities (every window at once, by
filter, with whatever a killed run left of the new ones) and inserts the new ones, each document's record last,
in the generation the alias points at, then rewrites the manifest; the collection is created with Strong
consistency, so the same run (and every search after it) reads its own writes.
One writer at a time: unlike the local store, nothing here locks a Milvus index.

Lexical leg. None (--lexical none: a dense-only index, for a server without sparse vectors, Milvus 2.3), Milvus's
BM25 function over the passage field (the server analyses text and keeps the
statistics; Milvus Lite has only the standard analyzer, no stemming, and statistics per segment), or sparse
vectors of localcr's own analysis (stemming, identifier parts, CJK bigrams, as the local index): a chunk's vector
holds each term's saturated frequency tf / (tf + k1 (1 - b + b len / mean len)), the query's each term's IDF,
from a second collection of document frequencies by term (GENERATION + TERMS_SUFFIX) that every write keeps
current; their inner product is the chunk's BM25 score, the local index's own (the mean length is the one of
the last rebuild). Both stay exact under changes; BENCHMARKS.md measures what each is worth, DEFAULT_LEXICAL is
the choice. The server's version is read before a build: one without what the lexical leg needs is named in one line.

The package's parts: connection (locations, the client, failures as one line, the server's version, aliases and
generations), search (the ranked legs, filters as expressions, records), build (generations, schema, entities) and
terms (the client-side BM25 statistics).
"""
from localcr.backends.milvus.build import build
from localcr.backends.milvus.connection import parse_location
from localcr.backends.milvus.search import MilvusBackend

__all__ = ["MilvusBackend", "build", "parse_location"]
