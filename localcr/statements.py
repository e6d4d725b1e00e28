"""The statement prior: a question about a filing's figures is answered by one of its financial statements.

Search finds the right filing (its gold is in the top three for every financebench-dev question) but not the
passage inside it: "what is the FY2018 capex?" is answered by the cash-flow statement's row "Purchases of property
and equipment", which shares no word with the question, among hundreds of chunks that say "capital" and "fiscal".
A reader turns to the statement the question names ("based on the balance sheet", "the P&L") or whose line items it
asks for (capex, COGS, inventories), then reads its rows by their labels. That is done here without a model:

* `asked(question)`: which statements the question names or implies, and the row labels its line items go by in a
  filing's own words (capex: "purchases of property and equipment", "capital expenditures");
* `statement_of(path)`: which statement a chunk's section is, from the heading its structural context carries
  (recognised titled tables: "AMAZON.COM, INC. — CONSOLIDATED STATEMENTS OF CASH FLOWS, Year Ended ... (in
  millions)", localcr.parsing.plaintext.table_titles);
* localcr.search.Index applies the prior (StatementPrior): in the first documents of the fused ranking, the chunks
  of the statements asked for are ranked by the question and their row labels, and that ranking joins the fused
  one as a further list of reciprocal-rank fusion, weighted by `lift`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Each statement: how a question names it, and how a filing's heading names it.
STATEMENTS = {
    "balance sheet": (
        re.compile(r"\bbalance sheets?\b|\bstatements? of (?:consolidated )?financial (?:position|condition)\b", re.I),
        re.compile(r"\bbalance sheets?\b|\bstatements? of (?:consolidated )?financial (?:position|condition)\b", re.I)),
    "income statement": (
        re.compile(r"\bincome statements?\b|\bstatements? of (?:consolidated )?(?:income|operations|earnings)\b|"
                   r"\bP&L\b|\bprofit (?:and|&) loss\b", re.I),
        re.compile(r"\bstatements? of (?:consolidated )?(?:income|operations|earnings)\b(?! and comprehensive)|"
                   r"\bincome statements?\b", re.I)),
    "cash flow statement": (
        re.compile(r"\bcash ?flows? statements?\b|\bstatements? of (?:consolidated )?cash ?flows?\b", re.I),
        re.compile(r"\bstatements? of (?:consolidated )?cash ?flows?\b|\bcash flows? statements?\b", re.I)),
}

# A question's line items, the statement that reports each, and the labels its row goes by in filings.
LINE_ITEMS = (
    (r"\bcapex\b|\bcapital expenditures?\b", "cash flow statement",
     ("purchases of property and equipment", "capital expenditures", "additions to property plant and equipment",
      "purchases of land buildings and equipment", "purchases of premises and equipment")),
    (r"\bfree cash flows?\b|\bFCF\b", "cash flow statement",
     ("net cash provided by operating activities", "purchases of property and equipment", "capital expenditures")),
    (r"\bcash (?:flows? )?from operat\w*|\boperating activities\b", "cash flow statement",
     ("net cash provided by operating activities",)),
    (r"\bdividends?\b", "cash flow statement", ("cash dividends paid", "dividends")),
    (r"\bdepreciation\b|\bD&A\b|\bEBITDA\b", "cash flow statement", ("depreciation and amortization",)),
    (r"\bCOGS\b|\bcost of (?:goods sold|sales|revenues?|products sold)\b", "income statement",
     ("cost of sales", "cost of revenues", "cost of goods sold", "cost of products sold")),
    (r"\brevenues?\b|\bnet sales\b|\btop ?line\b", "income statement", ("total revenues", "net sales", "revenues", "sales to customers")),
    (r"\boperating (?:income|profit|margin)\b|\bEBIT\b|\bEBITDA\b", "income statement",
     ("operating income", "income from operations", "operating profit", "operating loss")),
    (r"\bnet (?:income|profit|earnings)\b|\bprofit margin\b", "income statement", ("net income", "net earnings")),
    # the parent's shareholders' share, not the consolidated figure with its noncontrolling interests
    (r"\bnet (?:income|profit|earnings) attributable to (?:share|stock)holders\b", "income statement",
     ("net income attributable to shareholders", "net earnings attributable to shareholders")),
    (r"\bgross margin\b", "income statement", ("gross profit", "gross margin", "cost of sales")),
    (r"\bgross profit\b", "income statement", ("gross profit",)),
    (r"\bEPS\b|\bearnings per share\b", "income statement", ("earnings per share diluted basic",)),
    (r"\binterest (?:expense|coverage)\b", "income statement", ("interest expense",)),
    (r"\binventor(?:y|ies)\b|\bDIO\b", "balance sheet", ("inventories", "merchandise inventories")),
    (r"\baccounts payable\b|\bDPO\b", "balance sheet", ("accounts payable",)),
    (r"\baccounts receivable\b|\bDSO\b", "balance sheet", ("accounts receivable net",)),
    (r"\bworking capital\b|\bcurrent ratio\b|\bquick ratio\b", "balance sheet",
     ("total current assets", "total current liabilities")),
    # each line item only its own labels: "current liabilities" read as "Total current assets" was one quick ratio
    (r"\bcurrent assets\b", "balance sheet", ("total current assets",)),
    (r"\bcurrent liabilities\b", "balance sheet", ("total current liabilities",)),
    (r"\bPP[ &]?N?E\b|\bproperty,? plant,? and equipment\b|\bfixed assets?\b", "balance sheet",
     ("property plant and equipment net", "property and equipment net")),
    (r"\btotal assets\b|\breturn on assets\b|\bROA\b", "balance sheet", ("total assets",)),
)
_LINE_ITEMS = tuple((re.compile(pattern, re.I), statement, labels) for pattern, statement, labels in LINE_ITEMS)


@dataclass(frozen=True)
class Asked:
    """What a question asks of a filing's statements: which statements, and the row labels of its line items."""

    statements: frozenset[str] = frozenset()
    row_words: str = ""


