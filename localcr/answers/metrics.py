"""Common financial metrics, defined once in Python: a question that names one ("the FY2022 retention ratio") and does
not define it is computed by the metric's textbook formula over line items, not by one the LLM recalls.

The 1.5B writes a formula well where the question spells it out, and recalls definitions badly where it does not
(localcr.answers.figures.plan; the figures path's misses on FinanceBench): it wrote a retention ratio as the payout ratio,
unadjusted EBITDA as net income less interest and tax, a gross margin as gross profit / revenue - 1, and copied its
prompt's inventory turnover for "capex as a % of revenue". A definition the question gives always wins: its formula
stays the model's, written as given.

Conventions, where textbooks differ: an average of a balance is over the two year-ends (the opening and the closing
balance), as FinanceBench's definitions of turnovers and days outstanding write it ("average inventory between
FY2018 and FY2019"); DPO's denominator is purchases, COGS plus the change in inventory (FinanceBench's definition);
EBITDA is operating income plus depreciation and amortization ("unadjusted EBITDA" in FinanceBench's questions,
EBIT + D&A in textbooks); gross margin is (revenue - COGS) / revenue (FinanceBench's definition: a filing need not
show a gross profit row); the quick ratio is (current assets - inventories) / current liabilities (Ross, Westerfield
and Jaffe, "Corporate Finance"; Brealey and Myers count only cash, marketable securities and receivables: a question
that wants that one defines it); the retention ratio is 1 - dividends / net income (the share of earnings kept), the
payout ratio dividends / net income, both of the net income attributable to the company's shareholders (dividends
are paid to them; FinanceBench's questions write "net income attributable to shareholders" too).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# A balance averaged over the opening and closing year-ends: "{item}" stands for the line item.
_AVERAGE = "(({item}_{p} + {item}_{y}) / 2)"


def _average(item: str) -> str:
    return _AVERAGE.replace("{item}", item)


_DIO = f"365 * {_average('inventories')} / cost_of_goods_sold_{{y}}"
_DSO = f"365 * {_average('accounts_receivable')} / total_revenue_{{y}}"
_DPO = (f"365 * {_average('accounts_payable')} / "
        "(cost_of_goods_sold_{y} + inventories_{y} - inventories_{p})")
_EBITDA = "operating_income_{y} + depreciation_and_amortization_{y}"


@dataclass(frozen=True)
class Metric:
    name: str  # the figure's name in snake_case: retention_ratio
    words: re.Pattern  # how a question names it
    formula: str  # over line items of the year asked ({y}) and the year before ({p})


def _metric(name: str, words: str, formula: str) -> Metric:
    return Metric(name, re.compile(words, re.I), formula)


# The more specific first: "EBITDA margin" before "EBITDA", "working capital ratio" before "working capital".
METRICS = (
    _metric("ebitda_margin", r"\bEBITDA\s*(?:%\s*)?margin", f"({_EBITDA}) / total_revenue_{{y}} * 100"),
    _metric("ebitda", r"\bEBITDA\b", _EBITDA),
    _metric("gross_margin", r"\bgross (?:profit\s*)?(?:%\s*)?margins?\b",
            "(total_revenue_{y} - cost_of_goods_sold_{y}) / total_revenue_{y} * 100"),
    _metric("operating_margin", r"\boperating (?:income\s*|profit\s*)?(?:%\s*)?margins?\b",
            "operating_income_{y} / total_revenue_{y} * 100"),
    _metric("net_profit_margin", r"\b(?:net (?:income\s*|profit\s*|earnings\s*)?|profit\s*)(?:%\s*)?margins?\b",
            "net_income_{y} / total_revenue_{y} * 100"),
    _metric("retention_ratio", r"\b(?:retention|plowback) ratio\b",
            "(net_income_attributable_to_shareholders_{y} - cash_dividends_paid_{y}) / "
            "net_income_attributable_to_shareholders_{y}"),
    _metric("payout_ratio", r"\b(?:dividend )?payout ratio\b",
            "cash_dividends_paid_{y} / net_income_attributable_to_shareholders_{y}"),
    _metric("cash_conversion_cycle", r"\bCCC\b|\bcash conversion cycle\b", f"{_DIO} + {_DSO} - {_DPO}"),
    _metric("days_inventory_outstanding", r"\bDIO\b|\bdays (?:of )?inventory (?:outstanding|on hand)\b|"
            r"\bdays in inventory\b", _DIO),
    _metric("days_sales_outstanding", r"\bDSO\b|\bdays (?:of )?sales outstanding\b", _DSO),
    _metric("days_payable_outstanding", r"\bDPO\b|\bdays (?:of )?payables? outstanding\b", _DPO),
    _metric("inventory_turnover", r"\binventory turnover\b",
            f"cost_of_goods_sold_{{y}} / {_average('inventories')}"),
    _metric("receivables_turnover", r"\b(?:accounts )?receivables? turnover\b",
            f"total_revenue_{{y}} / {_average('accounts_receivable')}"),
    _metric("fixed_asset_turnover", r"\bfixed[- ]assets? turnover\b|\bPP&?N?E turnover\b",
            f"total_revenue_{{y}} / {_average('property_plant_and_equipment')}"),
    _metric("asset_turnover", r"\b(?:total )?assets? turnover\b", f"total_revenue_{{y}} / {_average('total_assets')}"),
    _metric("return_on_assets", r"\breturn on (?:total |average )?assets\b|\bROA\b",
            f"net_income_{{y}} / {_average('total_assets')} * 100"),
    _metric("return_on_equity", r"\breturn on (?:average |total |common |shareholders'? |stockholders'? )*equity\b|"
            r"\bROE\b", f"net_income_{{y}} / {_average('total_equity')} * 100"),
    _metric("interest_coverage", r"\binterest coverage\b|\btimes interest earned\b",
            "operating_income_{y} / interest_expense_{y}"),
    _metric("quick_ratio", r"\bquick ratio\b|\bacid[- ]test ratio\b",
            "(total_current_assets_{y} - inventories_{y}) / total_current_liabilities_{y}"),
    _metric("current_ratio", r"\bcurrent ratio\b|\bworking capital ratio\b",
            "total_current_assets_{y} / total_current_liabilities_{y}"),
    _metric("working_capital", r"\b(?:net )?working capital\b",
            "total_current_assets_{y} - total_current_liabilities_{y}"),
    _metric("capex_to_revenue", r"\b(?:capex|capital expenditures?)\b[^.?;]{0,12}?(?:%|percent(?:age)?) of "
            r"(?:total )?(?:revenues?|net sales|sales)\b", "capital_expenditures_{y} / total_revenue_{y} * 100"),
    _metric("free_cash_flow", r"\bfree cash flows?\b|\bFCF\b", "cash_from_operations_{y} - capital_expenditures_{y}"),
)

# A metric's words inside a larger figure's name: "EBITDA growth", "net debt to EBITDA", "change in working capital".
_PART_AFTER = re.compile(r"\s*(?:%\s*)?(?:ratio|margin|coverage|multiple|yield|growth|CAGR|turnover|per)\b", re.I)
# Words that make a name a metric's whole name: "inventory turnover ratio" is the inventory turnover.
_WHOLE = re.compile(r"\b(?:ratio|margins?|turnover|coverage)$", re.I)
_PART_BEFORE = re.compile(r"(?:\bto|/|\b(?:changes?|growth|increases?|decreases?) in)\s*$", re.I)
# A question that defines its figure: "X is defined as", "Define X as", "calculated as", or a formula in its words
# ("operating income + depreciation and amortization").
_DEFINES = re.compile(r"\bdefin\w*|\b(?:calculated|computed|measured) as\b|\bformula\b|[\w)]\s*[+*/=]\s*[\w(]", re.I)


def defines(question: str) -> bool:
    """Whether the question defines the figure it asks for (its definition, not the table's, is then used)."""
    return bool(_DEFINES.search(question))


def named(question: str) -> Metric | None:
    """The one metric of the table the question names (None where it names none, or more than one: "net debt to
    EBITDA" is no EBITDA, and a question naming two metrics is left to the model)."""
    text, found = question, []
    for metric in METRICS:
        for match in metric.words.finditer(text):
            if (_PART_AFTER.match(text, match.end()) and not _WHOLE.search(match[0])) or \
                    _PART_BEFORE.search(text[:match.start()]):
                continue  # its words are part of a larger figure's name
            found.append(metric)
            text = text[:match.start()] + " " * len(match[0]) + text[match.end():]  # "EBITDA margin" is no EBITDA too
            break
    return found[0] if len(set(found)) == 1 else None


def formula_for(question: str, year: int) -> tuple[str, str] | None:
    """The figure and formula of the metric the question names, for the fiscal year given (`retention_ratio_fy2022`,
    `(net_income_fy2022 - cash_dividends_paid_fy2022) / net_income_fy2022`), or None where it names none of the
    table's. Whether the question defines its figure (`defines`) is the caller's to ask, of the whole question."""
    metric = named(question)
    if metric is None:
        return None
    formula = metric.formula.replace("{y}", f"fy{year}").replace("{p}", f"fy{year - 1}")
    return f"{metric.name}_fy{year}", formula
