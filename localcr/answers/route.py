"""The route of a question: computed from the sources' tables, or read by the LLM.

The question and the evidence decide together, not a list of words: a question goes near computing only when the
sources its search found hold a table (Markdown, HTML, DOCX, a sheet or a PDF's text rows) with a row or column the
question names; anything else goes straight to the reader, with no model call and no added wait. Over such a table
the bundled model names the kind of answer the question asks for (`arithmetic_margin`: one evaluation, the first
word it would write), which says whether the answer is stated (a value, a name, a reason: "What led to the
increase in X?") or must be worked out (a change, a percentage, a ratio, a figure "per member of staff"), in any
language; a plan of one cell is a lookup, answered as that cell. A computed answer stands only where `check` finds
nothing wrong with it; otherwise it is withdrawn, and the reader's answer is given with a note saying why.
"""
from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass

from localcr.answers import compute, figures, sql
from localcr.answers.check import Checked, Sentence, named_years
from localcr.answers.periods import period_key
from localcr.answers.vocabulary import asks
from localcr.readers import SHEET_KINDS

# The largest percentage a share of a whole can be, and the largest change in percent that is plausible.
MAX_SHARE_PERCENT = 100.0
MAX_CHANGE_PERCENT = 10_000.0
_POINTS_ASKED = re.compile(r"percentage points?|\bpp\b|Prozentpunkt|points? de pourcentage|puntos? porcentual|"
                           r"punti percentuali|procentpunt|ポイント|百分点|个百分点", re.I)
_YEAR_RANGE = re.compile(r"((?:19|20)\d\d)\s*(?:-|–|to|through|and)\s*((?:19|20)\d\d)")
ROUTE_VERSION = "route-2026.12e"  # part of every route decision's cache key: bump it when the prompt changes
ROUTE_ROWS = 12  # row labels of each table shown to the decision
# How much likelier (log-probability) the likeliest kind of answer that needs arithmetic must be than the likeliest
# that is read, for a question to be computed: chosen on tatqa-dev's tune half (benchmarks/answers/routing.py).
ROUTE_MARGIN = 0.0
# The kinds of answer the model names a question's with (the first word it would write); those that need arithmetic.
KINDS = ("value", "reason", "name", "change", "percentage", "ratio", "sum", "average", "difference", "count")
COMPUTED_KINDS = frozenset(("change", "percentage", "ratio", "sum", "average", "difference", "count"))
_ROUTE_SYSTEM = "You tell what kind of answer a question about a table asks for."
_ROUTE_INSTRUCTION = """Say what kind of answer the question asks for, in one word:
- value: one figure the table or text states as it is (an amount, a rate, a count for one row and one period)
- reason: why something happened, what caused, led to or drove it, how it is determined or calculated
- name: a name, an item, a date, a year, a place, a list of items, or how many items a list holds
- change: how much a figure changed, increased or decreased between two periods
- percentage: a percentage change, or a share or percentage of a total, worked out from two figures
- ratio: one figure divided by another, or a figure per unit (per employee, per share, per member of staff)
- sum: two or more figures added together
- average: the average of two or more figures
- difference: how much more or less one figure is than another
- count: how many periods (years, quarters, months) or rows have a figure above or below a value

Table: rows Revenue; Cost of sales; Employees | columns 2021; 2020
Question: What was the revenue in 2021?
Kind: value
Question: What led to the increase in cost of sales?
Kind: reason
Question: What was the change in revenue from 2020 to 2021?
Kind: change
Question: In which year was revenue higher?
Kind: name
Question: What was revenue per employee in 2021?
Kind: ratio
Question: What was the increase in revenue driven by?
Kind: reason
Question: What was the average number of employees in 2020 and 2021?
Kind: average
Question: When was the new plant completed?
Kind: name
Question: What is included in cost of sales?
Kind: name
Question: How many years did revenue exceed 1,100?
Kind: count
Question: What were revenue and cost of sales in 2020 respectively?
Kind: value

"""


