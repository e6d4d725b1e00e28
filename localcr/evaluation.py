"""Measuring retrieval: query sets, metrics, and several search configurations run side by side.

Query files are JSON Lines, one query per line, in either of two formats (a file may mix them):

* the published one (Anthropic's ``evaluation_set.jsonl``): ``query`` plus ``golden_chunk_uuids``, a list of
  ``[document uuid, chunk index]`` pairs naming chunks of an imported corpus;
* the generic one: ``query`` plus ``relevant``, a list of this index's chunk ids or document ids. A document id
  is a target that any chunk of that document satisfies. ``[document uuid, chunk index]`` pairs are accepted
  here too. An optional ``id`` names the query in per-query output.

Metrics (all per query, then averaged over queries; k is a cut-off on the ranked hits). Each gold *target*
(a chunk, or a whole document) is credited at most once, at the first hit that covers it:

* A hit's *own* chunk satisfies a chunk target with that id and a document target naming its document.
  A hit *covers* its own chunk plus the window neighbours it returns (``hit.chunk_ids``), all of one document.
* ``pass@k``    the published Pass@k: share of the query's targets satisfied by the own chunks of the top k
                hits. Window neighbours do not count, so numbers stay comparable with the published table and
                across window sizes. Like the published evaluation, which compares chunk *contents*, a chunk
                target is also satisfied by a hit whose own text equals the gold chunk's text (a handful of
                chunks of the codebase corpus occur twice).
* ``recall@k``  share of the targets covered by the top k hits, window neighbours included: what a reader of
                the results actually gets. Identical to ``pass@k`` when no window is used.
* ``hit@k``     1 if the top k hits cover at least one target, else 0 (hit rate).
* ``mrr@k``     1 / rank of the first hit covering a target; 0 if none is in the top k.
* ``precision@k`` hits among the top k that cover a target not covered by an earlier hit, divided by k
                (always by k, even when fewer hits came back). A repeat of an already-found target is not
                counted twice, so precision@k <= min(k, targets) / k.
* ``ndcg@k``    binary gains on those same "new target" hits, DCG = sum 1/log2(rank + 1), divided by the
                ideal DCG of min(k, targets) relevant hits at the top ranks; always in [0, 1].

Gold may also be *spans*: character ranges of a document (``"spans": [[document id, start, end], ...]`` in the
generic format; the document named by its id or its imported id), or derived from the published format's
gold chunks, found in the document text the line carries (``golden_documents``), with ``gold="spans"`` (the
default when the index does not hold the published chunks, i.e. it was chunked by localcr). Then chunks of any
chunking are scored against the same gold. A hit stands for its own chunk's range; window neighbours do not
count. With spans:

* a span is *found* at rank r when the own chunks of hits 1..r together cover at least SPAN_FOUND (half) of
  its characters; ``pass@k`` (= ``recall@k``), ``hit@k``, ``mrr@k``, ``precision@k`` and ``ndcg@k`` are the
  definitions above with "satisfied" read as "found" (a hit that finds a span is that span's hit);
* ``token_recall@k``, ``token_precision@k``, ``iou@k``: the token-level metrics of Chroma's chunking report,
  computed on characters as its implementation does: with G the gold spans and R the union of the top k
  chunks' ranges, |G ∩ R| / |G|, |G ∩ R| / |R| and |G ∩ R| / |G ∪ R|.
"""
from __future__ import annotations

import json
import math
import re
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from localcr.errors import ArgumentError, LocalcrError
from localcr.search import DEFAULT_ALPHA, DEFAULT_CANDIDATES, DEFAULT_FUSION, FUSIONS, MODES

DEFAULT_KS = (5, 10, 20)
METRICS = ("pass", "recall", "precision", "hit", "mrr", "ndcg")
SPAN_METRICS = ("token_recall", "token_precision", "iou")  # only for span gold
METRIC_TITLES = {
    "pass": "Pass",
    "recall": "Recall",
    "precision": "Precision",
    "hit": "Hit rate",
    "mrr": "MRR",
    "ndcg": "nDCG",
}
SPAN_METRIC_TITLES = {"token_recall": "Token recall", "token_precision": "Token precision", "iou": "IoU"}
GOLDS = ("chunks", "spans")
SPAN_FOUND = 0.5  # the share of a gold span the top hits must cover for it to count as found

