"""Figures computed in Python (localcr.figures): the formula is parsed, never run; table rows as PDF text gives them
are read by label and column year; the result is shown in the scale the question asks for. Pure functions: the
LLM's part (the plan) is tested in test_ask with the bundled model."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from localcr import figures

BALANCE_SHEET = """Consolidated Balance Sheets
$ in millions, except per share and share amounts
February 2, 2019 February 3, 2018
Current assets
Cash and cash equivalents $ 1,980 $ 1,101
Short-term investments — 2,032
Merchandise inventories 5,409 5,209
Total current assets 8,870 9,829
Current liabilities: Accounts payable $ 5,257 $ 4,873 Accrued liabilities 982 1,001
Total current liabilities 7,513 7,817
Total 46 40
"""


@dataclass
class Passage:  # what figures.read uses of a localcr.search.Hit
    text: str
    context: str = ""
    chunk_id: str = "c1"


def test_a_formula_is_arithmetic_over_named_line_items_and_nothing_else():
    operands = figures.operands_of("cost_of_sales_fy2019 / ((inventories_fy2018 + inventories_fy2019) / 2)")
    assert [(o.item, o.year) for o in operands] == [("cost of sales", 2019), ("inventories", 2018), ("inventories", 2019)]
    for bad in ("__import__('os').system('x')", "inventories_fy2019.real", "open_fy2019()", "[a_fy2019]", "x + 1",
                "a_fy2019 if 1 else 2", "'a' * 3"):
        with pytest.raises(ValueError):
            figures.operands_of(bad)


def test_evaluation_is_pythons_arithmetic_and_refuses_what_is_not():
    assert figures.evaluate("(a_fy2021 / a_fy2019) ** (1 / 2) - 1", {"a_fy2021": 121.0, "a_fy2019": 100.0}) == \
        pytest.approx(0.1)
    with pytest.raises(ZeroDivisionError):
        figures.evaluate("a_fy2020 / b_fy2020", {"a_fy2020": 1.0, "b_fy2020": 0.0})
    with pytest.raises(ValueError):
        figures.evaluate("(a_fy2020 - 2) ** 0.5", {"a_fy2020": 1.0})


def test_rows_run_together_by_pdf_text_are_split_at_each_label():
    rows = dict(figures.rows(BALANCE_SHEET))
    assert rows["Accounts payable"] == [("5,257", 5257.0, False), ("4,873", 4873.0, False)]
    assert rows["Accrued liabilities"][1] == ("1,001", 1001.0, False)
    assert rows["Short-term investments"][0][1] == 0.0  # a dash is none
    assert "February" not in rows  # a line of column dates is no row
    assert dict(figures.rows("Operating income/(loss) 3,070 (10,205)"))["Operating income/(loss)"][1][1] == -10205.0
    assert dict(figures.rows("Effective tax rate 23.0 % 20.1 %"))["Effective tax rate"][0] == ("23.0", 23.0, True)


def test_an_operand_is_read_from_its_rows_column_for_its_year_with_the_tables_scale():
    passage = Passage(BALANCE_SHEET)
    reading, _ = figures.read(figures.Operand("inventory_fy2019", "inventory", 2019), passage)
    assert (reading.label, reading.heading, reading.value, reading.scale) == (
        "Merchandise inventories", "February 2, 2019", 5409.0, "millions")
    assert reading.amount == 5409e6
    reading, _ = figures.read(figures.Operand("total_current_liabilities_fy2018", "total current liabilities", 2018), passage)
    assert reading.value == 7817.0  # not total current assets, which shares two of its three words
    assert figures.read(figures.Operand("total_inventories_fy2019", "total inventories", 2019), passage)[0].value == 5409.0
    assert figures.read(figures.Operand("inventory_fy2017", "inventory", 2017), passage)[0] is None  # no such column


def test_column_years_in_prose_head_no_column_but_the_contexts_section_title_does():
    prose = Passage("Sales grew in 2019 2018 as planned.\nInventories 5,409 5,209\n")
    assert figures.read(figures.Operand("inventories_fy2019", "inventories", 2019), prose)[0] is None
    titled = Passage("Inventories 1,867.3 1,820.5\n", context="Consolidated Balance Sheets, May 29, 2022 May 30, 2021 "
                                                           "(in millions, except par value).")
    reading, _ = figures.read(figures.Operand("inventories_fy2021", "inventories", 2021), titled)
    assert (reading.value, reading.scale) == (1820.5, "millions")


def test_a_payment_in_parentheses_counts_as_what_was_paid():
    reading, _ = figures.read(figures.Operand("capex_fy2019", "capex", 2019),
                              Passage("2019 2018\nCapital expenditures (116) (131)\n"))
    assert reading.value == -116.0 and reading.amount == 116.0


def test_the_result_is_shown_as_the_question_asks():
    def shown(question, formula, value, scale="millions", percent=False):
        operand = figures.operands_of(formula)[0]
        reading = figures.Reading(operand, 0.0, "0", scale, percent, "x", "2020", None)
        return figures._shown(question, formula, value, [reading])

    assert shown("What is the FY2020 working capital?", "a_fy2020 - b_fy2020", 5818e6) == "5,818 million"
    assert shown("What is it (in USD billions)?", "a_fy2020", 389e6) == "0.39 billion"
    assert shown("What is the FY2020 current ratio?", "a_fy2020 / b_fy2020", 0.6836) == "0.68"
    assert shown("What is the FY2020 margin? Round to two decimal places.", "a_fy2020 / b_fy2020", 0.02834) == "2.83%"
    assert shown("What is the growth rate in percent?", "(a_fy2020 - a_fy2019) / a_fy2019 * 100", 30.83) == "30.8%"
    assert shown("How much did the tax rate change?", "a_fy2020 - a_fy2019", 3.0, scale="", percent=True) == "3.0%"


def test_only_a_question_for_a_filings_figure_takes_this_path():
    assert figures.asks_for_figure("What is Netflix's year end FY2017 total current liabilities?")
    assert figures.asks_for_figure("How much did Amazon spend on capex in 2019?")
    assert not figures.asks_for_figure("Which region had the worst topline performance for MGM during FY2022?")
    assert not figures.asks_for_figure("What is the retry backoff of the job runner?")
    assert not figures.asks_for_figure("In what year did the Broncos win their first Super Bowl?")


def test_the_figure_the_model_names_is_no_operand_of_its_own_formula():
    assert figures.formula_of("inventory_turnover_fy2023 = cost_of_sales_fy2023 / inventory_fy2023") == \
        "cost_of_sales_fy2023 / inventory_fy2023"
    assert figures.formula_of("inventory_fy2019 = inventory_fy2019") == "inventory_fy2019"
    assert figures.formula_of("inventory_fy2019 = 3") == "inventory_fy2019"  # a figure recalled is read instead
    assert figures.formula_of("turnover_fy2023 = turnover_fy2023 / 2") is None
    assert figures.formula_of("cost_of_sales_fy2023 / inventory_fy2023") is None  # cut before its name


def test_a_formula_that_is_another_single_line_item_than_the_figure_is_refused():
    assert figures.formula_of("inventory_fy2019 = total_inventories_fy2019") == "total_inventories_fy2019"
    assert figures.formula_of("cash_conversion_cycle_fy2019 = inventory_fy2019") is None


def test_a_row_of_two_joined_items_is_not_read_as_one_of_them():
    passage = Passage("2018 2017\nAccounts payable and accrued liabilities 21,508 422,258\n")
    assert figures.read(figures.Operand("accounts_payable_fy2018", "accounts payable", 2018), passage)[0] is None