def asked(question: str) -> Asked:
    """The statements a question names ("based on the balance sheet") or, naming none, those its line items are
    reported in (capex: the cash-flow statement), and the row labels of its line items in filings' words."""
    named = {name for name, (in_question, _) in STATEMENTS.items() if in_question.search(question)}
    items = [(statement, labels) for pattern, statement, labels in _LINE_ITEMS if pattern.search(question)]
    statements = named or {statement for statement, _ in items}
    return Asked(frozenset(statements), " ".join(dict.fromkeys(" ".join(labels) for _, labels in items)))


# A metric computed from line items, or a change of one: a question's "EBITDA" lifts the rows it is made of, but no
# row of those is it, and "change in inventory" is no row of inventories.
_METRIC = re.compile(r"\b(?:EBITDA|EBIT|FCF|free cash flows?|DIO|DPO|DSO|working capital|ratio|margin|coverage|"
                     r"return on|ROA|turnover|changes?|increase|decrease|growth|CAGR)\b", re.I)


def is_line_item(item: str) -> bool:
    """Whether words name one line item of the statements whose rows' labels are known here (not a metric)."""
    return not _METRIC.search(item) and any(pattern.search(item) for pattern, _, _ in _LINE_ITEMS)


def line_items_named(text: str) -> list[str]:
    """The line items a text names, each as it words it ("inventories"), in order: none where it names a metric."""
    if _METRIC.search(text):
        return []
    found = sorted((match.start(), match[0].lower()) for pattern, _, _ in _LINE_ITEMS for match in pattern.finditer(text))
    return list(dict.fromkeys(words for _, words in found))


def row_labels(item: str) -> tuple[str, ...]:
    """The labels a line item's row goes by in filings ("cost of goods sold": "cost of sales", ...), the item's own
    words first. Only for an item that is the line item whole: "change in inventory" is no row of inventories, and
    a metric (EBITDA, a margin) none of the rows it is computed from."""
    if _METRIC.search(item):
        return (item,)
    found = (label for pattern, _, labels in _LINE_ITEMS if pattern.search(item) for label in labels)
    return tuple(dict.fromkeys([item, *found]))


def statement_of(path: tuple[str, ...]) -> str | None:
    """The statement a chunk's section path is in (its innermost heading that names one), or None."""
    for heading in reversed(path):
        heading = re.sub(r"\s*—\s*", " ", heading)  # a title block's lines joined: "CONSOLIDATED — BALANCE — SHEETS"
        for name, (_, in_heading) in STATEMENTS.items():
            if in_heading.search(heading):
                return name
    return None


@dataclass(frozen=True)
class StatementPrior:
    """How much the statements a question asks for lift their chunks in the first `documents` documents found:
    their ranking (by the question and its row labels, `row_words`) joins the fused ranking as a list of
    reciprocal-rank fusion weighted `lift` (the fused ranking's own weight is 1); lift 0 is no prior."""

    lift: float = 1.0
    documents: int = 1
    row_words: bool = True
