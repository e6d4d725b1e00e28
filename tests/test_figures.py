"""Figures computed in Python (localcr.answers.figures): the formula is parsed, never run; table rows as PDF text gives them
are read by label and column year; the result is shown in the scale the question asks for. Pure functions: the
LLM's part (the plan) is tested in test_ask with the bundled model."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from localcr.answers import figures, plans

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
    assert plans.evaluate("(a_fy2021 / a_fy2019) ** (1 / 2) - 1", {"a_fy2021": 121.0, "a_fy2019": 100.0}) == \
        pytest.approx(0.1)
    with pytest.raises(ZeroDivisionError):
        plans.evaluate("a_fy2020 / b_fy2020", {"a_fy2020": 1.0, "b_fy2020": 0.0})
    with pytest.raises(ValueError):
        plans.evaluate("(a_fy2020 - 2) ** 0.5", {"a_fy2020": 1.0})


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


def test_a_payment_or_a_cost_in_parentheses_counts_as_its_size():
    reading, _ = figures.read(figures.Operand("capex_fy2019", "capex", 2019),
                              Passage("2019 2018\nCapital expenditures (116) (131)\n"))
    assert reading.value == -116.0 and reading.amount == 116.0
    statement = Passage("2023 2022\nNet sales 14,694 14,544\nCost of sales (11,969) (11,724)\nGross profit 2,725 2,820\n")
    cost, _ = figures.read(figures.Operand("cost_of_goods_sold_fy2022", "cost of goods sold", 2022), statement)
    assert (cost.amount, cost.used) == (11724.0, "11724")  # a gross margin of (14,544 - 11,724) / 14,544, not 180%
    income, _ = figures.read(figures.Operand("gross_profit_fy2022", "gross profit", 2022),
                             Passage("2023 2022\nGross profit (loss) 40 (25)\n"))
    assert (income.amount, income.used) == (-25.0, "(25)")  # an income keeps its sign


def test_the_result_is_shown_as_the_question_asks():
    def shown(question, formula, value, scale="millions", percent=False):
        operand = figures.operands_of(formula)[0]
        reading = figures.Reading(operand, 0.0, "0", scale, percent, "x", "2020", None)
        return figures.shown_result(question, formula, value, [reading])

    assert shown("What is the FY2020 working capital?", "a_fy2020 - b_fy2020", 5818e6) == "5,818 million"
    assert shown("What is it (in USD billions)?", "a_fy2020", 389e6) == "0.39 billion"
    assert shown("What is the FY2020 current ratio?", "a_fy2020 / b_fy2020", 0.6836) == "0.68"
    assert shown("What is the FY2020 margin? Round to two decimal places.", "a_fy2020 / b_fy2020", 0.02834) == "2.83%"
    assert shown("What is the growth rate in percent?", "(a_fy2020 - a_fy2019) / a_fy2019 * 100", 30.83) == "30.8%"
    assert shown("How much did the tax rate change?", "a_fy2020 - a_fy2019", 3.0, scale="", percent=True) == "3.0%"


@pytest.mark.parametrize("question, takes_it", [
    ("What is Netflix's year end FY2017 total current liabilities?", True),
    ("How much did Amazon spend on capex in 2019?", True),
    ("Does Acme have positive working capital based on FY2022 data?", True),  # a judgement of a figure
    ("Has Acme's quick ratio improved or declined between FY2023 and FY2022?", True),
    ("Which region had the worst topline performance for MGM during FY2022?", False),
    ("What is the retry backoff of the job runner?", False),
    ("In what year did the Broncos win their first Super Bowl?", False),
    ("Were there any events that increased net income in 2019?", False),
    ("What Was Acme's Adjusted Non GAAP EBITDA for FY 2023", False),  # an adjusted figure is no formula of rows
    ("How much was the change in sales in FY 2023 if we exclude the impact of FX?", False),
])
def test_only_a_question_for_a_filings_figure_or_a_judgement_of_one_takes_this_path(question, takes_it):
    assert figures.asks_for_figure(question) is takes_it


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


def test_a_heading_line_with_words_before_its_years_or_broken_over_lines_heads_the_columns():
    led = Passage("Fiscal Years Ended January 28, 2017 January 30, 2016\nNet earnings 1,228 897\n")
    assert figures.read(figures.Operand("net_earnings_fy2016", "net earnings", 2016), led)[0].value == 897.0
    broken = Passage("Year Ended\nDecember 26,\n2015\nDecember 27,\n2014\n(In millions)\nDepreciation and amortization "
                     "167 203\n")
    reading, _ = figures.read(figures.Operand("d_a_fy2015", "depreciation and amortization", 2015), broken)
    assert (reading.value, reading.scale) == (167.0, "millions")
    run_on = Passage("For the Years Ended December 31, 2021 2020 2019 Operating revenues $ 3,930 $ 3,777 $ 3,610\n")
    assert figures.read(figures.Operand("revenues_fy2020", "operating revenues", 2020), run_on)[0].value == 3777.0


def test_a_heading_whose_lead_names_the_year_end_heads_the_columns():
    passage = Passage("Year Ended December 31 (Millions, except per share amounts) 2022 2021 2020\n"
                      "Total revenues net of interest expense 52,862 42,380 36,087\n")
    assert figures.read(figures.Operand("total_revenue_fy2021", "total revenue", 2021), passage)[0].value == 42380.0


def test_headings_of_at_dates_head_the_columns():
    passage = Passage("At December 31, 2019 At December 31, 2018\nTotal current liabilities 2,915 2,642\n")
    reading, _ = figures.read(figures.Operand("total_current_liabilities_fy2018", "total current liabilities", 2018), passage)
    assert (reading.value, reading.heading) == (2642.0, "December 31, 2018")


def test_a_line_item_the_question_names_is_read_not_computed():
    question = "What is Activision Blizzard's year end FY2019 total current liabilities (in USD millions)?"
    assert figures.line_item_asked(question, "total_current_liabilities_fy2019")
    assert not figures.line_item_asked("What is the FY2021 total revenue CAGR?", "total_revenue_cagr_fy2021")
    defined = "What is the FY2020 net working capital? Define it as total current assets less total current liabilities."
    assert not figures.line_item_asked(defined, "total_current_liabilities_fy2020")
    assert not figures.line_item_asked(question, "quick_ratio_fy2019")


def test_a_document_that_only_mentions_the_subject_is_not_about_it():
    mentions = {"walmart-2018.txt": 10, "general-mills-2020.txt": 3, "walmart-2020.txt": 10, "unrelated.txt": 0}
    assert figures.about_subject(mentions) == ["walmart-2018.txt", "walmart-2020.txt"]
    assert figures.about_subject({"square-2016.txt": 10, "block-2020.txt": 20}) == ["block-2020.txt", "square-2016.txt"]
    assert figures.about_subject({}) == []
    titles = {"square-2020.txt": "SQUARE, INC., Annual report", "walmart-2018.txt": "WALMART INC., Annual report",
              "square-2016.txt": None}
    mentions = {"square-2020.txt": 10, "walmart-2018.txt": 7, "square-2016.txt": 10}
    assert figures.about_subject(mentions, titles, ["Block", "Square"]) == ["square-2020.txt", "square-2016.txt"]
    assert figures.about_subject(mentions, titles, ["JnJ"]) == ["square-2020.txt", "square-2016.txt", "walmart-2018.txt"]


def test_a_line_item_is_never_read_under_another_items_name():
    passage = Passage("June 30, 2023 June 30, 2022\nTotal current assets 5,308 5,853\nTotal current liabilities 5,144 5,195\n"
                      "Cost of sales 11,724 12,406\n")
    reading, _ = figures.read(figures.Operand("current_liabilities_fy2023", "current liabilities", 2023), passage)
    assert reading.label == "Total current liabilities"  # the working-capital items' labels are each their own
    assert figures.read(figures.Operand("gross_profit_fy2023", "gross profit", 2023), passage)[0] is None


def test_a_change_the_question_defines_is_the_later_years_item_less_the_earlier_ones():
    question = ("What is FY2018 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
                "between FY2017 and FY2018) / (FY2018 COGS + change in inventory between FY2017 and FY2018).")
    planned = ("365 * ((accounts_payable_fy2017 + accounts_payable_fy2018) / 2) / (cost_of_goods_sold_fy2018 + "
               "change_in_inventory_fy2017 - change_in_inventory_fy2018)")
    assert figures.changes_between(question, planned) == (
        "365 * ((accounts_payable_fy2017 + accounts_payable_fy2018) / 2) / (cost_of_goods_sold_fy2018 + "
        "(inventory_fy2018 - inventory_fy2017))")
    assert figures.changes_between(question, "cost_of_goods_sold_fy2018 + change_in_inventory_fy2018") == \
        "cost_of_goods_sold_fy2018 + (inventory_fy2018 - inventory_fy2017)"
    assert figures.changes_between("What is the FY2018 DPO?", planned) == planned


def test_a_balance_is_not_read_from_a_cash_flow_statement_titled_after_its_company():
    passage = Passage("(Amounts in millions) 2020 2019 2018\nAccounts payable (274) 1,831 4,086\n",
                      "File r.txt. Section: PART II > ITEM 8. FINANCIAL STATEMENTS > Walmart Inc. — Consolidated "
                      "Statements of Cash Flows, Fiscal Years Ended January 31, (amounts in millions).")
    assert figures.read(figures.Operand("accounts_payable_fy2018", "accounts payable", 2018), passage)[0] is None


def test_a_share_of_a_line_item_is_not_its_amount():
    passage = Passage("2022 2021\nSales to customers 79,990 78,740\n% to Sales 17.3 16.9\n")
    reading, _ = figures.read(figures.Operand("revenue_fy2022", "revenue", 2022), passage)
    assert reading.value == 79990.0 and reading.label == "Sales to customers"
    only_share = Passage("2022 2021\nGross profit as a percentage of net sales 67.0 68.2\n")
    assert figures.read(figures.Operand("net_sales_fy2022", "net sales", 2022), only_share)[0] is None


def test_a_line_item_is_read_under_the_names_filings_give_it():
    passage = Passage("2016 2015 2014\nOperating loss (170,453) (174,458) (150,491)\n"
                      "Property, plant and equipment, net 19,803 18,962 17,005\n")
    assert figures.read(figures.Operand("operating_income_fy2015", "operating income", 2015), passage)[0].value == -174458.0
    assert figures.read(figures.Operand("average_ppe_fy2014", "ppe", 2014), passage)[0].value == 17005.0
    without_plant = Passage("2019 2018\nProperty and equipment, net 253 282\n")
    assert figures.read(figures.Operand("ppe_fy2018", "ppe", 2018), without_plant)[0].value == 282.0
    # PP&E as the plan's grammar lets the model name it (letters and underscores): the 1.5B wrote it both ways
    assert figures.read(figures.Operand("average_pp_e_fy2018", "pp e", 2018), without_plant)[0].value == 282.0
    profit = Passage("Fiscal Year 2020 2019\nOperating profit 2,953.9 2,515.9\n")
    assert figures.read(figures.Operand("operating_income_fy2020", "operating income", 2020), profit)[0].value == 2953.9


def test_the_total_row_is_the_line_item_not_a_part_or_another_of_its_kind():
    passage = Passage("2017 2016\nNet product sales 118,573 94,665\nTotal net sales 177,866 135,987\n"
                      "Other current assets 688 1,150\nTotal current assets 19,815 19,378\n")
    assert figures.read(figures.Operand("revenue_fy2017", "revenue", 2017), passage)[0].value == 177866.0
    assert figures.read(figures.Operand("total_current_assets_fy2017", "total current assets", 2017),
                        passage)[0].value == 19815.0
    assert figures.read(figures.Operand("current_assets_fy2017", "current assets", 2017), passage)[0].value == 19815.0


def test_a_change_or_a_metric_is_not_read_as_the_rows_it_is_made_of():
    passage = Passage("2020 2019\nInventories 2,438 2,320\nOperating income 1,196 1,248\n")
    assert figures.read(figures.Operand("change_in_inventory_fy2020", "change in inventory", 2020), passage)[0] is None
    assert figures.read(figures.Operand("ebitda_fy2020", "ebitda", 2020), passage)[0] is None


def test_the_plan_reads_what_is_asked_not_how_to_answer():
    question = ("We want to calculate a financial metric. Basing your judgment by information plainly provided in the "
                "balance sheet, what is Acme's FY2020 asset turnover ratio? Asset turnover ratio is defined as: FY2020 "
                "revenue / (average total assets between FY2019 and FY2020). Round your answer to two decimal places.")
    assert figures.what_is_asked(question) == (
        "what is Acme's FY2020 asset turnover ratio? Asset turnover ratio is defined as: FY2020 revenue / (average "
        "total assets between FY2019 and FY2020).")
    assert figures.what_is_asked("What is Acme's change in revenue from FY2016 to FY2017 (in units of percents and "
                                 "round to one decimal place)?") == "What is Acme's change in revenue from FY2016 to FY2017 (in percent)?"
    assert figures.what_is_asked("Does Acme have positive working capital based on FY2022 data? If working capital is "
                                 "not a useful metric for this company, then please state that and explain why.") == \
        "Does Acme have positive working capital based on FY2022 data?"


def test_a_judged_figure_is_computed_for_each_year_the_question_names():
    formula = "total_current_assets_fy2023 / total_current_liabilities_fy2023"
    assert figures.in_year(formula, 2022) == "total_current_assets_fy2022 / total_current_liabilities_fy2022"
    assert figures.compared_years("Has Acme's current ratio improved between FY2023 and FY2022?", formula) == [2022]
    assert figures.compared_years("Does Acme have an improving current ratio as of FY2023?", formula) == [2022]
    assert figures.compared_years("Did Acme grow its PPNE between FY20 and FY23?", formula) == [2020]
    assert figures.compared_years("Does Acme have a positive current ratio in FY2023?", formula) == []
    assert figures.compared_years("What is Acme's FY2023 current ratio?", formula) == []
    assert figures.compared_years("Has it changed between FY2022 and FY2023?", "a_fy2023 - a_fy2022") == []


def test_a_judgement_is_answered_by_the_figures_sign_or_its_change():
    def result(formula, value, percent=False):
        readings = [figures.Reading(o, 0.0, "0", "millions", percent, "x", "2020", None)
                    for o in figures.operands_of(formula)]
        return figures.Result(formula, value, readings)

    wc = "total_current_assets_fy2022 - total_current_liabilities_fy2022"
    assert figures._judgement("Does Acme have positive working capital based on FY2022 data?", "working_capital_fy2022",
                              [result(wc, -1561e6)]) == "No: working capital in FY2022 was -1,561 million (negative)."
    ratio = "total_current_assets_fy2023 / total_current_liabilities_fy2023"
    assert figures._judgement("Has the current ratio improved between FY2022 and FY2023?", "current_ratio_fy2023",
                              [result(figures.in_year(ratio, 2022), 0.67), result(ratio, 0.69)]) == \
        "Yes: current ratio went from 0.67 in FY2022 to 0.69 in FY2023: up 0.02."
    assert figures._judgement("Has the current ratio improved or declined between FY2022 and FY2023?",
                              "current_ratio_fy2023", [result(figures.in_year(ratio, 2022), 0.67), result(ratio, 0.69)]) \
        == "Current ratio went from 0.67 in FY2022 to 0.69 in FY2023: up 0.02."
    growth = "(ppne_fy2021 - ppne_fy2020) / ppne_fy2020 * 100"
    assert figures._judgement("Did Acme grow its PPNE between FY20 and FY21?", "ppne_growth_fy2021",
                              [result(growth, 8.27)]) == "Yes: up 8.3% from FY2020 to FY2021."
    assert figures._judgement("Has Acme's debt increased between FY2022 and FY2023?", "debt_change_fy2023",
                              [result("debt_fy2023 - debt_fy2022", -2.5e9)]) == "No: down 2,500 million from FY2022 to FY2023."


@pytest.mark.parametrize("question, figure, asked", [
    ("Did Acme grow its PPNE between FY20 and FY21?", "ppne_fy2021", 1),
    ("Has Acme's gross margin declined in FY2023?", "gross_margin_fy2023", -1),
    ("Has Acme's quick ratio improved or declined between FY2022 and FY2023?", "quick_ratio_fy2023", 0),
    ("Has Acme's cash conversion cycle improved in FY2023?", "cash_conversion_cycle_fy2023", -1),  # shorter is better
    ("Has Acme's DSO improved in FY2023?", "dso_fy2023", -1),
    ("What is Acme's FY2023 revenue growth?", "revenue_growth_fy2023", 0),  # asks for a figure, not yes or no
])
def test_a_yes_or_no_question_asks_about_one_direction(question, figure, asked):
    assert figures.asked_direction(question, figure) == asked


def test_only_a_change_from_one_year_to_a_later_one_has_a_direction():
    assert figures.changed_years("(ppne_fy2021 - ppne_fy2020) / ppne_fy2020 * 100") == (2020, 2021)
    assert figures.changed_years("debt_fy2023 - debt_fy2022") == (2022, 2023)
    assert figures.changed_years("cogs_fy2019 / ((inventory_fy2018 + inventory_fy2019) / 2)") is None
    assert figures.changed_years("a_fy2022 - b_fy2023") is None


def test_an_average_over_years_is_the_mean_of_each_years_formula_where_the_plan_wrote_one_year():
    question = "What is the FY2015 - FY2017 3 year average net profit margin (as a %) for Acme?"
    assert figures.averaged(question, "net_income_fy2017 / revenue_fy2017 * 100") == (
        "((net_income_fy2015 / revenue_fy2015 * 100) + (net_income_fy2016 / revenue_fy2016 * 100) + "
        "(net_income_fy2017 / revenue_fy2017 * 100)) / 3")
    two_years = "(a_fy2016 / b_fy2016 + a_fy2017 / b_fy2017) / 2"
    assert figures.averaged("What is the FY2016 - FY2017 2 year average ratio?", two_years) == two_years
    assert figures.averaged("What is the FY2017 ratio?", "a_fy2017 / b_fy2017") == "a_fy2017 / b_fy2017"


def test_a_balance_is_not_read_from_the_cash_flow_statement_where_its_row_is_a_change():
    rows = "2018 2017\nAccounts\xa0payable 21,508 19,000\n"
    cash_flows = Passage(rows, context="File a.txt. Section: ITEM 8 > ACME — CONSOLIDATED STATEMENTS OF CASH FLOWS.")
    balance = Passage(rows, context="File a.txt. Section: ITEM 8 > ACME — CONSOLIDATED BALANCE SHEETS.")
    operand = figures.Operand("accounts_payable_fy2018", "accounts payable", 2018)
    assert figures.read(operand, cash_flows)[0] is None
    reading, _ = figures.read(operand, balance)
    assert (reading.label, reading.value) == ("Accounts payable", 21508.0)


def test_a_formula_is_moved_to_the_latest_year_the_question_names():
    question = "What is the FY2019 - FY2020 total revenue growth rate for Acme?"
    assert figures.in_latest_year(question, "(revenue_fy2019 - revenue_fy2018) / revenue_fy2018 * 100") == \
        "(revenue_fy2020 - revenue_fy2019) / revenue_fy2019 * 100"
    assert figures.in_latest_year("Did Acme grow its PPNE between FY20 and FY21?", "ppne_fy2021") == "ppne_fy2021"
    assert figures.in_latest_year("What is the FY2021 ratio?", "a_fy2021 / b_fy2021") == "a_fy2021 / b_fy2021"


def test_a_plan_for_a_metric_the_question_does_not_name_is_not_used():
    assert not figures.asked_for("What is the year end FY2019 total amount of inventories for Acme?",
                                 "inventory_turnover_fy2019")
    assert figures.asked_for("What is the FY2019 inventory turnover ratio for Acme?", "inventory_turnover_fy2019")
    assert figures.asked_for("Did Acme grow its PPNE between FY20 and FY21?", "ppne_growth_fy2021")
    assert figures.asked_for("What is the year end FY2019 total amount of inventories?", "total_inventories_fy2019")


@pytest.mark.parametrize("question, figure, formula", [
    ("What is the FY2022 retention ratio (using total cash dividends paid and net income attributable to "
     "shareholders) for Acme? Round answer to two decimal places.", "retention_ratio_fy2022",
     "(net_income_attributable_to_shareholders_fy2022 - cash_dividends_paid_fy2022) / "
     "net_income_attributable_to_shareholders_fy2022"),
    ("We want to calculate a financial metric. Here's the question: what is the FY2017 unadjusted EBITDA % margin for "
     "Acme? Calculate unadjusted EBITDA using unadjusted operating income and D&A (from cash flow statement).",
     "ebitda_margin_fy2017",
     "(operating_income_fy2017 + depreciation_and_amortization_fy2017) / total_revenue_fy2017 * 100"),
    ("What is Acme's FY2021 EBITDA in USD millions?", "ebitda_fy2021",
     "operating_income_fy2021 + depreciation_and_amortization_fy2021"),
    ("What is Acme's FY2022 DPO?", "days_payable_outstanding_fy2022",
     "365 * ((accounts_payable_fy2021 + accounts_payable_fy2022) / 2) / (cost_of_goods_sold_fy2022 + "
     "inventories_fy2022 - inventories_fy2021)"),
    ("What is Acme's FY2019 inventory turnover ratio?", "inventory_turnover_fy2019",
     "cost_of_goods_sold_fy2019 / ((inventories_fy2018 + inventories_fy2019) / 2)"),
    ("Has Acme's quick ratio improved between FY2022 and FY2023?", "quick_ratio_fy2023",
     "(total_current_assets_fy2023 - inventories_fy2023) / total_current_liabilities_fy2023"),
    ("What is Acme's FY2019 working capital ratio?", "current_ratio_fy2019",
     "total_current_assets_fy2019 / total_current_liabilities_fy2019"),
    ("Does Acme have an improving gross margin profile as of FY2023?", "gross_margin_fy2023",
     "(total_revenue_fy2023 - cost_of_goods_sold_fy2023) / total_revenue_fy2023 * 100"),
    ("What is Acme's FY2020 fixed asset turnover?", "fixed_asset_turnover_fy2020",
     "total_revenue_fy2020 / ((property_plant_and_equipment_fy2019 + property_plant_and_equipment_fy2020) / 2)"),
])
def test_a_common_metric_the_question_names_and_does_not_define_is_the_textbooks_formula(question, figure, formula):
    assert figures.metric_plan(question) == (figure, formula)


def test_an_average_over_years_and_a_share_of_revenue_take_the_metrics_formula_for_each_year():
    question = "What is the FY2017 - FY2019 3 year average of capex as a % of revenue for Acme?"
    figure, formula = figures.metric_plan(question)
    assert (figure, formula) == ("capex_to_revenue_fy2019", "capital_expenditures_fy2019 / total_revenue_fy2019 * 100")
    assert figures.averaged(question, formula).startswith(
        "((capital_expenditures_fy2017 / total_revenue_fy2017 * 100) + (capital_expenditures_fy2018 / ")


@pytest.mark.parametrize("question", [
    "What is Acme's FY2021 net working capital? Define net working capital as total current assets less total current "
    "liabilities.",  # a definition the question gives wins
    "What is Acme's FY2021 unadjusted operating income + depreciation and amortization (unadjusted EBITDA)?",
    "What is Acme's FY2022 net debt to EBITDA ratio?",  # another figure that names a metric
    "What is Acme's FY2022 EBITDA growth?",
    "What is Acme's change in working capital between FY2021 and FY2022?",
    "What is Acme's FY2022 D&A % margin?",  # none of the table's: the model's plan
    "What is Acme's FY2022 quick ratio and current ratio?",  # two metrics: left to the model
    "What is Acme's total revenue?",  # no year
])
def test_the_model_plans_what_the_question_defines_or_the_table_does_not_hold(question):
    assert figures.metric_plan(question) is None


def test_a_line_item_the_question_dates_is_in_that_year():
    question = ("What is FY2020 DPO for Acme? DPO is defined as: 365 * (average accounts payable between FY2019 and "
                "FY2020) / (FY2020 COGS + change in inventory between FY2019 and FY2020).")
    planned = ("365 * ((accounts_payable_fy2019 + accounts_payable_fy2020) / 2) / (cost_of_goods_sold_fy2019 + "
               "(inventory_fy2020 - inventory_fy2019))")
    assert figures.years_as_dated(question, planned) == planned.replace("cost_of_goods_sold_fy2019",
                                                                         "cost_of_goods_sold_fy2020")
    right = planned.replace("cost_of_goods_sold_fy2019", "cost_of_goods_sold_fy2020")
    assert figures.years_as_dated(question, right) == right
    growth = "(total_revenue_fy2019 - total_revenue_fy2018) / total_revenue_fy2018 * 100"
    assert figures.years_as_dated("What is the FY2019 total revenue growth rate?", growth) == growth


def test_a_deferred_tax_tables_rows_are_no_line_items_and_a_label_may_say_what_its_item_is_of():
    operand = figures.Operand("depreciation_and_amortization_fy2015", "depreciation and amortization", 2015)
    deferred = Passage("The components of deferred tax assets and liabilities were as follows:\n2015 2014\n"
                       "Deferred tax assets (liabilities):\nStock-based compensation $ 131,339 $ 100,397\n"
                       "Depreciation and amortization (43,204) (11,708)\n")
    assert figures.read(operand, deferred)[0] is None
    cash_flows = Passage("2015 2014 2013\nNet income $ 122,641 $ 266,799 $ 112,403\n"
                         "Depreciation and amortization of property, equipment and intangibles 62,283 54,028 48,374\n")
    reading, _ = figures.read(operand, cash_flows)
    assert reading.value == 62283.0
    assert figures.read(figures.Operand("cost_of_sales_fy2015", "cost of sales", 2015),
                        Passage("2015 2014\nCost of sales 2,911 3,667\n"))[0].value == 2911.0


def test_net_income_attributable_to_the_subject_is_its_shareholders_not_the_consolidated_figure():
    passage = Passage("2020 2019\nConsolidated net income 15,201 7,179\n"
                      "Consolidated net income attributable to noncontrolling interest (320) (509)\n"
                      "Consolidated net income attributable to Walmart 14,881 6,670\n")
    operand = figures.Operand("net_income_attributable_to_shareholders_fy2020",
                              "net income attributable to shareholders", 2020)
    assert figures.read(operand, passage, ["Walmart"])[0].value == 14881.0
    net_income = figures.Operand("net_income_fy2020", "net income", 2020)
    assert figures.read(net_income, passage, ["Walmart"])[0].value == 15201.0
    assert figures.read(operand, Passage("2020 2019\nNet earnings 1,419 2,454\n"), ["Acme"])[0].value == 1419.0


def test_where_the_plan_names_another_figure_the_one_line_item_the_question_names_is_read():
    assert figures.line_item_named("What is the year end FY2019 total amount of inventories for Acme? Answer in USD "
                                   "millions.") == ("inventories_fy2019", "inventories_fy2019")
    assert figures.line_item_named("What is the FY2019 inventory turnover for Acme?") is None  # a metric
    assert figures.line_item_named("What is Acme's FY2019 revenue and net income?") is None  # two items
    assert figures.line_item_named("Are Acme's FY2022 financials those of a high growth company?") is None


def test_an_answer_by_a_common_metrics_formula_says_so():
    formula = "cash_dividends_paid_fy2022 / net_income_attributable_to_shareholders_fy2022"
    hit = Passage("2022 2021\nDividends paid (1,244.5) (1,246.4)\nNet earnings attributable to Acme 2,707.3 2,339.8\n")
    readings = [figures.Reading(o, 0.0, "1", "millions", False, "x", "2022", hit) for o in figures.operands_of(formula)]
    answer = figures.answer_of("What is Acme's FY2022 payout ratio?", "payout_ratio_fy2022",
                             [figures.Result(formula, 0.46, readings)], "a-model", True)
    assert answer.note == "payout ratio by its common formula, computed in Python from 2 figures read from the " \
                          "sources' tables"
    assert answer.text.startswith("0.46, computed as ")