# Reasons a line, or one id of a line, was left out (QuerySet.skipped keys).
BAD_JSON = "line is not valid JSON (query dropped)"
NOT_OBJECT = "line is not a JSON object (query dropped)"
NO_QUERY = "no \"query\" text (query dropped)"
NO_TARGETS = "no \"relevant\", \"spans\" or \"golden_chunk_uuids\" list (query dropped)"
MALFORMED_ID = "malformed id (id ignored)"
UNKNOWN_ID = "id is neither a chunk nor a document of this index (id ignored)"
UNKNOWN_DOC = "document uuid not in this index (id ignored)"
UNKNOWN_CHUNK = "document uuid known, chunk index not in this index (id ignored)"
DUPLICATE_ID = "id repeated within a query (repeat ignored)"
PARTIAL = "query kept with only its known ids"
NOTHING_LEFT = "no id of the query is in this index (query dropped)"
NO_SPAN_TEXT = "gold chunk without its text and its document's text (golden_chunks, golden_documents): no span (id ignored)"
SPAN_NOT_FOUND = "gold chunk's text not in its document's text: no span (id ignored)"
BAD_SPAN = "span is not [document id, start, end] with 0 <= start < end (span ignored)"
# Reasons that mean the file itself is wrong, not that it was written for another index: an error, unless
# the caller opts in to dropping such lines.
MALFORMED = (BAD_JSON, NOT_OBJECT, NO_QUERY, NO_TARGETS, MALFORMED_ID, BAD_SPAN)
DROPPING = (BAD_JSON, NOT_OBJECT, NO_QUERY, NO_TARGETS, NOTHING_LEFT)
SAMPLE_LINES = 5


# ---------------------------------------------------------------------------------------------- query sets


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


@dataclass
class Query:
    qid: str
    line: int
    text: str
    targets: list[Target]


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
    resolver = _Resolver(index.store, gold)
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
        qs.queries.append(Query(qid=str(qid) if qid is not None else f"line{n}", line=n, text=obj["query"], targets=targets))
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


class _Resolver:
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
        if not _is_pair(item):
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
        if _is_pair(item):
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


def _nothing_usable(qs: QuerySet, resolver: _Resolver) -> LocalcrError:
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


def _is_pair(item: Any) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], int)
        and not isinstance(item[1], bool)
    )


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


# ---------------------------------------------------------------------------------------------- metrics


def _own(hit: Any, targets: Sequence[Target]) -> set[Target]:
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


def _covered(hit: Any, targets: Sequence[Target]) -> set[Target]:
    """Targets satisfied by anything the hit returns: its own chunk plus its window neighbours."""
    found = _own(hit, targets)
    neighbours = set(getattr(hit, "neighbours", None) or ())
    if neighbours:
        found.update(t for t in targets if t.kind == "chunk" and t.id in neighbours)
    return found


