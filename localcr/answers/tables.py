"""Tables read from any indexed text, as rows of cells with their column heads, scale and unit.

Every reader writes a table's rows as lines: Markdown pipe tables as they are, HTML, DOCX, ODT and sheet rows as
cells joined by " | " (localcr.readers.CELL_SEPARATOR), and a PDF's text layer as a row's label followed by its
cells separated by spaces. `tables_in` reads both kinds of line into `Table`s: the rows before the first row of
figures are its header (their most filled row names the columns: years, dates such as "31 December 2019", fiscal
periods or labels such as "As Reported"), a row with a label and no figures heads the rows under it, and the scale
and unit come from the table's own heading lines, the lines just above it or the chunk's context ("in thousands",
"$'000", "(in millions, except per share data)", "€m", "£ million"). A cell's value is as written: parentheses or
a minus make it negative, a dash is zero, a footnote mark is no part of it, a "%" marks a percentage.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# A cell that holds a figure: an optional sign or parenthesis, a currency, digits with separators, a percent sign,
# a footnote mark ("(1)", "*", "(a)") after it.
_FIGURE = re.compile(r"^(?P<open>\()?\s*(?P<minus>[-−–])?\s*(?P<unit>[$€£¥])?\s*(?P<minus2>[-−])?\s*"
                     r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<percent>%)?\s*(?P<close>\))?"
                     r"\s*(?:\*+|\(\w\)|\[\w\])?$")
_DASH = re.compile(r"^[$€£]?\s*[-−–—]+$|^n/?a$|^nil$", re.I)
_SEPARATOR = re.compile(r"^:?-{2,}:?$")
YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
# Scales as tables state them, and what each multiplies by.
_SCALE = re.compile(r"(?:in|amounts? in|expressed in)\s+(?:[$€£]\s*|(?:US|U\.S\.)?\s*dollars?\s+|euros?\s+|pounds?\s+)?"
                    r"(thousands|millions|billions)\b|[$€£]\s?'?(000|m|mn|bn|k)\b|\bin\s+[$€£]\s?(thousand|million|billion)s?\b|"
                    r"[$€£]\s?(thousand|million|billion)s?\b|\b(?:US)?\$\s?'000\b|\b'000\b", re.I)
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_SCALE_WORDS = {"thousands": "thousand", "millions": "million", "billions": "billion", "000": "thousand",
                "k": "thousand", "m": "million", "mn": "million", "bn": "billion", "thousand": "thousand",
                "million": "million", "billion": "billion"}
_CURRENCY = re.compile(r"[$€£¥]|\bUSD\b|\bEUR\b|\bGBP\b")
# A PDF text row: a label, then cells ("Automotive $ 5,686 $ 6,092 (1,234) — 12.5 %").
_TEXT_CELL = re.compile(r"(?:(?<=\s)|^)(?:\(?[-−]?[$€£]?\s?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?|\(?[-−]?[$€£]?\s?\d+(?:\.\d+)?\)?)"
                        r"\s?%?(?=\s|$)|(?<=\s)[—–-](?=\s|$)")
# A text line that heads columns: two or more years or dates and nothing else.
_DATE = r"(?:(?:\d{1,2}\s+)?[A-Z][a-z]{2,8}\.?\s+(?:\d{1,2},?\s+)?)?(?:19|20)\d\d"
_HEAD_LINE = re.compile(rf"^(?:[A-Za-z ,]{{0,40}}\s)?{_DATE}(?:\s+{_DATE})+$")


@dataclass(frozen=True)
class Cell:
    """One figure of a table: where it stands (its row's label, its column's head) and what it says."""

    row: str
    column: str
    value: float  # as written, signed, in the table's scale
    shown: str  # the cell as written: "$ 5,686", "(1,234)", "12.5%"
    percent: bool
    scale: str  # "thousand", "million", "billion" or ""
    unit: str  # "$", "€", "£" or ""

    @property
    def amount(self) -> float:
        """The value in units: 5,686 in millions is 5,686,000,000 (a percentage stays as written)."""
        return self.value if self.percent else self.value * SCALES.get(self.scale, 1.0)

    @property
    def years(self) -> set[int]:
        """The years its row's label or its column's head names: the period it is of."""
        return {int(year) for year in YEAR.findall(f"{self.row} {self.column}")}


@dataclass
class Table:
    columns: list[str]
    rows: list[tuple[str, list[Cell | None]]] = field(default_factory=list)  # (label, a cell per column)
    caption: str = ""  # the heading lines above and inside it: where its scale is said

    def cells(self) -> list[Cell]:
        return [cell for _, cells in self.rows for cell in cells if cell is not None]


def figure(text: str) -> tuple[float, bool] | None:
    """A cell's value and whether it is a percentage, or None where it holds no figure ("Total", "")."""
    text = " ".join(text.split())
    if _DASH.match(text):
        return 0.0, False
    match = _FIGURE.match(text)
    if not match or bool(match["open"]) != bool(match["close"]):
        return None
    value = float(match["digits"].replace(",", ""))
    negative = match["open"] or match["minus"] or match["minus2"]
    return (-value if negative else value), bool(match["percent"])


