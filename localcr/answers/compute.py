"""Answers computed from the sources' tables: a change, a percentage change, a share of a total, an average, a
ratio, a difference or a sum, worked out in Python from cells the table reader found (localcr.answers.tables).

A 1.5B model adds and divides badly and picks the wrong column of a table, but it writes a formula well (it is a
coder: Program of Thoughts, arXiv 2211.12588). So the model writes only the plan: an expression over
`cell("row", "column")` references, where a grammar allows exactly the rows and columns of the tables shown, so it
cannot name a cell that is not there. Python evaluates it (`ast`, never `eval`) and the answer shows the formula
with each operand, its row, column and the source it was read from; `checked` then decides whether it may stand.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

from localcr.answers import notation
from localcr.answers.periods import period_key
from localcr.answers.plans import evaluate, written_plan
from localcr.answers.tables import Cell, Table, tables_in
from localcr.answers.vocabulary import asks, vocabulary
from localcr.text import joined_chunks

COMPUTE_VERSION = "compute-2026.12"  # part of every plan's cache key: bump it when the prompt or grammar changes
PLAN_MAX_TOKENS = 160
MAX_TABLE_ROWS = 60  # rows of the sources' tables shown to the plan: past them a table is cut
HEAD_CHUNKS = 2  # chunks before a hit that opens inside a table, read for the table's header
# How alike a row's label must be to the question for the table to be one the question is about: the share of the
# label's terms the question holds, or as many terms as this held in common (a long label: "Indemnification
# receivable from SSL for pre-closing taxes (see Note 13)" for "indemnification receivable").
MIN_ROW_MATCH = 0.6
MIN_SHARED_TERMS = 2

_SYSTEM = "You turn questions about a table into arithmetic over the table's cells."
_INSTRUCTION = """Write the arithmetic that answers the question from the table's cells, citing each cell as cell("row", "column") with
the row and column exactly as the table names them. Use only cells, + - * / and parentheses; divide by a count for
an average and multiply by 100 at the end for a percentage; never copy a cell's number.
- A change from one period to another is the later one minus the earlier one, whatever order the question names
  them in; a percentage change divides that by the earlier one and multiplies by 100.
- A percentage or a share of a total is the part divided by the total, multiplied by 100.
- An average adds the values and divides by how many there are.
- A count of the periods or rows whose figure is above or below a value adds one comparison for each, the value
  in the table's units.

Table 1:
|  | 2021 | 2020 |
| Revenue | 1,200 | 1,000 |
| Cost of sales | 700 | 650 |
| Operating income | 300 | 220 |
| Employees | 410 | 380 |

Question: What was the change in revenue from 2020 to 2021?
Formula: cell("Revenue", "2021") - cell("Revenue", "2020")

Question: What was the percentage change in operating income between 2020 and 2021?
Formula: (cell("Operating income", "2021") - cell("Operating income", "2020")) / cell("Operating income", "2020") * 100

Question: What was the average number of employees in 2020 and 2021?
Formula: (cell("Employees", "2020") + cell("Employees", "2021")) / 2

Question: What was the average operating income over the two years?
Formula: (cell("Operating income", "2021") + cell("Operating income", "2020")) / 2

Question: What was cost of sales as a percentage of revenue in 2021?
Formula: cell("Cost of sales", "2021") / cell("Revenue", "2021") * 100

Question: What is the ratio of operating income to cost of sales in 2020?
Formula: cell("Operating income", "2020") / cell("Cost of sales", "2020")

Question: What were revenue and cost of sales combined in 2020?
Formula: cell("Revenue", "2020") + cell("Cost of sales", "2020")

Question: How many years did revenue exceed 1,100?
Formula: (cell("Revenue", "2021") > 1100) + (cell("Revenue", "2020") > 1100)

"""
_REFERENCE = re.compile(r'cell\("([^"]*)", "([^"]*)"\)')


@dataclass
class Operand:
    cell: Cell
    hit: object  # the localcr.search.Hit whose text holds the cell


@dataclass
class Computed:
    """A plan's result: the formula as the model wrote it, its value, and the operands it used in order."""

    formula: str
    value: float
    operands: list[Operand]
    kind: str  # "percent", "points" (a difference of percentages), "ratio" or "amount"

    @property
    def scale(self) -> str:
        return self.operands[0].cell.scale if self.kind == "amount" else ""