SHEET_ROUTE_VERSION = "sheet-route-2026.12a"  # part of every sheet decision's cache key
# The kinds of answer a question over a whole table may ask for; those that need more rows than a reader sees.
TABLE_KINDS = ("row", "reason", "count", "total", "average", "most", "list", "difference", "compare")
WHOLE_TABLE_KINDS = frozenset(("count", "total", "average", "most", "list", "difference", "compare"))
# How much likelier the likeliest kind that needs the whole table must be than "row" or "reason". Chosen on wtq-dev's
# tune half (benchmarks/answers/wtq.py --route): the 1.5B names superlatives "row" often (-1 to -4), and the reader,
# which sees three chunks of a sheet, was right on 3 of the 21 questions it took at -1.0 (8/40 in all); at -4.0 13/40,
# as SQL alone. Lookups that name their row ("Which team does Player 007 play for?") stay below it (-5).
SHEET_ROUTE_MARGIN = -4.0
# The same for a sheet of LONG_TABLE_ROWS rows or fewer, which the table plans have left. Chosen on wtq-dev's tune
# half: at 0.0 34 of 80, at -1.0 35 ("how many canadian players are listed?" over 7 rows, -0.91, counted; one
# superlative lost at -0.70), the same down to -4.5, where a lookup the reader answered goes; -1.0, the nearest to 0
# of the best. world-tables: one ratio more right ("… pro Mitarbeitendem?" at -0.26, 69 of 96); ordinary questions:
# none to SQL.
SHORT_SHEET_MARGIN = -1.0
_SHEET_ROUTE_SYSTEM = "You tell what a question about a table needs from it."
_SHEET_ROUTE_INSTRUCTION = """Say what the question needs from the table, in one word:
- row: a value stated in the one row the question names (its cell in another column)
- reason: why something happened, or what something means
- count: how many rows meet a condition, or how many distinct values there are
- total: figures of several rows added together
- average: the average of figures of several rows
- most: the row with the largest, smallest, first, last, earliest or latest value; a ranking
- list: the rows or values that meet a condition
- difference: how much more or less one row's figure is than another's
- compare: which of two or more rows has the higher, lower, earlier or later value

Columns: Team; Country; Wins; Losses; Season
Question: How many wins did the Lions have?
Needs: row
Question: How many teams are from Canada?
Needs: count
Question: Which team won the most games?
Needs: most
Question: What is the total number of wins of teams from Canada?
Needs: total
Question: Who had more losses, the Lions or the Bears?
Needs: compare
Question: How many more wins did the Hawks have than the Bears?
Needs: difference
Question: Which teams lost fewer than 5 games?
Needs: list
Question: Why did the Hawks lose no game?
Needs: reason
Question: Which country is the Bears' team from?
Needs: row
Question: Who lost the most games?
Needs: most
Question: What team is listed after the Lions?
Needs: most
Question: Who is listed first?
Needs: most
Question: In which season did the Bears win 9 games?
Needs: row
"""

PARTS_VERSION = "parts-2026.12a"  # part of every decision's cache key whether a question counts a table's parts
# The kinds of answer a question about the rows under a heading or in a total may ask for; "count" alone counts them.
PARTS_KINDS = ("count", "figure", "list", "reason", "change", "periods")
# How much likelier "count" must be than any other kind. Chosen on tatqa-dev's tune half: its two counts of a
# heading's or a total's rows came out at 2.76 and 4.25, its other questions that pass `part_asked` and whose plan
# counts nothing at 0.95 ("What was the sum of all Income tax net operating loss carryforwards?") and below.
PARTS_MARGIN = 1.5
_PARTS_SYSTEM = "You tell what a question about some rows of a table asks for."
_PARTS_INSTRUCTION = """Say what the question asks for about the rows of a table, in one word:
- count: how many rows, items, components, categories or types there are
- figure: a figure the table states for a row and a period, even one asked with "how many"
- list: which rows or items there are, by name
- reason: why something happened, or what something means
- change: how much a figure changed, or a sum, average or share worked out from figures
- periods: how many years or periods have a figure above or below a value

Rows under Total expenses: Salaries; Rent; Travel
Question: How many items make up total expenses?
Kind: count
Question: What were total expenses in 2021?
Kind: figure
Question: What items are included in total expenses?
Kind: list
Question: How many employees did the company have in 2021?
Kind: figure
Question: How many types of expenses are there?
Kind: count
Question: Why did travel expenses fall?
Kind: reason
Question: How much did rent change from 2020 to 2021?
Kind: change
Question: How many years did rent exceed 100?
Kind: periods
Question: What share of total expenses was rent in 2021?
Kind: change
"""


