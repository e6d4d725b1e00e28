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
from collections import Counter
from dataclasses import dataclass, field, replace

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
                    r"(thousands|millions|billions)\b|[$€£]\s?['’]?(000|m|mn|bn|k)\b|\bin\s+[$€£]\s?(thousand|million|billion)s?\b|"
                    r"[$€£]\s?(thousand|million|billion)s?\b|['’]000\b", re.I)
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_SCALE_WORDS = {"thousands": "thousand", "millions": "million", "billions": "billion", "000": "thousand",
                "k": "thousand", "m": "million", "mn": "million", "bn": "billion", "thousand": "thousand",
                "million": "million", "billion": "billion"}
_CURRENCY = re.compile(r"[$€£¥]|\bUSD\b|\bEUR\b|\bGBP\b")
# A PDF text row: a label, then cells ("Automotive $ 5,686 $ 6,092 (1,234) — 12.5 %").
_TEXT_CELL = re.compile(r"(?:(?<=\s)|^)\(?[-−]?[$€£]?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s?%?\)?"
                        r"(?=\s|$)|(?<=\s)[$€£]?[—–-](?=\s|$)")
# A line of years alone (a PDF may space one out: "2019 2 0 1 8"): a table's heading, never its subtotal.
_YEARS_ONLY = re.compile(r"(?:(?:19|20)\d\d|[12] [09] \d \d)(?:\s+(?:(?:19|20)\d\d|[12] [09] \d \d))*")
_HEADLESS = "column {}"  # the name of a column whose head was not found, by its place (the label column is 1)
# A year or date heading a column: "2019", "Dec 29, 2018", "30 June 2019", "December 31, 2019".
_DATE = r"(?:(?:\d{1,2}\s+)?[A-Z][a-z]{2,8}\.?\s+(?:\d{1,2},?\s+)?)?(?:19|20)\d\d"


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
    def headed(self) -> bool:
        """Whether its column has a head the table gives (not one named for its place: no head was found)."""
        return not self.column.startswith(_HEADLESS.format(""))

    @property
    def years(self) -> set[int]:
        """The years its row's label or its column's head names: the period it is of."""
        return {int(year) for year in YEAR.findall(f"{self.row} {self.column}")}


@dataclass
class Table:
    columns: list[str]
    rows: list[tuple[str, list[Cell | None]]] = field(default_factory=list)  # (label, a cell per column)
    caption: str = ""  # the heading lines above and inside it: where its scale is said
    groups: list[str] = field(default_factory=list)  # each row's group: the label-only row above it ("Current:")

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
    for line in lines + [""]:
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
        table.groups.append(group if label else "")
    return _named_apart(table)


def _column_unit(rows: list[list[str]]) -> str:
    """The currency a table's figures are written in: the first one a cell shows ("$ 5,686" on its first row)."""
    return next((unit for cells in rows for cell in cells[1:] if (unit := unit_of(cell))), "")


def _column_heads(head_rows: list[list[str]], width: int) -> list[str]:
    """A name per column: its cell in the header row that names the most years, else the most filled one (what
    heads each column: "2019" under a spanning "Year Ended May 31,", not the "£m" under it), else what another
    header row says over it, else its place ("column 3")."""
    fullest = max(head_rows, key=lambda cells: (sum(bool(YEAR.search(cell)) for cell in cells[1:]),
                                                sum(bool(cell) for cell in cells[1:])))
    heads = []
    for j in range(1, width):
        head = fullest[j] or next((cells[j] for cells in reversed(head_rows) if cells[j]), "")
        heads.append(head or _HEADLESS.format(j + 1))
    return _unique(heads)


def _heads_from_context(context: str, width: int) -> list[str]:
    """Column heads for rows whose header is in another chunk: the context's "Columns: ..." (a sheet's header
    row) where it has as many cells, else "column N"."""
    match = re.search(r"Columns: (.*?)\.?$", context, re.M)
    if match:
        cells = _split(match[1])
        if len(cells) == width:
            return _unique(cells[1:])
    return [_HEADLESS.format(j + 1) for j in range(1, width)]


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _named_apart(table: Table) -> Table:
    """Rows of the same label named apart: by their group where they have one ("Current: State", "Deferred:
    State"), else by the order they come in ("Other (2)")."""
    groups = table.groups or [""] * len(table.rows)
    counts = Counter(label for label, _ in table.rows)
    labels = _unique([f"{group}: {label}" if counts[label] > 1 and group else label
                      for (label, _), group in zip(table.rows, groups)])
    table.rows = [(label, [None if c is None else replace(c, row=label) for c in cells])
                  for label, (_, cells) in zip(labels, table.rows)]
    return table


