"""Figures computed, not recalled: a question that asks for a filing's figure or a metric of its figures (a ratio,
a margin, a change, an average, a CAGR) is answered by arithmetic in Python, not by the LLM's.

A 1.5B model picks the wrong column of a table and gets 3,466 / 2 wrong; it does write a formula well (it is a
coder). So (Program of Thoughts, arXiv 2211.12588):

1. `plan`: the LLM names the figure and writes it as an expression over named line items, each ending in its
   fiscal year (`inventory_turnover_fy2019 = cost_of_sales_fy2019 / ((inventories_fy2018 + inventories_fy2019) /
   2)`); a grammar keeps it to names, numbers, + - * / ** and parentheses; a formula the question spells out is written as given. Only a question
   that asks for a figure ("what is", "how much"), names a fiscal year and a financial figure comes here. A
   common metric the question names and does not define (a retention ratio, EBITDA, DPO) is not the model's to
   recall: its formula is the textbook's (`metric_plan`, localcr.answers.metrics), and no model is loaded.
2. `read`: each operand is found by its own search (the question's subject, the line item in filings' words
   (localcr.statements.row_labels) and the year) in the documents the question's own search found and whose text
   names the question's subject; its value is read from the table row whose label is the line item, in the column
   whose heading holds the year, with the table's scale ("in millions"). No model reads a number.
3. `evaluate`: Python evaluates the expression (`ast`, never `eval`) on the operands' values, carrying the scale
   through (an amount stays in millions; a ratio of amounts has none).

The answer states the result, the computation and each operand with the one source it was read from. A question
for which any step fails is answered the usual way (localcr.answers.reader).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from localcr.answers.check import FISCAL_YEAR, Checked, Sentence, named_years, subjects_of
from localcr.answers.plans import OPERATORS, evaluate, written_plan

FIGURES_VERSION = "figures-2026.8"  # part of every plan's cache key: bump it when the prompt or grammar changes
PLAN_MAX_TOKENS = 120
# Operands each read from the best of this many hits of their own search.
OPERAND_HITS = 8
# The documents naming the question's subject that the operands are looked for in.
QUESTION_DOCUMENTS = 4
# How alike a row's label must be to the line item (Jaccard of their index terms) to be read as it.
MIN_LABEL_MATCH = 0.5
# A document's passages read to count how often it names the question's subject.
MENTION_HITS = 10
# Capitalised words of a question that name a metric, not a subject.
_METRICS = {"DPO", "DSO", "DIO", "CCC", "COGS", "EBITDA", "EBIT", "CAGR", "FCF", "PP&E", "P&L", "D&A", "EPS", "USD",
            "ROA", "ROE", "PPNE", "GAAP", "SG&A", "R&D", "CAPEX", "YOY"}
# Line items that are amounts paid or spent: a statement that shows one in parentheses ("Cost of sales (11,724)")
# shows its direction, and a formula means its size (a gross margin of 180% had subtracted a negative COGS).
_MAGNITUDE = re.compile(r"\b(capex|capital expenditures?|purchases?|dividends?|repurchases?|payments?|paid|costs?|"
                        r"cogs|expenses?|expenditures?|depreciation|amortization)\b")
SYNONYM_WEIGHT = 0.9
# A row of two items joined ("... and accrued liabilities") counts this much of its match to one of them.
JOINED_WEIGHT = 0.8
# A row of "other" items counts this much of its match to an item that is not one: "Other current liabilities" has
# every term of current liabilities that the index keeps.
OTHER_WEIGHT = 0.5
# Where two tables have the row (a subsidiary's, the group's), the one under a consolidated statement's heading wins.
CONSOLIDATED_BONUS = 0.05
_CONSOLIDATED = re.compile(r"\bconsolidated (?:balance sheets?|statements? of)", re.I)
# A label that says what its line item is of ("Depreciation and amortization of property, equipment and
# intangibles") counts this much of its head's match to the item.
SPECIFIED_WEIGHT = 0.9
_SPECIFIED = re.compile(r"\s+of\s.*$")
# A line that heads a deferred tax table, whose rows name the line items its differences come from, not their
# amounts.
_DEFERRED_TAX = re.compile(r"^\s*(?:the components of )?(?:net )?deferred (?:income )?tax (?:assets|liabilities)\b\D*$",
                           re.I)
_GENERIC = {"total", "net"}  # index terms of a label that name no line item
# Words a formula's names put before a line item that are no part of its row's label.
_QUALIFIERS = re.compile(r"^(?:(?:average|avg|year end|ending|reported|unadjusted|annual|fiscal) )+")

# A question this path is for: it asks for a figure ("what is", "how much", "calculate") or for a judgement of one
# ("does it have positive working capital", "has its quick ratio improved"), names a fiscal year, and names a figure
# of a financial statement or a metric of them.
_ASKS = re.compile(r"\b(what (?:is|was|were|are)|how much|calculate|compute|how many times)\b", re.I)
# Words that judge a figure's direction from one year to the next (compared_years reads the year before for them),
# up and down (asked_direction).
_UPWARD = r"improv\w*|increas\w*|grow\w*|grew|higher"
_DOWNWARD = r"declin\w*|decreas\w*|lower"
_DIRECTION = f"{_UPWARD}|{_DOWNWARD}"
_JUDGES = re.compile(rf"^(?:does|did|has|have|is|are|was|were)\b(?! there\b).*\b(positive|negative|{_DIRECTION})\b",
                     re.I)
_FINANCIAL = re.compile(
    r"\b(ratio|margin|turnover|growth|CAGR|chang(?:e|ed)|average|working capital|capex|capital expenditures?|COGS|"
    r"cost of|revenues?|net sales|income|earnings|EBITDA|EBIT|profit|cash flows?|dividends?|inventor(?:y|ies)|"
    r"payables?|receivables?|assets|liabilities|equity|debt|expenses?|depreciation|DPO|DSO|DIO|EPS|PP&E|PPNE|tax rate|"
    r"balance sheet|income statement|statement of)\b", re.I)
# A figure the statements do not show as such: an adjusted, non-GAAP or currency-neutral one is no formula over
# their line items (asked for "sales excluding FX", the plan read reported sales).
_ADJUSTED = re.compile(r"\b(adjusted|non[- ]?GAAP|exclud\w*|excluding|organic|constant currency|pro forma|real "
                       r"(?:change|growth))\b", re.I)
# Sentences of a question that say how to answer (which statement to use, units, rounding, a persona), not what:
# the plan reads the question without them.
_ASKING = re.compile(r"\b(what|how much|how many|calculate|compute|defined?|does|did|has|have|is|are|was|were)\b",
                     re.I)
_HOW_TO = re.compile(r"\b(round|in units of|answer in|state (?:the |your )?answer|statements?|balance sheet|P&L|"
                     r"judgments?|as if you|help us|a financial metric|explain why)\b", re.I)

_SYSTEM = "You turn questions about a company's financial figures into formulas over its line items."
_INSTRUCTION = """Write the formula of the figure the question asks for: the figure's own name, then " = ", then an arithmetic expression over
the line items of the company's financial statements.
- Name each line item in snake_case and end the name with _fy and its fiscal year, like net_income_fy2019.
- Use only names, numbers, + - * / ** and parentheses.
- An average between two years is (x_fy2018 + x_fy2019) / 2. A change between two years is x_fy2019 - x_fy2018.
- A percentage is multiplied by 100.
- Never name a ratio or a margin as one line item: write it from the line items it is made of (a margin is an
  income divided by total revenue).