def scale_of(text: str) -> str:
    """The scale a table's heading states: "thousand", "million", "billion", or ""."""
    match = _SCALE.search(text)
    if not match:
        return ""
    word = next((group for group in match.groups() if group), "000")
    return _SCALE_WORDS[word.lower()]


def unit_of(text: str) -> str:
    match = _CURRENCY.search(text)
    if not match:
        return ""
    return {"USD": "$", "EUR": "€", "GBP": "£"}.get(match[0], match[0])


def tables_in(text: str, context: str = "") -> list[Table]:
    """The tables of a chunk's text, both as cells joined by "|" and as a PDF's text rows under a line of years.
    The context (the chunk's heading path, a sheet's header row) lends its scale and, to a run of rows whose header
    fell in another chunk, its column heads."""
    lines = text.splitlines()
    found, block, above = [], [], []
    for number, line in enumerate(lines + [""]):
        if _is_piped(line):
            block.append(line)
            continue
        if block:
            found.append(_piped(block, above[-3:], context))
            block = []
        above.append(line)
    found += _text_tables(lines, context)
    return [table for table in found if table is not None and table.cells()]


def _is_piped(line: str) -> bool:
    stripped = line.strip()
    return stripped.count("|") >= 2 or " | " in stripped or (stripped.startswith("|") and stripped.endswith("|"))


def _split(line: str) -> list[str]:
    stripped = line.strip()
    if stripped.startswith("|"):
        stripped = stripped[1:]
    if stripped.endswith("|"):
        stripped = stripped[:-1]
    return [" ".join(cell.split()) for cell in stripped.split("|")]


def _is_figures_row(cells: list[str]) -> bool:
    """A row of data: a label and a figure that is not a year heading a column."""
    values = [cell for cell in cells[1:] if cell]
    return bool(cells[0]) and any(figure(cell) is not None and not re.fullmatch(r"(?:19|20)\d\d", cell)
                                  for cell in values)


def _piped(block: list[str], above: list[str], context: str) -> Table | None:
    rows = [_split(line) for line in block]
    rows = [cells for cells in rows if not all(_SEPARATOR.match(cell) or not cell for cell in cells)]
    if not rows:
        return None
    width = max(len(cells) for cells in rows)
    rows = [cells + [""] * (width - len(cells)) for cells in rows]
    first = next((i for i, cells in enumerate(rows) if _is_figures_row(cells)), None)
    if first is None:
        return None
    head_rows = [cells for cells in rows[:first] if any(cells[1:])]
    lead_rows = [cells[0] for cells in rows[:first] if cells[0] and not any(cells[1:])]
    header = " ".join(cell for cells in rows[:first] for cell in cells if cell)
    caption = " ".join([*above, header])
    columns = _column_heads(head_rows, width) if head_rows else _heads_from_context(context, width)
    table = Table(columns, caption=caption)
    scale, unit = scale_of(caption) or scale_of(context), unit_of(header) or _column_unit(rows[first:])
    group = lead_rows[-1].rstrip(":") if lead_rows else ""
    for cells in rows[first:]:
        label = cells[0]
        if not label and not any(cells[1:]):
            continue
        if label and not any(cells[1:]):  # "Transportation Solutions:": the rows under it are its
            group = label.rstrip(":")
            continue
        row_cells: list[Cell | None] = []
        for column, written in zip(columns, cells[1:]):
            read = figure(written) if written else None
            if read is None:
                row_cells.append(None)
                continue
            percent = read[1] or "%" in column
            row_cells.append(Cell(label or group, column, read[0], written, percent, "" if percent else scale,
                                  "" if percent else unit))
        table.rows.append((label or group, row_cells))
    return _named_apart(table)