@dataclass
class Figure:
    """An operand as the check sees it: as written, where it was read, and the period it is of."""

    shown: str
    hit: object
    years: set[int]
    percent: bool
    dated: bool = True  # whether its column has a head (localcr.answers.tables.Cell.headed)


def answer_stream(index, question: str, hits: list, answerer, *, compute_answers: bool = True, fresh: bool = False,
                  search_options: dict):
    """`Index.ask_stream`'s events for a question whose hits are found: a computed answer where the evidence calls
    for one and it passes the check, else the reader's (localcr.answers.reader.Answerer.stream), its note saying
    why a computed one was withdrawn."""
    withdrawn = ""
    if compute_answers and hits:
        started = time.perf_counter()
        answer, withdrawn = computed_answer(index, question, hits, answerer, fresh=fresh, search_options=search_options)
        if answer is not None:
            took = round(time.perf_counter() - started, 3)
            answer.timings = {"first_token_s": took, "total_s": took}  # the whole answer comes at once
            yield "sources", answer.sources
            yield "text", answer.text
            yield "answer", answer
            return
    for event, value in answerer.stream(question, hits, matches=index.matches(question, hits), fresh=fresh,
                                        note=_unmatched(index, hits, search_options),
                                        topic=index.rare_terms(question), embedder=lambda: index.embedder):
        if event == "answer" and withdrawn:
            value.note = "; ".join(filter(None, [value.note, f"a computed answer was withdrawn ({withdrawn})"]))
        yield event, value


def _unmatched(index, hits: list, search_options: dict) -> str:
    if hits:
        return ""
    return index.unmatched(search_options.get("glob"), search_options.get("kind"), search_options.get("lang")) or ""


def computed_answer(index, question: str, hits: list, answerer, *, fresh: bool = False,
                    search_options: dict) -> tuple[object | None, str]:
    """(the computed Answer, "") where one stands; (None, why it was withdrawn) where one failed the check; (None,
    "") where there is no table to compute from, or no plan came of it. Two ways to compute: arithmetic over the
    hits' own tables, and a filing's figure read by line item across its documents (localcr.answers.figures). A
    filing's metric that the question defines or that the figures path knows (a DPO, a quick ratio) is its alone:
    where it finds no operand, a plan over whatever tables the hits hold computed something else (an inventory
    turnover from the income statement alone, its balance sheet filtered out)."""
    steps = (_from_filing,) if figures.filing_metric(question) else \
        (_from_long_table, _from_tables, _from_filing, _from_short_sheet)
    withdrawn = ""
    for step in steps:
        if step is _from_short_sheet and withdrawn:
            break  # what the check withdrew is not computed again, unchecked
        answer, why = step(index, question, hits, answerer, fresh, search_options)
        if answer is not None:
            return answer, ""
        withdrawn = withdrawn or why
    return None, withdrawn


def table_plan(question: str, tables: list, llm, *, fresh: bool = False) -> tuple[str, dict]:
    """The plan over the hits' tables (`compute.sources_tables`), as the route makes it, and the cells it may name:
    ("", {}) where no table names the question's row or the model finds no arithmetic needed (no plan then); where
    none names a row, a count over the rows of a period column it names (`counted_tables`, `count_margin`), its
    plan kept only if it counts. llm: the answerer, whose model loads only when a decision or a plan is not
    cached."""
    named = compute.named_tables(question, tables)
    counting = not named  # a count over rows names none of them ("How many segments in 2018 were below $100M?")
    if counting:
        named = counted_tables(question, tables)
        if not named or count_margin(llm, question, named, fresh=fresh) <= ROUTE_MARGIN:
            return "", {}
    elif not needs_arithmetic(llm, question, named, fresh=fresh):
        return "", {}
    shown, cells = compute.shown_tables(named)
    formula = compute.plan(llm.runner, question, shown, compute.grammar_of(cells), fresh=fresh)
    if counting and not compute.is_tally(formula):  # "How many antidilutive shares ...?" planned as a difference
        return "", {}
    return (compute.better_rows(formula, cells, question) if formula else ""), cells