def sources_tables(index, hits: list) -> list[tuple[Table, list]]:
    """The tables of the hits, each with the chunks it was read from: a hit whose text opens inside a table is
    read after the chunks before it that hold the table's header (up to HEAD_CHUNKS of them). A table two
    overlapping hits both hold is read once."""
    found, seen = [], set()
    for hit in hits:
        chunks = _with_head(index, hit)
        text = joined_chunks([(chunk.text, chunk.start, chunk.end) for chunk in chunks])
        for table in tables_in(text, hit.context, getattr(hit, "language", "")):
            shape = (tuple(table.columns), tuple(label for label, _ in table.rows))
            if shape not in seen:
                seen.add(shape)
                found.append((table, chunks))
    return [(table, chunks) for table, chunks in found if not any(_within(table, other) for other, _ in found)]


def _within(table: Table, other: Table) -> bool:
    """Whether a table is part of another one read whole (its rows after the header another chunk held)."""
    rows = {label for label, _ in table.rows}
    return other is not table and rows <= {label for label, _ in other.rows} and len(rows) < len(other.rows)


def _with_head(index, hit) -> list:
    """The hit, after the chunks before it that its table runs on from (its first line a table's row)."""
    first = next((line for line in hit.text.splitlines() if line.strip()), "")
    if not (first.count("|") >= 2 or re.search(r"\d\s*$", first)):
        return [hit]
    chunks = index.document_hits(hit.doc_id)
    at = next((i for i, chunk in enumerate(chunks) if chunk.chunk_id == hit.chunk_id), None)
    if at is None:
        return [hit]
    return chunks[max(0, at - HEAD_CHUNKS):at] + [hit]


def named_tables(question: str, tables: list[tuple[Table, list]]) -> list[tuple[Table, list]]:
    """The tables with a row the question names (`names`), or a column it names where the rows are periods (a
    five-year summary: "2023" heads a row, "Revenue" a column): the evidence that computing can answer it."""
    asked = asked_terms(question)
    return [(table, chunks) for table, chunks in tables
            if any(names(asked, label) for label in own_labels(table))
            or (any(years_of_label(label) for label, _ in table.rows) and any(names(asked, c) for c in table.columns))]


def asked_terms(question: str) -> set[str]:
    """The question's terms as `names` compares them with a row's or column's."""
    from localcr.lexical import tokenize

    return set(tokenize(question))


def names(asked: set[str], name: str) -> bool:
    """Whether a question (its `asked_terms`) names a row or column: MIN_ROW_MATCH of the name's terms in the
    question, or MIN_SHARED_TERMS of them; years and its unit are no part of a name ("Revenue ($m)", "Marge (%)")."""
    terms = name_terms(name)
    shared = len(terms & asked)
    return bool(shared) and (shared / len(terms) >= MIN_ROW_MATCH or shared >= MIN_SHARED_TERMS)


def name_share(asked: set[str], name: str) -> float:
    """The share of a name's terms the question holds: which of the names it names is the one it is about."""
    terms = name_terms(name)
    return len(terms & asked) / len(terms) if terms else 0.0


def name_terms(name: str) -> set[str]:
    """A row's or column's name as terms, without years, figures or a short unit in brackets: none for a rank."""
    from localcr.lexical import tokenize

    name = re.sub(r"\s*\([^()]{1,12}\)", "", name)
    return {term for term in tokenize(name) if not term.isdigit()}


def own_labels(table: Table) -> list[str]:
    """Each row's label without the period of the group it was named apart by: "Total" of "December 31, 2019:
    Total", whose date is no more a name than a year is (the question says "in 2019", or "how many years")."""
    groups = table.groups or [""] * len(table.rows)
    return [label.removeprefix(f"{group}: ") if group and period_key(group) else label
            for (label, _), group in zip(table.rows, groups)]


def years_of_label(label: str) -> bool:
    """Whether a row is labelled by a period alone ("2023", "FY24", "Q1 2024"): a table whose rows are periods."""
    return period_key(label) is not None and not re.search(r"[^\W\d_]{4,}", re.sub(r"(?i)fiscal|year", "", label))


