"""Searching a Milvus index: the ranked legs (filtered by expression), and the records a hit, a document and the
stats are made of, in the local store's terms (see localcr.backends)."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np

from localcr.backends.milvus.connection import MANIFEST_PROPERTY, Connection, literal
from localcr.backends.milvus.terms import document_frequencies, idf, sparse_dimension
from localcr.errors import LocalcrError
from localcr.filters import FAMILIES, SELECTIONS_KEPT, Filter

MAX_TOPK = 16_384  # Milvus answers at most this many entities a search
SEARCH_EF = 200  # HNSW's search breadth at least, as the local store's graph searches
CHUNK_FIELDS = ["chunk_id", "doc_id", "position", "start", "end", "external_index", "context_chars", "passage"]


@dataclass(frozen=True)
class Selection:
    """The documents a filter lets through, as a filter expression on the entities' fields, and how many they are."""

    expression: str
    documents: int


def _kind_expression(kind: str) -> str:
    if kind == "code":
        return 'kind like "code%"'  # a prefix: the one `like` every Milvus server since 2.2 answers
    if kind in FAMILIES:
        return f"kind in {literal(list(FAMILIES[kind]))}"
    return f"kind == {literal(kind)}"


class MilvusBackend:
    """A Milvus index opened for reading: the generation its alias pointed at when opened (see localcr.backends
    for what a backend answers). Rows are chunk ids."""

    def __init__(self, location: str):
        self.connection = Connection(location)
        self.location = self.connection.location.text
        generation = self.connection.aliased()
        if generation is None:
            self.connection.refuse_foreign()
            raise LocalcrError(f"{self.location}: no index there yet; build one with `localcr index PATH --index {self.location}`")
        self.generation = generation
        self.manifest = self.connection.manifest(generation)
        if self.connection.call("get_load_state", generation)["state"].name != "Loaded":
            self.connection.call("load_collection", generation)
        self.n_chunks = self.live_chunks = self.manifest["chunks"]  # a generation holds no replaced rows
        self.lexical_kind = self.manifest["lexical"]["kind"]
        self.dense_only = self.lexical_kind == "none"
        self._selections: dict[tuple[Filter, str], Selection] = {}
        from localcr.lexical import stopwords_of

        self.stopwords = stopwords_of(self.manifest.get("languages", ["en"]))

    @property
    def dense_coverage(self) -> tuple[int, int]:
        """(chunks with vectors, chunks): a collection is published whole, every chunk embedded."""
        return self.n_chunks, self.n_chunks

    def warm(self) -> None:
        """Nothing to open: the server holds the collection loaded."""

    def current_generation(self) -> str | None:
        return self.connection.aliased()

    def _call(self, method: str, **kwargs):
        return self.connection.call(method, self.generation, **kwargs)

    # -- the ranked legs -------------------------------------------------------------------------------------
    def select(self, wanted: Filter) -> Selection:
        """The filter expression of the documents a filter lets through. Kind and language are compared by the server;
        globs are matched here against the documents' ids and paths (Milvus's `like` knows neither `*` within a folder
        nor `**`), which the expression then names: each value a quoted literal, so no pattern or path is ever read
        as expression syntax. Worked out once per filter while the manifest stays as it is: every write rewrites it,
        and reading it is a metadata call, where listing the documents waits for Strong consistency (a second on a
        2.3 server)."""
        written = self.connection.call("describe_collection", self.generation).get("properties", {}).get(MANIFEST_PROPERTY)
        if (wanted, written) not in self._selections:
            if len(self._selections) >= SELECTIONS_KEPT:
                self._selections.pop(next(iter(self._selections)))  # the oldest
            self._selections[wanted, written] = self._select(wanted)
        return self._selections[wanted, written]

    def _select(self, wanted: Filter) -> Selection:
        narrowed = " and ".join(_kind_expression(wanted.kind) if name == "kind" else f"language in {literal(list(wanted.languages))}"
                                for name in ("kind", "lang") if getattr(wanted, name) is not None)
        first_entities = "window == 0 and position == 0" + (f" and {narrowed}" if narrowed else "")
        if not wanted.globs:
            return Selection(narrowed, self.connection.count(self.generation, first_entities))
        passing, failing = [], []
        for r in self.connection.iterate(self.generation, first_entities, ["doc_id", "path"]):
            (passing if wanted.passes_path(r["doc_id"], r["path"]) else failing).append(r["doc_id"])
        # the shorter list: a filter keeping most documents names those it leaves out
        named = f"doc_id in {literal(sorted(passing))}" if len(passing) <= len(failing) else \
            f"doc_id not in {literal(sorted(failing))}" if failing else ""
        return Selection(" and ".join(part for part in (narrowed, named) if part), len(passing))

    def dense_ranked(self, vector: np.ndarray, depth: int, selection: Selection | None = None) -> dict[str, float]:
        """Top chunks by cosine similarity (of the selected ones); a chunk embedded as several windows scores as its
        best window."""
        per_chunk = max(1.0, self.manifest["windows"] / max(self.n_chunks, 1))
        limit = min(MAX_TOPK, int(depth * per_chunk) + 8)
        found = self._call("search", data=[np.asarray(vector, dtype=np.float32).ravel().tolist()], anns_field="dense",
                           limit=limit, output_fields=["chunk_id"], filter=selection.expression if selection else "",
                           search_params={"metric_type": "COSINE", "params": {"ef": max(limit, SEARCH_EF)}})
        scores: dict[str, float] = {}
        for hit in found[0]:
            scores.setdefault(hit["entity"]["chunk_id"], float(hit["distance"]))
            if len(scores) == depth:
                break
        return scores

    def lexical_ranked(self, query: str, depth: int, selection: Selection | None = None) -> dict[str, float]:
        """Top chunks by BM25 (of the selected ones): the server's analysis of the query (BM25 function), or localcr's
        as a sparse vector. Milvus Lite returns BM25 scores negated; their magnitude is the score."""
        if self.lexical_kind == "function":
            data, metric = [query], "BM25"
        else:
            dimensions = sorted({sparse_dimension(t) for t in self.query_terms(query)})
            frequencies = document_frequencies(self.connection, self.generation, dimensions)
            if not frequencies:
                return {}
            data, metric = [{d: idf(df, self.n_chunks) for d, df in frequencies.items()}], "IP"
        found = self._call("search", data=data, anns_field="sparse", limit=min(depth, MAX_TOPK), output_fields=["chunk_id"],
                           filter=selection.expression if selection else "", search_params={"metric_type": metric})
        return {hit["entity"]["chunk_id"]: abs(float(hit["distance"])) for hit in found[0]}

    def query_terms(self, query: str) -> list[str]:
        from localcr.lexical import tokenize

        languages = self.manifest.get("languages") or ["en"]
        return list(dict.fromkeys(t for language in languages for t in tokenize(query, language, self.stopwords)))

    def highlighter(self, query: str):
        from localcr.lexical import highlighter

        return highlighter(self.query_terms(query), self.manifest.get("languages") or ["en"], self.stopwords)

    def term_shares(self, query: str) -> dict[str, float]:
        """None known: the question's subject by its rare terms is a local index's (the answer check then reads
        names alone)."""
        return {}

    # -- records ---------------------------------------------------------------------------------------------
    def _chunks(self, expression: str) -> list[dict]:
        return self._call("query", filter=f"window == 0 and ({expression})", output_fields=CHUNK_FIELDS)

    def _documents(self, doc_ids) -> dict[str, dict]:
        found = self._call("query", filter=f"window == 0 and position == 0 and doc_id in {literal(sorted(doc_ids))}",
                           output_fields=["doc_id", "document"])
        return {r["doc_id"]: json.loads(r["document"]) for r in found}

    def hit_records(self, rows: list[str]) -> list[dict]:
        """For each chunk id, in the order given: the chunk's fields plus its document's path, external id and page
        starts, as the local store gives them."""
        if not rows:
            return []
        chunks = {c["chunk_id"]: c for c in self._chunks(f"chunk_id in {literal(list(rows))}")}
        documents = self._documents({c["doc_id"] for c in chunks.values()})
        return [_record(chunks[row], documents[chunks[row]["doc_id"]]) for row in rows]

    def rows_of_document(self, doc_id: str) -> list[str]:
        found = self._call("query", filter=f"window == 0 and doc_id == {literal(doc_id)}", output_fields=["chunk_id", "position"])
        return [r["chunk_id"] for r in sorted(found, key=lambda r: r["position"])]

    def rows_around(self, row: str, window: int) -> list[str]:
        """The chunk and up to `window` chunks on each side from its own document, in document order."""
        (chunk,) = self._chunks(f"chunk_id == {literal(row)}")
        position = chunk["position"]
        found = self._call("query", filter=f"window == 0 and doc_id == {literal(chunk['doc_id'])} and position >= "
                           f"{position - window} and position <= {position + window}", output_fields=["chunk_id", "position"])
        return [r["chunk_id"] for r in sorted(found, key=lambda r: r["position"])]

    def row_of_chunk(self, chunk_id: str) -> str | None:
        return chunk_id if self._chunks(f"chunk_id == {literal(chunk_id)}") else None

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

        lexical = {"function": f"Milvus BM25 function, {m['lexical']['analyzer']} analyzer",
                   "client": "sparse vectors of localcr's BM25 analysis, weighted at the last rebuild",
                   "none": "none (a dense-only index)"}[self.lexical_kind]
        server = "Milvus Lite " + self.connection.location.uri if self.connection.location.lite else self.connection.location.uri
        return {
            "directory": self.location, "generation": self.generation, "created": m["created"], "localcr": m["localcr"],
            "documents": len(documents), "chunks": sum(sources.values()), "windows": self.connection.count(self.generation, ""),
            "embedder": m["embedder"], "chunking": m["chunking"], "contexts": m["contexts"], "context_sources": dict(sources),
            "sources": m["sources"], "encodings": counts("encoding"), "languages": counts("language"), "kinds": counts("kind"),
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
            "kind": document.get("kind", "text"), "structure": document.get("structure") or ""}
