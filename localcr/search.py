"""Retrieval over an index: dense and lexical candidates, fusion, optional reranking, neighbour windows.

    import localcr

    index = localcr.open_index("my-index")
    for hit in index.search("how are retries configured?", k=5):
        print(hit.path, hit.score, hit.text)

What the index holds (documents, chunk ids, sizes) is read through `index.store`, its backend (localcr.backends:
a local directory, or a Milvus collection): the backend ranks each retriever's candidates, and fusion, windows and
reranking happen here, the same for both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from localcr.backends import open_backend
from localcr.documents import LONG_PROSE, page_at
from localcr.errors import LocalcrError
from localcr.filters import Filter, exact_glob
from localcr.fusion import RRF_K, rrf  # noqa: F401  (rrf is part of search's scoring API)
from localcr.models import Registry, load_registry
from localcr.statements import StatementPrior
from localcr.store import embedded_share
from localcr.text import joined_chunks

MODES = ("hybrid", "dense", "lexical")
FUSIONS = ("auto", "dynamic", "weighted", "rrf")
# How many candidates each retriever hands to fusion (and fusion to the reranker), independent of k; chosen by
# benchmarks/retrieval/depth.py on the code and prose sets (BENCHMARKS.md, "Why the retrieval defaults are what they
# are").
DEFAULT_CANDIDATES = 150
# How hybrid search fuses the two lists. "auto" fuses each query by what its candidates are: where most of the two
# retrievers' first CANDIDATES_JUDGED are chunks of long untitled prose (filings, a report's text layer:
# Document.structure LONG_PROSE), by LONG_PROSE_FUSION; elsewhere (code, titled records, short documents)
# dynamically (dynamic_alpha), the rule chosen on the code set, XQuAD and JSQuAD (BENCHMARKS.md, "Why the retrieval
# defaults are what they are"). The long-prose rule was chosen by leave-one-company-out on financebench-dev (the
# same section; the runs: benchmarks/results/superseded/notebook-2026-11.md, "Long documents, part four"): the
# dynamic rule, fit on those 74 questions, fell to a fixed α .3's level on filings it was not fit on.
DEFAULT_FUSION = "auto"
LONG_PROSE_FUSION = ("rrf", None)  # (rule, alpha)
CANDIDATES_JUDGED = 10
DEFAULT_ALPHA = 0.3
STANDOUT_DEPTH = 10  # a retriever's best score is compared with the mean of its next nine (see standout)
# The statement prior (localcr.statements) by default: chosen by leave-one-company-out on financebench-dev
# (benchmarks/retrieval/statement_prior.py; every fold chose it): P@10 32.4 -> 52.0 held out on a structural index, where
# the gold filing is among the first three for every question. It changes no query that asks for no statement.
DEFAULT_PRIOR = StatementPrior(lift=1.0, documents=3)
STATEMENT_DOCUMENTS_KEPT = 256  # documents whose chunks' statements an opened index keeps
# Query vectors kept per opened index (a served index sees endless distinct queries): 384-d floats, ~15 MB.
QUERY_CACHE_SIZE = 10_000
# A question's term this share of the chunks holds at most is one of its rare terms (Index.rare_terms).
RARE_SHARE = 0.02


@dataclass
class Hit:
    chunk_id: str
    doc_id: str
    path: str
    position: int
    start: int
    end: int
    score: float
    ranks: dict[str, int]  # 1-based rank per retriever: "dense", "lexical", "fused", "rerank"
    context: str
    text: str
    neighbours: list[str] = field(default_factory=list)  # chunk ids added by the window, in document order
    window_text: str = ""  # the hit and its neighbours as one passage (only with a window)
    external_doc_id: str | None = None
    external_index: int | None = None
    page: int | None = None  # 1-based page (slide) where the chunk starts; None for a document without pages
    kind: str = "text"  # its document's kind (documents.Document.kind): how its text reads, e.g. "markdown", "code:py"
    structure: str = ""  # how its document's structure was read (documents.Document.structure: LONG_PROSE for filings)
    language: str = ""  # its document's language (ISO 639-1), "" where the backend keeps none

    @property
    def is_code(self) -> bool:
        return self.kind.startswith("code")

    @property
    def chunk_ids(self) -> list[str]:
        return [self.chunk_id, *self.neighbours]

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def weighted(dense: dict[int, float], lexical: dict[int, float], alpha: float) -> dict[int, float]:
    """alpha * dense + (1 - alpha) * lexical, each min-max normalised over its candidates; absent = 0."""
    def normalise(scores: dict[int, float]) -> dict[int, float]:
        if not scores:
            return {}
        low, high = min(scores.values()), max(scores.values())
        span = high - low
        return {i: (s - low) / span if span > 0 else 1.0 for i, s in scores.items()}

    d, l = normalise(dense), normalise(lexical)
    return {i: alpha * d.get(i, 0.0) + (1 - alpha) * l.get(i, 0.0) for i in d.keys() | l.keys()}


def standout(scores: dict[int, float], depth: int = STANDOUT_DEPTH) -> float:
    """How far a retriever's best score stands out from its next ones, as a share of its candidates' spread:
    (best - mean of the next depth - 1) / (best - worst). A retriever that has found something scores high; one
    that scores its top candidates alike (BM25 over filings that all say "net revenue" and "fiscal year", MiniLM
    on Japanese) scores low. A single candidate stands out entirely (a rare word only one chunk holds)."""
    if len(scores) < 2:
        return float(len(scores))
    ranked = np.sort(np.fromiter(scores.values(), dtype=float))[::-1]
    span = float(ranked[0] - ranked[-1])
    return 0.0 if span <= 0 else float(ranked[0] - ranked[1:depth].mean()) / span


def dynamic_alpha(dense: dict[int, float], lexical: dict[int, float]) -> float:
    """The dense share of weighted fusion for one query: the dense retriever's share of the two standouts, so
    the retriever whose best candidate stands out gets more say (an even split when neither stands out)."""
    d, l = standout(dense), standout(lexical)
    return 0.5 if d + l <= 0 else d / (d + l)


def fusion_of(ordered: dict[str, list], store) -> tuple[str, float]:
    """The rule "auto" fusion uses for one query, given each retriever's rows best first: LONG_PROSE_FUSION where
    most of each retriever's first CANDIDATES_JUDGED candidates are chunks of long untitled prose, else
    ("dynamic", DEFAULT_ALPHA)."""
    judged = list(dict.fromkeys(row for rows in ordered.values() for row in rows[:CANDIDATES_JUDGED]))
    if not judged:
        return "dynamic", DEFAULT_ALPHA
    long_prose = sum(record["structure"] == LONG_PROSE for record in store.hit_records(judged))
    if 2 * long_prose > len(judged):
        rule, alpha = LONG_PROSE_FUSION
        return rule, DEFAULT_ALPHA if alpha is None else alpha
    return "dynamic", DEFAULT_ALPHA


def widen(rows: list, rows_around, window: int) -> list[tuple[object, list]]:
    """Each hit row with up to `window` neighbours per side from its own document (`rows_around(row, window)`,
    in document order); a hit already covered by a better hit's window is merged into it (dropped), and no
    chunk appears twice."""
    covered: set = set()
    out = []
    for row in rows:
        if row in covered:
            continue
        span = [r for r in rows_around(row, window) if r not in covered]
        covered.update(span)
        out.append((row, span))
    return out


class Index:
    """An opened index: the generation current when it was opened (`store`), and the embedder it was built with.

    `embedder` hands over one already loaded (a server reopening a rebuilt index keeps its model); it is used
    only if the index was built with that same model. `one_query`: this process embeds one query (the command line's
    search), which the embedder is loaded for (localcr.embeddings.PURPOSES); otherwise for a query at a time."""

    def __init__(self, directory: str | Path, registry: Registry | None = None, *, embedder=None, one_query: bool = False):
        self.store = open_backend(directory)
        self._registry = registry
        self._loaded_embedder = embedder
        self._purpose = "one query" if one_query else "queries"
        self._query_cache: dict[str, np.ndarray] = {}

    # -- loading, lazily: a lexical-only search never loads torch -------------------------------------------
    @cached_property
    def registry(self) -> Registry:
        return self._registry or load_registry()

    @cached_property
    def embedder(self):
        from localcr.embeddings import Embedder

        recorded = self.store.manifest["embedder"]
        spec = self.registry.models["embedder"].get(recorded["name"])
        if spec is None:
            raise LocalcrError(f"{self.store.location} was built with embedder {recorded['name']!r}, which {self.registry.path} no longer has: "
                               "add it back or rebuild the index")
        if f"{spec.name}:{spec.fingerprint()}" != recorded["id"]:
            raise LocalcrError(f"{self.store.location} was built with a different {recorded['name']!r} embedder than {self.registry.path} "
                               "now points at: rebuild the index with `localcr index`")
        if self._loaded_embedder is not None and self._loaded_embedder.id == recorded["id"]:
            return self._loaded_embedder
        return Embedder(spec, purpose=self._purpose)

    # -- retrieval ------------------------------------------------------------------------------------------
    def dense_scores(self, query: str, depth: int, selection=None) -> dict:
        """Top chunks by cosine similarity, from the backend (a chunk embedded as several windows scores as its
        best window), among the selected documents' if given; the query's vector is cached."""
        vector = self._query_cache.get(query)
        if vector is None:
            vector = self.embedder.embed_query(query)
            if len(self._query_cache) >= QUERY_CACHE_SIZE:
                self._query_cache.pop(next(iter(self._query_cache)), None)  # the oldest query
            self._query_cache[query] = vector
        return self.store.dense_ranked(vector, depth, selection)

    def lexical_scores(self, query: str, depth: int, selection=None) -> dict:
        return self.store.lexical_ranked(query, depth, selection)

    def coverage_note(self, mode: str = "hybrid") -> str:
        """What a search in this mode says while the index's vectors are still coming ("" once they are all in, and
        for a lexical search): a build commits every chunk for the lexical leg first (localcr.pipeline), so until
        then the dense leg holds some chunks or none, and hybrid search fuses what each leg has."""
        embedded, chunks = self.store.dense_coverage
        if mode == "lexical" or embedded >= chunks:
            return ""
        share = f"{embedded_share(embedded, chunks)} embedded"
        if not embedded:
            return f"lexical only until the vectors are in: {share}"
        if mode == "dense":
            return f"dense over the embedded chunks only until the vectors are in: {share}"
        return f"lexical only where the vectors are not in yet: {share}"

    def unmatched(self, glob=None, kind: str | None = None, lang: str | None = None) -> str | None:
        """What to tell a user whose filter no document of the index passes (their search has no hits); None
        when some document passes or nothing is filtered."""
        wanted = Filter.of(glob, kind, lang)
        if wanted is None or self.store.select(wanted).documents:
            return None
        return f"no document of {self.store.location} passes {wanted.describe()}"

    def search(self, query: str, k: int = 20, *, mode: str = "hybrid", fusion: str = DEFAULT_FUSION, alpha: float = DEFAULT_ALPHA,
               rerank=None, candidates: int = DEFAULT_CANDIDATES, window: int = 0, glob=None, kind: str | None = None,
               lang: str | None = None, expand=None, navigate=None, prior: StatementPrior | None = DEFAULT_PRIOR) -> list[Hit]:
        """The k best chunks for the query; see the module docstring for the pipeline.

        Each retriever contributes its `candidates` best chunks whatever k is, and they are fused (and reranked)
        before the cut at k: so the top 5 of a k=5 search are the top 5 of a k=20 search (for any k up to
        `candidates`; a larger k deepens the lists to k). glob, kind, lang: search only the documents that pass
        (localcr.filters), before the cut: the k best chunks of those. expand: a localcr.expansion.Expander, whose
        passage joins the query for the retrievers it expands (the reranker still reads the query alone). navigate:
        a localcr.navigation.Navigator; the sections it names in the first documents' outlines rank first. prior:
        how the financial statements a question asks for lift their chunks (localcr.statements; None: not at all)."""
        if mode not in MODES:
            raise LocalcrError(f"mode {mode!r}: choose one of {', '.join(MODES)}")
        if fusion not in FUSIONS:
            raise LocalcrError(f"fusion {fusion!r}: choose one of {', '.join(FUSIONS)}")
        if not 0.0 <= alpha <= 1.0:
            raise LocalcrError(f"alpha {alpha}: must be between 0 and 1")
        if k < 1 or window < 0:
            raise LocalcrError("k must be at least 1 and window at least 0")
        if not query.strip():
            raise LocalcrError("the query is empty")
        query = query.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate (from JSON, a pasted fragment) is no text
        if self.store.dense_only:  # a Milvus index built without a lexical leg (localcr.backends.milvus)
            if mode == "lexical":
                raise LocalcrError(f"{self.store.location} is a dense-only index (built with --lexical none): search it "
                                   "with --mode dense or hybrid, which is dense there")
            mode = "dense"
        elif not self.store.dense_coverage[0]:  # no vector yet (a build commits the lexical leg first): no query vector
            mode = "lexical"
        wanted = Filter.of(glob, kind, lang)
        selection = None if wanted is None else self.store.select(wanted)
        if selection is not None and not selection.documents:
            return []
        depth = max(candidates, k)
        ordered, fused = self._fused(query, mode, fusion, alpha, depth, selection, expand)
        ranks = {name: _ranks(rows) for name, rows in ordered.items()}
        order = sorted(fused, key=lambda row: (-fused[row], row))[:depth]
        ranks["fused"] = _ranks(order)
        scores = fused
        if rerank is not None:
            passages = self.store.hit_records(order)
            reranked = rerank.rerank(query, order, [f"{p['context']}\n{p['text']}".strip() for p in passages])
            order = [row for row, _ in reranked]
            scores = dict(reranked)
            ranks["rerank"] = _ranks(order)
        if prior is not None and prior.lift > 0:
            order, scores, lifted = self._statement_prior(query, order, prior, (mode, fusion, alpha, expand), scores)
            if lifted:
                ranks["statement"] = _ranks(lifted)
        if navigate is not None:
            order, navigated = self._navigated(query, order, navigate, (mode, fusion, alpha, expand))
            ranks["navigated"] = _ranks(navigated)
        order = order[:k]
        if window:
            groups = widen(order, self.store.rows_around, window)
        else:
            groups = [(row, [row]) for row in order]
        return self._hits(groups, scores, ranks)

    def _fused(self, query: str, mode: str, fusion: str, alpha: float, depth: int, selection, expand):
        """Each retriever's `depth` best rows, best first ({leg: [row]}), and their fusion ({row: score}) for the mode."""
        dense_query = lexical_query = query
        if expand is not None and (mode != "lexical" or expand.legs == "both"):  # no passage for a leg that reads none
            dense_query = expand.expanded(query)
            lexical_query = dense_query if expand.legs == "both" else query
        lists: dict[str, dict[int, float]] = {}
        if mode in ("hybrid", "dense"):
            lists["dense"] = self.dense_scores(dense_query, depth, selection)
        if mode in ("hybrid", "lexical"):
            lists["lexical"] = self.lexical_scores(lexical_query, depth, selection)
        ordered = {name: sorted(scores, key=scores.get, reverse=True) for name, scores in lists.items()}
        if mode != "hybrid":
            return ordered, lists[mode]
        if fusion == "auto":
            fusion, alpha = fusion_of(ordered, self.store)
        if fusion == "rrf":
            return ordered, rrf(ordered)
        share = dynamic_alpha(lists["dense"], lists["lexical"]) if fusion == "dynamic" else alpha
        return ordered, weighted(lists["dense"], lists["lexical"], share)

    def _statement_prior(self, query: str, order: list, prior: StatementPrior, how: tuple,
                         scores: dict) -> tuple[list, dict, list]:
        """The order with the statement prior applied (localcr.statements): in each of the first `prior.documents`
        documents, the chunks of the statements the question asks for, ranked by the same search inside the
        document (the question joined by its line items' row labels), fused with the order by reciprocal rank,
        that ranking weighted prior.lift. Returns the new order, its scores and the statement rows ranked; the
        order and scores as they were where the question asks for no statement or no document has one."""
        from localcr.statements import asked

        wanted = asked(query)
        if not wanted.statements:
            return order, scores, []
        first_docs = self._first_documents(order)
        lists = []
        inside_query = f"{query} {wanted.row_words}" if prior.row_words and wanted.row_words else query
        for doc_id in first_docs[: prior.documents]:
            sections = self._statement_rows(doc_id)
            rows = [row for row, statement in sections.items() if statement in wanted.statements]
            if not rows:
                continue
            inside = self.store.select(Filter((exact_glob(doc_id),)))  # the document passed the search's filter, if any
            _, fused = self._fused(inside_query, *how[:3], len(sections), inside, how[3])
            lists.append(sorted(rows, key=lambda row: (-fused.get(row, -1.0), row)))
        if not lists:
            return order, scores, []
        lifted = {row: 1.0 / (RRF_K + rank) for rank, row in enumerate(order, start=1)}
        for ranked in lists:
            for rank, row in enumerate(ranked, start=1):
                lifted[row] = lifted.get(row, 0.0) + prior.lift / (RRF_K + rank)
        return sorted(lifted, key=lambda row: (-lifted[row], row)), lifted, [row for ranked in lists for row in ranked]

    def _first_documents(self, order: list) -> list[str]:
        """The documents of the first 50 rows of an order, in the order they first appear."""
        return list(dict.fromkeys(record["doc_id"] for record in self.store.hit_records(order[:50])))

    def _statement_rows(self, doc_id: str) -> dict:
        """Every row of a document (in document order) with the financial statement its section is, or None; read
        once per document from the chunks' structural contexts."""
        from localcr.navigation import section_path
        from localcr.statements import statement_of

        kept = self.__dict__.setdefault("_statements_of", {})
        if doc_id not in kept:
            if len(kept) >= STATEMENT_DOCUMENTS_KEPT:
                kept.pop(next(iter(kept)))  # the oldest
            records = self.store.hit_records(list(self.store.rows_of_document(doc_id)))
            kept[doc_id] = {r["row"]: statement_of(section_path(r["context"])) for r in records}
        return kept[doc_id]

    def _navigated(self, query: str, order: list, navigator, how: tuple) -> tuple[list, list]:
        """The order with the chunks of the sections the navigator names first (the first `navigator.documents`
        documents of the order, each document's named chunks ranked by the same search inside that document),
        and those chunks; a document without an outline to read is left as it is."""
        from localcr.navigation import MIN_ENTRIES, about, outline, rows_of

        first_docs = self._first_documents(order)
        navigated: list = []
        for doc_id in first_docs[: navigator.documents]:
            records = self.store.hit_records(list(self.store.rows_of_document(doc_id)))
            entries = outline(records)
            if len(entries) < MIN_ENTRIES:
                navigator.notes.append(f"{doc_id} has no outline to read (its chunks' contexts name "
                                       f"{len(entries) or 'no'} section{'' if len(entries) == 1 else 's'})")
                continue
            named = set(rows_of(entries, navigator.sections(query, about(records), entries)))
            if not named:
                reply = navigator.last_reply
                navigator.notes.append(f"{doc_id}: " + (f"the reply {reply[:80]!r} names no section of its outline" if reply
                                                        else "its outline does not fit the model's window"))
                continue
            inside = self.store.select(Filter((exact_glob(doc_id),)))  # the document passed the search's filter, if any
            _, fused = self._fused(query, *how[:3], len(records), inside, how[3])
            navigated += sorted(named, key=lambda row: (-fused.get(row, -1.0), row))  # rows of one document each
        first = set(navigated)
        return navigated + [row for row in order if row not in first], navigated

    def _hits(self, groups, scores, ranks) -> list[Hit]:
        records = {r["row"]: r for r in self.store.hit_records(sorted({row for _, span in groups for row in span}))}
        hits = []
        for row, span in groups:
            rec = records[row]
            hit = Hit(
                chunk_id=rec["chunk_id"], doc_id=rec["doc_id"], path=rec["path"], position=rec["position"],
                start=rec["start"], end=rec["end"], score=float(scores.get(row, 0.0)),
                ranks={name: r[row] for name, r in ranks.items() if row in r},
                context=rec["context"], text=rec["text"],
                external_doc_id=rec["external_id"], external_index=rec["external_index"],
                page=page_at(rec["pages"], rec["start"]), kind=rec["kind"], structure=rec.get("structure") or "",
                language=rec.get("language") or "",
            )
            if len(span) > 1:
                hit.neighbours = [records[r]["chunk_id"] for r in span if r != row]
                hit.window_text = joined_chunks([(records[r]["text"], records[r]["start"], records[r]["end"])
                                                 for r in span])
            hits.append(hit)
        return hits

    def document_hits(self, doc_id: str) -> list[Hit]:
        """Every chunk of a live document, in order, as hits without a score (none for an unknown id)."""
        return self._hits([(row, [row]) for row in self.store.rows_of_document(doc_id)], {}, {})

    def matches(self, query: str, hits: list[Hit]) -> list[dict[str, list[tuple[int, int]]]]:
        """Per hit, where the query's terms occur in its text, context and window (those it has) as character
        spans: what the search page marks and what `localcr search` cuts its snippet around."""
        spans_in = self.store.highlighter(query)
        return [{field: spans_in(getattr(hit, field)) for field in ("text", "context", "window_text") if getattr(hit, field)}
                for hit in hits]

    def rare_terms(self, question: str) -> list[str]:
        """The question's terms that few chunks of the index hold (RARE_SHARE of them at most): what it is about
        where no name says so (German capitalises every noun; Arabic, Chinese and Japanese have no capitals), for
        the answer check's subject rule. None from a backend that keeps no term statistics."""
        return [term for term, share in self.store.term_shares(question).items() if 0 < share <= RARE_SHARE]

    # -- answers ------------------------------------------------------------------------------------------
    def ask(self, question: str, k: int | None = None, *, llm: str | None = None, answerer=None, fresh: bool = False,
            compute: bool = True, **search_options):
        """An answer to the question from the k best hits (default localcr.answers.reader.DEFAULT_SOURCES), citing
        them (localcr.answers.reader.Answer): retrieval as `search` does it (search_options: mode, fusion, rerank,
        window, glob, kind, lang ...), then the LLM named `llm` (default: the registry's) or the given `answerer`.
        compute: where the hits hold a table that answers by arithmetic, compute it (localcr.answers.route); False
        has the LLM read every answer. fresh: write it again even if cached."""
        for event, value in self.ask_stream(question, k, llm=llm, answerer=answerer, fresh=fresh, compute=compute,
                                            **search_options):
            if event == "answer":
                return value
        raise AssertionError("the answer stream ended without its answer")

    def ask_stream(self, question: str, k: int | None = None, *, llm: str | None = None, answerer=None, fresh: bool = False,
                   compute: bool = True, log=None, **search_options):
        """`ask` as it happens: ("note", coverage_note) while the index's vectors are still coming, ("sources",
        [Source]), ("estimate", how long it will take) unless cached, then ("text", piece) as the model writes, then
        ("answer", Answer); a refusal read again over more of the hits sends its sources and estimate again
        (Answerer.stream). log hears when the model loads."""
        if not question.strip():
            raise LocalcrError("the question is empty")
        from localcr.answers.reader import DEFAULT_SOURCES
        from localcr.answers.route import answer_stream

        if answerer is None:
            answerer = self._answerer(llm, log)
        hits = self.search(question, k or DEFAULT_SOURCES, **search_options)
        if note := self.coverage_note(search_options.get("mode", "hybrid")):
            yield "note", note
        yield from answer_stream(self, question, hits, answerer, compute_answers=compute, fresh=fresh,
                                 search_options=search_options)

    def _answerer(self, llm: str | None, log):
        """One answerer per LLM for the life of this Index: its model (and instruction's KV state) stays loaded."""
        from localcr.answers.reader import load_answerer

        answerers = self.__dict__.setdefault("_answerers", {})
        if llm not in answerers:
            answerers[llm] = load_answerer(self.registry, llm, log=log)
        answerers[llm]._log = log or answerers[llm]._log
        return answerers[llm]

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (evaluation clears them so every configuration pays for embedding)."""
        self._query_cache.clear()


def _ranks(rows: list[int]) -> dict[int, int]:
    """1-based rank of each row in an ordered list."""
    return {row: rank for rank, row in enumerate(rows, start=1)}


def open_index(directory: str | Path, models: str | Path | None = None) -> Index:
    """Open an index for searching; `models` is the registry file (default: see localcr.models)."""
    return Index(directory, load_registry(models) if models else None)
