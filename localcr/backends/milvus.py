"""A Milvus collection as a localcr index: for corpora and query loads that outgrow one machine (a cluster shards,
replicates and serves it), with the same commands as a local index. Needs `pip install 'localcr[milvus]'`
(pymilvus, and milvus-lite for the embedded stand-in the tests run against).

Layout. The index's name (COLLECTION in milvus://HOST:PORT/COLLECTION) is an alias; it points at one collection,
a generation, named COLLECTION__<time>_<random>. The generation holds one entity per dense window (a chunk too
long for the embedder has several): its vector, and on the chunk's first window (window 0) the chunk itself, its
passage (context, newline, text: what BM25 reads, as in the local store) and, on a document's first chunk, the
document's record as JSON. The build's manifest (the local store's manifest.json) is a collection property.

Writes. A whole build (the first, --rebuild, other settings) fills a new generation, then moves the alias: a
build killed before that leaves the alias, and so every search, on the previous generation; the next build
drops what it left. A change deletes the changed and removed documents' entities (every window at once, by
filter, with whatever a killed run left of the new ones) and inserts the new ones, each document's record last,
in the generation the alias points at, then rewrites the manifest; the collection is created with Strong
consistency, so the same run (and every search after it) reads its own writes.
One writer at a time: unlike the local store, nothing here locks a Milvus index.

Lexical leg. Either Milvus's BM25 function over the passage field (the server analyses text and keeps the
statistics; Milvus Lite has only the standard analyzer, no stemming, and statistics per segment), or sparse
vectors of localcr's own analysis (stemming, identifier parts, CJK bigrams, as the local index): a chunk's vector
holds each term's saturated frequency tf / (tf + k1 (1 - b + b len / mean len)), the query's each term's IDF,
from a second collection of document frequencies by term (GENERATION + TERMS_SUFFIX) that every write keeps
current; their inner product is the chunk's BM25 score, the local index's own (the mean length is the one of
the last rebuild). Both stay exact under changes; BENCHMARKS.md measures what each is worth, DEFAULT_LEXICAL is
the choice.
"""
from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from localcr.errors import BackendError, LocalcrError

TOKEN_ENV = "LOCALCR_MILVUS_TOKEN"
DATABASE_ENV = "LOCALCR_MILVUS_DATABASE"
MANIFEST_PROPERTY = "localcr.manifest"
LAYOUT = "localcr-milvus-1"  # the manifest's "layout": the fields below; another value is another schema
GENERATION_SEPARATOR = "__"
LEXICAL_KINDS = ("function", "client")
# Chosen by benchmarks/milvus.py (BENCHMARKS.md): localcr's analysis kept the local index's Pass@k exactly on the code
# set and XQuAD en; Milvus Lite's BM25 function (standard analyzer) lost 25 points of lexical Pass@5 on code.
DEFAULT_LEXICAL = "client"
MAX_VARCHAR = 65_535  # Milvus's limit on a VARCHAR field, in bytes
MAX_ID = 4096
INSERT_BATCH = 500
QUERY_BATCH = 1000
MAX_TOPK = 16_384  # Milvus answers at most this many entities a search
# The dense index: HNSW with the local store's graph parameters (see localcr.store); on a cluster of 100 M chunks,
# IVF_PQ or DiskANN instead (README, "Milvus: when one machine is not enough").
HNSW_PARAMS = {"M": 32, "efConstruction": 200}
SEARCH_EF = 200
K1, B = 1.2, 0.75  # BM25 as the local index scores it (localcr.lexical)
CHUNK_FIELDS = ["chunk_id", "doc_id", "position", "start", "end", "external_index", "context_chars", "passage"]
# A term's dimension in a client-computed sparse vector: its CRC-32, below this (Milvus takes dimensions below 2**32 - 1).
SPARSE_DIMENSIONS = 2**32 - 2
# Milvus refuses an empty sparse vector: a chunk's second and later windows (which hold no terms: the first window
# carries the chunk's) get this dimension, which no term has and so no query asks for.
NO_TERMS = {SPARSE_DIMENSIONS: 1.0}
TERMS_SUFFIX = "_terms"  # the document frequencies of a generation with client-computed sparse vectors
INDEX_POLL_SECONDS = 0.5



