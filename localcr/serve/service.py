"""One index kept loaded for many requests: what the HTTP API, the search page and the MCP tools all call.

Requests are answered concurrently from the generation that was current when the index was last (re)opened.
Every request first looks at the index marker (one small file); when a rebuild has switched a new generation
in, one request opens it (the embedder already loaded is handed over) while the others keep answering from
the previous one, which the store keeps on disk, and the new one takes over once it is ready.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Annotated, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field

from localcr.answers.reader import DEFAULT_SOURCES
from localcr.errors import LocalcrError
from localcr.filters import KINDS
from localcr.models import Registry, load_registry
from localcr.parsing.markdown import KINDS as MARKDOWN_KINDS
from localcr.parsing.markdown import to_html
from localcr.serve.batching import QueryBatcher
from localcr.search import DEFAULT_ALPHA, DEFAULT_CANDIDATES, DEFAULT_FUSION, Index, page_at

log = logging.getLogger("localcr.serve")

# Limits on what one request may ask for: each bounds the work (and memory) of a request.
MAX_QUERY_CHARS = 1000
MAX_K = 100
MAX_CANDIDATES = 1000
MAX_WINDOW = 10
MAX_BODY_BYTES = 16 * 1024
MAX_GLOBS = 20
MAX_GLOB_CHARS = 500
MAX_SOURCES = 20  # an answer's sources: each is read by the LLM, seconds apiece on a CPU


class NotFound(LocalcrError):
    """A document or chunk id the index does not hold."""


class _Retrieval(BaseModel):
    """How hits are found, for a search and for the sources of an answer; the defaults are the CLI's."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    fusion: Literal["auto", "dynamic", "weighted", "rrf"] = Field(DEFAULT_FUSION, description="How hybrid search fuses its two lists.")
    alpha: float = Field(DEFAULT_ALPHA, ge=0, le=1, description="Weight of the dense side in weighted fusion.")
    rerank: bool = Field(False, description="Rerank the fused candidates with a cross-encoder.")
    reranker: str | None = Field(None, max_length=200, description="Which reranker in models.toml (default: the default one).")
    candidates: int = Field(DEFAULT_CANDIDATES, ge=1, le=MAX_CANDIDATES,
                            description="Candidates each retriever hands to fusion, and fusion to the reranker.")
    window: int = Field(0, ge=0, le=MAX_WINDOW, description="Neighbouring chunks added on each side of a hit.")
    glob: list[Annotated[str, Field(max_length=MAX_GLOB_CHARS)]] = Field(
        [], max_length=MAX_GLOBS, description="Search only documents whose id or path matches one of these patterns "
        "(as ripgrep's -g: `*` within a folder, `**` across folders); a pattern starting with ! excludes.")
    kind: str | None = Field(None, max_length=40, description=f"Search only documents of this kind: {', '.join(KINDS)} or code:SUFFIX.")
    lang: str | None = Field(None, max_length=4, description="Search only documents in this language (ISO 639-1, e.g. en) "
                             "and those too short to tell (und); =en: in this language only.")

    def search_options(self) -> dict:
        return {name: getattr(self, name) for name in ("mode", "fusion", "alpha", "candidates", "window", "glob", "kind", "lang")}


class SearchRequest(_Retrieval):
    """A search, with every option `localcr search` has; the defaults are the CLI's."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for, in any words.")
    k: int = Field(5, ge=1, le=MAX_K, description="Results to return.")
    highlight: bool = Field(False, description="Add `matches` to each hit: where the query's terms occur in its text, "
                            "context and window, as [start, end] character spans (what the search page marks); and "
                            "for a hit of a Markdown document (Markdown, HTML, DOCX, PPTX) `text_html`, its text "
                            "rendered (raw HTML escaped, as text) with the terms in <mark>.")


class AskRequest(_Retrieval):
    """A question for `localcr ask`: its sources found as a search finds hits; the defaults are the CLI's."""

    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question, in any language.")
    k: int = Field(DEFAULT_SOURCES, ge=1, le=MAX_SOURCES, description="Sources the LLM reads: the k best hits.")
    llm: str | None = Field(None, max_length=200, description="Which LLM in models.toml answers (default: the default one).")
    fresh: bool = Field(False, description="Write the answer again even if it is cached.")
    compute: bool = Field(True, description="Compute an answer from the sources' tables where they hold one that "
                          "answers by arithmetic; false: the LLM reads every answer.")