def shown_tables(tables: list[tuple[Table, list]]) -> tuple[str, dict[tuple[str, str], Operand]]:
    """The tables as the plan reads them (numbered pipe tables, their scale said), and each cell they show by its
    (row, column); a row or column name two tables share is named apart so that every reference is one cell."""
    lines, cells, rows_left = [], {}, MAX_TABLE_ROWS
    for number, (table, chunks) in enumerate(tables, start=1):
        scale = next((c.scale for c in table.cells() if c.scale), "")
        lines.append(f"Table {number}" + (f" (in {scale}s)" if scale else "") + ":")
        lines.append("|  | " + " | ".join(map(_quotable, table.columns)) + " |")
        for label, row in table.rows[:rows_left]:
            name = _quotable(label)
            while any(key[0] == name for key in cells) and any(c is not None for c in row):
                name = f"{name} (table {number})"
            lines.append(f"| {name} | " + " | ".join(c.shown if c else "" for c in row) + " |")
            for cell in row:
                if cell is not None:
                    cells.setdefault((name, _quotable(cell.column)), Operand(cell, _holder(chunks, label, cell)))
        rows_left -= min(rows_left, len(table.rows))
        lines.append("")
        if rows_left <= 0:
            break
    return "\n".join(lines), cells


def _quotable(name: str) -> str:
    """A row's or column's name as a plan quotes it: no double quote or backslash to escape."""
    return name.replace('"', "'").replace("\\", "/")


def _holder(chunks: list, label: str, cell: Cell):
    """The chunk whose text holds a cell's row (the last of them: the hit itself where it does)."""
    return next((chunk for chunk in reversed(chunks) if label in chunk.text and holds(chunk.text, cell.shown)),
                chunks[-1])


def holds(text: str, shown: str) -> bool:
    """Whether a chunk's text holds a figure as written: its digits with the same separators in whatever
    convention ("5,686", "48.907,6", "1'234.5", "12 345,6" with any space), standing alone (a dash, as a dash)."""
    digits = re.search(rf"\d(?:[\d.,'’]|[{notation.SPACES}](?=\d))*", shown)
    if not digits and shown.strip():
        return shown.strip() in text
    if not digits:
        return False
    written = re.sub(rf"[{notation.SPACES}]", " ", digits[0])
    spaced = re.sub(rf"[{notation.SPACES}]", " ", text)
    return re.search(rf"(?<![\d.,]){re.escape(written)}(?![\d]|[.,]\d)", spaced) is not None


def grammar_of(cells: dict[tuple[str, str], Operand]) -> str:
    """A GBNF grammar for a plan over these cells: arithmetic whose references are the tables' rows and columns,
    whose only numbers are a count that divides a sum (an average) and a last "* 100" (a percentage); or a count,
    comparisons of cells with a value added up ("How many years did net income exceed $30,000 thousand?"), the one
    place a number of the question's stands. A figure copied from the table as a number is no operand the answer
    can cite (the 1.5B copied them often), and a 100 allowed anywhere was written as an operand ("(100 - a) / b *
    100")."""
    rows = sorted({row for row, _ in cells})
    columns = sorted({column for _, column in cells})
    literal = lambda text: f'"\\"{text}\\""'  # noqa: E731  (names are _quotable: nothing to escape)
    return "\n".join([
        'root ::= sum (" / " count)? (" * 100")? | tally',
        'tally ::= test (" + " test){1,11}',
        'test ::= "(" ref " " ("<" | "<=" | ">" | ">=") " " "-"? [0-9]{1,12} ("." [0-9]{1,4})? ")"',
        'sum ::= term (" " op " " term){0,16}',
        'term ::= ref | "(" sum ")" (" / " count)? | "-" term',
        'op ::= "+" | "-" | "*" | "/"',
        'count ::= [2-9] | "1" [0-2]',
        'ref ::= "cell(" row ", " column ")"',
        "row ::= " + " | ".join(literal(row) for row in rows),
        "column ::= " + " | ".join(literal(column) for column in columns),
    ]) + "\n"