@dataclass(frozen=True)
class Location:
    """Where a Milvus index lives, parsed from an --index value (see localcr.backends)."""

    text: str  # as the user wrote it
    uri: str  # what MilvusClient connects to: a server's URL, or a Milvus Lite file's absolute path
    name: str  # the alias searches go through
    lite: bool


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


def parse_location(text: str) -> Location:
    if text.startswith("milvus-lite:"):
        path, _, name = text.removeprefix("milvus-lite:").rpartition("/")
        if not path.endswith(".db"):
            raise LocalcrError(f"{text}: name a Milvus Lite index as milvus-lite:PATH.db/COLLECTION")
        location = Location(text, str(Path(path).expanduser().resolve()), name, True)
    else:
        scheme, _, rest = text.partition("://")
        host, _, name = rest.partition("/")
        if not host:
            raise LocalcrError(f"{text}: name a Milvus server index as milvus://HOST:PORT/COLLECTION")
        location = Location(text, f"{'https' if scheme == 'milvus+https' else 'http'}://{host}", name, False)
    if not _NAME.fullmatch(location.name) or GENERATION_SEPARATOR in location.name:
        raise LocalcrError(f"{text}: {location.name!r} is no collection name localcr can use: letters, digits and single "
                           "underscores, not starting with a digit (e.g. milvus://localhost:19530/docs)")
    return location


def connect(location: Location):
    """A client of the server (token and database from the environment), or of the Milvus Lite file."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise BackendError(f"{location.text}: a Milvus index needs pymilvus: pip install 'localcr[milvus]'") from None
    for name in ["pymilvus", "milvus_lite", *logging.root.manager.loggerDict]:  # failures reach the user as one line
        if name.startswith(("pymilvus", "milvus_lite")):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    options = {} if location.lite else {"token": os.environ.get(TOKEN_ENV, ""), "db_name": os.environ.get(DATABASE_ENV, "")}
    try:
        if location.lite:
            Path(location.uri).parent.mkdir(parents=True, exist_ok=True)
        return MilvusClient(location.uri, timeout=30, **options)
    except Exception as exc:  # pymilvus raises MilvusException, and plain exceptions from Milvus Lite
        raise _failure(location, exc) from None


def _failure(location: Location, exc: Exception) -> BackendError:
    """One line for what went wrong talking to Milvus, naming what to do."""
    message = str(getattr(exc, "message", "") or exc)
    lowered = message.lower()
    if location.lite and ("open local milvus failed" in lowered or "lock" in lowered):
        return BackendError(f"{location.text}: {location.uri} is open in another process (Milvus Lite allows one); "
                            "stop that process, or search through it (localcr serve)")
    if any(word in lowered for word in ("unauthenticated", "auth", "credential", "token", "permission denied")):
        return BackendError(f"{location.text}: the server refused the credentials: set {TOKEN_ENV} to a valid token "
                            f"(user:password or an API key) ({message})")
    if "database" in lowered and "not" in lowered:
        return BackendError(f"{location.text}: {message}: set {DATABASE_ENV} to an existing database (or unset it for 'default')")
    if "fail connecting" in lowered or "unavailable" in lowered or "deadline" in lowered:
        return BackendError(f"{location.text}: cannot reach a Milvus server at {location.uri}: start it, or check the "
                            "host and port (and milvus+https:// for TLS)")
    return BackendError(f"{location.text}: Milvus failed: {message}")


def _literal(value) -> str:
    """A Milvus filter expression literal (a string, or a list of them) with its quotes and backslashes escaped."""
    return json.dumps(value, ensure_ascii=False)


class _Connection:
    """A client and the location it serves; every call's failure becomes a BackendError."""

    def __init__(self, location: str | Location):
        self.location = location if isinstance(location, Location) else parse_location(location)
        self.client = connect(self.location)

    def call(self, method: str, *args, **kwargs):
        try:
            return getattr(self.client, method)(*args, **kwargs)
        except LocalcrError:
            raise
        except Exception as exc:
            raise _failure(self.location, exc) from None

    def aliased(self) -> str | None:
        """The generation the index's alias points at; None when there is none."""
        if self.location.name not in self.call("list_aliases").get("aliases", []):
            return None
        return self.call("describe_alias", self.location.name)["collection_name"]

    def generations(self) -> list[str]:
        prefix = self.location.name + GENERATION_SEPARATOR
        return [name for name in self.call("list_collections") if name.startswith(prefix) and not name.endswith(TERMS_SUFFIX)]

    def drop(self, generation: str) -> None:
        """A generation and its term statistics, if it has them."""
        for name in (generation, generation + TERMS_SUFFIX):
            if self.call("has_collection", name):
                self.call("drop_collection", name)

    def document_frequencies(self, generation: str, dimensions: list[int]) -> dict[int, int]:
        """How many chunks hold each term (by sparse dimension), for a generation with client-computed vectors."""
        found: dict[int, int] = {}
        for start in range(0, len(dimensions), QUERY_BATCH):
            batch = dimensions[start:start + QUERY_BATCH]
            rows = self.call("query", generation + TERMS_SUFFIX, filter=f"id in {batch}", output_fields=["df"])
            found.update({r["id"]: r["df"] for r in rows})
        return found

    def manifest(self, generation: str) -> dict:
        """A generation's manifest, after checking it is a collection of localcr's layout."""
        described = self.call("describe_collection", generation)
        recorded = described.get("properties", {}).get(MANIFEST_PROPERTY)
        manifest = json.loads(recorded) if recorded else {}
        if manifest.get("layout") != LAYOUT:
            raise BackendError(f"{self.location.text}: collection {generation} was not written by this localcr (layout "
                               f"{manifest.get('layout')!r}, not {LAYOUT!r}): rebuild it with `localcr index PATH --index "
                               f"{self.location.text} --rebuild`, or choose another collection name")
        dense = next((f for f in described["fields"] if f["name"] == "dense"), None)
        dimension = int(dense["params"]["dim"]) if dense else None
        if dimension != manifest["embedder"]["dimension"]:
            raise BackendError(f"{self.location.text}: collection {generation} holds dense vectors of {dimension} dimensions "
                               f"where its manifest says {manifest['embedder']['dimension']}: rebuild it with "
                               f"`localcr index PATH --index {self.location.text} --rebuild`")
        return manifest

    def refuse_foreign(self) -> None:
        """A collection that has the index's own name is someone else's: localcr only writes generations."""
        if self.location.name in self.call("list_collections"):
            raise BackendError(f"{self.location.text}: a collection named {self.location.name} exists and is not a "
                               "localcr index; choose another collection name")

    def iterate(self, generation: str, expression: str, fields: list[str]):
        """Every entity matching a filter, in batches (a query alone returns at most 16,384)."""
        iterator = self.call("query_iterator", generation, batch_size=QUERY_BATCH, filter=expression, output_fields=fields)
        try:
            while batch := iterator.next():
                yield from batch
        except Exception as exc:
            raise _failure(self.location, exc) from None
        finally:
            iterator.close()

    def count(self, generation: str, expression: str) -> int:
        return int(self.call("query", generation, filter=expression, output_fields=["count(*)"])[0]["count(*)"])


