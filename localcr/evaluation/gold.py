"""Gold targets, and how a query file's ids become targets of one index: chunk ids, document ids, the (document
uuid, chunk index) pairs of an imported corpus, and character spans of documents (given, or the spans the
published format's gold chunks cover in their documents' text)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Reasons one id of a line was left out (QuerySet.skipped keys).
MALFORMED_ID = "malformed id (id ignored)"
UNKNOWN_ID = "id is neither a chunk nor a document of this index (id ignored)"
UNKNOWN_DOC = "document uuid not in this index (id ignored)"
UNKNOWN_CHUNK = "document uuid known, chunk index not in this index (id ignored)"
DUPLICATE_ID = "id repeated within a query (repeat ignored)"
NO_SPAN_TEXT = "gold chunk without its text and its document's text (golden_chunks, golden_documents): no span (id ignored)"
SPAN_NOT_FOUND = "gold chunk's text not in its document's text: no span (id ignored)"
BAD_SPAN = "span is not [document id, start, end] with 0 <= start < end (span ignored)"


@dataclass(frozen=True)
class Target:
    """One gold target of a query: a chunk (kind "chunk"), any chunk of a document (kind "doc"), or a span of
    a document's text (kind "span": `id` is the document, `start`/`end` character offsets)."""

    kind: str
    id: str
    text: str | None = None  # the gold chunk's text (published format), matched like the published evaluation
    start: int = -1
    end: int = -1

    def __str__(self) -> str:
        if self.kind == "span":
            return f"{self.id}[{self.start}:{self.end}]"
        return self.id if self.kind == "chunk" else f"doc:{self.id}"


class Resolver:
    """A query's ids as targets of this index: its chunk ids and document ids, and the (document uuid,
    chunk index) pairs of an imported corpus (looked up once, on the first pair)."""

    def __init__(self, store: Any, gold: str | None = None):
        self.store = store
        self.gold = gold
        self.chunk_ids = set(store.chunk_id_set())
        self.doc_ids = set(store.doc_ids())
        self.external: dict[tuple[str, int], str] | None = None
        self.external_docs: set[str] = set()
        self.documents_by_external: dict[str, str] | None = None

    def spans(self) -> bool:
        """Whether published gold chunks are scored as spans: asked for, or the index holds none of them."""
        if self.gold is None:
            self._load_external()
            self.gold = "spans" if not self.external and self.documents_by_external else "chunks"
        return self.gold == "spans"

    def _load_external(self) -> None:
        if self.external is None:
            self.external = dict(self.store.chunk_ids_for_external())
            self.external_docs = {doc for doc, _ in self.external}
            self.documents_by_external = self.store.documents_by_external_id()

    def _span(self, item: Any, fmt: str, gold_texts: dict, documents: dict) -> Target | str:
        """The span target one item names (a span, or a published gold chunk found in its document's text), or
        why it is ignored."""
        if fmt == "spans":
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], str)
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in item[1:]) and 0 <= item[1] < item[2]):
                return BAD_SPAN
            doc = item[0] if item[0] in self.doc_ids else self.documents_by_external.get(item[0])
            return Target("span", doc, start=item[1], end=item[2]) if doc else UNKNOWN_ID
        if not is_pair(item):
            return MALFORMED_ID
        doc = self.documents_by_external.get(item[0])
        if doc is None:
            return UNKNOWN_DOC
        chunk_text, doc_text = gold_texts.get((item[0], int(item[1]))), documents.get(item[0])
        if chunk_text is None or doc_text is None:
            return NO_SPAN_TEXT
        start = doc_text.find(chunk_text)
        if start < 0:
            return SPAN_NOT_FOUND
        return Target("span", doc, start=start, end=start + len(chunk_text))

    def targets(self, items: list, fmt: str, gold_texts: dict, skip, documents: dict | None = None) -> tuple[list[Target], int]:
        """The distinct targets the ids name, and how many ids named none; `skip(reason)` hears of each id left out.
        With `documents` (uuid -> text), span targets: the line's spans, or those its published gold chunks cover."""
        targets: list[Target] = []
        dropped = 0
        if documents is not None:
            self._load_external()
        for item in items:
            target = self._target(item, fmt, gold_texts) if documents is None else self._span(item, fmt, gold_texts, documents)
            if isinstance(target, str):
                skip(target)
                dropped += 1
            elif target in targets:
                skip(DUPLICATE_ID)
            else:
                targets.append(target)
        return targets, dropped

    def _target(self, item: Any, fmt: str, gold_texts: dict) -> Target | str:
        """The target one id names, or why it is ignored."""
        if is_pair(item):
            self._load_external()
            key = (item[0], int(item[1]))
            chunk = self.external.get(key)
            if chunk is None:
                return UNKNOWN_DOC if key[0] not in self.external_docs else UNKNOWN_CHUNK
            return Target("chunk", chunk, gold_texts.get(key))
        if isinstance(item, str) and fmt == "generic":
            if item in self.chunk_ids:
                return Target("chunk", item)
            if item in self.doc_ids:
                return Target("doc", item)
            return UNKNOWN_ID
        return MALFORMED_ID


def is_pair(item: Any) -> bool:
    """Whether an id is a published [document uuid, chunk index] pair."""
    return (
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], int)
        and not isinstance(item[1], bool)
    )
