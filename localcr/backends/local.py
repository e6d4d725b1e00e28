"""The local index directory as a retrieval backend: the store's current generation (localcr.store) with its
usearch graphs and BM25 postings, searched in this process."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from localcr.filters import SELECTIONS_KEPT, Filter
from localcr.lexical import top_rows
from localcr.store import StoreReader, read_marker


@dataclass(frozen=True)
class Selection:
    """The chunk rows of the documents a filter lets through (live ones only), their dense windows, and how many
    documents those are."""

    rows: np.ndarray  # boolean, per row of the generation
    windows: np.ndarray  # boolean, per dense window of the generation
    documents: int


class LocalBackend(StoreReader):
    """A StoreReader that answers the ranked legs (see localcr.backends); rows are the generation's row numbers."""

    dense_only = False  # a local index always has both legs

    @property
    def location(self) -> str:
        return str(self.directory)

    @cached_property
    def dense_index(self):
        return self.dense()

    @cached_property
    def lexical_index(self):
        return self.lexical()

    def warm(self) -> None:
        """Open both indexes now, so that no request pays for it."""
        self.dense_index, self.lexical_index  # noqa: B018

    def holds_tables(self, doc_id: str) -> bool:
        """Whether the segment where the document is live stored its sheets' typed tables as this localcr types
        them (localcr.sheet_tables; one written before them or by an older version did not:
        localcr.answers.sql.sheet_table rebuilds them from the chunks)."""
        from localcr.sheet_tables import is_current  # answering's code: only where a question asks for a sheet

        path = self.tables_of(doc_id)
        return path is not None and is_current(path)

    def sheet(self, doc_id: str, at: tuple[int, int] | None = None):
        """A live sheet document's stored typed table, of the worksheet the span `at` lies in
        (localcr.sheet_tables.stored_sheet); None where there is none."""
        from localcr.sheet_tables import stored_sheet  # answering's code: only where a question asks for a sheet

        return stored_sheet(self, doc_id, at)

    def current_generation(self) -> str | None:
        """The generation a reader opening the index now would see (a rebuild may have switched one in)."""
        marker = read_marker(self.directory)
        return marker["current"] if marker else None

    @cached_property
    def _selections(self) -> dict[Filter, Selection]:
        return {}

    def select(self, wanted: Filter) -> Selection:
        """The rows a filter lets through, worked out once per filter (a generation never changes)."""
        if wanted not in self._selections:
            if len(self._selections) >= SELECTIONS_KEPT:
                self._selections.pop(next(iter(self._selections)))  # the oldest
            self._selections[wanted] = self._select(wanted)
        return self._selections[wanted]

    def _select(self, wanted: Filter) -> Selection:
        rows, documents = [], 0
        for seg in self.segments:
            passing = np.array([wanted.passes(r["doc_id"], r["path"], r["kind"], r["language"] or "")
                                for r in seg.rows("SELECT doc_id, path, kind, language FROM documents ORDER BY rowid")],
                               dtype=bool) & seg.doc_live
            documents += int(passing.sum())
            rows.append(passing[seg.row_docs] if seg.n_chunks else np.zeros(0, dtype=bool))
        rows = np.concatenate(rows or [np.zeros(0, dtype=bool)])
        return Selection(rows, rows[self.window_rows], documents)

    def dense_ranked(self, vector: np.ndarray, depth: int, selection: Selection | None = None) -> dict[int, float]:
        """Top chunks by cosine similarity (of the selected ones); a chunk embedded as several windows scores as its
        best window."""
        n = len(self.window_rows) if selection is None else int(selection.windows.sum())
        if not n:
            return {}
        per_chunk = max(1.0, len(self.window_rows) / max(self.dense_coverage[0], 1))  # of the chunks embedded so far
        labels, distances = self.dense_index.knn_query(vector, k=min(n, int(depth * per_chunk) + 8),
                                                       passing=None if selection is None else selection.windows)
        scores: dict[int, float] = {}
        for label, distance in zip(labels[0], distances[0]):
            row = int(self.window_rows[label])
            if row not in scores:
                scores[row] = 1.0 - float(distance)
            if len(scores) == depth:
                break
        return scores

    def lexical_ranked(self, query: str, depth: int, selection: Selection | None = None) -> dict[int, float]:
        """Top chunks by BM25 (of the selected ones), scored with the statistics of the whole index."""
        scores = self.lexical_index.scores(query)
        if selection is not None:
            scores[~selection.rows] = 0
        return {int(i): float(scores[i]) for i in top_rows(scores, depth)}

    def highlighter(self, query: str):
        return self.lexical_index.highlighter(query)

    def term_shares(self, query: str) -> dict[str, float]:
        return self.lexical_index.term_shares(query)

    def rows_around(self, row: int, window: int) -> list[int]:
        """The row and up to `window` rows on each side from its own document, in document order."""
        rows = self.rows_of_document(self.doc_of_row(row))
        return list(range(max(rows.start, row - window), min(rows.stop, row + window + 1)))
