"""Whole sheets kept as tables (issue #86, localcr.sheet_tables): every segment stores its sheet documents' typed
tables beside its chunks, with the documents' life (a tombstoned document's table is never served, compaction
carries them), and a question's SELECT runs on the stored file, read-only, refused anything but reads of its one
table.

The quick tests write segments as localcr.store does, of documents read by localcr's own sheet readers and cut
into overlapping chunks here; the last one indexes, edits, compacts and deletes real files with the CLI (MiniLM
embeds them: `model`, no LLM)."""
from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import run
from made_files import xlsx

from localcr import sheet_tables, store
from localcr.backends.local import LocalBackend
from localcr.answers import notation, sql
from localcr.documents import Chunk, Document
from localcr.lexical import Postings
from localcr.readers.sheets import read_csv, read_xlsx

HOSTILE = "'); DROP TABLE t; --"
READS_FILES = "read_csv('/etc/passwd')"
PRICES = ("Item,Note,Price\n"
          "Hammer,claw,12.50\n"
          f'Saw,"{HOSTILE}",18\n'
          "Glue,,n/a\n"
          f"Nails,{READS_FILES},3.20\n"
          "Level,60 cm,24\n")
BRANCHES = [["Filiale", "Region", "Umsatz"], ["Kiel", "Nord", "1.234,5"], ["Bonn", "West", "987,25"],
            ["Ulm", "Süd", "12"], ["Jena", "Ost", "n/a"]]


def workbook() -> bytes:
    """Two sheets: a note (no table) and branches whose figures are German ("1.234,5")."""
    return xlsx({"Hinweise": [["Umsätze der Filialen im Geschäftsjahr 2024"]], "Filialen": BRANCHES})