- Where the question defines the figure, use its definition.

Question: What is the FY2019 inventory turnover ratio? Inventory turnover is defined as FY2019 cost of goods sold / average inventory between FY2018 and FY2019.
Formula: inventory_turnover_fy2019 = cost_of_goods_sold_fy2019 / ((inventory_fy2018 + inventory_fy2019) / 2)

Question: What is the year end FY2020 total current liabilities? Answer in USD millions.
Formula: total_current_liabilities_fy2020 = total_current_liabilities_fy2020

Question: What is the FY2021 net working capital? Define net working capital as total current assets less total current liabilities.
Formula: net_working_capital_fy2021 = total_current_assets_fy2021 - total_current_liabilities_fy2021

Question: What is the FY2017 - FY2018 total revenue growth rate, in percent?
Formula: revenue_growth_rate_fy2018 = (total_revenue_fy2018 - total_revenue_fy2017) / total_revenue_fy2017 * 100

Question: What is the 2 year total revenue CAGR from FY2019 to FY2021, in percent?
Formula: revenue_cagr_fy2021 = ((total_revenue_fy2021 / total_revenue_fy2019) ** (1 / 2) - 1) * 100

Question: What is the FY2020 - FY2021 2 year average operating margin?
Formula: average_operating_margin_fy2021 = (operating_income_fy2020 / total_revenue_fy2020 + operating_income_fy2021 / total_revenue_fy2021) / 2 * 100

Question: What is the FY2019 - FY2021 3 year average of research expenses as a % of revenue?
Formula: average_research_share_fy2021 = (research_expenses_fy2019 / total_revenue_fy2019 + research_expenses_fy2020 / total_revenue_fy2020 + research_expenses_fy2021 / total_revenue_fy2021) / 3 * 100

Question: Does the company have positive working capital based on FY2020 data?
Formula: working_capital_fy2020 = total_current_assets_fy2020 - total_current_liabilities_fy2020

Question: Has the current ratio improved between FY2019 and FY2020?
Formula: current_ratio_fy2020 = total_current_assets_fy2020 / total_current_liabilities_fy2020

Question: What is the FY2021 days sales outstanding? DSO is defined as 365 * (average accounts receivable between FY2020 and FY2021) / (FY2021 revenue + change in deferred revenue between FY2020 and FY2021).
Formula: days_sales_outstanding_fy2021 = 365 * ((accounts_receivable_fy2020 + accounts_receivable_fy2021) / 2) / (total_revenue_fy2021 + deferred_revenue_fy2021 - deferred_revenue_fy2020)

"""
_GRAMMAR = r'''root ::= name " = " expr
expr ::= term (ws op ws term){0,24}
term ::= name | number | "(" ws expr ws ")"
op ::= "+" | "-" | "*" | "/" | "**"
name ::= [a-z] [a-z0-9_]{0,48} "_fy" [12] [0-9] [0-9] [0-9]
number ::= [0-9]{1,6} ("." [0-9]{1,4})?
ws ::= " "?
'''
_NAME = re.compile(r"^(?P<item>[a-z][a-z0-9_]*?)_fy(?P<year>\d{4})$")
_SCALE = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.I)
_SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
# A table's column headings: two or more dates or years in a row ("February 2, 2019 February 3, 2018", "2019 2018",
# "At December 31, 2019 At December 31, 2018").
_DATE = r"(?:(?:[A-Z][a-z]{2,8}\.?\s+\d{1,2},\s+)?(?:19|20)\d\d)"
_HEADINGS = re.compile(rf"{_DATE}(?:\s+(?:(?:At|As of)\s+)?{_DATE})+")
# A line that heads a table's columns: the headings, after words without a figure ("Fiscal Years Ended", "(In
# millions, except per share amounts)", "As of"; a year-end's month and day, "Year Ended December 31 (Millions)");
# where a PDF's text runs the first row on, the row after them.
_MONTH_DAY = r"[A-Z][a-z]{2,8}\.?\s+\d{1,2}\b(?!,?\s*(?:19|20)\d\d)"
_HEADING_LINE = re.compile(rf"(?P<lead>(?:[^\d\n]|{_MONTH_DAY}){{0,80}}?)\s*(?P<run>{_HEADINGS.pattern})"
                           rf"(?:\s+(?P<rest>[A-Za-z(].*))?")
# A piece of a heading a PDF's text gives a line of its own ("December 26,", "2015", "Year Ended").
_HEADING_PIECE = re.compile(r"(?:[A-Z][a-z]{2,8}\.?\s+\d{1,2},?|(?:19|20)\d\d|[A-Z][a-z]+(?: [A-Za-z]+){0,3})")
_NOTE_REFERENCE = re.compile(r"\s*\((?:see )?notes?\s[^)]*\)", re.I)
_MEASURE = re.compile(r",?\s+(?:net of|less)\b.*$", re.I)
_SHARE_OF = re.compile(r"%|\bpercent(?:age)?\b|\brates?\b", re.I)
# One cell of a row: an amount ("$ 1,980", "(10,205)", "23.0 %") or a dash for none.
_CELL = re.compile(r"\$?\s*(\(?-?\d(?:[\d,]*\d)?(?:\.\d+)?\)?)\s*(%?)|[—–-](?=\s|$)")


@dataclass(frozen=True)
class Operand:
    name: str  # as the formula names it: cost_of_sales_fy2019
    item: str  # its line item in words: cost of sales
    year: int


@dataclass
class Reading:
    """An operand's value as a table row of a hit gives it."""

    operand: Operand
    value: float  # as written in the row (in the table's scale)
    shown: str  # the cell as written: "5,409", "(10,205)"
    scale: str  # "millions", or "" where the table states none
    percent: bool
    label: str  # the row's label as written
    heading: str  # the column's heading: "February 2, 2019"
    hit: object  # localcr.search.Hit

    @property
    def sized(self) -> bool:
        """Whether the line item is an amount paid or spent, which a formula means by its size (_MAGNITUDE)."""
        return bool(_MAGNITUDE.search(self.operand.item))

    @property
    def used(self) -> str:
        """The cell as the formula uses it: "(11,724)" of a cost is 11724, its size."""
        written = self.shown.replace(",", "")
        return written.strip("()").lstrip("-") if self.sized else written

    @property
    def amount(self) -> float:
        """The value in units (a percentage as written; a payment or a cost as its size, whatever its sign)."""
        value = abs(self.value) if self.sized else self.value
        return value if self.percent else value * _SCALES.get(self.scale, 1.0)


