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

from localcr.answers import notation
from localcr.answers.periods import years_of

_SEPARATOR = re.compile(r"^:?-{2,}:?$")
# A PDF text row: a label, then cells ("Automotive $ 5,686 $ 6,092 (1,234) — 12.5 %").
# Its figures in either convention ("5,686", "45.210", "1.234,5", "12,3-", "11,8 %"); spaces never group digits
# here, where a space is what parts two cells.
_TEXT_CELL = re.compile(r"(?:(?<=\s)|^)\(?[-−+]?[$€£¥]?\s?(?:\d{1,3}(?:[.,'’]\d{3})+|\d+)(?:[.,]\d+)?(?:\s?[%€])?[-−]?\)?"
                        r"(?=\s|$)|(?<=\s)[$€£]?[—–-](?=\s|$)|(?<=\s)n/a(?=\s|$)")
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
    value: float | None  # as written, signed, in the table's scale; None where the cell says it has none ("n/a")
    shown: str  # the cell as written: "$ 5,686", "(1,234)", "12.5%", "n/a"
    percent: bool
    scale: str  # "thousand", "million", "billion", ... (localcr.answers.vocabulary.toml) or ""
    unit: str  # "$", "€", "CHF", ... or ""

    @property
    def amount(self) -> float | None:
        """The value in units: 5,686 in millions is 5,686,000,000 (a percentage stays as written)."""
        if self.value is None or self.percent:
            return self.value
        return self.value * notation.factor(self.scale)

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def headed(self) -> bool:
        """Whether its column has a head the table gives (not one named for its place: no head was found)."""
        return not self.column.startswith(_HEADLESS.format(""))

    @property
    def years(self) -> set[int]:
        """The years its row's label or its column's head names: the period it is of."""
        return years_of(f"{self.row} {self.column}")


@dataclass
class Table:
    columns: list[str]
    rows: list[tuple[str, list[Cell | None]]] = field(default_factory=list)  # (label, a cell per column)
    caption: str = ""  # the heading lines above and inside it: where its scale is said
    groups: list[str] = field(default_factory=list)  # each row's group: the label-only row above it ("Current:")

    def cells(self) -> list[Cell]:
        return [cell for _, cells in self.rows for cell in cells if cell is not None]

    def parts(self) -> dict[str, list[str]]:
        """Each heading and each total of the table by its name, with the rows it holds: the rows under a
        label-only row ("Alternative investments:") up to a total or the next heading, and the rows a total adds up (`_added`:
        the run just above it whose figures make its own). What "how many components are there under …?" counts,
        found by the table's arithmetic, not by a word such as "Total"."""
        groups = self.groups or [""] * len(self.rows)
        totals = {i: run for i in range(len(self.rows)) if (run := _added(self.rows, i))}
        held: dict[str, list[str]] = {}
        for i, run in totals.items():
            held.setdefault(_own(self.rows[i][0], groups[i]), [self.rows[j][0] for j in run])  # "Current: State"
        for i, group in enumerate(groups):
            if group and group not in held:
                end = next((j for j in range(i, len(groups)) if groups[j] != group or j in totals), None)
                if end is not None:  # closed by a total or the next heading: not cut off where a chunk ends
                    held[group] = [_own(self.rows[j][0], group) for j in range(i, end)]
        return {name: rows for name, rows in held.items() if len(rows) >= 2}


def _own(label: str, group: str) -> str:
    """A row's label without the group it was named apart by ("Finite-Lived Intangible Assets: Total")."""
    return label.removeprefix(f"{group}: ") if group else label


def _added(rows: list[tuple[str, list[Cell | None]]], at: int) -> list[int]:
    """The rows just above row `at` whose figures add up to its own in every column of amounts it fills (within
    the rounding of the cells as written), the longest such run of two or more; [] where none does: it is no
    total."""
    columns = [c for c, cell in enumerate(rows[at][1]) if cell is not None and not cell.percent and cell.value]
    if not columns:
        return []
    best: list[int] = []
    sums = [0.0] * len(columns)
    for start in range(at - 1, -1, -1):
        cells = rows[start][1]
        for n, c in enumerate(columns):
            cell = cells[c] if c < len(cells) else None
            sums[n] += cell.value if cell is not None and cell.value is not None else 0.0
        count = at - start
        if count >= 2 and all(abs(sums[n] - rows[at][1][c].value) <= 0.5 * count * _last_unit(rows[at][1][c].shown)
                              for n, c in enumerate(columns)):
            best = list(range(start, at))
    return best