def chunked(doc: Document, per: int = 2) -> list[Chunk]:
    """The document's text in chunks of `per` lines, each overlapping the one before by a line (as a chunker's
    overlap does)."""
    lines, starts, at = doc.text.split("\n"), [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    chunks, i = [], 0
    while i < len(lines):
        j = min(len(lines), i + per)
        start, end = starts[i], starts[j - 1] + len(lines[j - 1])
        chunks.append(Chunk(f"{doc.doc_id}#{len(chunks)}", doc.doc_id, len(chunks), start, end, doc.text[start:end],
                            kind=doc.kind))
        i = j - 1 if j < len(lines) and j - 1 > i and lines[j - 1] else j  # no overlap on an empty line
    return chunks


def documents(prices: str = PRICES) -> list[Document]:
    csv_text, book_text = read_csv(prices.encode()).text, read_xlsx(workbook()).text
    return [Document("docs/prices.csv", "/d/prices.csv", "csv", csv_text, len(prices), language="en"),
            Document("docs/filialen.xlsx", "/d/filialen.xlsx", "xlsx", book_text, 100, language="de"),
            Document("docs/notes.md", "/d/notes.md", "markdown", "# Notes\n\nNo table here.\n", 25, language="en")]


def segment(directory, docs, donors=()) -> dict:
    chunks = {d.doc_id: chunked(d) for d in docs}
    rows = [c for d in docs for c in chunks[d.doc_id]]
    postings = Postings.build([c.text for c in rows], [d.language for d in docs for _ in chunks[d.doc_id]], frozenset())
    return store.write_segment(directory, docs, chunks, np.eye(len(rows), 4, dtype=np.float32) + 0.01,
                               np.arange(len(rows)), postings, tables=sheet_tables.writer(directory, docs, chunks, donors))


def publish(directory, segments) -> None:
    marker = store.read_marker(directory) if (directory / store.MARKER).exists() else None
    store.publish(directory, marker, {
        "localcr": "test", "created": "today", "sources": [], "embedder": {"dimension": 4}, "chunking": {},
        "contexts": {"mode": "structural"}, "languages": ["en", "de"], "segments": segments})


@pytest.fixture
def indexed(tmp_path):
    directory = tmp_path / "index"
    directory.mkdir()
    publish(directory, [segment(directory, documents())])
    return directory


def rebuilt(reader, doc_id, at=None):
    """The table as localcr rebuilt it from the chunks before tables were stored (an index without them)."""
    from localcr.search import Index

    return sql.sheet_table(SimpleNamespace(document_hits=Index(reader.directory).document_hits), doc_id, at)


def catalog(reader, doc_id) -> list[dict]:
    return sheet_tables.SheetTables(reader.tables_of(doc_id)).entries(doc_id)


def test_each_sheet_is_stored_as_the_typed_table_table_of_builds_with_its_catalog(indexed):
    reader = LocalBackend(indexed)
    (entry,) = reader.manifest["segments"]
    assert sheet_tables.TABLES in entry["files"]  # the damage checks cover it
    prices = reader.sheet("docs/prices.csv")
    assert (prices.kind, prices.sheet, prices.names) == ("csv", "", ["Item", "Note", "Price"])
    assert [c.type for c in prices.columns] == ["TEXT", "TEXT", "REAL"]
    assert prices.lines == [2, 3, 4, 5, 6] and len(prices.rows) == 5
    assert prices.rows[2] == ["Glue", None, None]  # an empty cell and n/a are NULL
    assert list(prices.rows) == rebuilt(reader, "docs/prices.csv").rows
    (csv_entry,) = catalog(reader, "docs/prices.csv")
    assert (csv_entry["sheet"], csv_entry["rows"], csv_entry["decimal"], json.loads(csv_entry["columns"])) == \
        ("", 5, ".", [["Item", "TEXT", "", ""], ["Note", "TEXT", "", ""], ["Price", "REAL", "", ""]])

    notes, branches = catalog(reader, "docs/filialen.xlsx")
    assert (notes["sheet"], notes["name"], branches["sheet"], branches["decimal"]) == ("Hinweise", None, "Filialen", ",")
    text = documents()[1].text
    assert text[branches["start"]:branches["end"]].startswith("# Filialen") and notes["end"] <= branches["start"]
    hit = (text.index("Kiel"), text.index("Kiel") + 10)
    stored = reader.sheet("docs/filialen.xlsx", hit)  # a hit's span picks its worksheet
    assert (stored.sheet, stored.names, [c.type for c in stored.columns]) == \
        ("Filialen", ["Filiale", "Region", "Umsatz"], ["TEXT", "TEXT", "REAL"])
    assert stored.columns == rebuilt(reader, "docs/filialen.xlsx", hit).columns  # units and all
    assert list(stored.rows) == [["Kiel", "Nord", 1234.5], ["Bonn", "West", 987.25], ["Ulm", "Süd", 12.0],
                                 ["Jena", "Ost", None]]
    assert stored.lines == [2, 3, 4, 5] and stored.lines == rebuilt(reader, "docs/filialen.xlsx", hit).lines
    # The cells as written: only those a value shown would not give back are kept ("12" is 12.0 shown).
    assert list(stored.cells) == rebuilt(reader, "docs/filialen.xlsx", hit).cells == \
        [["Kiel", "Nord", "1.234,5"], ["Bonn", "West", "987,25"], ["Ulm", "Süd", "12"], ["Jena", "Ost", "n/a"]]
    assert stored.cells[1] == ["Bonn", "West", "987,25"]
    kept = sqlite3.connect(stored.stored.path).execute(f'SELECT * FROM {stored.stored.name}_written').fetchall()
    assert kept == [(2, 2, "1.234,5"), (3, 2, "987,25"), (5, 2, "n/a")]
    north = "SELECT COUNT(*) FROM t WHERE \"Region\" = 'NORD'"
    assert sql.run_query(stored, north)[1] == sql.run_query(rebuilt(reader, "docs/filialen.xlsx", hit), north)[1] == [(1,)]
    assert sql.ran(stored, "SELECT \"Filiale\" FROM t WHERE \"Region\" = 'SÜD'")[1] == [("Ulm",)]  # beyond ASCII
    assert reader.sheet("docs/filialen.xlsx", (0, 10)) is None  # the notes sheet holds no table
    assert reader.sheet("docs/filialen.xlsx") is None and rebuilt(reader, "docs/filialen.xlsx") is None
    assert reader.sheet("docs/notes.md") is None and reader.sheet("docs/nothing.csv") is None

    from localcr.search import Index

    index = Index(indexed)
    table = sql.sheet_table(index, "docs/filialen.xlsx", hit)  # what a question gets: the stored table
    assert table.stored is not None and sql.run_query(table, 'SELECT SUM("Umsatz") FROM t')[1] == [(2233.75,)]
    assert sql.sheet_table(index, "docs/notes.md") is None


def test_the_model_is_shown_a_stored_table_as_a_rebuilt_one(tmp_path):
    """Its CREATE TABLE, first rows and grammar, whose values of a text column come from the catalog (at most
    MAX_VALUES + 1 of them kept: a column with more is listed by no grammar)."""
    many = "Name,Team,Goals\n" + "".join(f"Player {n},Team {n % 3},{n}\n" for n in range(sql.MAX_VALUES + 5))
    directory = tmp_path / "index"
    directory.mkdir()
    ships = "Ship,Launched\nAlba,17 January 1946\nBrig,\"April 17, 1854\"\nCora,n/a\n"
    docs = documents()[:2] + [Document("docs/many.csv", "/d/many.csv", "csv", read_csv(many.encode()).text, 9),
                              Document("docs/ships.csv", "/d/ships.csv", "csv", read_csv(ships.encode()).text, 9)]
    publish(directory, [segment(directory, docs)])
    reader = LocalBackend(directory)
    for doc_id in ("docs/prices.csv", "docs/many.csv", "docs/ships.csv"):
        stored, before = reader.sheet(doc_id), rebuilt(reader, doc_id)
        assert list(stored.rows) == before.rows and list(stored.cells) == before.cells
        assert stored.create_statement() == before.create_statement()
        assert stored.example_rows() == before.example_rows()
        asked = "How many goals did Player 7 score for Team 1?"
        assert stored.example_rows(question=asked) == before.example_rows(question=asked)
        assert sql.sql_grammar(stored) == sql.sql_grammar(before)
    stored = reader.sheet("docs/ships.csv")  # a date column: its ISO dates stored, its cells as written kept
    assert list(stored.rows) == [["Alba", "1946-01-17"], ["Brig", "1854-04-17"], ["Cora", None]]
    assert list(stored.cells) == [["Alba", "17 January 1946"], ["Brig", "April 17, 1854"], ["Cora", "n/a"]]
    stored = reader.sheet("docs/many.csv")
    assert len(stored.text_values(stored.columns[0])) == sql.MAX_VALUES + 1
    assert stored.text_values(stored.columns[1]) == ["Team 0", "Team 1", "Team 2"]
    assert "value-0 ::= anystring" in sql.sql_grammar(stored)


def test_cells_holding_sql_are_text_and_the_engine_refuses_all_but_reads_of_the_one_table(indexed, tmp_path):
    reader = LocalBackend(indexed)
    table = reader.sheet("docs/prices.csv")
    assert sql.run_query(table, "SELECT \"Note\" FROM t WHERE \"Item\" = 'Saw'")[1] == [(HOSTILE,)]
    assert sql.run_query(table, "SELECT \"Item\" FROM t WHERE \"Note\" LIKE '%read_csv%'")[1] == [("Nails",)]
    assert [c.type for c in table.columns][1] == "TEXT" and HOSTILE in table.text_values(table.columns[1])
    other = catalog(reader, "docs/filialen.xlsx")[1]["name"]  # the workbook's table, in the same file
    tables = indexed / store.SEGMENTS / reader.manifest["segments"][0]["name"] / sheet_tables.TABLES
    before = hashlib.sha256(tables.read_bytes()).hexdigest()
    refused = [f"ATTACH DATABASE '{tmp_path / 'x.db'}' AS x", f"SELECT * FROM {other}", f'SELECT * FROM main."{other}"', f"SELECT * FROM {other}_written",
               f"SELECT COUNT(*) FROM t, {other}", "SELECT * FROM catalog", "SELECT * FROM sqlite_master",
               "SELECT * FROM temp.sqlite_master", "INSERT INTO t VALUES (9, 'Drill', '', 1)",
               f"INSERT INTO {table.stored.name} VALUES (9, 'Drill', '', 1)", "UPDATE t SET \"Price\" = 0",
               "DELETE FROM t", "DROP TABLE t", "DROP VIEW t", "CREATE TEMP TABLE u (a)", "PRAGMA query_only = OFF",
               f"VACUUM INTO '{tmp_path / 'copy.db'}'", "SELECT load_extension('/tmp/evil.so')",
               "SELECT readfile('/etc/passwd')", "SELECT 1; DROP TABLE t"]
    for query in refused:
        with pytest.raises(sql.QueryError):
            sql.run_query(table, query)
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "copy.db").exists()
    assert hashlib.sha256(tables.read_bytes()).hexdigest() == before
    assert sql.run_query(table, "SELECT COUNT(*) FROM t")[1] == [(5,)]  # the table is whole
    assert sql.behind_rows(table, 'SELECT COUNT(*) FROM t WHERE "Price" > 10', [(3,)]) == ([2, 3, 6], "counted over")