def asks_for_figure(question: str) -> bool:
    """Whether a question asks for a figure of a filing, or a judgement of one: it asks "what is" or "how much" (or
    "does it have positive ...", "has ... improved"), names a fiscal year and a financial figure or metric, and not
    an adjusted one."""
    asks = _ASKS.search(question) or _JUDGES.search(question.strip())
    return bool(asks and FISCAL_YEAR.search(question) and _FINANCIAL.search(question) and not _ADJUSTED.search(question))


def what_is_asked(question: str) -> str:
    """The question as the plan reads it: its sentences (and clauses after a semicolon) that ask or define, without
    those that only say how to answer ("Answer in USD millions.", "Base your judgments on the balance sheet.", "if
    it is not a useful metric, explain why"), without a parenthesis that says how ("(round to one decimal place)"),
    and without a clause before the question word that names a statement ("Based on the balance sheet, what is ..."
    -> "what is ...")."""
    text = re.sub(r"\s*\([^()]*\b(?:round|units?)\b[^()]*\)",
                  lambda how: " (in percent)" if "percent" in how[0].lower() else "", " ".join(question.split()))
    kept = []
    for piece in re.split(r"(?<=[.?!;])\s+(?=[A-Za-z(])", text):
        *lead, sentence = re.split(r"(?<=[:,])\s+(?=(?:what|how|does|did|has|is|are|was)\b)", piece, flags=re.I)
        if lead or re.search(r"\bdefin", sentence, re.I) or (_ASKING.search(sentence) and not _HOW_TO.search(sentence)):
            kept.append(sentence)
    return " ".join(kept) or text


def plan(runner, question: str, *, fresh: bool = False) -> tuple[str, str] | None:
    """The LLM's figure and formula for the question (`working_capital_fy2022`, `total_current_assets_fy2022 -
    total_current_liabilities_fy2022`), or None where it does not parse (cut at PLAN_MAX_TOKENS). A grammar keeps
    it to `figure_fy2019 = expression`: naming the figure first gives the model a place for the metric's name (left
    no place, it writes `inventory_turnover_fy2023` as an operand). The model's text is cached (plans.written_plan)."""
    written = written_plan(runner, "figure-plan", FIGURES_VERSION, _INSTRUCTION, _SYSTEM,
                           f"Question: {what_is_asked(question)}\nFormula:", _GRAMMAR, max_tokens=PLAN_MAX_TOKENS,
                           fresh=fresh)
    expression = formula_of(written)
    return None if expression is None else (written.partition(" = ")[0], expression)


def formula_of(written: str) -> str | None:
    """The expression of what the model wrote (`figure_fy2019 = expression`), or None. The figure's own name is no
    operand, unless it is a line item read as it is (`inventory_fy2019 = inventory_fy2019`, or the figure set equal
    to a number the model would recall)."""
    figure, equals, expression = written.partition(" = ")
    if not equals or " = " in expression:
        return None
    if not re.search(r"[a-z]", expression):
        expression = figure
    if expression != figure and re.search(rf"\b{re.escape(figure)}\b", expression):
        return None
    if re.fullmatch(r"\w+", expression) and not _related(figure, expression):
        return None  # "cash_conversion_cycle_fy2019 = inventory_fy2019": another figure than the one asked for
    try:
        operands_of(expression)
    except ValueError:
        return None
    return expression


# Words of a figure's name that make it a metric: one the question does not name is another figure than it asks for.
_METRIC_WORDS = ("turnover", "ratio", "margin", "growth", "cagr", "average", "days", "cycle", "outstanding",
                 "coverage", "yield", "payout", "retention", "return")


def line_item_asked(question: str, figure: str) -> bool:
    """Whether the figure is one line item of the statements (localcr.statements knows its rows' names) that the
    question names in so many words and defines no formula for ("the year end FY2019 total current liabilities"):
    it is read as it is, never computed from others."""
    from localcr.lexical import tokenize
    from localcr.statements import is_line_item

    match = _NAME.match(figure)
    if not match or re.search(r"\bdefin", question, re.I):
        return False
    item = match["item"].replace("_", " ")
    if any(word in item.split() for word in _METRIC_WORDS):
        return False  # a CAGR or a margin of revenue is no row of revenue
    return is_line_item(item) and set(tokenize(item)) <= set(tokenize(question))


def asked_for(question: str, figure: str) -> bool:
    """Whether the figure the plan names is one the question asks for: every metric word of its name (turnover,
    margin, ratio ...) is in the question, by its first four letters ("grow" for growth). Asked for "the year end
    total amount of inventories", the 1.5B wrote the inventory turnover of its example."""
    words = {word[:4] for word in re.findall(r"[a-z]+", question.lower())}
    return all(metric[:4] in words for metric in _METRIC_WORDS if metric in figure.split("_"))


def _related(figure: str, name: str) -> bool:
    """Whether two names are one line item, one more qualified than the other (inventory_fy2019,
    total_inventories_fy2019): the words of one, stemmed, are all in the other."""
    from localcr.lexical import tokenize

    a, b = (set(tokenize(n.replace("_", " "))) - {"fy"} for n in (figure, name))
    return a <= b or b <= a