def score_ranking(hits: Sequence[Any], targets: Sequence[Target], ks: Iterable[int] = DEFAULT_KS) -> dict[str, float]:
    """Every metric at every k for one query: {"pass@5": 0.5, ..., "ndcg@20": 0.63}, fractions in [0, 1].

    `hits` are ranked best first and need `chunk_id`, `doc_id`, and optionally `neighbours` and `text`; for
    span targets `doc_id`, `start` and `end`.
    """
    targets = list(dict.fromkeys(targets))
    if not targets:
        raise ValueError("a query needs at least one target")
    ks = sorted(set(ks))
    if all(t.kind == "span" for t in targets):
        return _score_spans(hits, targets, ks)
    n = len(targets)
    own_found: set[Target] = set()
    cov_found: set[Target] = set()
    first_rank: int | None = None
    new_ranks: list[int] = []  # ranks of hits covering a target no earlier hit covered
    own_at: list[int] = []  # len(own_found) after each rank
    cov_at: list[int] = []
    for rank, hit in enumerate(hits[: ks[-1]], start=1):
        own_found |= _own(hit, targets)
        covered = _covered(hit, targets)
        if covered and first_rank is None:
            first_rank = rank
        if covered - cov_found:
            new_ranks.append(rank)
        cov_found |= covered
        own_at.append(len(own_found))
        cov_at.append(len(cov_found))

    out: dict[str, float] = {}
    for k in ks:
        upto = min(k, len(own_at))
        n_own = own_at[upto - 1] if upto else 0
        n_cov = cov_at[upto - 1] if upto else 0
        new = [r for r in new_ranks if r <= k]
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, n) + 1))
        out[f"pass@{k}"] = n_own / n
        out[f"recall@{k}"] = n_cov / n
        out[f"precision@{k}"] = len(new) / k
        out[f"hit@{k}"] = 1.0 if n_cov else 0.0
        out[f"mrr@{k}"] = 1 / first_rank if first_rank is not None and first_rank <= k else 0.0
        out[f"ndcg@{k}"] = sum(1 / math.log2(r + 1) for r in new) / ideal
    return out


def _score_spans(hits: Sequence[Any], targets: Sequence[Target], ks: list[int]) -> dict[str, float]:
    """score_ranking for span targets (see the module doc): a span is found once the own chunks of the hits so
    far cover SPAN_FOUND of it; token metrics compare the gold's characters with the top k chunks'."""
    n = len(targets)
    gold = _by_document((t.id, t.start, t.end) for t in targets)
    gold_size = sum(_size(spans) for spans in gold.values())
    retrieved: dict[str, list[tuple[int, int]]] = {}
    found: set[Target] = set()
    first_rank: int | None = None
    new_ranks: list[int] = []
    out: dict[str, float] = {}
    cutoffs = set(ks)
    for rank in range(1, ks[-1] + 1):
        hit = hits[rank - 1] if rank <= len(hits) else None
        if hit is not None and hit.start >= 0:
            retrieved[hit.doc_id] = _union(retrieved.get(hit.doc_id, []) + [(hit.start, hit.end)])
            now = {t for t in targets if t not in found
                   and _overlap([(t.start, t.end)], retrieved.get(t.id, [])) >= SPAN_FOUND * (t.end - t.start)}
            if now:
                new_ranks.append(rank)
                first_rank = first_rank or rank
                found |= now
        if rank in cutoffs:
            k = rank
            ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, n) + 1))
            common = sum(_overlap(spans, retrieved.get(doc, [])) for doc, spans in gold.items())
            size = sum(_size(spans) for spans in retrieved.values())
            out[f"pass@{k}"] = out[f"recall@{k}"] = len(found) / n
            out[f"precision@{k}"] = len(new_ranks) / k
            out[f"hit@{k}"] = 1.0 if found else 0.0
            out[f"mrr@{k}"] = 1 / first_rank if first_rank else 0.0
            out[f"ndcg@{k}"] = sum(1 / math.log2(r + 1) for r in new_ranks) / ideal
            out[f"token_recall@{k}"] = common / gold_size if gold_size else 0.0
            out[f"token_precision@{k}"] = common / size if size else 0.0
            out[f"iou@{k}"] = common / (gold_size + size - common) if gold_size + size else 0.0
    return out


