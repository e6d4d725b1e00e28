"""Query files: JSON Lines, one query per line, in either of two formats (a file may mix them):

* the published one (Anthropic's ``evaluation_set.jsonl``): ``query`` plus ``golden_chunk_uuids``, a list of
  ``[document uuid, chunk index]`` pairs naming chunks of an imported corpus (with ``golden_chunks`` and
  ``golden_documents``, their texts, from which span gold is found);
* the generic one: ``query`` plus ``relevant``, a list of this index's chunk ids or document ids (``[document
  uuid, chunk index]`` pairs are accepted here too), or ``spans``, a list of ``[document id, start, end]``. An
  optional ``id`` names the query in per-query output.

What a line or an id of it is left out for is counted by reason; a malformed line is an error unless asked to
drop such lines. The ids become targets of the index in `gold`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localcr.errors import ArgumentError, LocalcrError
from localcr.evaluation.gold import BAD_SPAN, MALFORMED_ID, UNKNOWN_DOC, UNKNOWN_ID, Resolver, Target

GOLDS = ("chunks", "spans")

# Reasons a line was left out, or kept with fewer ids (QuerySet.skipped keys; those for one id are in gold).
BAD_JSON = "line is not valid JSON (query dropped)"
NOT_OBJECT = "line is not a JSON object (query dropped)"
NO_QUERY = "no \"query\" text (query dropped)"
NO_TARGETS = "no \"relevant\", \"spans\" or \"golden_chunk_uuids\" list (query dropped)"
PARTIAL = "query kept with only its known ids"
NOTHING_LEFT = "no id of the query is in this index (query dropped)"
# Reasons that mean the file itself is wrong, not that it was written for another index: an error, unless
# the caller opts in to dropping such lines.
MALFORMED = (BAD_JSON, NOT_OBJECT, NO_QUERY, NO_TARGETS, MALFORMED_ID, BAD_SPAN)
DROPPING = (BAD_JSON, NOT_OBJECT, NO_QUERY, NO_TARGETS, NOTHING_LEFT)
SAMPLE_LINES = 5


@dataclass
class Query:
    qid: str
    line: int
    text: str
    targets: list[Target]
    answer: str | None = None  # the reference answer, where the line gives one (scored by evaluation.answers)


@dataclass
class QuerySet:
    path: Path
    queries: list[Query]
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count (lines or ids, as the reason says)
    skipped_lines: dict[str, list[int]] = field(default_factory=dict)  # reason -> first line numbers
    blank_lines: int = 0
    formats: dict[str, int] = field(default_factory=dict)  # "published" / "generic" -> queries read

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def dropped(self) -> int:
        """Lines with a query that is not measured: metrics over the rest are not metrics over the file."""
        return sum(self.skipped.get(reason, 0) for reason in DROPPING)

    def report(self) -> str:
        """What was read and what was left out, one line each; the first line alone when nothing was."""
        kinds = ", ".join(f"{n} {fmt}" for fmt, n in sorted(self.formats.items()))
        n_targets = sum(len(q.targets) for q in self.queries)
        lines = [f"{self.path}: {len(self.queries)} queries ({kinds}) with {n_targets} gold targets"]
        for reason, count in self.skipped.items():
            sample = ", ".join(str(n) for n in self.skipped_lines.get(reason, []))
            more = ", ..." if count > len(self.skipped_lines.get(reason, [])) else ""
            lines.append(f"  {count} x {reason}: line {sample}{more}")
        return "\n".join(lines)

    def _skip(self, reason: str, line: int) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        sample = self.skipped_lines.setdefault(reason, [])
        if len(sample) < SAMPLE_LINES and line not in sample:
            sample.append(line)


def load_queries(path: str | Path, index: Any, *, skip_bad_lines: bool = False, gold: str | None = None) -> QuerySet:
    """Read a query file (either format, see the module doc) and resolve its ids against `index` (through
    `index.store`, the backend of a search.Index: localcr.backends).

    gold: "chunks" scores the published format's gold chunks by id, "spans" as the character spans they cover
    in their documents; None chooses spans when the index holds none of the published chunks but their
    documents (an index chunked by localcr).

    A malformed line is an ArgumentError naming FILE:LINE, unless skip_bad_lines; ids this index does not
    hold are left out. What is left out is counted by reason in `QuerySet.skipped`; a query keeps whatever
    ids the index knows. A LocalcrError when the file is missing, unreadable, or leaves no query at all.
    """
    path = Path(path)
    raw = _read_query_file(path)
    if gold is not None and gold not in GOLDS:
        raise ArgumentError(("gold", gold), f": use {' or '.join(GOLDS)}")
    resolver = Resolver(index.store, gold)
    qs = QuerySet(path=path, queries=[])

    def skip(reason: str, n: int) -> None:
        if reason in MALFORMED and not skip_bad_lines:
            raise ArgumentError(f"{path}:{n}: {reason.split(' (')[0]}; correct the line, or drop such lines with ",
                                ("skip_bad_lines", True))
        qs._skip(reason, n)

    for n, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            qs.blank_lines += 1
            continue
        parsed = _parse_line(line)
        if isinstance(parsed, str):
            skip(parsed, n)
            continue
        obj, fmt, items = parsed
        gold_texts = _published_texts(obj) if fmt == "published" else {}
        if fmt == "spans" or (fmt == "published" and resolver.spans()):
            targets, dropped = resolver.targets(items, fmt, gold_texts, lambda reason: skip(reason, n), _published_documents(obj))
        else:
            targets, dropped = resolver.targets(items, fmt, gold_texts, lambda reason: skip(reason, n))
        if not targets:
            qs._skip(NOTHING_LEFT, n)
            continue
        if dropped:
            qs._skip(PARTIAL, n)
        qid = obj.get("id")
        reference = obj.get("answer")
        qs.queries.append(Query(qid=str(qid) if qid is not None else f"line{n}", line=n, text=obj["query"], targets=targets,
                                answer=reference if isinstance(reference, str) and reference.strip() else None))
        qs.formats[fmt] = qs.formats.get(fmt, 0) + 1
    if not qs.queries:
        raise _nothing_usable(qs, resolver)
    return qs


def _read_query_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LocalcrError(f"{path}: query file not found") from None
    except IsADirectoryError:
        raise LocalcrError(f"{path}: is a directory, not a query file (JSON Lines)") from None
    except UnicodeDecodeError:
        raise LocalcrError(f"{path}: not UTF-8 text: a query file is JSON Lines") from None


def _parse_line(line: str) -> tuple[dict, str, list] | str:
    """A line's object, its format ("published" or "generic") and its list of ids; or why the line is dropped."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return BAD_JSON
    if not isinstance(obj, dict):
        return NOT_OBJECT
    text = obj.get("query")
    if not isinstance(text, str) or not text.strip():
        return NO_QUERY
    if isinstance(obj.get("golden_chunk_uuids"), list) and obj["golden_chunk_uuids"]:
        return obj, "published", obj["golden_chunk_uuids"]
    if isinstance(obj.get("relevant"), list) and obj["relevant"]:
        return obj, "generic", obj["relevant"]
    if isinstance(obj.get("spans"), list) and obj["spans"]:
        return obj, "spans", obj["spans"]
    return NO_TARGETS