class MilvusBackend:
    """A Milvus index opened for reading: the generation its alias pointed at when opened (see localcr.backends
    for what a backend answers). Rows are chunk ids."""

    def __init__(self, location: str):
        self.connection = _Connection(location)
        self.location = self.connection.location.text
        generation = self.connection.aliased()
        if generation is None:
            self.connection.refuse_foreign()
            raise LocalcrError(f"{self.location}: no index there yet; build one with `localcr index PATH --index {self.location}`")
        self.generation = generation
        self.manifest = self.connection.manifest(generation)
        if self.connection.call("get_load_state", generation)["state"].name != "Loaded":
            self.connection.call("load_collection", generation)
        self.n_chunks = self.manifest["chunks"]
        self.lexical_kind = self.manifest["lexical"]["kind"]
        from localcr.lexical import stopwords_of

        self.stopwords = stopwords_of(self.manifest.get("languages", ["en"]))

    def warm(self) -> None:
        """Nothing to open: the server holds the collection loaded."""

    def current_generation(self) -> str | None:
        return self.connection.aliased()

    def _call(self, method: str, **kwargs):
        return self.connection.call(method, self.generation, **kwargs)

    # -- the ranked legs -------------------------------------------------------------------------------------
    def dense_ranked(self, vector: np.ndarray, depth: int) -> dict[str, float]:
        """Top chunks by cosine similarity; a chunk embedded as several windows scores as its best window."""
        per_chunk = max(1.0, self.manifest["windows"] / max(self.n_chunks, 1))
        limit = min(MAX_TOPK, int(depth * per_chunk) + 8)
        found = self._call("search", data=[np.asarray(vector, dtype=np.float32).ravel().tolist()], anns_field="dense",
                           limit=limit, output_fields=["chunk_id"],
                           search_params={"metric_type": "COSINE", "params": {"ef": max(limit, SEARCH_EF)}})
        scores: dict[str, float] = {}
        for hit in found[0]:
            scores.setdefault(hit["entity"]["chunk_id"], float(hit["distance"]))
            if len(scores) == depth:
                break
        return scores

    def lexical_ranked(self, query: str, depth: int) -> dict[str, float]:
        """Top chunks by BM25: the server's analysis of the query (BM25 function), or localcr's as a sparse vector.
        Milvus Lite returns BM25 scores negated; their magnitude is the score."""
        if self.lexical_kind == "function":
            data, metric = [query], "BM25"
        else:
            dimensions = sorted({sparse_dimension(t) for t in self.query_terms(query)})
            frequencies = self.connection.document_frequencies(self.generation, dimensions)
            if not frequencies:
                return {}
            data, metric = [{d: idf(df, self.n_chunks) for d, df in frequencies.items()}], "IP"
        found = self._call("search", data=data, anns_field="sparse", limit=min(depth, MAX_TOPK),
                           output_fields=["chunk_id"], search_params={"metric_type": metric})
        return {hit["entity"]["chunk_id"]: abs(float(hit["distance"])) for hit in found[0]}

    def query_terms(self, query: str) -> list[str]:
        from localcr.lexical import tokenize

        languages = self.manifest.get("languages") or ["en"]
        return list(dict.fromkeys(t for language in languages for t in tokenize(query, language, self.stopwords)))

    def highlighter(self, query: str):
        from localcr.lexical import highlighter

        return highlighter(self.query_terms(query), self.manifest.get("languages") or ["en"], self.stopwords)

    # -- records ---------------------------------------------------------------------------------------------
    def _chunks(self, expression: str) -> list[dict]:
        return self._call("query", filter=f"window == 0 and ({expression})", output_fields=CHUNK_FIELDS)

    def _documents(self, doc_ids) -> dict[str, dict]:
        found = self._call("query", filter=f"window == 0 and position == 0 and doc_id in {_literal(sorted(doc_ids))}",
                           output_fields=["doc_id", "document"])
        return {r["doc_id"]: json.loads(r["document"]) for r in found}

    def hit_records(self, rows: list[str]) -> list[dict]:
        """For each chunk id, in the order given: the chunk's fields plus its document's path, external id and page
        starts, as the local store gives them."""
        if not rows:
            return []
        chunks = {c["chunk_id"]: c for c in self._chunks(f"chunk_id in {_literal(list(rows))}")}
        documents = self._documents({c["doc_id"] for c in chunks.values()})
        return [_record(chunks[row], documents[chunks[row]["doc_id"]]) for row in rows]

    def rows_of_document(self, doc_id: str) -> list[str]:
        found = self._call("query", filter=f"window == 0 and doc_id == {_literal(doc_id)}", output_fields=["chunk_id", "position"])
        return [r["chunk_id"] for r in sorted(found, key=lambda r: r["position"])]

    def rows_around(self, row: str, window: int) -> list[str]:
        """The chunk and up to `window` chunks on each side from its own document, in document order."""
        (chunk,) = self._chunks(f"chunk_id == {_literal(row)}")
        position = chunk["position"]
        found = self._call("query", filter=f"window == 0 and doc_id == {_literal(chunk['doc_id'])} and position >= "
                           f"{position - window} and position <= {position + window}", output_fields=["chunk_id", "position"])
        return [r["chunk_id"] for r in sorted(found, key=lambda r: r["position"])]

    def row_of_chunk(self, chunk_id: str) -> str | None:
        return chunk_id if self._chunks(f"chunk_id == {_literal(chunk_id)}") else None

    def chunk_id_set(self) -> set[str]:
        return {r["chunk_id"] for r in self.connection.iterate(self.generation, "window == 0", ["chunk_id"])}

    def document_records(self) -> dict[str, dict]:
        """Every live document's record (doc_id -> its fields), read from its first chunk."""
        return {r["doc_id"]: json.loads(r["document"])
                for r in self.connection.iterate(self.generation, "window == 0 and position == 0", ["doc_id", "document"])}

    def doc_ids(self) -> set[str]:
        return set(self.document_records())

    def documents_by_external_id(self) -> dict[str, str]:
        return {d["external_id"]: doc_id for doc_id, d in self.document_records().items() if d.get("external_id")}

    def chunk_ids_for_external(self) -> dict[tuple[str, int], str]:
        external = {doc_id: d["external_id"] for doc_id, d in self.document_records().items() if d.get("external_id")}
        return {(external[r["doc_id"]], r["external_index"]): r["chunk_id"]
                for r in self.connection.iterate(self.generation, "window == 0 and external_index >= 0",
                                                 ["chunk_id", "doc_id", "external_index"])
                if r["doc_id"] in external}

    def stats(self) -> dict:
        """What the index holds, in the local store's terms where they apply (the server reports its own storage)."""
        documents = self.document_records()
        m = self.manifest
        sources = Counter(r["context_source"] for r in self.connection.iterate(self.generation, "window == 0", ["context_source"]))

        def counts(field: str) -> dict[str, int]:
            return dict(Counter(d[field] for d in documents.values() if d.get(field)))

        lexical = ("Milvus BM25 function, " + m["lexical"]["analyzer"] + " analyzer" if self.lexical_kind == "function"
                   else "sparse vectors of localcr's BM25 analysis, weighted at the last rebuild")
        server = "Milvus Lite " + self.connection.location.uri if self.connection.location.lite else self.connection.location.uri
        return {
            "directory": self.location, "generation": self.generation, "created": m["created"], "localcr": m["localcr"],
            "documents": len(documents), "chunks": sum(sources.values()), "windows": self.connection.count(self.generation, ""),
            "embedder": m["embedder"], "chunking": m["chunking"], "contexts": m["contexts"], "context_sources": dict(sources),
            "sources": m["sources"], "encodings": counts("encoding"), "languages": counts("language"),
            "structure": counts("structure"), "regex_fallback": sorted(i for i, d in documents.items() if d.get("structure") == "regex"),
            "skipped": m.get("skipped", []),
            "milvus": {"server": server, "alias": self.connection.location.name, "collection": self.generation, "lexical": lexical},
        }