def _column_unit(rows: list[list[str]]) -> str:
    """The currency a table's figures are written in: the first one a cell shows ("$ 5,686" on its first row)."""
    return next((unit for cells in rows for cell in cells[1:] if (unit := unit_of(cell))), "")


def _column_heads(head_rows: list[list[str]], width: int) -> list[str]:
    """A name per column: its cell in the header row that names the most years, else the most filled one (what
    heads each column: "2019" under a spanning "Year Ended May 31,", not the "£m" under it), else what another header row says over it, else "column N"."""
    fullest = max(head_rows, key=lambda cells: (sum(bool(YEAR.search(cell)) for cell in cells[1:]),
                                                sum(bool(cell) for cell in cells[1:])))
    heads = []
    for j in range(1, width):
        head = fullest[j] or next((cells[j] for cells in reversed(head_rows) if cells[j]), "")
        heads.append(head or f"column {j + 1}")
    return _unique(heads)


def _heads_from_context(context: str, width: int) -> list[str]:
    """Column heads for rows whose header is in another chunk: the context's "Columns: ..." (a sheet's header
    row) where it has as many cells, else "column N"."""
    match = re.search(r"Columns: (.*?)\.?$", context, re.M)
    if match:
        cells = _split(match[1])
        if len(cells) == width:
            return _unique(cells[1:])
    return [f"column {j + 1}" for j in range(1, width)]


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _named_apart(table: Table) -> Table:
    """Rows of the same label (an "Other" under two groups) named apart by the order they come in."""
    labels = _unique([label for label, _ in table.rows])
    table.rows = [(label, [None if c is None else Cell(label, c.column, c.value, c.shown, c.percent, c.scale, c.unit)
                           for c in cells]) for label, (_, cells) in zip(labels, table.rows)]
    return table


def _text_tables(lines: list[str], context: str) -> list[Table]:
    """Tables of a PDF's text layer: a line of two or more years or dates heads the rows of as many cells under it,
    until a line that is neither such a row nor a label alone."""
    tables, table, caption = [], None, []
    for line in lines:
        stripped = " ".join(line.split())
        if _is_piped(line):
            table = None
            continue
        if _HEAD_LINE.match(stripped):
            heads = _unique(re.findall(_DATE, stripped))
            table = Table(heads, caption=" ".join(caption[-3:] + [stripped]))
            tables.append(table)
            continue
        caption.append(stripped)
        if table is None:
            continue
        cells = list(_TEXT_CELL.finditer(stripped))
        if not cells:
            if len(stripped) > 80:  # prose: the table has ended
                table = None
            else:
                table.caption += " " + stripped if not table.rows else ""
            continue
        label = stripped[:cells[0].start()].strip(" $:")
        values = [figure(match[0]) for match in cells]
        if not re.search(r"[A-Za-z]{2}", label) or len(values) != len(table.columns) or None in values:
            continue
        scale, unit = scale_of(table.caption) or scale_of(context), unit_of(stripped)
        table.rows.append((label, [Cell(label, column, value, match[0].strip(), percent, "" if percent else scale,
                                        unit) for column, (value, percent), match in zip(table.columns, values, cells)]))
    return [_named_apart(t) for t in tables if t.rows]
