"""Spreadsheets: CSV, TSV, XLSX and ODS, one line per row (cells separated by " | "), one section per sheet.

A workbook's sheets become `# <sheet name>` headings, so each is a section of the document; a sheet's header
row (its first row of two or more cells) is what localcr.structure carries into the context of every chunk of
that sheet, so a chunk of rows 900 to 940 still says which column is "Q3" and which "Branch". XLSX is read by
openpyxl in read-only mode with cached values: a formula reads as the value it showed when last saved, and the
rows stream, so a huge sheet never has all its cells in memory at once (defusedxml keeps its XML from expanding
entities). ODS is read by odfpy (through defusedxml too; it holds the whole document in memory, bounded by the
worker's memory limit). A sheet's text is bounded (MAX_CHARS).
"""
from __future__ import annotations

import csv
import datetime
import io
import re
from typing import Iterable

from localcr.readers import CELL_SEPARATOR, Read, ReaderError, bounded_zip, plain

MAX_CHARS = 64 << 20  # characters of text a spreadsheet may give; a sheet past it is cut with a warning


def read_csv(data: bytes) -> Read:
    return _delimited(data, None)


def read_tsv(data: bytes) -> Read:
    return _delimited(data, "\t")


def _delimited(data: bytes, delimiter: str | None) -> Read:
    """A CSV file decoded as text files are (localcr.readers.plain), its delimiter sniffed (`,` `;` tab `|`)."""
    read = plain.read(data)
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(read.text[:8192], delimiters=",;\t|").delimiter
        except csv.Error:  # one column, or no consistent delimiter
            delimiter = ","
    escape = "\\" if _escapes_quotes_with_backslashes(read.text, delimiter) else None
    try:
        read.text, cut = _sheet_text("", _reader(read.text, delimiter, escape))
    except csv.Error as exc:
        raise ReaderError(f"not a readable CSV file ({exc})") from None
    read.text += "\n"
    read.warnings += [cut] if cut else []
    return read


_BACKSLASH_QUOTE = re.compile(r'\\"')
_DOUBLED_QUOTE = re.compile(r'(?<!\\)""(?=[^",;\t|\r\n])')  # "" inside a cell ("said ""hi"""), not an empty cell
SNIFFED_CHARS = 1 << 16  # of a CSV's text, read both ways to tell how it escapes a quote


def _reader(text: str, delimiter: str, escape: str | None):
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, escapechar=escape,
                      doublequote=escape is None)


def _escapes_quotes_with_backslashes(text: str, delimiter: str) -> bool:
    """Whether a CSV writes a quote in a cell as \\" (MySQL's, PHP's and many scrapers' way) rather than as "" (the
    RFC's). Read the RFC's way, '"\\"Freak Me\\""' is the cell '\\Freak Me\\""' and may run on into the next line.
    Decided where \\" occurs and no "" inside a cell: the first SNIFFED_CHARS are read both ways, and the escape is
    kept unless it makes fewer rows of the header's width (a quoted Windows path "C:\\temp\\" ends in a backslash)."""
    if not _BACKSLASH_QUOTE.search(text) or _DOUBLED_QUOTE.search(text):
        return False
    sample = text[:SNIFFED_CHARS].rpartition("\n")[0] or text[:SNIFFED_CHARS]

    def even_rows(escape: str | None) -> int:
        try:
            rows = list(_reader(sample, delimiter, escape))
        except csv.Error:
            return -1
        return sum(len(row) == len(rows[0]) for row in rows) if rows else 0

    return even_rows("\\") >= even_rows(None)


def read_xlsx(data: bytes) -> Read:
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    bounded_zip(data, "XLSX")
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        try:
            sheets = [(sheet.title, sheet.iter_rows(values_only=True)) for sheet in book.worksheets]
            read = _workbook(sheets, book.properties.title or "")
        finally:
            book.close()
    except (KeyError, ValueError, TypeError, InvalidFileException) as exc:
        raise ReaderError(f"not a readable XLSX file ({' '.join(str(exc).split())[:200]})") from None
    return read


def read_ods(data: bytes) -> Read:
    from odf.table import Table

    from localcr.readers.opendocument import load, table_rows, title_of

    document = load(data, "ODS")
    if document.spreadsheet is None:
        raise ReaderError("not a readable ODS file (it holds no spreadsheet)")
    tables = document.spreadsheet.getElementsByType(Table)
    return _workbook([(table.getAttribute("name") or "", table_rows(table)) for table in tables], title_of(document))


def _workbook(sheets: list[tuple[str, Iterable]], title: str) -> Read:
    """Sheets (name, rows) as one text, each under its name as a heading; empty sheets left out."""
    texts, warnings = [], []
    for name, rows in sheets:
        text, cut = _sheet_text(name, rows)
        texts += [text] if text.strip() else []
        warnings += [cut] if cut else []
    return Read("\n\n".join(texts) + "\n", "", warnings, title=" ".join(title.split()))


def _sheet_text(name: str, rows: Iterable) -> tuple[str, str]:
    """A sheet as lines of cells under its name (none for a CSV), empty rows and trailing empty cells left out (a
    sheet with no cell is "", name and all, as an empty DOCX is: an empty workbook is skipped as empty); and a warning
    when the sheet was cut at MAX_CHARS."""
    lines, size = [f"# {' '.join(name.split())}", ""] if name.strip() else [], 0
    for n, row in enumerate(rows, 1):
        cells = [_cell(value) for value in row]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        line = CELL_SEPARATOR.join(cells)
        lines.append("\\" + line if line.startswith("#") else line)  # a cell is never a heading
        size += len(line) + 1
        if size > MAX_CHARS:
            return "\n".join(lines), f"sheet {name or '1'} cut after row {n}: its text passed {MAX_CHARS >> 20} M characters"
    return "\n".join(lines) if size else "", ""


def _cell(value) -> str:
    """A cell's value as text: whole numbers without `.0`, dates as ISO dates, white space folded."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return " ".join(str(value).split())
