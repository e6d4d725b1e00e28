"""Writing a Milvus index: a whole build into a new generation and the alias moved to it, or a change written into the
generation the alias points at (see localcr.backends.milvus)."""
from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from datetime import datetime, timezone

import numpy as np

from localcr.backends.milvus.connection import GENERATION_SEPARATOR, LAYOUT, MANIFEST_PROPERTY, TERMS_SUFFIX, Connection, literal
from localcr.backends.milvus.search import MilvusBackend
from localcr.backends.milvus.terms import INSERT_BATCH, NO_TERMS, TermCounts
from localcr.errors import BackendError, LocalcrError

# "none": a dense-only index, for a server without sparse vectors (Milvus 2.3).
LEXICAL_KINDS = ("function", "client", "none")
# Chosen by benchmarks/scale/milvus.py (BENCHMARKS.md): localcr's analysis kept the local index's Pass@k exactly on the code
# set and XQuAD en; Milvus Lite's BM25 function (standard analyzer) lost 25 points of lexical Pass@5 on code.
DEFAULT_LEXICAL = "client"
MAX_VARCHAR = 65_535  # Milvus's limit on a VARCHAR field, in bytes
MAX_ID = 4096
# The dense index: HNSW with the local store's graph parameters (see localcr.store); on a cluster of 100 M chunks,
# IVF_PQ or DiskANN instead (docs/milvus-and-ray.md, "Milvus: when one machine is not enough").
HNSW_PARAMS = {"M": 32, "efConstruction": 200}
K1, B = 1.2, 0.75  # BM25 as the local index scores it (localcr.lexical)
INDEX_POLL_SECONDS = 0.5


def build(paths: list[str], location: str, registry, *, rebuild: bool = False, lexical: str | None = None, log,
          progress: bool = True, ray: str | None = None, contexts_from=None, **options):
    """localcr.index.build_index for a Milvus location: the same reading, chunking, contexts and embeddings, written
    as localcr.backends.milvus says. lexical: "function", "client" or "none" (default: as the index was built, else
    DEFAULT_LEXICAL)."""
    from localcr import pipeline
    from localcr.store import FILE_STATS, StoredDocument

    started = time.monotonic()
    connection = Connection(location)
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
    connection.check_lexical(lexical)
    settings = pipeline.resolve_settings(last, registry, paths, rebuild=rebuild, **options)
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
            set_manifest(connection, current, {**last, FILE_STATS: plan.file_stats})
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
    rows = entities(plan.docs, made, terms and terms.weights(mean_length))
    generation = new_generation(connection, made.model.dimension, lexical) if whole else current
    rewritten = plan.gone | {d.doc_id for d in plan.docs}  # new ones too: what a killed run left of them
    if rewritten and not whole:
        if terms and plan.gone:  # the terms of the chunks about to go, as they were counted
            gone = connection.call("query", generation, filter=f"window == 0 and doc_id in {literal(sorted(plan.gone))}",
                                   output_fields=["passage", "doc_id"])
            terms.remove([r["passage"] for r in gone], [stored[r["doc_id"]].language for r in gone])
        connection.call("delete", generation, filter=f"doc_id in {literal(sorted(rewritten))}")
    insert(connection, generation, rows)
    if terms:
        terms.write(connection, generation)
    # Counted by the server (Strong consistency: after this run's writes), so the manifest says what searches see.
    manifest.update(windows=connection.count(generation, ""), chunks=connection.count(generation, "window == 0"),
                    documents=connection.count(generation, "window == 0 and position == 0"))
    set_manifest(connection, generation, manifest)
    if whole:
        if not connection.location.lite:  # Lite indexes on a timer of its own (half a minute for a few rows)
            wait_for_indexes(connection, generation, log)
        connection.call("load_collection", generation)
        move_alias(connection, generation, current)
    summary.documents, summary.chunks = manifest["documents"], manifest["chunks"]
    summary.seconds = time.monotonic() - started
    return summary


def _analyzer(connection: Connection) -> dict:
    """The BM25 function's analyzer: English with stemming where the server has it (Milvus 2.5+ clusters), else the
    standard one (Milvus Lite has only that, and ignores a stemmer filter silently, so it is not asked for)."""
    return {"type": "standard"} if connection.location.lite else {"type": "english"}


def new_generation(connection: Connection, dimension: int, lexical: str) -> str:
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
    schema.add_field("path", DataType.VARCHAR, max_length=MAX_ID)  # the document's, on all its entities: what filters read
    schema.add_field("kind", DataType.VARCHAR, max_length=64)
    schema.add_field("language", DataType.VARCHAR, max_length=16)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dimension)
    if lexical != "none":
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    if lexical == "function":
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["passage"],
                                     output_field_names=["sparse"]))
    indexes = client.prepare_index_params()
    indexes.add_index("dense", index_type="HNSW", metric_type="COSINE", params=HNSW_PARAMS)
    if lexical != "none":
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


def wait_for_indexes(connection: Connection, generation: str, log) -> None:
    """Seal what was inserted and wait until the server has indexed all of it, so that the alias never points at a
    collection that searches by brute force (minutes at 100 M rows on a cluster)."""
    connection.call("flush", generation)
    said = False
    while True:
        states = [connection.call("describe_index", generation, name) for name in connection.call("list_indexes", generation)]
        if all(s["pending_index_rows"] == 0 and s["indexed_rows"] >= s["total_rows"] for s in states):
            return
        if not said:
            log(f"waiting for Milvus to index {states[0]['total_rows']} entities of {generation}")
            said = True
        time.sleep(INDEX_POLL_SECONDS)


def move_alias(connection: Connection, generation: str, current: str | None) -> None:
    """Point the index's name at the new generation (searches switch at once), remembering the one before."""
    if current is None:
        connection.call("create_alias", generation, connection.location.name)
        return
    connection.call("alter_collection_properties", generation, properties={"localcr.previous": current})
    connection.call("alter_alias", generation, connection.location.name)


def set_manifest(connection: Connection, generation: str, manifest: dict) -> None:
    connection.call("alter_collection_properties", generation, properties={MANIFEST_PROPERTY: json.dumps(manifest)})


def insert(connection: Connection, generation: str, rows: list[dict]) -> None:
    for start in range(0, len(rows), INSERT_BATCH):
        connection.call("insert", generation, rows[start:start + INSERT_BATCH])


def entities(docs, made, sparse: list[dict[int, float]] | None) -> list[dict]:
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
    filtered_fields = {d.doc_id: {"path": d.path, "kind": d.kind, "language": d.language} for d in docs}
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
               **filtered_fields[chunk.doc_id],
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