def _last_unit(shown: str) -> float:
    """The unit of a figure's last digit as written: 0.1 for "1,234.5", 1 for "1,234" (three digits after a mark
    group thousands)."""
    decimals = re.search(r"\d[.,](\d{1,2})\D*$", shown)
    return 10.0 ** -len(decimals[1]) if decimals else 1.0


def _is_year(text: str) -> bool:
    """A cell that is a year heading a column ("2019"), not a figure."""
    return bool(re.fullmatch(r"(?:19|20)\d\d", text.strip()))


def _row_cells(label: str, written: list[str], columns: list[str], convention: notation.Notation, scale: str,
               unit: str) -> list[Cell | None]:
    """A row's cells read under the table's convention: a row label's unit or scale ("Margin (%)", "Revenue ($m)")
    and a column head's percent sign go before the table's own."""
    row_percent = notation.says_percent(label)
    row_scale, row_unit = notation.scale_in(label), notation.currency_in(label)
    cells: list[Cell | None] = []
    for column, text in zip(columns, written):
        read = notation.read(text, convention) if text else None
        if read is None:
            cells.append(None)
            continue
        percent = read.percent or row_percent or notation.says_percent(column)
        cells.append(Cell(label, column, read.value, text.strip(), percent,
                          "" if percent else row_scale or scale,
                          "" if percent else read.currency or row_unit or unit))
    return cells


def tables_in(text: str, context: str = "", language: str = "") -> list[Table]:
    """The tables of a chunk's text, both as cells joined by "|" and as a PDF's text rows under a line of years.
    The context (the chunk's heading path, a sheet's header row) lends its scale and, to a run of rows whose header
    fell in another chunk, its column heads; the document's language, the number convention its cells leave open."""
    lines = text.splitlines()
    found, block, above = [], [], []
    for line in lines + [""]:
        if _is_piped(line):
            block.append(line)
            continue
        if block:
            found.append(_piped(block, above[-3:], context, language))
            block = []
        above.append(line)
    found += _text_tables(lines, context, language)
    return [table for table in found if table is not None and table.cells()]


def _is_piped(line: str) -> bool:
    """A table's row: cells joined by bars ("a | b", "| a | b |"), or a label that ends with one ("Assets |", a row
    of one label as the HTML reader writes it)."""
    stripped = line.strip()
    return stripped.count("|") >= 2 or " | " in stripped or (stripped.startswith("|") and stripped.endswith("|")) \
        or (stripped.endswith(" |") and len(stripped) > 2)


def split_row(line: str) -> list[str]:
    """A row's cells. A Markdown row opens and closes with a bar; a row the readers joined with " | " has none, so
    one that opens with a bar alone has an empty first cell (a table's corner: "| 2024 | 2023")."""
    stripped = line.strip()
    if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:
        stripped = stripped[1:-1]
    elif stripped.endswith("|"):
        stripped = stripped[:-1]
    return [" ".join(cell.split()) for cell in stripped.split("|")]


def _is_figures_row(cells: list[str]) -> bool:
    """A row of data: a label and a figure (or a cell that says it has none) that is not a year heading a column."""
    return bool(cells[0]) and any(notation.read(cell) is not None and not _is_year(cell) for cell in cells[1:] if cell)


def _piped(block: list[str], above: list[str], context: str, language: str) -> Table | None:
    rows = [split_row(line) for line in block]
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
    scale = notation.scale_in(caption) or notation.scale_in(context)
    unit = notation.currency_in(caption) or notation.currency_in(context)
    convention = notation.notation_of((cell for cells in rows[first:] for cell in cells[1:]), language)
    unit = unit or _shown_currency((cell for cells in rows[first:] for cell in cells[1:]), convention)
    group = lead_rows[-1].rstrip(":") if lead_rows else ""
    for cells in rows[first:]:
        label = cells[0]
        if not label and not any(cells[1:]):
            continue
        if label and not any(cells[1:]):  # "Transportation Solutions:": the rows under it are its
            group = label.rstrip(":")
            continue
        table.rows.append((label or group, _row_cells(label or group, cells[1:], columns, convention, scale, unit)))
        table.groups.append(group if label else "")
    return _named_apart(_dashes_in_words(table))