def _from_tables(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """Arithmetic over the hits' own tables, where they name a row of one and the model finds arithmetic needed;
    a plan that is one cell is a lookup, answered as that cell (its row and column said, cited); a count of the
    rows under a heading or in a total (`counted_part`) is answered by counting them, each named: never drafted
    (the reader counted a list's items right 3 times of 11 on tatqa-dev), and never the plan (which averaged a
    total's three years for "How many categories are there under total stock-based compensation expense?")."""
    tables = compute.sources_tables(index, hits)
    formula, cells = table_plan(question, tables, answerer, fresh=fresh)
    if part := counted_part(answerer, question, tables, formula, fresh=fresh):
        return parts_answer(question, *part, answerer.spec.name), ""
    if formula and (looked_up := compute.lookup(formula, cells)):
        figure = Figure(looked_up.cell.shown, looked_up.hit, looked_up.cell.years, looked_up.cell.percent,
                        looked_up.cell.headed)
        why = check(question, looked_up.cell.value or 0.0, "percent" if looked_up.cell.percent else "amount", [figure],
                    looked_up.cell.scale)
        return (None, why) if why else (cell_answer(question, looked_up, answerer.spec.name), "")
    if formula and (missing := compute.missing_named(formula, cells)):
        cell = missing[0]
        return None, f"{cell.row}, {cell.column} says {cell.shown}: no figure to compute with"
    if formula:
        formula = compute.in_points(formula, cells, bool(_POINTS_ASKED.search(question)))
        formula = compute.without_stray_hundred(formula, asks("percent", question))
        formula = compute.tally_in_units(formula, cells, question)
    result = compute.evaluated(compute.oriented(formula, cells, question), cells) if formula else None
    if result is None:
        return None, ""
    operands = [Figure(o.cell.shown, o.hit, o.cell.years, o.cell.percent, o.cell.headed) for o in result.operands]
    withdrawn = check(question, result.value, result.kind, operands, result.scale,
                      reach_back=asks("average", question) or asks("change", question)) or \
        not_averaged(question, result.formula) or plan_faults(question, result)
    return (None, withdrawn) if withdrawn else (table_answer(question, result, answerer.spec.name), "")


def counted_part(llm, question: str, tables: list, formula: str = "", *, fresh: bool = False):
    """(the name, its rows, its chunks) of the heading or total of the tables whose rows the question asks to
    count, or None: where the plan does not count periods or rows above a value, the question passes `part_asked`
    and the model finds it asks how many rows that holds (`parts_margin` above PARTS_MARGIN)."""
    if compute.is_tally(formula) or (part := part_asked(question, tables)) is None:
        return None
    return part if parts_margin(llm, question, *part[:2], fresh=fresh) > PARTS_MARGIN else None


def part_asked(question: str, tables: list) -> tuple[str, list[str], list] | None:
    """The heading or total a question may ask to count the rows of (`named_part`), where it names no period (a
    heading holds the same rows in every one: "What was the total number of employees in 2018?" asks for a figure,
    and the 1.5B called it a count of the total's rows) and of no sheet's table: a sheet's rows are records, which
    SQL counts, and a record with no figures is no heading (of wtq-dev's 2,831 questions over CSV files 43 named a
    heading or a "Total" row, and the 1.5B called 26 of them counts of its rows, none of them one: "How many total
    medals did Argentina win?" at 4.06; `named_part`'s rules for rows named or nameless leave 14 and 6 of them, if
    those tables were a page's)."""
    if asked_years(question):
        return None
    return named_part(question, [(table, chunks) for table, chunks in tables
                                 if not any(chunk.kind in SHEET_KINDS for chunk in chunks)])


def named_part(question: str, tables: list) -> tuple[str, list[str], list] | None:
    """(the name, its rows, the chunks it was read from) of the heading or total of the tables whose every term the
    question holds, the longest where several are (the net one of "Net deferred tax assets" and "Deferred tax
    assets"); None where it names none. Every term: "How many types of finite-Lived Intangible Assets are there?"
    holds three of "Indefinite-Lived Intangible Assets"'s four, the heading next to the one it asks about (in a
    PDF's text rows, where the finite-lived one was not read as a heading). A part one of whose rows the question
    names too is asked about that row: "How many total medals did Norway win?" over a medal table's "Total" row
    asks for Norway's figure, not how many nations the total adds up. Nor are rows counted of which none has a name
    to list, only ranks or years: a table of records ranked ("1 | Norway (NOR) | 5 | ..."), whose words the table's
    figures leave out. One row with a name is enough: two of tatqa-dev's counts hold a row without one."""
    asked = compute.asked_terms(question)
    named = [(name, rows, chunks) for table, chunks in tables for name, rows in table.parts().items()
             if compute.name_share(asked, name) == 1.0 and any(compute.name_terms(row) for row in rows)
             and not any(compute.name_share(asked, row) == 1.0 for row in rows)]
    return max(named, key=lambda part: len(part[0]), default=None)


def parts_margin(llm, question: str, name: str, rows: list[str], *, fresh: bool = False) -> float:
    """How much likelier the model finds "count" than any other kind of answer for a question about the rows under
    a heading or in a total, shown them: one evaluation after a kept instruction, cached by model, prompt and
    message."""
    message = f"Rows under {name}: {'; '.join(rows[:ROUTE_ROWS])}\nQuestion: {' '.join(question.split())}\nKind:"
    return _kind_margin(llm, "parts", PARTS_VERSION, _PARTS_INSTRUCTION, _PARTS_SYSTEM, message, PARTS_KINDS,
                        frozenset({"count"}), fresh=fresh)


def _from_filing(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """A filing's figure read across its documents (localcr.answers.figures), each year's result checked."""
    work = figures.worked(index, question, hits, answerer, fresh=fresh, **search_options)
    if work is None:
        return None, ""
    for result in work.results:
        operands = [Figure(r.shown, r.hit, {r.operand.year}, r.percent) for r in result.readings]
        shown = figures.shown_result(question, result.formula, result.value, result.readings)
        kind = "percent" if shown.endswith("%") else "amount" if figures.is_amount(result.formula) else "ratio"
        value = float(shown.rstrip("%").split()[0].replace(",", "")) if kind == "percent" else result.value
        scale = shown.split()[1] if kind == "amount" and len(shown.split()) > 1 else ""
        if why := check(question, value, kind, operands, scale, reach_back=True, judged=True):
            return None, why
    return figures.answer_of(question, work.figure, work.results, answerer.spec.name, work.common), ""


def _from_long_table(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """A query in SQL over a long table of records, which the hits hold only part of (localcr.answers.sql), before
    the table plans: a sheet (CSV, TSV, a workbook's worksheet) or a table of a document's text (HTML, Markdown,
    DOCX, a PDF's rows) of more than sql.LONG_TABLE_ROWS rows that is no statement (`is_statement`: over reports'
    tables of periods SQL counted rows where "how many years" counts columns, and listed whole columns for a figure
    the hits state, 12 of 13 such answers wrong on tatqa-dev; the plans read those). Over a long table of records
    SQL is right where the plans pick a column ("How many more trains ... at Kiel than at Bonn?": the plan took the
    staff)."""
    table, hit = long_records(index, hits)
    return _from_whole_table(index, question, table, hit, answerer, fresh, SHEET_ROUTE_MARGIN)


def long_records(index, hits: list) -> tuple[object | None, object | None]:
    """(the whole table, its hit) of the first hit that lies in a long table of records: a sheet, or a table of a
    document's text of more than sql.LONG_TABLE_ROWS rows that is no statement (a statement among the hits hides
    no table of records after it); (None, None) where none does."""
    return sql.whole_table(index, hits, sql.LONG_TABLE_ROWS + 1,
                           keep=lambda table, hit: hit.kind in SHEET_KINDS or not is_statement(index, hit, table))


def _from_short_sheet(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """A query in SQL over a sheet of sql.LONG_TABLE_ROWS rows or fewer, last, where a whole-table kind is the
    likelier (SHORT_SHEET_MARGIN): the table plans read it whole from the hits and check each operand's period and
    scale, and come first (over a sheet of two rows SQL computed "2023 - 2022" from the column names themselves);
    SQL takes what they leave ("Which years was a ranking below 200 achieved?"). Never a short table of a
    document's text, which the plans and the reader read whole: over the small tables of a German annual report or
    a French cooperative's accounts the 1.5B named "total" or "average" for 16 of 170 questions that are read ("Wie
    hoch war der Umsatz 2023?")."""
    table, hit = sql.whole_table(index, hits, sheets_only=True)
    return _from_whole_table(index, question, table, hit, answerer, fresh, SHORT_SHEET_MARGIN)


def is_statement(index, hit, table) -> bool:
    """Whether a whole table of a document's text has a column that is a period ("2019", "FY24", "Fiscal Year
    2018"): a report's statement, whose questions are about its cells, not about its rows as records. Its heads are
    its header row and a row under it whose first cell is empty ("|  | 2019 | 2018 |" under "Year Ended December
    31,"); else those the table reader finds for the hit, heads from its context included."""
    heads = [table.names] + [cells for cells in table.cells[:2] if cells and not cells[0]]
    return any(period_key(head) for row in heads for head in row) or \
        any(period_key(column) for found, _ in compute.sources_tables(index, [hit]) for column in found.columns)


def _from_whole_table(index, question: str, table, hit, answerer, fresh: bool, margin: float):
    """A query in SQL over a whole table (None: there is none) where the model finds the question needs more than a
    row of it (a count, a total, the most, a list) by more than `margin`: a lookup of one row stays with the reader
    and the table plans."""
    if table is None or whole_table_margin(answerer, question, table, fresh=fresh) <= margin:
        return None, ""
    return sql.sql_answer(index, question, [hit], answerer.runner, model_name=answerer.spec.name, fresh=fresh,
                          table=table)


def whole_table_margin(llm, question: str, table, *, fresh: bool = False) -> float:
    """`arithmetic_margin`'s twin for a whole table, shown its column names: one evaluation after a kept
    instruction, cached by model, prompt and message."""
    columns = "; ".join(table.names[:40])
    message = f"Columns: {columns}\nQuestion: {' '.join(question.split())}\nNeeds:"
    return _kind_margin(llm, "sheet-route", SHEET_ROUTE_VERSION, _SHEET_ROUTE_INSTRUCTION, _SHEET_ROUTE_SYSTEM,
                        message, TABLE_KINDS, WHOLE_TABLE_KINDS, fresh=fresh)


def counted_tables(question: str, tables: list) -> list:
    """The tables with a column that is a period the question names ("2018"; "2019 (1)"): where it names no row,
    the rows a count over one period may count ("How many expenses segments in 2018 were below $100 million?")."""
    years = asked_years(question)
    if not years:
        return []
    return [(table, chunks) for table, chunks in tables
            if any((key := period_key(column)) and key[0] in years for column in table.columns)]


def count_margin(llm, question: str, tables: list, *, fresh: bool = False) -> float:
    """How much likelier the model finds "count" than any other kind (`arithmetic_margin`'s prompt and kinds) for
    a question over tables it names by a period alone: of tatqa-dev's 1,668 Markdown questions, 100 name no row but
    a period column; all four counts among them came out above 0, and two of the 96 others ("How many
    antidilutive shares were excluded ...?", a figure the text states), whose plans `table_plan` keeps only if they
    count; of the ordinary, XQuAD-en and world-tables questions it gates 20, none above 0; of wtq-dev's 2,831, 27,
    5 above 0, each answered as before (benchmarks/answers/count_gate.py)."""
    return _kind_margin(llm, "route", ROUTE_VERSION, _ROUTE_INSTRUCTION, _ROUTE_SYSTEM,
                        _kind_message(question, tables), KINDS, frozenset({"count"}), fresh=fresh)


def needs_arithmetic(llm, question: str, named: list, *, fresh: bool = False) -> bool:
    """Whether the question over these tables needs arithmetic: the kind of answer the bundled model names for it
    (`arithmetic_margin`) is one worked out from figures, by more than ROUTE_MARGIN."""
    return arithmetic_margin(llm, question, named, fresh=fresh) > ROUTE_MARGIN


def arithmetic_margin(llm, question: str, named: list, *, fresh: bool = False) -> float:
    """How much likelier (log-probability) the model finds its likeliest kind of answer that is computed ("change",
    "ratio", ...) than its likeliest that is read ("value", "reason", "name"), as the first word it would write,
    shown the question and the heads of the tables that name it after an instruction whose KV state is kept: only
    the heads and the question are read anew (about a second on two cores). Naming the kind, not choosing between
    "read" and "compute", gives a "why" in any language its own word ("reason"): asked to choose, the 1.5B computed
    "Pourquoi le chiffre d'affaires a-t-il augmenté ?". Cached by model, prompt and message."""
    return _kind_margin(llm, "route", ROUTE_VERSION, _ROUTE_INSTRUCTION, _ROUTE_SYSTEM, _kind_message(question, named),
                        KINDS, COMPUTED_KINDS, fresh=fresh)


def _kind_message(question: str, tables: list) -> str:
    """The heads of the first two tables (up to ROUTE_ROWS row labels, those the question names first; the
    columns) and the question, as the kind decision reads them. Named rows first: shown a deferred-tax table's
    first twelve rows, the 1.5B called "How many years did Stock-based compensation exceed $2,000 thousand?" a
    value, its row eighth of them, and another whose row was thirteenth; shown their rows first, a count."""
    asked = compute.asked_terms(question)

    def rows_shown(table) -> list[str]:
        named = [compute.names(asked, own) for own in compute.own_labels(table)]
        labels = [label for (label, _), is_named in zip(table.rows, named) if is_named] + \
            [label for (label, _), is_named in zip(table.rows, named) if not is_named]
        return labels[:ROUTE_ROWS]

    heads = "\n".join(f"Table: rows {'; '.join(rows_shown(table))} | columns {'; '.join(table.columns)}"
                      for table, _ in tables[:2])
    return f"{heads}\nQuestion: {question}\nKind:"


def _kind_margin(llm, purpose: str, version: str, instruction: str, system: str, message: str, kinds: tuple,
                 worked: frozenset, *, fresh: bool = False) -> float:
    """The log-probability of the likeliest kind in `worked` less that of the likeliest other, as the model's first
    word after the kept instruction and the message; cached by model, prompt, message and `worked` (one prompt and
    its kept state serve the route's decision and the count's), the model loaded only on a miss."""
    from localcr.cache import key, open_cache

    entry_key = key(purpose, llm.spec.fingerprint(), version, instruction, message, *sorted(worked))
    with open_cache("answers") as cache:
        margin = None if fresh else cache.get(entry_key)
    if not isinstance(margin, float):
        runner = llm.runner  # loads the model: a cached decision (a cached answer's) needs none
        prefix, suffix = runner.render(instruction, message, system)
        runner.keep_prefix(prefix, "answers", purpose, purpose, version)
        chosen = runner.choice(prefix, suffix, kinds)
        margin = max(chosen[k] for k in worked) - max(p for k, p in chosen.items() if k not in worked)
        with open_cache("answers") as cache:
            cache.set(entry_key, margin, purpose)
    return margin


def check(question: str, value: float, kind: str, operands: list[Figure], scale: str, *,
          reach_back: bool = False, judged: bool = False) -> str:
    """Why a computed result may not stand, or "" where it may: each operand is in the chunk it cites (as written,
    scale apart), of a period the question names (and of a known one: a column whose head was not found is of none)
    (judged: a filing's figure, which a judgement compares across years: "improved" asks for no change as such) (with reach_back, also the year before the first: an average
    balance of FY2019 opens in FY2018), the result of the kind the question asks for (a percentage, a change) and
    of a plausible size (a share of a whole within 100%, a per-share figure in no millions)."""
    for operand in operands:
        if not compute.holds(operand.hit.text, operand.shown):
            return f"{operand.shown} is not in the source it cites"
    years = asked_years(question)
    if years:
        allowed = set(range(min(years) - reach_back, max(years) + 1))
        for operand in operands:
            if operand.years and not operand.years & allowed:
                return f"{operand.shown} is of {'/'.join(map(str, sorted(operand.years)))}, not a year the question names"
            if not operand.years and not operand.dated:
                return f"the period of {operand.shown} is not known (its column has no head)"
    if asks("percent", question) and kind not in ("percent", "points", "count") and not _POINTS_ASKED.search(question):
        return "the question asks for a percentage and the result is none"
    if not judged and (asks("change", question) or asks("difference", question)) and not asks("percent", question) \
            and kind == "ratio":
        return "the question asks for a change and the result is a ratio"
    if asks("share", question) and kind == "percent" and abs(value) > MAX_SHARE_PERCENT:
        return f"a share of a whole cannot be {compute.number_shown(value)}%"
    if kind == "percent" and abs(value) > MAX_CHANGE_PERCENT:
        return f"{compute.number_shown(value)}% is no plausible percentage"
    if re.search(r"\bper (?:share|unit|employee|customer)\b", question, re.I) and scale in ("million", "billion",
                                                                                           "millions", "billions"):
        return f"a figure per share or per unit is not in {scale}"
    return ""


def not_averaged(question: str, formula: str) -> str:
    """Why a plan for an average is none ("a + b + c / 3" divides only the last), or ""."""
    if not asks("average", question):
        return ""
    body = ast.parse(compute.placeholders(formula), mode="eval").body
    return "" if isinstance(body, ast.BinOp) and isinstance(body.op, ast.Div) else "the formula divides no sum"


def plan_faults(question: str, result: compute.Computed) -> str:
    """Why a plan does not compute what the question asks, or "": a figure compared with itself ("(795 - 795) /
    795"), or a percentage the question does not ask for (a "* 100" on an increase in a count)."""
    if len(result.operands) > 1 and len({(o.cell.row, o.cell.column) for o in result.operands}) == 1:
        return "the formula compares a figure with itself"
    if re.search(r"\*\s*100\b", result.formula) and not asks("percent", question) \
            and not re.search(r"\b(rate|ratio|margin)\b", question, re.I):
        return "the question asks for no percentage"
    return ""


def asked_years(question: str) -> set[int]:
    """The years a question names, a range ("2017-2019", "from 2017 to 2019") with the years inside it."""
    years = named_years(question)
    for first, last in _YEAR_RANGE.findall(question):
        low, high = sorted((int(first), int(last)))
        years |= set(range(low, high + 1)) if high - low <= 10 else set()
    return years


def cell_answer(question: str, operand: compute.Operand, model: str):
    """A lookup's answer: the cell with its row, column and scale, citing the source it was read from."""
    from localcr.answers.reader import Answer, Source

    source = Source(1, operand.hit, operand.hit.text)
    cell = operand.cell
    source.support = f"{cell.row} {cell.shown}"
    checked = Checked([Sentence(f"{cell.row}, {cell.column}: {cell.shown}"
                                f"{f' (in {cell.scale}s)' if cell.scale else ''}.", [1], True)], [])
    return Answer(question, checked.text, False, [source], checked, model=model,
                  note="read from one cell of the sources' tables", draft=f'cell("{cell.row}", "{cell.column}")')


def table_answer(question: str, result: compute.Computed, model: str):
    """The computed answer: the result with its formula, then each operand with its row, column and source."""
    from localcr.answers.reader import Answer, Source

    sources: dict[str, Source] = {}
    for operand in result.operands:
        if operand.hit.chunk_id not in sources:
            sources[operand.hit.chunk_id] = Source(len(sources) + 1, operand.hit, operand.hit.text)
    cited = list(dict.fromkeys(sources[o.hit.chunk_id].number for o in result.operands))
    shown = compute.result_shown(result)
    sentences = [Sentence(f"{shown}, computed as {compute.formula_shown(result)} = {shown}.", cited, True)]
    for operand in _distinct(result.operands):
        source = sources[operand.hit.chunk_id]
        sentences.append(Sentence(f"{operand.cell.row}, {operand.cell.column}: {operand.cell.shown}"
                                  f"{f' (in {operand.cell.scale}s)' if operand.cell.scale else ''}.",
                                  [source.number], True))
        source.support = f"{operand.cell.row} {operand.cell.shown}"
    checked = Checked(sentences, [])
    count = len(sentences) - 1  # an operand's sentence each
    return Answer(question, checked.text, False, list(sources.values()), checked, model=model,
                  note=f"computed in Python from {count} figure{'s' if count > 1 else ''} of the sources' tables",
                  draft=result.formula)


def parts_answer(question: str, name: str, rows: list[str], chunks: list, model: str):
    """A count of the rows under a heading or in a total: how many, each named, citing the chunk that holds the
    most of them."""
    from localcr.answers.reader import Answer, Source

    hit = max(reversed(chunks), key=lambda chunk: sum(row in chunk.text for row in rows))
    source = Source(1, hit, hit.text)
    source.support = name
    listed = ", ".join(rows[:-1]) + f" and {rows[-1]}"
    checked = Checked([Sentence(f"{len(rows)}: {listed}, the rows under {name}.", [1], True)], [])
    return Answer(question, checked.text, False, [source], checked, model=model,
                  note=f"counted in Python: the {len(rows)} rows under {name} in the sources' table",
                  draft=f'parts("{name}")')


def _distinct(operands: list[compute.Operand]) -> list[compute.Operand]:
    seen, out = set(), []
    for operand in operands:
        where = (operand.cell.row, operand.cell.column, operand.hit.chunk_id)
        if where not in seen:
            seen.add(where)
            out.append(operand)
    return out