def _record(chunk: dict, document: dict) -> dict:
    """A chunk entity and its document's record as the local store's hit record."""
    context_chars = chunk["context_chars"]
    return {"row": chunk["chunk_id"], "chunk_id": chunk["chunk_id"], "doc_id": chunk["doc_id"], "position": chunk["position"],
            "start": chunk["start"], "end": chunk["end"], "context": chunk["passage"][:context_chars],
            "text": chunk["passage"][context_chars + 1:],
            "external_index": None if chunk["external_index"] < 0 else chunk["external_index"],
            "path": document["path"], "external_id": document.get("external_id"), "pages": document.get("pages") or [],
            "kind": document.get("kind", "text")}


def sparse_dimension(term: str) -> int:
    return zlib.crc32(term.encode("utf-8")) % SPARSE_DIMENSIONS


def idf(df: int, n: int) -> float:
    """BM25's inverse document frequency, as localcr.lexical.bm25 weighs a term (in single precision)."""
    return float(np.float32(np.log(1 + (n - df + 0.5) / (df + 0.5))))


# ---------------------------------------------------------------------------------------------------- writing


def build(paths: list[str], location: str, registry, *, rebuild: bool = False, lexical: str | None = None, log,
          progress: bool = True, ray: str | None = None, contexts_from=None, **options):
    """localcr.index.build_index for a Milvus location: the same reading, chunking, contexts and embeddings, written
    as the module docstring says. lexical: "function" or "client" (default: as the index was built, else
    DEFAULT_LEXICAL)."""
    from localcr import pipeline
    from localcr.store import FILE_STATS, StoredDocument

    started = time.monotonic()
    connection = _Connection(location)
    current = connection.aliased()
    if current is None:
        connection.refuse_foreign()
    try:
        last = connection.manifest(current) if current else {}
    except BackendError:
        if not rebuild:
            raise
        last = {}  # a generation of another layout: --rebuild replaces it
    lexical = lexical or last.get("lexical", {}).get("kind") or DEFAULT_LEXICAL
    if lexical not in LEXICAL_KINDS:
        raise LocalcrError(f"lexical {lexical!r}: choose one of {', '.join(LEXICAL_KINDS)}")
    settings = pipeline.resolve_settings(last, registry, paths, **options)
    whole = (rebuild or contexts_from is not None or not pipeline.same_settings(last, settings)
             or lexical != last.get("lexical", {}).get("kind"))
    stored = {} if whole else {
        doc_id: StoredDocument(current, d["sha"], *last.get(FILE_STATS, {}).get(doc_id, (d["size"], d["mtime"])),
                               d["language"], d["n_chunks"])
        for doc_id, d in MilvusBackend(location).document_records().items()}
    summary = pipeline.BuildSummary(directory=location)  # shown as written: a Milvus location is no path
    plan = pipeline.plan_changes(settings, registry, stored, last, whole, summary, log)
    if lexical == "client" and not whole and set(plan.index_languages) != set(last.get("languages", [])):
        log("new languages bring their stop words into localcr's BM25 analysis: rebuilding the collection")
        return build(paths, location, registry, rebuild=True, lexical=lexical, log=log, progress=progress, ray=ray, **options)
    if not whole and not plan.docs and not plan.gone:
        if plan.file_stats != last.get(FILE_STATS, {}):
            _set_manifest(connection, current, {**last, FILE_STATS: plan.file_stats})
        summary.documents, summary.chunks = len(plan.kept), last["chunks"]
        summary.seconds = time.monotonic() - started
        return summary
    made = pipeline.make_chunks(plan, settings, last, whole, contexts_from, registry, progress, summary, log, ray)
    manifest = {**pipeline.manifest_of(settings, made.model, made.context_meta, summary, plan.index_languages, plan.file_stats),
                "layout": LAYOUT, "lexical": {"kind": lexical, "analyzer": _analyzer(connection)["type"] if lexical == "function" else None}}
    terms = None
    if lexical == "client":
        terms = TermCounts(plan.index_languages)
        terms.add([f"{c.context}\n{c.text}" for c in made.chunks], [d.language for d in plan.docs for _ in made.chunks_by_doc[d.doc_id]])
        mean_length = terms.mean_length() if whole else last["lexical"]["mean_length"]
        manifest["lexical"]["mean_length"] = mean_length
    rows = _entities(plan.docs, made, terms and terms.weights(mean_length))
    generation = _new_generation(connection, made.model.dimension, lexical) if whole else current
    rewritten = plan.gone | {d.doc_id for d in plan.docs}  # new ones too: what a killed run left of them
    if rewritten and not whole:
        if terms and plan.gone:  # the terms of the chunks about to go, as they were counted
            gone = connection.call("query", generation, filter=f"window == 0 and doc_id in {_literal(sorted(plan.gone))}",
                                   output_fields=["passage", "doc_id"])
            terms.remove([r["passage"] for r in gone], [stored[r["doc_id"]].language for r in gone])
        connection.call("delete", generation, filter=f"doc_id in {_literal(sorted(rewritten))}")
    _insert(connection, generation, rows)
    if terms:
        terms.write(connection, generation)
    # Counted by the server (Strong consistency: after this run's writes), so the manifest says what searches see.
    manifest.update(windows=connection.count(generation, ""), chunks=connection.count(generation, "window == 0"),
                    documents=connection.count(generation, "window == 0 and position == 0"))
    _set_manifest(connection, generation, manifest)
    if whole:
        if not connection.location.lite:  # Lite indexes on a timer of its own (half a minute for a few rows)
            _wait_for_indexes(connection, generation, log)
        connection.call("load_collection", generation)
        _move_alias(connection, generation, current)
    summary.documents, summary.chunks = manifest["documents"], manifest["chunks"]
    summary.seconds = time.monotonic() - started
    return summary


