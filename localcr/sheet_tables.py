"""The typed tables of a segment's sheets, stored when it is written (issue #86): `tables.sqlite` beside its
store.sqlite, so a question over a whole sheet reads no chunk and rebuilds nothing, and its one SELECT runs on the
file itself (localcr.answers.sql.opened), reading only the pages it needs: a million-row sheet is never loaded.

Each sheet document of the segment (csv, tsv, xlsx, ods: localcr.readers.SHEET_KINDS) is cut into its sheets as a
question would cut it (localcr.answers.sql._sheets, from its chunks: one for a CSV, one per worksheet of a
workbook) and each sheet typed by localcr.answers.sql.table_of; the file holds:

    catalog        one row per sheet that has lines: doc_id, position (0-based, in the document), sheet (its
                   name, "" for a CSV), start and end (its offsets in the document's text, so a hit's span picks
                   its worksheet), lines (its non-empty lines), and where a header has rows under it: name (the
                   table's, "sheet_<n>"; NULL for a sheet of no table, a workbook's notes), columns (JSON
                   [[name, "REAL" | "TEXT" | "DATE"], ...]), decimal ("." or ","), rows, path, kind, language, digest
                   (of what the table is made of: its chunks, kind, language and TABLES_VERSION) and values (JSON:
                   each TEXT column's distinct values in the order of the rows, up to MAX_VALUES + 1 of them: what
                   the grammar lists, localcr.answers.sql.sql_grammar, without a pass over a million rows)
    sheet_<n>      "_row" INTEGER PRIMARY KEY (the row's line in the file), then the columns as typed: REAL for a
                   column whose every non-empty cell is a figure, DATE (stored as ISO 8601 text) for one whose every
                   such cell is a date, else TEXT, NULL for an empty or "n/a" cell;
                   every value bound, never spliced into SQL (a cell holding SQL is text)
    sheet_<n>_written  "_row", "column" (0-based, after "_row") and "cell": each cell whose value, shown, is not
                   the cell as written ("1.234,5" is 1234.5, "3 years" 3, "17 January 1946" 1946-01-17), so that
                   an answer selecting rows shows the table's words; a sheet of plain figures and text has none

Why a file of its own and not tables in store.sqlite: a query opens it, so even a query that got past the
authorizer reaches sheets' cells, not the chunks and contexts of every document; store.sqlite keeps its schema
(an older localcr reads a newer segment) and its quick_check cost; and a table is copied to the next segment
(a staged build's next commit of the same document, a compaction) by attaching the old file, not rebuilt.

Segments are immutable and a document dies by a tombstone: only the segment where a document is live is asked
for its tables (store.StoreReader.tables_of, LocalBackend.sheet), so a changed or deleted file's table is never
served. A segment of no sheet document has no tables.sqlite, nor has one written before tables were stored: the
sheets of that one are rebuilt from their chunks when asked for, as before (localcr.answers.sql.sheet_table). The
file is in the segment's file records, so a re-index's damage check covers it, and passes SQLite's quick_check as
store.sqlite does. Writing it is passed to store.write_segment (`writer`) and reading it goes through the local
backend, not the store: typing a sheet is answering's code, which imports the store.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from localcr.answers import sql
from localcr.readers import SHEET_KINDS
from localcr.store import SEGMENTS, TABLES, _open_store, _store_rows

TABLES_VERSION = 8  # in every table's digest: bump it when table_of types sheets otherwise (no older table is copied)
CATALOG_SCHEMA = """
    CREATE TABLE catalog (doc_id TEXT, position INTEGER, sheet TEXT, start INTEGER, end INTEGER, lines INTEGER,
                          name TEXT, columns TEXT, decimal TEXT, rows INTEGER, path TEXT, kind TEXT, language TEXT,
                          digest TEXT, "values" TEXT, PRIMARY KEY (doc_id, position));