def operands_of(formula: str) -> list[Operand]:
    """The named line items of a formula, in order of first use; ValueError where it is no arithmetic expression
    over them (anything but names, numbers and + - * / ** is refused)."""
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an expression: {formula!r}") from exc
    found: dict[str, Operand] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            match = _NAME.match(node.id)
            if not match:
                raise ValueError(f"{node.id!r} names no fiscal year")
            item = _QUALIFIERS.sub("", match["item"].replace("_", " "))
            found.setdefault(node.id, Operand(node.id, item or match["item"].replace("_", " "), int(match["year"])))
        elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Load, ast.USub,
                                   ast.UAdd, *OPERATORS)):
            raise ValueError(f"{type(node).__name__} is no arithmetic")
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ValueError(f"{node.value!r} is no number")
    if not found:
        raise ValueError("the formula names no line item")
    return list(found.values())


def is_amount(formula: str) -> bool:
    """Whether the formula's value is an amount of money (in the operands' scale) rather than a ratio of amounts:
    the power of money of each term, + and - keeping it, * and / adding and subtracting it."""
    def power(node) -> float:
        if isinstance(node, ast.Expression):
            return power(node.body)
        if isinstance(node, ast.Name):
            return 1.0
        if isinstance(node, ast.Constant):
            return 0.0
        if isinstance(node, ast.UnaryOp):
            return power(node.operand)
        left, right = power(node.left), power(node.right)
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return max(left, right)
        if isinstance(node.op, ast.Mult):
            return left + right
        if isinstance(node.op, ast.Div):
            return left - right
        return left * (node.right.value if isinstance(node.right, ast.Constant) else 1.0)

    return power(ast.parse(formula, mode="eval")) == 1.0


def rows(text: str) -> list[tuple[str, list[tuple[str, float, bool]]]]:
    """A table's rows as text extracted from a PDF gives them: (label, [(cell as written, value, is a percent)]).
    PDF text often runs several rows into one line ("Receivables 1,692.1 1,638.5 Inventories 1,867.3 1,820.5"):
    each run of cells closes the label before it. A reference to the notes ("Inventories (Notes 1 and 3)") is no
    part of a row, and a label's measure ("Capital expenditures, net of construction payable") no part of its name."""
    found = []
    for line in text.splitlines():
        if _HEADINGS.fullmatch(line.strip()):
            continue
        line = _NOTE_REFERENCE.sub("", line)
        label, cells, at = "", [], 0
        for match in _CELL.finditer(line):
            between = line[at:match.start()].strip(" $:")
            if between and cells:  # a new label: the row before it is whole
                found.append((label, cells))
                label, cells = "", []
            if between:
                label = f"{label} {between}".strip()
            if not label:  # cells before any label: a heading line, not a row
                at = match.end()
                continue
            cells.append(_cell(match))
            at = match.end()
        if label and cells:
            found.append((label, cells))
    found = [(_row_label(label), cells) for label, cells in found]
    return [(label, cells) for label, cells in found if re.search(r"[A-Za-z]{3}", label)]


def _row_label(label: str) -> str:
    """A row's label as its line item: a PDF's non-breaking spaces are spaces, a heading before a colon goes
    ("Current liabilities: Accounts payable"), and so does a measure (", net of construction payable")."""
    label = " ".join(label.split())
    label = label.rsplit(":", 1)[-1].strip() or label
    return _MEASURE.sub("", label) or label


def _cell(match: re.Match) -> tuple[str, float, bool]:
    if match[1] is None:  # a dash
        return match[0], 0.0, False
    shown = match[1]
    number = float(shown.strip("()").replace(",", ""))
    return shown, -number if shown.startswith("(") else number, bool(match[2])


def headings(text: str) -> list[tuple[str, int]]:
    """The last run of column headings (dates or years) in a text, each as written and its year. Inside a chunk's
    text only a line of its own counts (`read`): a run inside prose heads no column."""
    runs = _HEADINGS.findall(text)
    if not runs:
        return []
    return [(date, int(date[-4:])) for date in re.findall(_DATE, runs[-1])]


def table_lines(text: str):
    """Each line of a text with the column headings above it: the last heading line (`_HEADING_LINE`), or the run
    of heading pieces a PDF's text broke over lines ("December 26,", "2015", "December 27,", "2014"), joined. A
    heading line that runs on into the first row ("... December 31, 2021 2020 2019 Operating revenues $ 3,930
    $ 3,777 $ 3,610") yields that row under its headings."""
    above, pieces = [], []
    for line in text.splitlines():
        stripped = " ".join(line.split())
        if _HEADING_PIECE.fullmatch(stripped) and len(pieces) < 12:
            pieces.append(stripped)
            continue
        if pieces:
            joined = " ".join(pieces)
            run = _HEADING_LINE.fullmatch(joined)
            if run and not run["rest"]:
                above = headings(run["run"])
            else:
                yield from ((piece, above) for piece in pieces)
            pieces = []
        heading = _HEADING_LINE.fullmatch(stripped)
        if heading and (not heading["rest"] or _heads_row(heading["run"], heading["rest"])):
            above = headings(heading["run"])
            if heading["rest"]:
                yield heading["rest"], above
            continue
        yield line, above
    yield from ((piece, above) for piece in pieces)


def _heads_row(run: str, rest: str) -> bool:
    """Whether the text after a run of years is a table's row under them (as many cells as years), not prose that
    names two years ("sales grew in 2019 2018 as planned")."""
    columns = len(headings(run))
    return any(len(cells) == columns for _, cells in rows(rest))