def _shown_currency(written, convention: notation.Notation) -> str:
    """The currency a table's figures are written in: the first one a cell shows ("$ 5,686" on its first row)."""
    return next((read.currency for text in written if (read := notation.read(text, convention)) and read.currency), "")


def _dashes_in_words(table: Table) -> Table:
    """A dash in a column of words ("–" where the other cells say "yes" or name a place) says nothing is there,
    not zero: only among figures does a dash stand for none."""
    for j in range(len(table.columns)):
        column = [cells[j] for _, cells in table.rows if j < len(cells)]
        if column and all(cell is None or (cell.value == 0 and re.fullmatch(r"[-−–—]+", cell.shown)) for cell in column):
            for _, cells in table.rows:
                if j < len(cells) and cells[j] is not None:
                    cells[j] = replace(cells[j], value=None)
    return table


def _column_heads(head_rows: list[list[str]], width: int) -> list[str]:
    """A name per column. Where two or more header rows each tell columns apart (a year over two quarters: "2024 |
    2024 | 2023 | 2023" above "Q1 | Q2 | Q1 | Q2"), their cells joined, top first ("2024 Q1"). Else its cell in the
    header row that names the most years, else the most filled one (what heads each column: "2019" under a spanning
    "Year Ended May 31,", not the "£m" under it), else what another header row says over it, else its place
    ("column 3")."""
    apart = [cells for cells in head_rows if len({cell for cell in cells[1:] if cell}) > 1]
    fullest = max(head_rows, key=lambda cells: (sum(bool(years_of(cell)) for cell in cells[1:]),
                                                sum(bool(cell) for cell in cells[1:])))
    heads = []
    for j in range(1, width):
        head = " ".join(dict.fromkeys(cells[j] for cells in apart if cells[j])) if len(apart) > 1 else ""
        head = head or fullest[j] or next((cells[j] for cells in reversed(head_rows) if cells[j]), "")
        heads.append(head or _HEADLESS.format(j + 1))
    return _unique(heads)


def _heads_from_context(context: str, width: int) -> list[str]:
    """Column heads for rows whose header is in another chunk: the context's "Columns: ..." (a sheet's header
    row) where it has as many cells, else "column N"."""
    match = re.search(r"Columns: (.*?)\.?$", context, re.M)
    if match:
        cells = split_row(match[1])
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
    if not re.search(r"[^\W\d_]{2}", label) or len(label) > 120 or re.search(r"[$€£]\s?\(?\d", label):
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
    periods = [line.split() for line in lines if all(years_of(word) for word in line.split())]
    if periods and len(periods[-1]) == width:  # "FY24 FY23", "2023/24 2022/23", "2023年度 2022年度"
        return _unique(periods[-1]), caption
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


def _text_tables(lines: list[str], context: str, language: str) -> list[Table]:
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
            tables.append(_text_table(run, above[-3:], context, language))
            above = []
        else:
            above += [text for text, _ in run]
        run = []
        if stripped:
            above.append(stripped)
    return [_named_apart(t) for t in tables if t.rows]


def _text_table(run: list, above: list[str], context: str, language: str) -> Table:
    widths = [len(row[1]) for _, row in run if row]
    width = max(set(widths), key=widths.count)
    heads, caption = _heads_above(above, width)
    table = Table(heads, caption=caption)
    scale = notation.scale_in(caption) or notation.scale_in(context)
    unit = next((unit for line, row in run if row and (unit := notation.currency_in(line))), "") or \
        notation.currency_in(caption)
    convention = notation.notation_of((match[0] for _, row in run if row for match in row[1]), language)
    group = ""
    for line, row in run:
        if row is None:
            group = line.rstrip(":") or group
            continue
        label, matches = row
        if len(matches) != width:
            continue
        cells = _row_cells(label, [match[0] for match in matches], heads, convention, scale, unit)
        if None in cells:
            continue
        table.rows.append((label, cells))
        table.groups.append(group)
    return table