def _by_document(spans: Iterable[tuple[str, int, int]]) -> dict[str, list[tuple[int, int]]]:
    grouped: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in spans:
        grouped.setdefault(doc, []).append((start, end))
    return {doc: _union(ranges) for doc, ranges in grouped.items()}


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ranges merged where they overlap or touch, in order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _size(ranges: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in ranges)


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Characters two sets of disjoint ranges share."""
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def parse_ks(ks: str) -> tuple[int, ...]:
    """Cut-offs from their written form, e.g. "5,10,20" -> (5, 10, 20): sorted, without repeats."""
    parts = [p.strip() for p in ks.split(",")]
    if not all(re.fullmatch(r"\d+", p) and int(p) >= 1 for p in parts):
        raise ArgumentError(("ks", ks), ": write whole numbers >= 1 separated by commas, e.g. 5,10,20")
    return tuple(sorted({int(p) for p in parts}))


def metric_keys(ks: Iterable[int]) -> list[str]:
    return [f"{m}@{k}" for m in METRICS for k in sorted(set(ks))]


def mean_metrics(rows: Sequence[dict[str, float]], ks: Iterable[int]) -> dict[str, float]:
    keys = metric_keys(ks)
    if not rows:
        return {key: 0.0 for key in keys}
    keys += [f"{m}@{k}" for m in SPAN_METRICS for k in sorted(set(ks)) if all(f"{m}@{k}" in row for row in rows)]
    return {key: sum(row[key] for row in rows) / len(rows) for key in keys}


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (p in [0, 100]) like numpy's default; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# ---------------------------------------------------------------------------------------------- configurations


@dataclass
class SearchConfig:
    """One way of searching, as `Index.search` takes it."""

    name: str
    mode: str = "hybrid"
    fusion: str = DEFAULT_FUSION
    alpha: float = DEFAULT_ALPHA
    rerank: bool = False
    window: int = 0
    candidates: int = DEFAULT_CANDIDATES


_CONFIG_HELP = (
    "write MODE[,option...]: MODE is hybrid, dense or lexical; options are fusion=rrf|weighted, alpha=0..1, "
    "rerank, window=N, candidates=N, name=LABEL (e.g. \"hybrid,fusion=weighted,alpha=0.3\" or \"dense,rerank\")"
)


def parse_config(config: str) -> SearchConfig:
    """A configuration from its written form, e.g. "hybrid,fusion=weighted,alpha=0.3" or "lexical,window=1"."""
    def bad(problem: str) -> ArgumentError:
        return ArgumentError(("config", config), ": " + problem)

    parts = [p.strip() for p in config.split(",")]
    mode = parts[0].lower()
    if mode not in MODES:
        raise bad(f"unknown search mode {parts[0]!r}: {_CONFIG_HELP}")
    cfg = SearchConfig(name="", mode=mode)
    given: set[str] = set()
    for part in parts[1:]:
        if not part:
            raise bad(f"empty option: {_CONFIG_HELP}")
        key, sep, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if key in given:
            raise bad(f"{key} given twice")
        given.add(key)
        problem = _set_option(cfg, key, value, bool(sep), part)
        if problem:
            raise bad(problem)
    if mode != "hybrid" and given & {"fusion", "alpha"}:
        raise bad("fusion and alpha apply only to hybrid search")
    if "alpha" in given and cfg.fusion != "weighted":
        raise bad("alpha applies only to fusion=weighted")
    if not cfg.name:
        cfg.name = describe(cfg)
    return cfg


def _set_option(cfg: SearchConfig, key: str, value: str, has_value: bool, part: str) -> str | None:
    """Set one `key=value` option of a configuration; what is wrong with it, if anything."""
    if key == "rerank":
        flag = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}
        if has_value and value.lower() not in flag:
            return f"rerank={value!r}: write rerank, rerank=true or rerank=false"
        cfg.rerank = flag[value.lower()] if has_value else True
    elif not has_value or not value:
        return f"option {part!r} needs a value: {_CONFIG_HELP}"
    elif key == "fusion":
        if value.lower() not in FUSIONS:
            return f"fusion={value!r}: use {' or '.join(FUSIONS)}"
        cfg.fusion = value.lower()
    elif key == "alpha":
        try:
            cfg.alpha = float(value)
        except ValueError:
            cfg.alpha = math.nan
        if not 0.0 <= cfg.alpha <= 1.0:
            return f"alpha={value!r}: a number from 0 to 1 (weight of dense scores)"
    elif key in ("window", "candidates"):
        if not re.fullmatch(r"\d+", value) or (key == "candidates" and int(value) < 1):
            return f"{key}={value!r}: a whole number >= {0 if key == 'window' else 1}"
        setattr(cfg, key, int(value))
    elif key == "name":
        cfg.name = value
    else:
        return f"unknown option {key!r}: {_CONFIG_HELP}"
    return None


def describe(cfg: SearchConfig) -> str:
    """The canonical spelling of a configuration (defaults left out), used as its name."""
    parts = [cfg.mode]
    if cfg.mode == "hybrid" and cfg.fusion != SearchConfig.fusion:
        parts.append(f"fusion={cfg.fusion}")
    if cfg.mode == "hybrid" and cfg.fusion == "weighted" and cfg.alpha != SearchConfig.alpha:
        parts.append(f"alpha={cfg.alpha:g}")
    if cfg.rerank:
        parts.append("rerank")
    if cfg.candidates != SearchConfig.candidates:
        parts.append(f"candidates={cfg.candidates}")
    if cfg.window:
        parts.append(f"window={cfg.window}")
    return ",".join(parts)


# ---------------------------------------------------------------------------------------------- evaluation


@dataclass
class ConfigResult:
    config: SearchConfig
    ks: tuple[int, ...]
    metrics: dict[str, float]  # "pass@5" -> mean over queries, fraction in [0, 1]
    latency_ms: dict[str, float]  # "p50", "p95", "mean" of one search call
    n_queries: int
    per_query: list[dict[str, Any]]


def evaluate(
    index: Any,
    queries: QuerySet,
    configs: Sequence[SearchConfig],
    ks: Iterable[int] = DEFAULT_KS,
    reranker: Any = None,
    progress: bool = True,
) -> list[ConfigResult]:
    """Run every query under every configuration (top max(ks) hits each) and score them.

    Each configuration first runs one untimed warm-up search, so lazily loaded models do not count
    towards latency; latency is the wall time of one `index.search` call. If the index offers
    `clear_query_cache()`, it is called before each configuration's timed run, so configurations after
    the first do not look faster by reusing the query vectors the first one computed.
    """
    ks = tuple(sorted(set(ks)))
    _check_run(queries, configs, ks, reranker)
    return [_run_config(index, queries, cfg, ks, reranker, progress) for cfg in configs]


def _check_run(queries: QuerySet, configs: Sequence[SearchConfig], ks: tuple[int, ...], reranker: Any) -> None:
    if not ks or ks[0] < 1:
        raise ArgumentError(("ks", ks), ": cut-offs must be whole numbers >= 1")
    if not configs:
        raise LocalcrError("no search configuration to evaluate")
    if not queries.queries:
        raise LocalcrError(f"{queries.path}: no query to evaluate")
    names = Counter(c.name for c in configs)
    if any(n > 1 for n in names.values()):
        raise LocalcrError(f"configurations need distinct names: {', '.join(sorted(k for k, n in names.items() if n > 1))}")
    for cfg in configs:
        if cfg.rerank and reranker is None:
            raise LocalcrError(
                f"configuration {cfg.name!r} reranks but no reranker is loaded: configure one in models.toml "
                "and pass it as reranker= (localcr.rerank.load_reranker)"
            )


def _run_config(index: Any, queries: QuerySet, cfg: SearchConfig, ks: tuple[int, ...], reranker: Any,
                progress: bool) -> ConfigResult:
    """One configuration over every query: a warm-up search, then each query timed and scored."""
    k = ks[-1]
    kwargs = dict(
        k=k,
        mode=cfg.mode,
        fusion=cfg.fusion,
        alpha=cfg.alpha,
        rerank=reranker if cfg.rerank else None,
        candidates=max(cfg.candidates, k),
        window=cfg.window,
    )
    index.search(queries.queries[0].text, **kwargs)  # warm-up, untimed
    clear = getattr(index, "clear_query_cache", None)
    if callable(clear):  # every configuration pays for embedding its queries, not just the first one
        clear()
    rows, scores, latencies = [], [], []
    for q in _progress(queries.queries, f"{cfg.name}", progress):
        start = time.perf_counter()
        hits = index.search(q.text, **kwargs)
        elapsed = (time.perf_counter() - start) * 1000
        score = score_ranking(hits, q.targets, ks)
        latencies.append(elapsed)
        scores.append(score)
        rows.append(_query_row(cfg, q, hits[:k], elapsed, score))
    return ConfigResult(
        config=cfg,
        ks=ks,
        metrics=mean_metrics(scores, ks),
        latency_ms={
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "mean": sum(latencies) / len(latencies),
        },
        n_queries=len(rows),
        per_query=rows,
    )


def _query_row(cfg: SearchConfig, q: Query, hits: Sequence[Any], elapsed: float, score: dict[str, float]) -> dict[str, Any]:
    """A query's line of per-query output: what it asked for, what came back and missed, its metrics."""
    found: set[Target] = set()
    for hit in hits:
        found |= _covered(hit, q.targets)
    return {
        "config": cfg.name,
        "query_id": q.qid,
        "line": q.line,
        "query": q.text,
        "targets": [str(t) for t in q.targets],
        "missed": [str(t) for t in q.targets if t not in found],
        "retrieved": [hit.chunk_id for hit in hits],
        "first_relevant_rank": _first_rank(hits, q.targets),
        "latency_ms": round(elapsed, 3),
        **{key: round(value, 6) for key, value in score.items()},
    }