def read(operand: Operand, hit, subjects: list[str] | tuple[str, ...] = ()) -> tuple[Reading | None, float]:
    """The operand's value in a hit, and how well its row's label matches: from the row whose label best matches
    the line item (MIN_LABEL_MATCH at least; a label in the filings' other words for it counts SYNONYM_WEIGHT of
    one in the question's words), in the column whose heading (the chunk's own, else its context's) holds the
    operand's year. A balance is not read from a cash-flow statement, whose rows of the same name are its changes
    ("Accounts payable and accrued liabilities (1,382,980)"), nor any line item from a deferred tax table. What is
    attributable to a subject the question names (`subjects`: "Net earnings attributable to General Mills") is
    attributable to its shareholders."""
    from localcr.lexical import tokenize
    from localcr.navigation import section_path
    from localcr.statements import asked, row_labels, statement_of

    if statement_of(section_path(hit.context)) == "cash flow statement" and \
            asked(operand.item).statements == {"balance sheet"}:
        return None, 0.0
    own, *others = [set(tokenize(label)) for label in row_labels(operand.item)]
    titled, scale, consolidated = headings(hit.context), _scale(hit), bool(_CONSOLIDATED.search(hit.context))
    best, best_score, deferred_tax, columns_above = None, 0.0, False, None
    for line, above in table_lines(hit.text):
        if above != columns_above:  # a new table
            deferred_tax, columns_above = False, above
        if _DEFERRED_TAX.match(line):
            deferred_tax = True
        if deferred_tax:
            continue  # its "Depreciation and amortization (43,204)" is a deferred tax liability, no D&A
        columns = above or titled
        years = [year for _, year in columns]
        if operand.year not in years:
            continue
        for label, cells in rows(line):
            terms = set(tokenize(_owned(label, subjects)))
            if not terms or len([c for c in cells if not c[2]]) not in (0, len(years)) or len(cells) < len(years):
                continue  # a row of other columns (a consolidating table's Parent, Guarantor, ...): not this table's
            if _SHARE_OF.search(label) and not _SHARE_OF.search(operand.item):
                continue  # "% to Sales", "as a percentage of net sales": a share of the line item, not its amount
            score = max([_alike(terms, own)] + [SYNONYM_WEIGHT * _alike(terms, other) for other in others])
            if (head := _SPECIFIED.sub("", label)) != label:  # "Depreciation and amortization of property, ..."
                score = max(score, SPECIFIED_WEIGHT * _alike(set(tokenize(head)), own))
            if " and " in label.lower() and " and " not in f" {operand.item} ":
                score *= JOINED_WEIGHT  # "Accounts payable and accrued liabilities" is more than accounts payable
            if re.search(r"\bother\b", label, re.I) and not re.search(r"\bother\b", operand.item):
                score *= OTHER_WEIGHT  # "Other current liabilities" are not current liabilities (the index drops "other")
            score += CONSOLIDATED_BONUS * consolidated
            if score >= MIN_LABEL_MATCH and score > best_score:
                column = years.index(operand.year)
                shown, value, percent = cells[column]
                best, best_score = Reading(operand, value, shown, scale, percent, label,
                                           " ".join(columns[column][0].split()), hit), score
    return best, best_score


def _owned(label: str, subjects: list[str] | tuple[str, ...]) -> str:
    """A label with what is attributable to one of the subjects written as attributable to its shareholders."""
    for subject in subjects:
        label = re.sub(rf"\battributable to {re.escape(subject)}\b", "attributable to shareholders", label, flags=re.I)
    return label


def _alike(label: set, item: set) -> float:
    """How alike a row's label and a line item are, where the label holds every term of the item that names
    something ("total" and "net" need not be there); else 0: "Inventories" is no row of inventory turnover, "Total"
    none of inventories. The mean of two Jaccards: of the terms that name something ("Total net sales" is net sales
    more than "Net product sales" is) and of all terms ("Total current assets" more than "Other current assets",
    whose "other" the index drops)."""
    named = item - _GENERIC
    if not named or not named <= label:
        return 0.0
    return (len(named) / len(label - _GENERIC) + len(label & item) / len(label | item)) / 2


def _scale(hit) -> str:
    """The scale a hit's table states ("$ in millions", "(in thousands)"), in its text or else its context."""
    match = _SCALE.search(hit.text) or _SCALE.search(hit.context)
    return match[1].lower() if match else ""


def find(index, operand: Operand, subjects: list[str], documents: list[str], **search_options) -> Reading | None:
    """An operand read from the hits of its own search (its subject, line item and year) among `documents`: the
    row that matches its line item best, the higher-ranked hit where two match as well. Where none matches, a
    second search names the item in filings' words too ("cost of products sold" for cost of goods sold): asked
    first, those words drew other companies' tables and segment rows. Where that finds none either, every chunk of
    the documents is read (a statement's chunk that the searches rank below its discussion in the MD&A)."""
    from localcr.statements import row_labels

    options = {key: value for key, value in search_options.items() if key not in ("glob", "window")}
    labels = row_labels(operand.item)
    best, best_score = None, 0.0
    for items in [[operand.item]] + ([list(labels)] if len(labels) > 1 else []):
        query = " ".join([*subjects, *items, str(operand.year)])
        for hit in index.search(query, OPERAND_HITS, glob=[_literal(d) for d in documents], **options):
            reading, score = read(operand, hit, subjects)
            if score > best_score:
                best, best_score = reading, score
        if best is not None:
            break
    else:
        for doc_id in documents:  # no search found the row: every table of the subject's documents, read in order
            for hit in index.document_hits(doc_id):
                reading, score = read(operand, hit, subjects)
                if score > best_score:
                    best, best_score = reading, score
    if best is not None and not best.scale and not best.percent:
        best.scale = _section_scale(index, best.hit)
    return best


def _section_scale(index, hit) -> str:
    """The scale a table states in another chunk of its section (its title block, "(In millions)", fell in the
    chunk before): "" where none does."""
    for other in index.document_hits(hit.doc_id):
        if other.context == hit.context and (match := _SCALE.search(other.text)):
            return match[1].lower()
    return ""


def _literal(doc_id: str) -> str:
    """A document id as a glob that matches only it."""
    return re.sub(r"([*?\[\]{}])", r"[\1]", doc_id)


def documents_about(index, question: str, hits: list, **filters) -> tuple[list[str], list[str]]:
    """The names the question gives (runs of its capitalised words: "Best Buy"), and the documents about them: that
    write one of them as the question does (case and all: "Block" the company, not a block) about as often as the
    subject's own filings do (`about_subject`), those of its own hits first,
    then those a search for the names finds (through the question's filters: glob, kind, lang): a figure of another
    company's filing is never read as this one's."""
    words = {w for w in subjects_of(question) if w.upper() not in _METRICS}
    names = [" ".join(run) for run in _runs(question, words)]
    found = [hit.doc_id for hit in hits]
    if not names:
        return [], list(dict.fromkeys(found))[:QUESTION_DOCUMENTS]
    found += [hit.doc_id for name in names for hit in index.search(name, 20, mode="lexical", prior=None, **filters)]
    seen = {d: [_mentions(index, d, name) for name in names] for d in dict.fromkeys(found)}
    mentions = {d: sum(count for count, _ in counts) for d, counts in seen.items()}
    titles = {d: next((title for _, title in counts if title is not None), None) for d, counts in seen.items()}
    return names, about_subject(mentions, titles, names)[:QUESTION_DOCUMENTS]