def _analyzer(connection: _Connection) -> dict:
    """The BM25 function's analyzer: English with stemming where the server has it (Milvus 2.5+ clusters), else the
    standard one (Milvus Lite has only that, and ignores a stemmer filter silently, so it is not asked for)."""
    return {"type": "standard"} if connection.location.lite else {"type": "english"}


def _new_generation(connection: _Connection, dimension: int, lexical: str) -> str:
    """An empty collection for a whole build, after dropping any that a killed build left (not the alias's nor the one
    before it, which searches opened earlier may still read)."""
    from pymilvus import DataType, Function, FunctionType

    keep = set()
    current = connection.aliased()
    if current:
        keep = {current, *connection.call("describe_collection", current).get("properties", {}).get("localcr.previous", "").split(",")}
    for stale in set(connection.generations()) - keep:
        connection.drop(stale)
    client = connection.client
    schema = client.create_schema(auto_id=True, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("chunk_id", DataType.VARCHAR, max_length=MAX_ID)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=MAX_ID)
    for name in ("position", "window", "start", "end", "external_index", "context_chars"):
        schema.add_field(name, DataType.INT64)
    schema.add_field("context_source", DataType.VARCHAR, max_length=32)
    analysed = {"enable_analyzer": True, "analyzer_params": _analyzer(connection)} if lexical == "function" else {}
    schema.add_field("passage", DataType.VARCHAR, max_length=MAX_VARCHAR, **analysed)
    schema.add_field("document", DataType.VARCHAR, max_length=MAX_VARCHAR)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dimension)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    if lexical == "function":
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["passage"],
                                     output_field_names=["sparse"]))
    indexes = client.prepare_index_params()
    indexes.add_index("dense", index_type="HNSW", metric_type="COSINE", params=HNSW_PARAMS)
    indexes.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25" if lexical == "function" else "IP",
                      params={"bm25_k1": K1, "bm25_b": B} if lexical == "function" else {})
    generation = (connection.location.name + GENERATION_SEPARATOR + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
                  + "_" + uuid.uuid4().hex[:6])
    try:
        connection.call("create_collection", generation, schema=schema, index_params=indexes, consistency_level="Strong")
    except BackendError as exc:
        if lexical == "function" and any(word in str(exc).lower() for word in ("function", "analyzer", "bm25")):
            raise BackendError(f"{connection.location.text}: the server has no BM25 function with the "
                               f"{_analyzer(connection)['type']} analyzer (Milvus 2.5 or later has): upgrade it, or index "
                               f"with --lexical client ({exc})") from None
        raise
    if lexical == "client":
        terms = client.create_schema(auto_id=False, enable_dynamic_field=False)
        terms.add_field("id", DataType.INT64, is_primary=True)  # the term's sparse dimension
        terms.add_field("df", DataType.INT64)
        terms.add_field("vector", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants a vector in every collection
        flat = client.prepare_index_params()
        flat.add_index("vector", index_type="FLAT", metric_type="L2")
        connection.call("create_collection", generation + TERMS_SUFFIX, schema=terms, index_params=flat, consistency_level="Strong")
    return generation


def _wait_for_indexes(connection: _Connection, generation: str, log) -> None:
    """Seal what was inserted and wait until the server has indexed all of it, so that the alias never points at a
    collection that searches by brute force (minutes at 100 M rows on a cluster)."""
    connection.call("flush", generation)
    said = False
    while True:
        states = [connection.call("describe_index", generation, name) for name in ("dense", "sparse")]
        if all(s["pending_index_rows"] == 0 and s["indexed_rows"] >= s["total_rows"] for s in states):
            return
        if not said:
            log(f"waiting for Milvus to index {states[0]['total_rows']} entities of {generation}")
            said = True
        time.sleep(INDEX_POLL_SECONDS)


def _move_alias(connection: _Connection, generation: str, current: str | None) -> None:
    """Point the index's name at the new generation (searches switch at once), remembering the one before."""
    if current is None:
        connection.call("create_alias", generation, connection.location.name)
        return
    connection.call("alter_collection_properties", generation, properties={"localcr.previous": current})
    connection.call("alter_alias", generation, connection.location.name)


def _set_manifest(connection: _Connection, generation: str, manifest: dict) -> None:
    connection.call("alter_collection_properties", generation, properties={MANIFEST_PROPERTY: json.dumps(manifest)})


def _insert(connection: _Connection, generation: str, rows: list[dict]) -> None:
    for start in range(0, len(rows), INSERT_BATCH):
        connection.call("insert", generation, rows[start:start + INSERT_BATCH])


def _entities(docs, made, sparse: list[dict[int, float]] | None) -> list[dict]:
    """One entity per dense window; the first window of each chunk carries its passage and (client) sparse vector, the
    first chunk of each document the document's record. Those that carry a record come last: a change killed halfway
    leaves documents without records, which the next run does not know, so it writes them again."""
    if not docs:
        return []
    chunks = made.chunks
    passages = [f"{c.context}\n{c.text}" for c in chunks]
    for chunk, passage in zip(chunks, passages):
        if len(passage.encode("utf-8")) > MAX_VARCHAR:
            raise LocalcrError(f"chunk {chunk.chunk_id} and its context hold more than {MAX_VARCHAR} bytes, Milvus's limit for "
                               "a text field: index with a smaller --chunk-tokens")
    documents = {d.doc_id: _document_record(d, len(made.chunks_by_doc[d.doc_id])) for d in docs}
    rows, seen = [], Counter()
    for vector, chunk_row in zip(made.vectors, made.window_rows):
        chunk = chunks[chunk_row]
        window = seen[chunk_row]
        seen[chunk_row] += 1
        first = window == 0
        row = {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "position": chunk.position, "window": window,
               "start": chunk.start, "end": chunk.end,
               "external_index": -1 if chunk.external_index is None else chunk.external_index,
               "context_chars": len(chunk.context), "context_source": chunk.context_source if first else "",
               "passage": passages[chunk_row] if first else "",
               "document": documents[chunk.doc_id] if first and chunk.position == 0 else "",
               "dense": vector.astype(np.float32).tolist()}
        if sparse is not None:
            row["sparse"] = (sparse[chunk_row] if first else None) or NO_TERMS
        rows.append(row)
    return sorted(rows, key=lambda row: row["document"] != "")


def _document_record(doc, n_chunks: int) -> str:
    record = {"path": doc.path, "kind": doc.kind, "sha": doc.sha, "size": doc.size, "external_id": doc.external_id,
              "n_chunks": n_chunks, "encoding": doc.encoding, "pages": doc.pages, "language": doc.language,
              "mtime": doc.mtime, "structure": doc.structure}
    text = json.dumps(record, ensure_ascii=False)
    if len(text.encode("utf-8")) > MAX_VARCHAR:
        raise LocalcrError(f"{doc.path}: its record (path, {len(doc.pages)} page starts) is longer than Milvus's limit for a text field")
    return text


class TermCounts:
    """localcr's BM25 analysis of the chunks a write adds and removes, for client-computed sparse vectors: each added
    chunk's term frequencies and length, and the change to every term's document frequency."""

    def __init__(self, languages: list[str]):
        from localcr.lexical import stopwords_of

        self.stopwords = stopwords_of(languages)
        self.added: list[tuple[Counter, int]] = []
        self.df_change: Counter = Counter()

    def _analyse(self, passage: str, language: str) -> tuple[Counter, int]:
        from localcr.lexical import EMPTY, tokenize

        tokens = tokenize(passage, language, self.stopwords) or [EMPTY]  # a text of no terms has the one EMPTY term
        return Counter(sparse_dimension(t) for t in tokens), len(tokens)

    def add(self, passages: list[str], languages: list[str]) -> None:
        self.added = [self._analyse(p, language) for p, language in zip(passages, languages)]
        for counts, _ in self.added:
            self.df_change.update(counts.keys())

    def remove(self, passages: list[str], languages: list[str]) -> None:
        for passage, language in zip(passages, languages):
            self.df_change.subtract(self._analyse(passage, language)[0].keys())

    def mean_length(self) -> float:
        return sum(length for _, length in self.added) / max(len(self.added), 1)

    def weights(self, mean_length: float) -> list[dict[int, float]]:
        """Each added chunk's saturated term frequencies, tf / (tf + k1 (1 - b + b len / mean len)), in single
        precision as localcr.lexical scores."""
        from localcr.lexical import length_norms

        norms = length_norms(np.array([length for _, length in self.added]), mean_length)
        return [{d: float(np.float32(tf) / (norm + np.float32(tf))) for d, tf in counts.items()}
                for (counts, _), norm in zip(self.added, norms)]

    def write(self, connection: _Connection, generation: str) -> None:
        """Bring the generation's document frequencies up to date (a term no chunk holds any more is deleted)."""
        changed = sorted(d for d, change in self.df_change.items() if change)
        now = connection.document_frequencies(generation, changed)
        after = {d: now.get(d, 0) + self.df_change[d] for d in changed}
        kept = [{"id": d, "df": df, "vector": [0.0, 0.0]} for d, df in after.items() if df > 0]
        for start in range(0, len(kept), INSERT_BATCH):
            connection.call("upsert", generation + TERMS_SUFFIX, kept[start:start + INSERT_BATCH])
        dropped = [d for d, df in after.items() if df <= 0]
        if dropped:
            connection.call("delete", generation + TERMS_SUFFIX, filter=f"id in {dropped}")