def test_a_changed_or_deleted_document_s_table_is_never_served_and_compaction_carries_the_live_ones(
        indexed, monkeypatch):
    from localcr.index import compact

    reader = LocalBackend(indexed)
    (first,) = reader.manifest["segments"]
    changed = [d for d in documents(PRICES.replace("Hammer,claw,12.50", "Mallet,rubber,9")) if d.doc_id == "docs/prices.csv"]
    second = segment(indexed, changed, donors=[first["name"]])
    publish(indexed, [{**first, "dead": ["docs/prices.csv"], "dead_chunks": len(chunked(documents()[0]))}, second])
    reader = LocalBackend(indexed)
    table = reader.sheet("docs/prices.csv")
    assert table.rows[0] == ["Mallet", "rubber", 9.0] and table.stored.path.parent.name == second["name"]
    assert sql.run_query(table, "SELECT COUNT(*) FROM t WHERE \"Item\" = 'Hammer'")[1] == [(0,)]

    monkeypatch.setattr(sql, "table_of", None)  # compaction copies every table: none is typed again
    compact(indexed)
    monkeypatch.undo()
    reader = LocalBackend(indexed)
    (merged,) = reader.manifest["segments"]
    assert sheet_tables.TABLES in merged["files"]
    assert reader.sheet("docs/prices.csv").rows[0] == ["Mallet", "rubber", 9.0]
    text = documents()[1].text
    assert reader.sheet("docs/filialen.xlsx", (text.index("Kiel"), len(text))).rows[0] == ["Kiel", "Nord", 1234.5]
    with sqlite3.connect(indexed / store.SEGMENTS / merged["name"] / sheet_tables.TABLES) as db:
        assert db.execute("SELECT COUNT(*) FROM catalog").fetchone() == (3,)  # the CSV once, the workbook's two

    publish(indexed, [{**merged, "dead": ["docs/prices.csv"], "dead_chunks": len(chunked(changed[0]))}])  # deleted
    reader = LocalBackend(indexed)
    assert reader.sheet("docs/prices.csv") is None and not reader.holds_tables("docs/prices.csv")
    from localcr.search import Index

    assert sql.sheet_table(Index(indexed), "docs/prices.csv") is None