def plan(runner, question: str, tables_text: str, grammar: str, *, fresh: bool = False) -> str | None:
    """The model's formula for the question over the tables shown (None where it writes nothing). Cached by
    model, prompt, question, tables and grammar."""
    written = written_plan(runner, "table-plan", COMPUTE_VERSION, _INSTRUCTION, _SYSTEM,
                           f"{tables_text}\nQuestion: {question}\nFormula:", grammar, max_tokens=PLAN_MAX_TOKENS,
                           fresh=fresh)
    return written or None


def evaluated(formula: str, cells: dict[tuple[str, str], Operand]) -> Computed | None:
    """The formula's value over the cells it names (in units where the operands' scales differ), or None where it
    names a cell that is not there, divides by zero or does not parse."""
    operands: list[Operand] = []
    names: dict[str, float] = {}

    def name_of(match: re.Match) -> str:
        operand = cells.get((match[1], match[2]))
        if operand is None:
            raise KeyError(match[0])
        operands.append(operand)
        names[f"v{len(operands)}"] = operand.cell.value
        return f"v{len(operands)}"

    try:
        expression = _REFERENCE.sub(name_of, formula)
        if any(o.cell.missing for o in operands):
            return None
        if len({o.cell.scale for o in operands if not o.cell.percent}) > 1:  # two tables of other scales: units
            names = {f"v{i}": o.cell.amount for i, o in enumerate(operands, start=1)}
        value = evaluate(expression, names)
    except (KeyError, ZeroDivisionError, ValueError, SyntaxError, TypeError, OverflowError):
        return None
    if not operands or not math.isfinite(value):
        return None
    return Computed(formula, value, operands, kind_of(expression, operands))


def better_rows(formula: str, cells: dict[tuple[str, str], Operand], question: str) -> str:
    """The plan with a row the 1.5B took for its neighbour put right: where another row of the same column shares
    the question's terms that the row written shares and more ("Net deferred tax assets" for "Total deferred tax
    assets" when the question asks for net ones), and is the only such row the plan does not use already, the plan
    reads that row. A row whose terms are no subset of another's is left as written (a ratio's divisor "Revenue" is
    not "Cost of sales" because the question names costs)."""
    from localcr.lexical import tokenize

    asked = set(tokenize(question))
    used = {row for row, _ in _REFERENCE.findall(formula)}

    def shared(row: str) -> set[str]:
        return {term for term in tokenize(row) if not term.isdigit()} & asked

    def put_right(match: re.Match) -> str:
        row, column = match[1], match[2]
        mine = shared(row)
        better = [other for other, col in cells if col == column and other not in used and shared(other) > mine]
        most = max((len(shared(other)) for other in better), default=0)
        best = [other for other in better if len(shared(other)) == most]
        return f'cell("{best[0]}", "{column}")' if len(best) == 1 else match[0]

    return _REFERENCE.sub(put_right, formula)


def lookup(formula: str, cells: dict[tuple[str, str], Operand]) -> Operand | None:
    """The one cell a plan names and does nothing with (a lookup, not a computation), or None."""
    match = _REFERENCE.fullmatch(formula.strip())
    return cells.get((match[1], match[2])) if match else None


def in_points(formula: str, cells: dict[tuple[str, str], Operand], points_asked: bool = False) -> str:
    """A plan over percentages that only adds and subtracts them, without the "* 100" the 1.5B puts after it (a
    change of a 12.5% margin from 11.8% is 0.7 percentage points, not 70%); where the question asks for percentage
    points, a percentage change of one percentage row as the difference it asks for ("(10 - 8.8) / 8.8 * 100" is
    "10 - 8.8")."""
    references = _REFERENCE.findall(formula)
    if not references or not all(ref in cells and cells[ref].cell.percent for ref in references):
        return formula
    if points_asked and (difference := _change_as_difference(formula)):
        return difference
    if not formula.endswith(" * 100") or " / " in formula:
        return formula
    return formula[:-len(" * 100")]