def _first_rank(hits: Sequence[Any], targets: Sequence[Target]) -> int | None:
    for rank, hit in enumerate(hits, start=1):
        if _covered(hit, targets):
            return rank
    return None


def _progress(items: list, label: str, enabled: bool):
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=label, unit="query", file=sys.stderr, leave=False)


def write_per_query(results: Sequence[ConfigResult], path: str | Path) -> None:
    """One JSON line per (configuration, query): the query, its targets, what came back, every metric."""
    path = Path(path)
    try:
        with open(path, "w", encoding="utf-8") as f:
            for result in results:
                for row in result.per_query:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise LocalcrError(f"{path}: cannot write per-query results ({exc.strerror})") from None


def to_json(results: Sequence[ConfigResult], queries: QuerySet | None = None) -> dict[str, Any]:
    """A JSON-ready summary (no per-query rows): metrics as fractions, latency in milliseconds."""
    out: dict[str, Any] = {
        "ks": list(results[0].ks) if results else [],
        "configs": [
            {
                "name": r.config.name,
                "config": asdict(r.config),
                "queries": r.n_queries,
                "metrics": {key: round(value, 6) for key, value in r.metrics.items()},
                "latency_ms": {key: round(value, 3) for key, value in r.latency_ms.items()},
            }
            for r in results
        ],
    }
    if queries is not None:
        out["query_file"] = str(queries.path)
        out["skipped"] = dict(queries.skipped)
        out["dropped_queries"] = queries.dropped
    return out