def test_an_index_written_before_tables_rebuilds_its_sheets_from_their_chunks(indexed):
    reader = LocalBackend(indexed)
    stored = reader.sheet("docs/prices.csv")
    rows, lines = list(stored.rows), list(stored.lines)
    (entry,) = reader.manifest["segments"]
    (indexed / store.SEGMENTS / entry["name"] / sheet_tables.TABLES).unlink()
    files = {k: v for k, v in entry["files"].items() if k != sheet_tables.TABLES}
    publish(indexed, [{**entry, "files": files}])
    from localcr.search import Index

    index = Index(indexed)
    assert not index.store.holds_tables("docs/prices.csv")
    table = sql.sheet_table(index, "docs/prices.csv")
    assert table.stored is None and (table.rows, table.lines) == (rows, lines)
    assert sql.run_query(table, "SELECT COUNT(*) FROM t")[1] == [(5,)]


def test_a_table_an_older_localcr_stored_is_rebuilt_from_its_chunks_as_this_one_types_it(indexed):
    from localcr.search import Index

    reader = LocalBackend(indexed)
    path = reader.tables_of("docs/filialen.xlsx")
    assert reader.holds_tables("docs/filialen.xlsx")
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {sheet_tables.TABLES_VERSION - 1}")  # as the version before wrote it
    db.commit()
    db.close()
    index = Index(indexed)
    assert not index.store.holds_tables("docs/filialen.xlsx")
    text = documents()[1].text
    table = sql.sheet_table(index, "docs/filialen.xlsx", (text.index("Kiel"), text.index("Kiel") + 10))
    assert table.stored is None and table.cells[0] == ["Kiel", "Nord", "1.234,5"] and table.rows[0][2] == 1234.5


