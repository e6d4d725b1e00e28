"""Which chunk and document targets a ranking finds, and at which rank: a hit's own chunk satisfies a chunk
target with its id (or, as the published evaluation compares contents, with its text) and a document target
naming its document; a hit covers its own chunk plus the window neighbours it returns."""
from __future__ import annotations

from typing import Any, Sequence

from localcr.evaluation.gold import Target


def own(hit: Any, targets: Sequence[Target]) -> set[Target]:
    """Targets satisfied by the hit's own chunk."""
    found = set()
    text = None
    for t in targets:
        if t.kind == "doc":
            if hit.doc_id == t.id:
                found.add(t)
        elif hit.chunk_id == t.id:
            found.add(t)
        elif t.text is not None:
            # Equal text, as the published evaluation matches (`hit.text` is the hit's own chunk, never its window).
            if text is None:
                text = (getattr(hit, "text", "") or "").strip()
            if text == t.text:
                found.add(t)
    return found


def covered(hit: Any, targets: Sequence[Target]) -> set[Target]:
    """Targets satisfied by anything the hit returns: its own chunk plus its window neighbours."""
    found = own(hit, targets)
    neighbours = set(getattr(hit, "neighbours", None) or ())
    if neighbours:
        found.update(t for t in targets if t.kind == "chunk" and t.id in neighbours)
    return found


def first_ranks(hits: Sequence[Any], targets: Sequence[Target], *, own_only: bool = False) -> dict[Target, int]:
    """Each target found by the hits -> the 1-based rank of the first hit that covers it (its own chunk only,
    with own_only)."""
    satisfied = own if own_only else covered
    found: dict[Target, int] = {}
    for rank, hit in enumerate(hits, start=1):
        for target in satisfied(hit, targets):
            found.setdefault(target, rank)
    return found