def without_stray_hundred(formula: str, percent_asked: bool) -> str:
    """A plan as the question asks for it where the 1.5B put a "* 100" after it by habit: a difference times 100
    ("(a - b) * 100": no quotient, no percentage) is the difference; a percentage change where the question asks
    for no percentage ("Met hoeveel leerlingen is … gegroeid?") is the change itself."""
    if not formula.endswith(" * 100"):
        return formula
    if " / " not in formula:
        return formula[:-len(" * 100")].strip()
    return (not percent_asked and _change_as_difference(formula)) or formula


_TEST = re.compile(r'\((cell\("[^"]*", "[^"]*"\)) (<=|>=|<|>) (-?[0-9.]+)\)')
_ASKED_FIGURE = re.compile(r"(?<![\w.,])[$€£¥]?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d,.]*\d)")


def is_tally(formula: str) -> bool:
    """Whether a plan is a count: comparisons of cells with a value, added up ("(cell(...) > 1100) + ...")."""
    return re.fullmatch(rf"{_TEST.pattern}(?: \+ {_TEST.pattern})*", formula) is not None


def tally_in_units(formula: str, cells: dict[tuple[str, str], Operand], question: str) -> str:
    """A count plan with the value it compares with in the table's units, worked out in Python where the question
    states its figure with a scale: "exceed $5 million" over a table in thousands is 5000 (the 1.5B wrote 500000,
    and 2000 for "$2 thousand" over a table in thousands); over a table whose scale was not found, the figure as the
    question states it. Where the question states one figure (years aside) with a scale; any other plan as
    written."""
    scales = {cells[ref].cell.scale for ref in _REFERENCE.findall(formula) if ref in cells}
    if not _TEST.search(formula) or len(scales) != 1:
        return formula
    stated = []
    for match in _ASKED_FIGURE.finditer(question):
        written = match[1]
        if re.fullmatch(r"(?:19|20)\d\d", written) and match[0].lstrip()[0] not in "$€£¥":
            continue
        stated.append((float(written.replace(",", "")), _scale_after(question[match.end():match.end() + 16])))
    if len(stated) != 1 or not stated[0][1]:
        return formula
    value, scale = stated[0]
    table_scale = scales.pop()  # none found: the question's, as a question over a table in thousands says "$2 thousand"
    ratio = notation.factor(scale) / notation.factor(table_scale) if table_scale else 1.0
    threshold = number_shown(value * ratio, 6).replace(",", "")
    return _TEST.sub(lambda m: f"({m[1]} {m[2]} {threshold})", formula)


def _scale_after(text: str) -> str:
    """The scale the words after a question's figure state: a table's phrase ("in thousands", "Mio.") or a scale's
    own name ("5 million", "$2 thousand"), or ""."""
    named = next((name for name in vocabulary()["scales"] if re.match(rf"\s*{re.escape(name)}s?\b", text, re.I)), "")
    return named or notation.scale_in(text)


def _change_as_difference(formula: str) -> str:
    """A percentage change ("(a - b) / b * 100") as the difference it is made of ("a - b"), or "" for any other
    plan."""
    references = _REFERENCE.findall(formula)
    if len(references) != 3 or references[2] != references[1] \
            or not re.fullmatch(r"\(*v1 - v2\)* / v3\)*(?: \* 100)?", placeholders(formula)):
        return ""
    return 'cell("{}", "{}") - cell("{}", "{}")'.format(*references[0], *references[1])


def missing_named(formula: str, cells: dict[tuple[str, str], Operand]) -> list[Cell]:
    """The cells a formula names that say they have no figure ("n/a", "n.m."): no answer can be computed from them."""
    return [cells[ref].cell for ref in _REFERENCE.findall(formula) if ref in cells and cells[ref].cell.missing]


# The shapes of a change and a percentage change over placeholders.
_CHANGE_SHAPES = re.compile(r"\(?v1 - v2\)?(?: / v3(?: \* 100)?)?")