def about_subject(mentions: dict[str, int], titles: dict[str, str | None] | None = None,
                  names: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The documents about a subject, most mentions first (then in the order given), from how many passages of
    each write its name: one that writes it in under half as many as the most does only mentions it (General Mills'
    report names Walmart, its largest customer, in 3 of the 10 passages a search finds; Walmart's own in 10). Where
    a document's title (`titles`: as its contexts give it) names the subject, one titled after another company is
    not about it either: Walmart's report writes "Square Feet" in 7 of 10 passages, and is no report of Square's."""
    titles = titles or {}
    named = {d for d, title in titles.items() if title and any(n.casefold() in title.casefold() for n in names)}
    if named:
        mentions = {d: count for d, count in mentions.items() if d in named or not titles.get(d)}
    most = max(mentions.values(), default=0)
    return sorted((d for d, count in mentions.items() if count and 2 * count >= most), key=lambda d: -mentions[d])


def _runs(question: str, words: set[str]) -> list[list[str]]:
    """Runs of consecutive words of the question that are all among `words` (its subjects), possessives off."""
    runs, run = [], []
    for word in re.findall(r"[\w&'\u2019.-]+", question):
        word = re.sub(r"['\u2019]s?$", "", word).rstrip(".")
        if word in words and not re.fullmatch(r"\d{4}", word):
            run.append(word)
        elif run:
            runs.append(run)
            run = []
    return runs + ([run] if run else [])


def _mentions(index, doc_id: str, name: str) -> tuple[int, str | None]:
    """How many of a document's passages that a search for the name finds write it as the question does, and the
    document's title as its contexts give it (None where they give none)."""
    from localcr.navigation import document_head

    written = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, name.split())) + r"(?!\w)")
    hits = index.search(name, MENTION_HITS, mode="lexical", glob=[_literal(doc_id)], prior=None)
    title = next((head for hit in hits if (head := document_head(hit.context))), None)
    return sum(bool(written.search(f"{hit.context}\n{hit.text}")) for hit in hits), title


@dataclass
class Worked:
    """A filing's figure worked out: its name, each year's result with the readings it used, and whether the
    formula is a common metric's (localcr.answers.metrics) rather than the model's."""

    figure: str
    results: list
    common: bool


def worked(index, question: str, hits: list, answerer, *, fresh: bool = False, **search_options) -> Worked | None:
    """A filing's figure the question asks for, computed, or None where the question asks for none, the LLM writes
    no formula, or an operand is not found in the subject's documents. A question that judges a figure across
    years ("has its quick ratio improved between FY2022 and FY2023?") gets the same formula computed for each year
    it names. The answerer's model is loaded only for a question that asks for a figure and names no common metric
    that it leaves undefined."""
    filters = {name: search_options[name] for name in ("glob", "kind", "lang") if search_options.get(name) is not None}
    subjects, documents = subject_documents(index, question, hits, **filters)
    if not documents:
        return None
    common = metric_plan(question)
    planned = common or _model_plan(answerer, question, fresh)
    if planned is None:
        return None
    figure, formula = planned
    formula = averaged(question, in_latest_year(question, formula))
    result = _computed(index, formula, subjects, documents, search_options)
    if result is None:
        return None
    results = [result]
    for year in compared_years(question, formula):
        if (other := _computed(index, in_year(formula, year), subjects, documents, search_options)) is not None:
            results.append(other)
    return Worked(figure, sorted(results, key=lambda r: year_of(r.formula)), common is not None)


def subject_documents(index, question: str, hits: list, **filters) -> tuple[list[str], list[str]]:
    """The question's subjects and their documents where this path makes a plan, else ([], []): a question that
    asks for a figure of a subject it names (a filing's figure is some company's: "What is the average flow of the
    pump introduced in 2021?" asks for none), about documents of which one holds a table (its figures are read
    from table rows)."""
    if not hits or not asks_for_figure(question):
        return [], []
    subjects, documents = documents_about(index, question, hits, **filters)
    if not subjects or not any(_holds_table(index, doc_id) for doc_id in documents):
        return [], []
    return subjects, documents


def _holds_table(index, doc_id: str) -> bool:
    """Whether any chunk of a document holds a table (localcr.answers.tables)."""
    from localcr.answers.tables import tables_in

    return any(tables_in(hit.text) for hit in index.document_hits(doc_id))


def filing_metric(question: str) -> bool:
    """Whether a question asks for a filing's metric this path knows better than a plan over the hits' tables: a
    common metric it names without defining, or one it defines ("... is defined as ...")."""
    from localcr.answers import metrics as financial_metrics

    return asks_for_figure(question) and (metric_plan(question) is not None or financial_metrics.defines(question))


def metric_plan(question: str) -> tuple[str, str] | None:
    """The figure and formula of a common metric the question names and does not define, for the latest year it
    names (localcr.answers.metrics: "the FY2022 retention ratio" is `(net_income_fy2022 - cash_dividends_paid_fy2022)
    / net_income_fy2022`), or None: the model then writes the formula (`plan`)."""
    from localcr.answers import metrics as financial_metrics

    years = named_years(question)
    if not years or financial_metrics.defines(question):
        return None
    return financial_metrics.formula_for(what_is_asked(question), max(years))


def _model_plan(answerer, question: str, fresh: bool) -> tuple[str, str] | None:
    """The model's figure and formula (`plan`), mended where the 1.5B is known to err; where it names a figure the
    question does not ask for, the one line item the question names, or None."""
    planned = plan(answerer.runner, question, fresh=fresh)
    if planned is None:
        return None
    if not asked_for(question, planned[0]):
        return line_item_named(question)
    figure, formula = planned
    if line_item_asked(question, figure) and not any(_related(figure, o.name) for o in operands_of(formula)):
        formula = figure  # the 1.5B once wrote a receivables-days formula for "total current liabilities"
    return figure, years_as_dated(question, changes_between(question, formula))


def line_item_named(question: str) -> tuple[str, str] | None:
    """The one line item a question names, and no metric, read as it is ("the year end FY2019 total amount of
    inventories": inventories_fy2019), or None: for it the 1.5B had written its example's inventory turnover."""
    from localcr.statements import line_items_named

    items, years = line_items_named(what_is_asked(question)), named_years(question)
    if len(items) != 1 or not years:
        return None
    name = f"{'_'.join(re.findall(r'[a-z0-9]+', items[0]))}_fy{max(years)}"
    return name, name


@dataclass
class Result:
    formula: str
    value: float
    readings: list[Reading]


def _computed(index, formula: str, subjects: list[str], documents: list[str], search_options: dict) -> Result | None:
    """The formula's value with each operand read from the subject's documents, or None where one is not found or
    the arithmetic fails (a division by zero)."""
    readings = []
    for operand in operands_of(formula):
        reading = find(index, operand, subjects, documents, **search_options)
        if reading is None:
            return None
        readings.append(reading)
    try:
        return Result(formula, evaluate(formula, {r.operand.name: r.amount for r in readings}), readings)
    except (ZeroDivisionError, OverflowError, ValueError):
        return None