def test_a_damaged_tables_file_is_found_by_the_re_index_s_check(indexed):
    manifest = store.current_manifest(indexed, store.read_marker(indexed))
    (entry,) = manifest["segments"]
    with open(indexed / store.SEGMENTS / entry["name"] / sheet_tables.TABLES, "r+b") as f:
        f.write(b"\xff" * 100)
    sound, damaged = store.check_segments(indexed, manifest)
    assert sound == [] and damaged[entry["name"]].startswith("tables.sqlite: not the bytes that were written")


def test_a_plain_figure_is_read_as_notation_reads_it():
    draw = random.Random(86)
    for decimal in (".", ","):
        convention = notation.Notation(decimal)
        for _ in range(20_000):
            cell = ("-" if draw.random() < 0.3 else "") + str(draw.randint(0, 10 ** draw.randint(1, 9)))
            if draw.random() < 0.5:
                cell += "." + str(draw.randint(0, 99999)).zfill(draw.randint(1, 5))
            reading = notation.read(cell, convention)
            expected = False if reading is None else reading.value
            assert repr(sql._reading(cell, convention)) == repr(expected), (cell, decimal)


# -- indexed by the CLI (MiniLM) ------------------------------------------------------------------------------------
@pytest.mark.model
def test_index_edit_compact_and_delete_keep_the_tables_of_the_live_files(tmp_path):
    from localcr.search import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "prices.csv").write_text(PRICES)
    (docs / "filialen.xlsx").write_bytes(workbook())
    directory = tmp_path / "index"

    def indexed():
        run("index", docs, "--index", directory, "--contexts", "structural", "-q")
        index = Index(directory)
        return index, {d.split("/")[-1]: d for d in index.store.doc_ids()}

    index, ids = indexed()
    prices = sql.sheet_table(index, ids["prices.csv"])
    assert prices.stored is not None and prices.rows[1] == ["Saw", HOSTILE, 18.0]
    hit = index.search("Umsatz Filiale Kiel", glob="*filialen.xlsx", k=1)[0]
    branches = sql.sheet_table(index, hit.doc_id, (hit.start, hit.end))
    assert (branches.sheet, [c.type for c in branches.columns]) == ("Filialen", ["TEXT", "TEXT", "REAL"])
    assert sql.run_query(branches, "SELECT \"Filiale\" FROM t ORDER BY \"Umsatz\" DESC LIMIT 1")[1] == [("Kiel",)]

    (docs / "prices.csv").write_text(PRICES.replace("Hammer,claw,12.50", "Mallet,rubber,9"))
    index, ids = indexed()
    table = sql.sheet_table(index, ids["prices.csv"])
    assert table.rows[0] == ["Mallet", "rubber", 9.0]
    assert sql.run_query(table, "SELECT COUNT(*) FROM t WHERE \"Item\" = 'Hammer'")[1] == [(0,)]

    run("compact", "--index", directory)
    index, ids = indexed()
    assert len(index.store.segments) == 1 and sql.sheet_table(index, ids["prices.csv"]).rows[0][0] == "Mallet"
    assert sql.sheet_table(index, hit.doc_id, (hit.start, hit.end)).sheet == "Filialen"

    (docs / "prices.csv").unlink()
    gone = ids["prices.csv"]
    index, ids = indexed()
    assert "prices.csv" not in ids and not index.store.holds_tables(gone) and index.store.sheet(gone) is None
    assert sql.sheet_table(index, gone) is None