def oriented(formula: str, cells: dict[tuple[str, str], Operand], question: str) -> str:
    """A change of one row between two periods written the way the question asks for it, whatever order the
    model wrote it in: a change (an increase, a growth) is the later period less the earlier, a percentage change
    divides by the earlier; a difference between two periods takes the first the question names less the second.
    Any other formula is left as written."""
    references = _REFERENCE.findall(formula)
    if len(references) not in (2, 3) or not _CHANGE_SHAPES.fullmatch(placeholders(formula)) \
            or any(reference not in cells for reference in references):
        return formula
    first, second = (cells[reference].cell for reference in references[:2])
    if len(references) == 3 and references[2] not in references[:2]:
        return formula
    one, two = _period_of(first), _period_of(second)
    if first.row != second.row and first.column != second.column or None in (one, two) or one == two:
        return formula
    if asks("change", question):
        swap = one < two
    elif asks("difference", question) and (named := [int(y) for y in re.findall(r"(?:19|20)\d\d", question)]):
        order = [year for year in dict.fromkeys(named) if year in (one[0], two[0])]
        swap = len(order) == 2 and order[0] == two[0] and one[0] != two[0]
    else:
        return formula
    if not swap:
        return formula
    wanted = [references[1], references[0]] + ([references[0]] if len(references) == 3 else [])
    written = iter(wanted)
    return _REFERENCE.sub(lambda _: 'cell("{}", "{}")'.format(*next(written)), formula)


def _period_of(cell: Cell) -> tuple[int, int] | None:
    """Where the period of a cell ends: its column's ("Q3 2024", "FY24"), else its row's (a table whose rows are
    periods)."""
    return period_key(cell.column) or period_key(cell.row)


def placeholders(formula: str) -> str:
    """The formula with each cell reference written as a name (v1, v2, ...), for `ast` to parse."""
    count = iter(range(1, 1000))
    return _REFERENCE.sub(lambda _: f"v{next(count)}", formula)


def kind_of(expression: str, operands: list[Operand]) -> str:
    """What the result is: a count (comparisons added up), a percentage (a quotient times 100, or arithmetic over
    percentages without a quotient of them), a ratio (a quotient whose divisor holds a cell) or an amount in the
    operands' scale (sums, differences, averages)."""
    if re.search(r"[<>]", expression):
        return "count"  # comparisons added up
    if re.search(r"\*\s*100\b|\b100\s*\*", expression):
        return "percent"
    if all(o.cell.percent for o in operands) and " - " in expression and " / " not in expression:
        return "points"  # a margin of 12.5% less one of 11.8% is 0.7 percentage points
    tree = ast.parse(expression, mode="eval")
    divides_cells = any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
                        and any(isinstance(part, ast.Name) for part in ast.walk(node.right))
                        for node in ast.walk(tree))
    if divides_cells:
        return "ratio"
    if all(o.cell.percent for o in operands):
        return "percent"
    return "amount"


def number_shown(value: float, decimals: int = 2) -> str:
    """A result as an answer writes it: thousands separated, at most `decimals` places, no trailing zeros."""
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def result_shown(computed: Computed) -> str:
    """The result with its unit: "-22.22%", "0.7 percentage points", "0.59", "-$12.6 million"."""
    if computed.kind == "count":
        return str(int(computed.value))
    if computed.kind == "points":
        return f"{number_shown(computed.value)} percentage points"
    if computed.kind == "percent":
        return f"{number_shown(computed.value)}%"
    if computed.kind == "ratio":
        return number_shown(computed.value)
    first = computed.operands[0].cell
    value = computed.value
    scale = computed.scale
    if len({o.cell.scale for o in computed.operands if not o.cell.percent}) > 1:
        value /= notation.factor(scale)
    unit = next((o.cell.unit for o in computed.operands if o.cell.unit), "")
    if first.percent:
        return f"{number_shown(value)}%"
    sign = "-" if value < 0 else ""
    unit = f"{unit} " if unit.isalpha() else unit  # "CHF 1,234", "€1,234"
    return f"{sign}{unit}{number_shown(abs(value))}{f' {scale}' if scale else ''}"


def formula_shown(computed: Computed) -> str:
    """The formula with each reference replaced by the cell as written: "(44.1 - 56.7) / 56.7 × 100"."""
    shown = iter(computed.operands)
    text = _REFERENCE.sub(lambda _: _plain(next(shown).cell), computed.formula)
    return text.replace(" * ", " × ")


def _plain(cell: Cell) -> str:
    """A cell's value as a formula shows it: its sign written out, no currency."""
    return number_shown(cell.value, 4) + ("%" if cell.percent and "%" in cell.shown else "")