"""
CATALOG_COLUMNS = ("doc_id", "position", "sheet", "start", "end", "lines", "name", "columns", "decimal", "rows", "path",
                   "kind", "language", "digest", "values")
ROW = "_row"
# A cell whose value, shown, is not the cell as written ("1.234,5" read 1234.5, "3 years" 3): what an answer that
# selects rows shows (localcr.answers.sql.as_written). Only such cells: a sheet of plain figures adds nothing.
WRITTEN_SCHEMA = """CREATE TABLE {name} ("_row" INTEGER, "column" INTEGER, "cell" TEXT, PRIMARY KEY ("_row", "column"))
                    WITHOUT ROWID"""


@dataclass(frozen=True)
class StoredTable:
    """Where a sheet's table lies: its segment's tables.sqlite, the table's name there, its number of rows, and its
    TEXT columns' first distinct values (the catalog's)."""

    path: Path
    name: str
    rows: int
    values: dict[str, list[str]] | None = field(default=None, compare=False)


def digest_of(doc, chunks: list) -> str:
    """What a document's tables are made of: its chunks' offsets and texts, its kind and language."""
    h = hashlib.blake2b(json.dumps([TABLES_VERSION, doc.kind, doc.language or ""]).encode(), digest_size=16)
    for c in chunks:
        h.update(f"\0{c.start}\0{c.end}\0".encode())
        h.update(c.text.encode())
    return h.hexdigest()


def writer(directory: Path, docs: list, chunks_by_doc: dict[str, list], donors: list[str] = ()):
    """What writes these documents' tables into a segment being written (store.write_segment's `tables`), copying
    those the index's segments named in `donors` hold made of the same chunks."""
    return lambda staging: write_tables(staging / TABLES, docs, chunks_by_doc,
                                        [directory / SEGMENTS / name for name in donors])


