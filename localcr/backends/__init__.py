"""Where an index lives: the boundary between retrieval and storage.

An index is either a local directory (localcr.backends.local, the default: segments of SQLite, usearch graphs
and BM25 postings) or a Milvus collection (localcr.backends.milvus, `pip install 'localcr[milvus]'`), named by a
location a user can tell apart at a glance:

    my-index                                   a local index directory
    milvus://HOST:PORT/COLLECTION              a Milvus server (milvus+https:// for TLS)
    milvus-lite:PATH.db/COLLECTION             an embedded Milvus Lite file (the test stand-in for a server)

The token and database of a server come from the environment (LOCALCR_MILVUS_TOKEN, LOCALCR_MILVUS_DATABASE),
never from the command line, where shell history would keep them.

Both backends answer at the level of ranked legs, so fusion, neighbour windows and reranking (localcr.search) are
the same code whatever holds the index. A backend opened for reading offers:

    generation, manifest, n_chunks, location      what was built, and how (the manifest's embedder record)
    dense_ranked(vector, depth, selection) -> {row: score}    the best chunks by cosine similarity
    lexical_ranked(query, depth, selection) -> {row: score}   the best chunks by BM25
    select(filter) -> selection                    the documents a filter (localcr.filters) lets through, as the legs
                                                   take them (None: all); selection.documents counts them
    dense_only                                     a Milvus index built without a lexical leg
    dense_coverage                                 (chunks with vectors, chunks): a local build commits its chunks
                                                   for the lexical leg before their vectors
    hit_records(rows), rows_around(row, window), rows_of_document(doc_id), row_of_chunk(chunk_id)
    chunk_id_set(), doc_ids(), chunk_ids_for_external(), documents_by_external_id()   for evaluation's gold sets
    highlighter(query), stats(), current_generation(), warm()

A row is the backend's own handle on a chunk (the local store's row number, Milvus's chunk id): retrieval only
compares, sorts and hands rows back.
"""
from __future__ import annotations

from pathlib import Path

from localcr.backends.locations import MILVUS_SCHEMES, is_milvus

__all__ = ["MILVUS_SCHEMES", "is_milvus", "open_backend"]


def open_backend(location: str | Path):
    """The index at a location, opened for reading as it is now; a LocalcrError if there is none there."""
    if is_milvus(location):
        from localcr.backends.milvus import MilvusBackend  # pymilvus only when a Milvus index is named

        return MilvusBackend(str(location))
    from localcr.backends.local import LocalBackend

    return LocalBackend(location)