class Service:
    """An index and its models, loaded once and shared by concurrent requests."""

    def __init__(self, directory: str | Path, registry: Registry | None = None):
        self.directory = str(directory)  # a Milvus location is no path: Path would fold its "//"
        self.registry = registry or load_registry()
        self._index = self._open(embedder=None)
        self._switching = threading.Lock()
        self._unopenable: str | None = None  # a generation that failed to open: not tried again on every request
        self._rerankers: dict[str | None, object] = {}
        self._rerankers_lock = threading.Lock()
        self._answerers: dict[str | None, object] = {}
        self._answering = threading.Lock()  # one LLM answers one question at a time
        self.started = time.time()

    # -- the current generation ---------------------------------------------------------------------------
    def _open(self, embedder: QueryBatcher | None) -> Index:
        """Open the current generation with everything a search needs loaded, so no request pays for it; the
        embedder (behind a QueryBatcher) is the one already loaded unless the index now uses another model."""
        index = Index(self.directory, self.registry, embedder=embedder)
        if index.embedder is not embedder:
            index = Index(self.directory, self.registry, embedder=QueryBatcher(index.embedder))
            index.embedder.embed_query("warm up")
        index.store.warm()
        return index

    @property
    def index(self) -> Index:
        """The newest complete generation: switched to when a rebuild has published a new one. Only one request
        opens it; the others meanwhile keep using the previous generation."""
        index = self._index
        try:
            current = index.store.current_generation()
        except LocalcrError as exc:  # the directory was replaced by something else: keep serving what we have
            log.warning("%s", exc)
            return index
        if current is None or current in (index.store.generation, self._unopenable) \
                or not self._switching.acquire(blocking=False):
            return index
        try:
            if self._index is index:
                self._index = self._open(embedder=index.__dict__.get("embedder"))
                log.info("switched to %s", self._index.store.generation)
        except LocalcrError as exc:  # published generations never change: the next rebuild's is tried, not this again
            self._unopenable = current
            log.warning("staying on %s: %s", index.store.generation, exc)
        finally:
            self._switching.release()
        return self._index

    def _reranker(self, name: str | None):
        with self._rerankers_lock:  # a reranker loads once, however many requests ask for it at the same time
            if name not in self._rerankers:
                from localcr.rerankers import load_reranker

                try:
                    self._rerankers[name] = load_reranker(self.registry, name)
                except LocalcrError as exc:  # the full reason names the server's files: it goes to the log only
                    log.warning("%s", exc)
                    which = f"reranker {name!r}" if name else "no default reranker"
                    raise LocalcrError(f"{which} is not available on this server (its log says why)") from None
            return self._rerankers[name]

    # -- requests -----------------------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> dict:
        """Hits, each with where the query's terms occur in its text, context and window if asked (highlight)."""
        began = time.perf_counter()
        index = self.index
        reranker = self._reranker(request.reranker) if request.rerank else None
        hits = index.search(request.query, request.k, rerank=reranker, **request.search_options())
        results = [hit.to_dict() for hit in hits]
        unmatched = None if hits else index.unmatched(request.glob, request.kind, request.lang)
        note = index.coverage_note(request.mode)
        if request.highlight:
            for result, hit, matches in zip(results, hits, index.matches(request.query, hits)):
                result["matches"] = matches
                if hit.kind in MARKDOWN_KINDS:  # what the search page shows as Markdown
                    result["text_html"] = to_html(hit.text, matches.get("text", []))
        return {"query": request.query, "generation": index.store.generation, "hits": results,
                "took_ms": round((time.perf_counter() - began) * 1000, 2), **({"unmatched": unmatched} if unmatched else {}),
                **({"note": note} if note else {})}

    def ask(self, request: AskRequest) -> Iterator[dict]:
        """The answer's events as JSON objects: {"event": "sources", "sources": [...]}, {"event": "estimate",
        "text": "reading 5 sources (1,204 tokens), about 9 s here"} unless cached, then {"event": "text", "text":
        piece} as the model writes ({"event": "withdrawn", "text": why} where the text so far is taken back), then
        {"event": "answer", ...Answer.to_dict()}. Retrieval and the first
        event happen before this returns, so a bad request or a model that cannot load is an error, not a stream;
        a problem later is a last {"event": "error", "error": one line}. Questions are answered one at a time (one
        LLM); a waiting one waits its turn."""
        events = self._answer_events(request)
        return _Started(next(events), events)

    def _answer_events(self, request: AskRequest) -> Iterator[dict]:
        reranker = self._reranker(request.reranker) if request.rerank else None
        with self._answering:  # released when the stream ends, fails, or is dropped unread (the generator is closed)
            events = self.index.ask_stream(request.question, request.k, answerer=self._answerer(request.llm),
                                           fresh=request.fresh, compute=request.compute, rerank=reranker, **request.search_options())
            started = False
            try:
                for event, value in events:
                    if event == "sources":
                        yield {"event": "sources", "sources": [source.to_dict() for source in value]}
                    elif event in ("text", "estimate", "withdrawn", "note"):
                        yield {"event": event, "text": value}
                    else:
                        yield {"event": "answer", **value.to_dict()}
                    started = True
            except LocalcrError as exc:
                if not started:
                    raise
                yield {"event": "error", "error": str(exc)}
            finally:
                events.close()

    def _answerer(self, name: str | None):
        if name not in self._answerers:  # under self._answering: loaded once
            from localcr.answers.reader import load_answerer

            try:
                self._answerers[name] = load_answerer(self.registry, name, log=lambda message: log.info("%s", message))
            except LocalcrError as exc:  # the full reason names the server's files: it goes to the log only
                log.warning("%s", exc)
                which = f"LLM {name!r}" if name else "the default LLM"
                raise LocalcrError(f"{which} is not available on this server (its log says why)") from None
        return self._answerers[name]

    def document(self, doc_id: str) -> dict:
        """A document's chunks in order, each with its context."""
        store = self.index.store
        rows = list(store.rows_of_document(doc_id))
        if not rows:
            raise NotFound(f"no document {doc_id!r} in this index")
        chunks = [_chunk(record) for record in store.hit_records(rows)]
        first = store.hit_records(rows[:1])[0]
        return {"doc_id": doc_id, "path": first["path"], "external_id": first["external_id"], "chunks": chunks}

    def chunk(self, chunk_id: str, window: int = 1) -> dict:
        """A chunk and up to `window` neighbours on each side from its own document."""
        if not 0 <= window <= MAX_WINDOW:
            raise LocalcrError(f"window must be between 0 and {MAX_WINDOW}")
        store = self.index.store
        row = store.row_of_chunk(chunk_id)
        if row is None:
            raise NotFound(f"no chunk {chunk_id!r} in this index")
        span = store.rows_around(row, window)
        records = {r["row"]: r for r in store.hit_records(span)}
        at = span.index(row)
        return {"chunk": _chunk(records[row]), "path": records[row]["path"], "doc_id": records[row]["doc_id"],
                "before": [_chunk(records[r]) for r in span[:at]],
                "after": [_chunk(records[r]) for r in span[at + 1:]]}

    def stats(self) -> dict:
        return self.index.store.stats()

    def health(self) -> dict:
        """Whether the index answers, which generation, and how far its vectors and cards are (a build may be
        embedding and writing them)."""
        from localcr.pipeline import coverage_text

        index = self.index
        embedded, chunks = index.store.dense_coverage
        return {"status": "ok", "generation": index.store.generation, "chunks": index.store.live_chunks,
                "embedder": index.store.manifest["embedder"]["name"], "uptime_s": round(time.time() - self.started, 1),
                "embedded_chunks": embedded, "live_chunks": chunks,
                "contexts": coverage_text(index.store.manifest.get("contexts", {}), dense=(embedded, chunks))}


class _Started:
    """A generator whose first item has been taken (to raise its errors before a response starts), with that item
    put back in front; close() closes the generator (a client gone mid-answer must free the LLM)."""

    def __init__(self, first, rest):
        self._first, self._rest = [first], rest

    def __iter__(self):
        return self

    def __next__(self):
        return self._first.pop() if self._first else next(self._rest)

    def close(self) -> None:
        self._rest.close()


def _chunk(record: dict) -> dict:
    return {"chunk_id": record["chunk_id"], "position": record["position"], "start": record["start"],
            "end": record["end"], "page": page_at(record["pages"], record["start"]),
            "context": record["context"], "text": record["text"]}