def year_of(formula: str) -> int:
    """The fiscal year a formula's value is for: the latest its operands name."""
    return max(operand.year for operand in operands_of(formula))


def in_year(formula: str, year: int) -> str:
    """The formula of another year: every operand's year moved by as many years."""
    shift = year - year_of(formula)
    return re.sub(r"_fy(\d{4})\b", lambda m: f"_fy{int(m[1]) + shift}", formula)


_AVERAGE = re.compile(r"\b(two|three|four|five|[2-5])[ -]years? average\b", re.I)


def averaged(question: str, formula: str) -> str:
    """The formula of an N-year average the question asks for ("the FY2015 - FY2017 3 year average net profit
    margin") where the plan wrote one year's: the mean of that formula over the N years ending with the latest the
    question names. The 1.5B wrote one year's margin for three such questions in ten."""
    asked = _AVERAGE.search(question)
    if not asked or len({operand.year for operand in operands_of(formula)}) > 1:
        return formula
    count = {"two": 2, "three": 3, "four": 4, "five": 5}.get(asked[1].lower()) or int(asked[1])
    last = max(named_years(question), default=year_of(formula))
    years = range(last - count + 1, last + 1)
    return "(" + " + ".join(f"({in_year(formula, year)})" for year in years) + f") / {count}"


_CHANGE_BETWEEN = re.compile(r"\bchange in ([a-z][a-z ]*?) between FY ?((?:19|20)\d\d) and FY ?((?:19|20)\d\d)", re.I)


def changes_between(question: str, formula: str) -> str:
    """The formula with each "change in X between FY A and FY B" the question defines written as (x_fyB - x_fyA),
    where the plan wrote it as operands of their own: for four DPO questions in four the 1.5B wrote
    "change_in_inventory_fy2017 - change_in_inventory_fy2018", which no row is (after the DSO example's deferred
    revenue)."""
    for item, first, last in _CHANGE_BETWEEN.findall(question):
        name = "_".join(item.lower().split())
        change = f"({name}_fy{max(first, last)} - {name}_fy{min(first, last)})"
        own = rf"change_in_{name}_fy\d{{4}}"
        formula = re.sub(rf"{own}\s*-\s*{own}", change, formula)  # the pair the plan wrote for one change
        formula = re.sub(own, change, formula)
    return formula


# A line item the question gives a year of its own: "(FY2020 COGS + change in inventory ...)".
_DATED_ITEM = re.compile(r"\bFY ?((?:19|20)\d\d) ([A-Za-z][\w&-]*(?: [a-z][\w&-]*){0,3})")


def years_as_dated(question: str, formula: str) -> str:
    """The formula with each line item the question dates ("FY2020 COGS") in that year, where the plan wrote it for
    one other year only: given "(FY2020 COGS + change in inventory between FY2019 and FY2020)", the 1.5B wrote
    cost_of_goods_sold_fy2019."""
    from localcr.statements import is_line_item, row_labels

    for year, words in _DATED_ITEM.findall(question):
        if not is_line_item(words):
            continue
        labels = set(row_labels(words.lower()))
        same = {o.name for o in operands_of(formula) if labels & set(row_labels(o.item))}
        if len(same) == 1 and not any(name.endswith(f"_fy{year}") for name in same):
            (name,) = same
            formula = re.sub(rf"\b{name}\b", re.sub(r"_fy\d{4}$", f"_fy{year}", name), formula)
    return formula


def in_latest_year(question: str, formula: str) -> str:
    """The formula moved to the latest year the question names, where the plan wrote it for another (asked for
    "the FY2019 - FY2020 growth rate", the 1.5B wrote FY2018 to FY2019's)."""
    named = named_years(question)
    return in_year(formula, max(named)) if named and year_of(formula) != max(named) else formula


def compared_years(question: str, formula: str) -> list[int]:
    """The other years a question judges its figure in: those it names ("between FY2022 and FY2023"; "FY20" is
    2020), or the year before where it asks whether the figure improved, grew or declined and names one year; none
    where the formula compares years itself (a change, a growth rate) or the question asks only for a sign."""
    years = {operand.year for operand in operands_of(formula)}
    judged = _JUDGES.search(question.strip()) or re.search(r"\bchanged\b", question, re.I)
    if len(years) > 1 or not judged:
        return []
    (year,) = years
    others = sorted(named_years(question) - {year})
    if not others and re.search(rf"\b(?:{_DIRECTION})\b", question, re.I):
        others = [year - 1]
    return others


def answer_of(question: str, figure: str, results: list[Result], model: str, common: bool = False):
    """The result first (or, for a figure judged across years, how it went from one to the next; for its sign, the
    answer yes or no), then each computation and each operand as read with its source. The note says whose formula
    it is where it is a common metric's (`common`), not the model's."""
    from localcr.answers.reader import Answer, Source

    sources: dict[str, Source] = {}
    readings = [reading for result in results for reading in result.readings]
    for reading in readings:
        if reading.hit.chunk_id not in sources:
            sources[reading.hit.chunk_id] = Source(len(sources) + 1, reading.hit, reading.hit.text)
    sentences = []
    for result in results:
        operand_sentences = []
        for reading in result.readings:
            source, label = sources[reading.hit.chunk_id], " ".join(reading.label.split())
            scale = f" (in {reading.scale})" if reading.scale and not reading.percent else ""
            text = f"{label}, {reading.heading}: {reading.shown}{'%' if reading.percent else ''}{scale}."
            operand_sentences.append(Sentence(text, [source.number], True))
            source.support = f"{label} {reading.shown}"
        first = result.readings[0]
        if (len(result.readings) > 1 or result.formula != first.operand.name
                or _asked_scale(question) not in ("", first.scale) or len(results) > 1):
            shown = shown_result(question, result.formula, result.value, result.readings)
            with_values = result.formula
            for reading in result.readings:
                with_values = re.sub(rf"\b{reading.operand.name}\b", reading.used, with_values)
            cited = list(dict.fromkeys(sources[r.hit.chunk_id].number for r in result.readings))
            operand_sentences.insert(0, Sentence(f"{shown}, computed as {result.formula} = {with_values}.", cited, True))
        sentences += operand_sentences
    every = [source.number for source in sources.values()]
    if (judgement := _judgement(question, figure, results)) is not None:
        sentences.insert(0, Sentence(judgement, every, True))
    checked = Checked(sentences, [])
    count = len(readings)
    whose = f"{_figure_name(figure).lower()} by its common formula, " if common else ""
    return Answer(question, checked.text, False, list(sources.values()), checked, model=model,
                  note=f"{whose}computed in Python from {count} figure{'s' if count > 1 else ''} read from the "
                       "sources' tables",
                  draft=" ; ".join(result.formula for result in results))