def format_table(results: Sequence[ConfigResult], ks: Iterable[int] = DEFAULT_KS) -> str:
    """Markdown tables for the terminal: every metric at every k, the configurations one under the other within
    each metric (so they compare at a glance, and the width grows with the ks asked for, not with metrics x ks),
    then each configuration's latency.

    Pass, Recall, Precision and Hit rate are percentages (like the published numbers); MRR and nDCG are 0-1.
    """
    ks = sorted(set(ks))
    titles = {**METRIC_TITLES, **SPAN_METRIC_TITLES}
    rows = [[titles[m] if i == 0 else "", r.config.name, *(_fmt(m, r.metrics[f"{m}@{k}"]) for k in ks)]
            for m in METRICS + SPAN_METRICS if all(f"{m}@{ks[0]}" in r.metrics for r in results)
            for i, r in enumerate(results)]
    latency = [[r.config.name, str(r.n_queries), f"{r.latency_ms['p50']:.1f}", f"{r.latency_ms['p95']:.1f}"]
               for r in results]
    return (_markdown(["metric", "config", *(f"@{k}" for k in ks)], rows) + "\n\n"
            + _markdown(["config", "queries", "p50 ms", "p95 ms"], latency))


def _fmt(metric: str, value: float) -> str:
    return f"{value:.3f}" if metric in ("mrr", "ndcg") else f"{value * 100:.2f}"


def _markdown(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    numeric = [i > 0 and all(_is_number(row[i]) for row in rows) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if numeric[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(head), sep, *(line(r) for r in rows)])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True