def _nothing_usable(qs: QuerySet, resolver: Resolver) -> LocalcrError:
    hint = ""
    if qs.skipped.get(UNKNOWN_DOC) or qs.skipped.get(UNKNOWN_ID):
        hint = (
            ": none of its ids are in this index; was the index built from another corpus"
            + (" (it holds no imported document uuids)" if resolver.external == {} else "")
            + "?"
        )
    elif not qs.skipped:
        hint = ": it holds no queries"
    details = "; ".join(f"{count} x {reason}" for reason, count in qs.skipped.items())
    return LocalcrError(f"{qs.path}: no usable query{hint}" + (f" ({details})" if details else ""))


def _published_documents(obj: dict) -> dict[str, str]:
    """The gold documents' texts the published file carries (`golden_documents`), by document uuid."""
    return {d["uuid"]: d["content"] for d in obj.get("golden_documents") or []
            if isinstance(d, dict) and isinstance(d.get("uuid"), str) and isinstance(d.get("content"), str)}


def _published_texts(obj: dict) -> dict[tuple[str, int], str]:
    """The gold chunks' texts the published file carries (`golden_chunks`), by (document uuid, index)."""
    texts: dict[tuple[str, int], str] = {}
    for chunk in obj.get("golden_chunks") or []:
        if isinstance(chunk, dict) and isinstance(chunk.get("content"), str):
            doc, idx = chunk.get("doc_uuid"), chunk.get("index")
            if isinstance(doc, str) and isinstance(idx, int):
                texts[(doc, idx)] = chunk["content"].strip()
    return texts