def _judgement(question: str, figure: str, results: list[Result]) -> str | None:
    """The sentence that answers a judgement: how the figure went from the first year to the last ("Quick ratio
    went from 0.67 in FY2022 to 0.69 in FY2023: up 0.02."), or whether it is positive (negative) as asked; led by
    "Yes" or "No" where the question asks about one direction ("Did Acme grow its PP&E ...?")."""
    name = _figure_name(figure)
    shown = [shown_result(question, r.formula, r.value, r.readings) for r in results]
    asked = asked_direction(question, figure)
    if len(results) > 1:
        first, last = results[0], results[-1]
        change = last.value - first.value
        direction = "up" if change > 0 else "down" if change < 0 else "unchanged"
        by = shown_result(question, last.formula, abs(change), last.readings) if change else ""
        said = (f"{name} went from {shown[0]} in FY{year_of(first.formula)} to {shown[-1]} in "
                f"FY{year_of(last.formula)}: {direction} {by}".rstrip() + ".")
        return f"{_yes_or_no(asked, change)}: {said[0].lower()}{said[1:]}" if asked else said
    if asked and (years := changed_years(results[0].formula)):  # a change the plan wrote: its sign is the answer
        result = results[0]
        by = shown_result(question, result.formula, abs(result.value), result.readings)
        direction = f"up {by}" if result.value > 0 else f"down {by}" if result.value < 0 else "unchanged"
        return f"{_yes_or_no(asked, result.value)}: {direction} from FY{years[0]} to FY{years[1]}."
    sign_asked = re.search(r"\b(positive|negative)\b", question, re.I)
    if sign_asked and _JUDGES.search(question.strip()):
        value = results[0].value
        sign = "positive" if value > 0 else "negative" if value < 0 else "zero"
        answer = "Yes" if sign == sign_asked[1].lower() else "No"
        return f"{answer}: {name.lower()} in FY{year_of(results[0].formula)} was {shown[0]} ({sign})."
    return None


# The words of a yes-or-no question that ask whether a figure went up, or down: those that judge a direction, and
# those that only say one ("rise", "fall": no judgement by themselves, but "did it rise or decline?" asks both).
_UP = re.compile(rf"\b(?:{_UPWARD}|rise|rose|risen)\b", re.I)
_DOWN = re.compile(rf"\b(?:{_DOWNWARD}|fall|fell|fallen|drop\w*)\b", re.I)
# Figures that improve as they fall, in a formula's snake_case names: "has its DSO improved" asks whether it fell.
_LESS_IS_BETTER = re.compile(r"debt|days|cycle|(?<![a-z])(?:dio|dso)(?![a-z])|cost|expense|leverage|liabilit", re.I)


def asked_direction(question: str, figure: str) -> int:
    """1 where a yes-or-no question asks whether the figure went up (grew, increased, improved), -1 down, 0 where it
    is no yes-or-no question of a direction or asks both ("has it improved or declined?")."""
    question = question.strip()
    if not _JUDGES.search(question):
        return 0
    up, down = bool(_UP.search(question)), bool(_DOWN.search(question))
    if up == down:
        return 0
    flip = -1 if re.search(r"\bimprov", question, re.I) and _LESS_IS_BETTER.search(figure) else 1
    return (1 if up else -1) * flip


def _yes_or_no(asked: int, change: float) -> str:
    return "Yes" if change * asked > 0 else "No"


def changed_years(formula: str) -> tuple[int, int] | None:
    """(earlier, later) where the formula is a change from one year to a later one: later - earlier, as it is or
    over a base ("(ppne_fy2021 - ppne_fy2020) / ppne_fy2020 * 100"), so that its sign is the direction; None for
    any other formula (an inventory turnover over two years' inventories is no change)."""
    node = ast.parse(formula, mode="eval").body
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant):
        node = node.left  # "* 100"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        node = node.left
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and isinstance(node.left, ast.Name) and isinstance(node.right, ast.Name)):
        return None
    later, earlier = (int(_NAME.match(side.id)["year"]) for side in (node.left, node.right))
    return (earlier, later) if later > earlier else None


def _figure_name(figure: str) -> str:
    """A figure's name in words: "Quick ratio" for quick_ratio_fy2023."""
    return re.sub(r"_fy\d{4}$", "", figure).replace("_", " ").strip().capitalize() or "The figure"


def _times_hundred(formula: str) -> bool:
    """Whether the formula multiplies by 100 (its value is a percentage already)."""
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
               and any(isinstance(side, ast.Constant) and side.value == 100 for side in (node.left, node.right))
               for node in ast.walk(ast.parse(formula, mode="eval")))


def _asked_scale(question: str) -> str:
    """The scale a question asks amounts in ("in USD millions": millions), or ""."""
    match = re.search(r"\b(?:in |USD |US\$ ?|\$ ?)(thousands|millions|billions)\b", question, re.I)
    return match[1].lower() if match else ""


def shown_result(question: str, formula: str, value: float, readings: list[Reading]) -> str:
    """The result as a reader expects it: an amount in the scale the question asks for, else the operands' ("5,818
    million"), a percentage where the question asks for one (one decimal, or as many as it asks for), else a ratio
    with two decimals."""
    wanted = re.search(r"\b(one|two|three|[123]) decimal", question, re.I)
    places = ({"one": 1, "two": 2, "three": 3}.get(wanted[1].lower()) or int(wanted[1])) if wanted else None
    if is_amount(formula) and not all(r.percent for r in readings):
        scale = _asked_scale(question) or next((r.scale for r in readings if r.scale), "")
        amount = value / _SCALES.get(scale, 1.0)
        digits = places if places is not None else 2 if abs(amount) < 100 else 0
        return f"{amount:,.{digits}f}" + (f" {scale[:-1]}" if scale else "")
    percent = all(r.percent for r in readings) or _times_hundred(formula)
    if not percent and re.search(r"%|percent|\bmargin\b|growth rate|\bCAGR\b", question, re.I):
        value, percent = value * 100, True
    if percent:
        return f"{value:.{1 if places is None else places}f}%"
    return f"{value:.{2 if places is None else places}f}"