def _text_row(line: str) -> tuple[str, list[re.Match]] | None:
    """A PDF text line as a row: a label, then only cells to the end of the line; None for prose or a heading."""
    cells = list(_TEXT_CELL.finditer(line))
    if not cells or line[cells[-1].end():].strip():
        return None
    # the cells are the line's tail: each follows the one before with only spaces between
    first = len(cells) - 1
    while first > 0 and not line[cells[first - 1].end():cells[first].start()].strip():
        first -= 1
    label = line[:cells[first].start()].strip(" $€£:")
    if not re.search(r"[A-Za-z]{2}", label) or len(label) > 120 or re.search(r"[$€£]\s?\(?\d", label):
        return None  # no label, prose, or rows a PDF ran into one line ("costs $53.0 $39.2, Fiscal 2018: $2.0")
    if all(re.fullmatch(r"(?:19|20)\d\d", match[0].strip()) for match in cells[first:]):
        return None  # "For the year ended December 31: 2019 2018 2017" heads the columns
    return label, cells[first:]


def _heads_above(lines: list[str], width: int) -> tuple[list[str], str]:
    """Column heads for `width` cells from the lines just above a text table, and those lines as its caption. The
    last line that names a year, read as its dates and the single words after the first date ("30 June 2019 30
    June 2018 Change", "(In Millions) Dec 29, 2018 Acquisitions Transfers Other Dec 28, 2019"), where that gives
    as many heads as cells; else the years or dates the lines name, then "column N". A year a PDF spaced out
    ("2 0 1 8") is read whole."""
    lines = [re.sub(r"\b([12]) ([09]) (\d) (\d)\b", r"\1\2\3\4", line) for line in lines]
    caption = " ".join(lines)
    dated = [line for line in lines if re.search(_DATE, line)]
    if dated:
        pieces = re.split(f"({_DATE})", dated[-1])
        heads = []
        for i, piece in enumerate(pieces[1:], start=1):
            heads += [" ".join(piece.split())] if i % 2 else piece.split()
        if len(heads) == width:
            return _unique(heads), caption
    dates = [" ".join(date.split()) for date in re.findall(_DATE, caption)]
    heads = dates[-width:] if len(dates) >= width else dates + [_HEADLESS.format(j + 2) for j in range(len(dates), width)]
    return _unique(heads), caption


def _text_tables(lines: list[str], context: str) -> list[Table]:
    """Tables of a PDF's text layer: runs of two or more lines that are a label followed by cells, a short line of
    words alone heading the rows under it; the columns are named by the lines just above the run."""
    tables, run, above = [], [], []
    for line in lines + [""]:
        stripped = " ".join(line.split())
        row = None if _is_piped(line) else _text_row(stripped)
        if row is not None:
            run.append((stripped, row))
            continue
        if run and stripped and len(stripped) <= 120 and not re.search(r"\d|\.$", stripped):
            run.append((stripped, None))  # a group's heading inside the table
            continue
        if run and re.fullmatch(r"[\d\s,.$€£()%—–-]+", stripped) and not _YEARS_ONLY.fullmatch(stripped):
            run.append(("", None))  # a subtotal without a label: the table goes on
            continue
        if len([row for _, row in run if row]) >= 2:
            tables.append(_text_table(run, above[-3:], context))
            above = []
        else:
            above += [text for text, _ in run]
        run = []
        if stripped:
            above.append(stripped)
    return [_named_apart(t) for t in tables if t.rows]


def _text_table(run: list, above: list[str], context: str) -> Table:
    widths = [len(row[1]) for _, row in run if row]
    width = max(set(widths), key=widths.count)
    heads, caption = _heads_above(above, width)
    table = Table(heads, caption=caption)
    scale = scale_of(caption) or scale_of(context)
    unit = next((unit_of(line) for line, row in run if row and unit_of(line)), "") or unit_of(caption)
    group = ""
    for line, row in run:
        if row is None:
            group = line.rstrip(":") or group
            continue
        label, cells = row
        if len(cells) != width:
            continue
        values = [figure(match[0]) for match in cells]
        if None in values:
            continue
        table.rows.append((label, [Cell(label, head, value, match[0].strip(), percent, "" if percent else scale,
                                        "" if percent else unit)
                                   for head, (value, percent), match in zip(heads, values, cells)]))
        table.groups.append(group)
    return table