@sql.without_collection  # a million rows' lists: see there
def write_tables(path: Path, docs: list, chunks_by_doc: dict[str, list], donors: list[Path] = ()) -> None:
    """A segment's tables.sqlite (none where no document is a sheet): every sheet of these documents that are
    sheets, typed. donors: segments
    (directories) whose tables of the same document made of the same chunks (the digest) are copied, not rebuilt.
    Written without a journal: a segment half-written is removed whole (store.remove_stale_builds)."""
    sheets = [d for d in docs if d.kind in SHEET_KINDS and chunks_by_doc.get(d.doc_id)]
    if not sheets:
        return  # a segment of no sheet has no tables file
    digests = {d.doc_id: digest_of(d, chunks_by_doc[d.doc_id]) for d in sheets}
    db = sqlite3.connect(path.resolve().as_uri(), uri=True, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")  # the segment is synced whole once written (store._fsync_tree)
        db.execute(f"PRAGMA user_version = {TABLES_VERSION}")  # what `is_current` reads
        db.executescript(CATALOG_SCHEMA)
        names = (f"sheet_{n}" for n in itertools.count(1))
        copied = _copy(db, donors, digests, names) if donors else set()
        db.execute("BEGIN")
        for d in sheets:
            if d.doc_id in copied:
                continue
            for position, (sheet, start, end, lines) in enumerate(sql._sheets(chunks_by_doc[d.doc_id], d.kind)):
                table = sql.table_of(lines, doc_id=d.doc_id, path=d.path, kind=d.kind, sheet=sheet,
                                     language=d.language or "")
                entry = {"doc_id": d.doc_id, "position": position, "sheet": sheet, "start": start, "end": end,
                         "lines": len(lines), "path": d.path, "kind": d.kind, "language": d.language or "",
                         "digest": digests[d.doc_id], "name": None, "columns": None, "decimal": None, "rows": None,
                         "values": None}
                if table is not None:
                    entry.update(name=next(names), decimal=table.decimal, rows=len(table.rows),
                                 columns=json.dumps([[c.name, c.type, c.unit, c.unit_of_one] for c in table.columns],
                                                    ensure_ascii=False),
                                 values=json.dumps(_text_values(table, sql.MAX_VALUES + 1), ensure_ascii=False))
                    _write_table(db, entry["name"], table)
                db.execute(_insert(), [entry[c] for c in CATALOG_COLUMNS])
        db.execute("COMMIT")
    finally:
        db.close()


def _copy(db: sqlite3.Connection, donors: list[Path], digests: dict[str, str], names) -> set[str]:
    """Copy into db the tables (and catalog rows) of these documents that a donor segment holds made of the same
    chunks (their digests); the ids of the documents copied. A donor is attached one at a time (SQLite attaches
    ten at most), read-only."""
    copied: set[str] = set()
    for donor in dict.fromkeys(donors):
        wanted = {doc_id: digest for doc_id, digest in digests.items() if doc_id not in copied}
        if not wanted or not (donor / TABLES).is_file():
            continue
        db.execute("ATTACH DATABASE ? AS donor", (f"{(donor / TABLES).resolve().as_uri()}?mode=ro&immutable=1",))
        rows = [dict(zip(CATALOG_COLUMNS, r)) for r in db.execute(
            f"SELECT {_catalog_columns()} FROM donor.catalog WHERE doc_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY doc_id, position", (json.dumps(sorted(wanted)),))]
        db.execute("BEGIN")
        for doc_id in dict.fromkeys(r["doc_id"] for r in rows):
            entries = [r for r in rows if r["doc_id"] == doc_id]
            if not all(r["digest"] == wanted[doc_id] for r in entries):
                continue
            for entry in entries:
                if entry["name"] is not None:
                    name = next(names)
                    db.execute(f'CREATE TABLE {name} ({_columns_sql(json.loads(entry["columns"]))})')
                    db.execute(f"INSERT INTO {name} SELECT * FROM donor.{entry['name']}")
                    db.execute(WRITTEN_SCHEMA.format(name=sql.written_name(name)))
                    db.execute(f"INSERT INTO {sql.written_name(name)} "
                               f"SELECT * FROM donor.{sql.written_name(entry['name'])}")
                    entry = {**entry, "name": name}
                db.execute(_insert(), [entry[c] for c in CATALOG_COLUMNS])
            copied.add(doc_id)
        db.execute("COMMIT")
        db.execute("DETACH DATABASE donor")
    return copied


def _text_values(table, most: int) -> dict[str, list[str]]:
    """Each TEXT column's first `most` distinct values, in the order of the rows."""
    found = {}
    for j, column in enumerate(table.columns):
        if column.type == "TEXT":
            values: dict[str, None] = {}
            for row in table.rows:
                if row[j] is not None:
                    values[row[j]] = None
                    if len(values) >= most:
                        break
            found[column.name] = list(values)
    return found


def _insert() -> str:
    return f"INSERT INTO catalog ({_catalog_columns()}) VALUES ({','.join('?' * len(CATALOG_COLUMNS))})"


def _quoted(name: str) -> str:
    return f'"{name}"'


def _catalog_columns() -> str:
    return ", ".join(map(_quoted, CATALOG_COLUMNS))


def _columns_sql(columns: list[list[str]]) -> str:
    return ", ".join([f'"{ROW}" INTEGER PRIMARY KEY'] + [sql.column_definition(name, kind) for name, kind, *_ in columns])


def _write_table(db: sqlite3.Connection, name: str, table) -> None:
    db.execute(f"CREATE TABLE {name} ({_columns_sql([[c.name, c.type] for c in table.columns])})")
    marks = ",".join("?" * (len(table.columns) + 1))
    db.executemany(f"INSERT INTO {name} VALUES ({marks})", ([line, *values] for line, values in zip(table.lines, table.rows)))
    db.execute(WRITTEN_SCHEMA.format(name=sql.written_name(name)))
    db.executemany(f"INSERT INTO {sql.written_name(name)} VALUES (?, ?, ?)", _written_cells(table))


def _written_cells(table):
    """(line, column, cell) of each cell its value, shown, does not give back: a figure written otherwise ("1.234,5",
    "12.50"), a date ("17 January 1946" read 1946-01-17) or a cell read as NULL ("n/a"). A text value is its cell
    (table_of strips both), so only a NULL one is looked at in a text column: a million rows of names cost no
    comparison."""
    real = frozenset(j for j, c in enumerate(table.columns) if c.type == "REAL")
    dated = frozenset(j for j, c in enumerate(table.columns) if c.type == "DATE")
    for line, values, cells in zip(table.lines, table.rows, table.cells):
        for j, (value, cell) in enumerate(zip(values, cells)):
            if cell if value is None else (j in real and cell != sql.value_shown(value)
                                           or j in dated and cell != value):
                yield line, j, cell


def stored_sheet(reader, doc_id: str, at: tuple[int, int] | None = None):
    """The stored typed table (localcr.answers.sql.SheetTable, read from its file as asked for) of a live sheet
    document of a StoreReader's generation: its worksheet that most of the span `at` lies in, else its first;
    None for a document not live, not a sheet, or whose sheet holds no table, and where the document's segment
    stored no tables (StoreReader.tables_of: a tombstoned version's are never read)."""
    path = reader.tables_of(doc_id)
    return SheetTables(path).sheet(doc_id, at) if path is not None else None


def is_current(path: Path) -> bool:
    """Whether a tables file was written by this TABLES_VERSION (its user_version): an older one types sheets
    otherwise, so its sheets are rebuilt from their chunks as a question asks (localcr.answers.sql.sheet_table) until
    a re-index or `localcr compact` writes them again (a digest of another version is never copied)."""
    db = _open_store(path)
    try:
        return next(iter(_store_rows(db, path, "PRAGMA user_version")))[0] == TABLES_VERSION
    finally:
        db.close()


class SheetTables:
    """A segment's tables.sqlite as a reader sees it: its catalog, and a sheet's typed table read from it."""

    def __init__(self, path: Path):
        self.path = path

    def entries(self, doc_id: str) -> list[dict]:
        """The catalog's rows of a document, in order (a file that fails to read is a store.DamagedSegment)."""
        db = _open_store(self.path)
        try:
            return [dict(r) for r in _store_rows(db, self.path, f"SELECT {_catalog_columns()} FROM catalog "
                                                 "WHERE doc_id = ? ORDER BY position", (doc_id,))]
        finally:
            db.close()

    def sheet(self, doc_id: str, at: tuple[int, int] | None = None):
        """The typed table of the document's sheet that most of the span `at` lies in (else its first), as
        localcr.answers.sql.sheet_table chooses it; None for a document without sheets or a sheet of no table."""
        entries = self.entries(doc_id)
        if not entries:
            return None
        chosen = sql.chosen_sheet([(e, e["start"], e["end"], range(e["lines"])) for e in entries], at)[0]
        if chosen["name"] is None:
            return None
        stored = StoredTable(self.path, chosen["name"], chosen["rows"], json.loads(chosen["values"] or "null"))
        columns = [sql.Column(*column) for column in json.loads(chosen["columns"])]
        table = sql.SheetTable(doc_id, chosen["path"], chosen["kind"], chosen["sheet"], columns, [], [], [],
                               chosen["decimal"] or ".", stored=stored)
        table.rows, table.lines, table.cells = (StoredRows(table, what) for what in ("rows", "lines", "cells"))
        return table


class StoredRows(Sequence):
    """A stored table's rows (typed values), lines (`_row`) or cells (as written: its values as
    localcr.answers.sql.value_shown writes them but where the written table holds the cell, "" for NULL), read from
    its file as they are asked for: the length is the catalog's, an item or a slice reads those rows alone, a walk
    reads them all in order."""

    def __init__(self, table, what: str):
        self.table, self.what = table, what

    def __len__(self) -> int:
        return self.table.stored.rows

    def _select(self, tail: str = "", parameters=()) -> list:
        what = f'"{ROW}"' if self.what == "lines" else "*"
        found = self.table.connection().execute(f'SELECT {what} FROM t ORDER BY "{ROW}"{tail}', parameters)
        if self.what == "lines":
            return [row[0] for row in found]
        if self.what == "rows":
            return [list(row[1:]) for row in found]
        found = found.fetchall()
        written: dict[tuple[int, int], str] = {}
        if found:
            written = {(line, column): cell for line, column, cell in self.table.connection().execute(
                f'SELECT "{ROW}", "column", "cell" FROM main.{sql.written_name(self.table.stored.name)} '
                f'WHERE "{ROW}" BETWEEN ? AND ?', (found[0][0], found[-1][0]))}
        return [[written.get((row[0], j), "" if v is None else v if isinstance(v, str) else sql.value_shown(v))
                 for j, v in enumerate(row[1:])]
                for row in found]

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return self._select()[i]
            return self._select(" LIMIT ? OFFSET ?", (max(0, stop - start), start))
        n = len(self)
        if not -n <= i < n:
            raise IndexError("stored table row out of range")
        return self._select(" LIMIT 1 OFFSET ?", (i % n,))[0]

    def __iter__(self):
        return iter(self._select())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"<{len(self)} stored {self.what} of {self.table.stored.name}>"
