"""The table reader (localcr.answers.tables), the arithmetic over its cells (localcr.answers.compute) and the check
that a computed answer must pass (localcr.answers.route): pure text and arithmetic, no model (but for the test that
llama.cpp, under a plan's grammar, refuses what the tables do not have: it reads the plan LLM's vocabulary)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from localcr.answers import compute, route
from localcr.answers import notation
from localcr.answers.tables import tables_in

SEGMENTS = """Net sales by segment were as follows:

|  |  | Fiscal |  |
|---|---|---|---|
|  | 2019 | 2018 | 2017 |
|  |  | (in millions) |  |
| Transportation Solutions: |  |  |  |
| Automotive | $ 5,686 | $ 6,092 | $  5,228 |
| Sensors | 914 | 918 | (814) |
| Industrial Solutions: |  |  |  |
| Energy | 699 | — | 685 |
| Total | $ 13,448 | $ 13,988 | $ 12,185 |
"""


def cells_of(table) -> dict:
    return {(cell.row, cell.column): cell for cell in table.cells()}


def test_a_markdown_table_reads_as_cells_under_their_year_with_the_scale_its_header_states():
    [table] = tables_in(SEGMENTS)
    assert table.columns == ["2019", "2018", "2017"]
    cells = cells_of(table)
    automotive = cells[("Automotive", "2018")]
    assert (automotive.value, automotive.scale, automotive.unit, automotive.amount) == (6092, "million", "$", 6.092e9)
    assert cells[("Sensors", "2017")].value == -814  # parenthesised: negative
    assert cells[("Energy", "2018")].value == 0  # a dash: none
    assert "Transportation Solutions" not in {label for label, _ in table.rows}  # a group's heading is no row


def test_dated_heads_and_a_euro_scale_read_as_an_ifrs_statement_writes_them():
    text = ("Consolidated statement of profit or loss\n\n| €m | 31 December 2019 | 31 December 2018 |\n|---|---|---|\n"
            "| Revenue | 1,204.5 | 1,100.0 |\n| Operating profit | 93.8 | (16.6) |\n")
    [table] = tables_in(text)
    assert table.columns == ["31 December 2019", "31 December 2018"]
    profit = cells_of(table)[("Operating profit", "31 December 2018")]
    assert (profit.value, profit.scale, profit.years) == (-16.6, "million", {2018})


@pytest.mark.parametrize("heading, scale", [
    ("(in thousands)", "thousand"), ("$'000", "thousand"), ("(in millions, except per share data)", "million"),
    ("€m", "million"), ("£ million", "million"), ("in € million", "million"), ("US$ in billions", "billion"),
    ("Net sales grew in 2019", ""),
])
def test_scales_as_tables_state_them(heading, scale):
    assert notation.scale_in(heading) == scale


@pytest.mark.parametrize("written, read", [
    ("$ 1,980", (1980.0, False)), ("(10,205)", (-10205.0, False)), ("23.0 %", (23.0, True)), ("-4.5", (-4.5, False)),
    ("—", (0.0, False)), ("1,234(1)", (1234.0, False)), ("12*", (12.0, False)), ("Total", None), ("(12", None),
    (".449", (0.449, False)), ("-.5", (-0.5, False)), (",5", None), (".", None),
])
def test_a_cell_reads_as_its_figure(written, read):
    reading = notation.read(written)
    assert (reading and (reading.value, reading.percent)) == read


def test_a_fraction_written_without_its_zero_reads_in_its_table_s_convention():
    assert notation.read(",449", notation.Notation(",")).value == 0.449 and notation.read(".449", notation.Notation(",")) is None


def test_rows_of_cells_joined_by_bars_read_as_a_table_with_the_first_row_as_its_heads():
    # as the HTML, DOCX and sheet readers write a table (localcr.readers.CELL_SEPARATOR)
    text = "Region | Sales | Costs\nNorth | 120 | 90\nSouth | 80 | 50\n"
    [table] = tables_in(text)
    assert table.columns == ["Sales", "Costs"] and cells_of(table)[("South", "Costs")].value == 50


def test_a_sheet_chunk_without_its_header_row_takes_the_heads_from_its_context():
    [table] = tables_in("North | 120 | 90\nSouth | 80 | 50\n", "Sheet: Q1. Columns: Region | Sales | Costs.")
    assert table.columns == ["Sales", "Costs"]


def test_a_pdf_s_text_rows_read_under_the_line_of_years_above_them():
    text = ("Property and equipment (in thousands):\nDecember 31,\n2019 2018\nLand $ 1,949 $ 2,185\n"
            "Buildings and leasehold improvements 138,755 129,582\nAccumulated depreciation (51,220) (40,003)\n")
    [table] = tables_in(text)
    cells = cells_of(table)
    assert table.columns == ["2019", "2018"]
    assert cells[("Land", "2019")].value == 1949 and cells[("Accumulated depreciation", "2018")].value == -40003
    assert cells[("Land", "2019")].scale == "thousand"


def test_prose_is_no_table():
    assert tables_in("Sales grew in 2019 and 2018 as planned, to 1,200 units from 1,000.\n") == []


def hit(text: str, chunk_id: str = "c1"):
    return SimpleNamespace(text=text, context="", chunk_id=chunk_id, doc_id="d", start=0, end=len(text))


def cells_for(text: str):
    [table] = tables_in(text)
    return compute.shown_tables([(table, [hit(text)])])


def test_a_plan_over_cells_is_evaluated_and_shown_with_its_operands():
    shown, cells = cells_for(SEGMENTS)
    assert "| Automotive | $ 5,686 | $ 6,092 | $ 5,228 |" in shown and shown.startswith("Table 1 (in millions):")
    result = compute.evaluated('(cell("Automotive", "2019") - cell("Automotive", "2018")) / cell("Automotive", "2018")'
                               ' * 100', cells)
    assert result.kind == "percent" and round(result.value, 2) == -6.66
    assert compute.result_shown(result) == "-6.66%"
    assert compute.formula_shown(result) == "(5,686 - 6,092) / 6,092 × 100"
    change = compute.evaluated('cell("Sensors", "2017") - cell("Sensors", "2018")', cells)
    assert (change.kind, compute.result_shown(change)) == ("amount", "-$1,732 million")
    ratio = compute.evaluated('cell("Sensors", "2019") / cell("Total", "2019")', cells)
    assert ratio.kind == "ratio" and compute.result_shown(ratio) == "0.07"
    turnover = compute.evaluated('(cell("Sensors", "2019") + cell("Energy", "2019")) / ((cell("Total", "2019") + '
                                 'cell("Total", "2018")) / 2)', cells)
    assert turnover.kind == "ratio"
    average = compute.evaluated('(cell("Sensors", "2019") + cell("Sensors", "2018")) / 2', cells)
    assert (average.kind, compute.result_shown(average)) == ("amount", "$916 million")


def test_a_plan_that_names_no_cell_of_the_tables_or_divides_by_zero_gives_nothing():
    _, cells = cells_for(SEGMENTS)
    assert compute.evaluated('cell("Pumps", "2019") - cell("Automotive", "2018")', cells) is None
    assert compute.evaluated('cell("Sensors", "2019") / cell("Energy", "2018")', cells) is None
    assert compute.evaluated("(3 + 4) / 2", cells) is None  # no operand to cite


def test_the_plan_s_grammar_allows_only_the_tables_rows_and_columns():
    from localcr.llm import load_grammar

    _, cells = cells_for(SEGMENTS.replace("| Total", '| Say "hi" | 1 | 2 | 3 |\n| Total'))
    grammar = compute.grammar_of(cells)
    assert '"\\"Automotive\\""' in grammar and '"\\"2017\\""' in grammar and "\"Say 'hi'\\\"" in grammar
    load_grammar(grammar)  # llama.cpp parses it


@pytest.fixture(scope="module")
def plan_vocabulary():
    """The vocabulary of the LLM that writes plans (the registry's default, the answerer's), without its weights."""
    from llama_cpp import Llama

    from localcr.llm import quiet_stderr
    from localcr.models import load_registry

    path = load_registry().require("llm").resolve()
    with quiet_stderr():
        vocabulary = Llama(str(path), vocab_only=True, verbose=False)
    yield vocabulary
    vocabulary.close()


def llama_cpp_lets_write(vocabulary, grammar, text: str) -> bool:
    """Whether llama.cpp's grammar sampler, as generation applies it (llama-cpp-python's LlamaSampler.add_grammar),
    lets a model write `text` and then stop: each of its tokens in turn is offered alone (a token the grammar refuses
    gets a logit of -inf) and accepted, and then the end of generation."""
    import ctypes

    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(vocabulary._model.vocab, grammar._grammar.encode(),
                                                   grammar._root.encode())
    assert sampler, "llama.cpp did not parse the grammar"
    try:
        candidate = (llama_cpp.llama_token_data * 1)()
        offered = llama_cpp.llama_token_data_array(data=candidate, size=1, selected=-1, sorted=False)
        end = vocabulary.token_eos()
        for token in [*vocabulary.tokenize(text.encode(), add_bos=False, special=False), end]:
            candidate[0].id, candidate[0].logit, candidate[0].p = token, 0.0, 0.0
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(offered))
            if candidate[0].logit == float("-inf"):
                return False
            if token != end:
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


@pytest.mark.model  # a model's vocabulary: llama.cpp applies a grammar to tokens (no weights loaded, well under a second)
def test_llama_cpp_under_the_plan_s_grammar_refuses_a_row_or_column_the_tables_do_not_have(plan_vocabulary):
    from localcr.llm import load_grammar

    _, cells = cells_for(SEGMENTS.replace("| Total", '| Say "hi" | 1 | 2 | 3 |\n| Total'))
    grammar = load_grammar(compute.grammar_of(cells))
    allowed = ['cell("Automotive", "2019") - cell("Automotive", "2018")',
               '(cell("Sensors", "2019") + cell("Sensors", "2018")) / 2',
               'cell("Say \'hi\'", "2017") / cell("Total", "2017") * 100']
    refused = ['cell("Pumps", "2019") - cell("Automotive", "2018")',  # a row the table does not have
               'cell("Automotive", "2018") - cell("Automotives", "2017")',  # nor this one
               'cell("Automotive", "2020") - cell("Automotive", "2019")',  # a column it does not have
               'cell("Automotive", "2019") - 5686',  # a figure copied as a number is no operand to cite
               'cell("Automotive", "2019") -']  # a plan cut short
    assert [text for text in allowed if not llama_cpp_lets_write(plan_vocabulary, grammar, text)] == []
    assert [text for text in refused if llama_cpp_lets_write(plan_vocabulary, grammar, text)] == []


def test_only_a_table_with_a_row_the_question_names_is_evidence_for_computing():
    tables = [(table, [hit(SEGMENTS)]) for table in tables_in(SEGMENTS)]
    assert compute.named_tables("What was the percentage change in Automotive sales from 2018 to 2019?", tables)
    assert not compute.named_tables("What was the average temperature in Oslo in 2019?", tables)


def test_a_row_named_apart_by_the_date_it_is_grouped_under_is_named_by_its_own_label():
    # A note's table whose periods are label-only rows: its two "Total" rows are named apart by their dates, and a
    # question naming "total" and the column (not the month) names the table; in German too.
    text = """|  | Gross | Net |
|---|---|---|
| December 31, 2019 |  |  |
| Transaction related | $12,863 | $12,625 |
| Total | $19,731 | $19,493 |
| December 31, 2018 |  |  |
| Transaction related | $14,704 | $14,536 |
| Total | $15,568 | $15,400 |
"""
    [table] = tables_in(text)
    assert [label for label, _ in table.rows][2] == "December 31, 2018: Transaction related"
    assert compute.own_labels(table) == ["Transaction related", "Total"] * 2
    assert compute.named_tables("How many years did the total net amount exceed $15,000?", [(table, [])])
    [german] = tables_in(text.replace("December 31, 2019", "31. Dezember 2019").replace("December 31, 2018",
                                                                                          "31. Dezember 2018"),
                         language="de")
    assert compute.own_labels(german) == ["Transaction related", "Total"] * 2
    grouped = text.replace("December 31, 2019", "Current").replace("December 31, 2018", "Deferred")
    [by_kind] = tables_in(grouped)  # a group that is no period stays part of the name
    assert compute.own_labels(by_kind)[0] == "Current: Transaction related"


def test_a_count_over_rows_that_names_none_of_them_is_planned_over_the_tables_with_its_period_as_a_column():
    # "How many segments in 2018 were below $100 million?" names no row: the rows are what it counts. The tables
    # whose column is a period it names may be counted (route.counted_tables); only a plan that counts is kept.
    text = """|  | 2019 (1) | 2018 | 2017 (2) |
|---|---|---|---|
| Impairment charges | $94.2 | $394.0 | $211.4 |
| Net losses on sales or disposals of assets | 45.1 | 85.6 | 32.8 |
| Other operating expenses | 27.0 | 33.7 | 11.8 |
"""
    [table] = tables_in(text)
    question = "How many expenses segments in 2018 were below $100 million?"
    assert not compute.named_tables(question, [(table, [])])
    assert route.counted_tables(question, [(table, [])]) == [(table, [])]
    assert route.counted_tables("Wie viele Segmente lagen 2018 unter 100 Mio. €?", [(table, [])])
    assert not route.counted_tables("How many segments were below $100 million in 2021?", [(table, [])])
    assert not route.counted_tables("How many segments were below $100 million?", [(table, [])])
    assert compute.is_tally('(cell("Impairment charges", "2018") < 100) + '
                            '(cell("Other operating expenses", "2018") < 100)')
    assert compute.is_tally('(cell("Impairment charges", "2018") >= 100.5)')
    assert not compute.is_tally('cell("Impairment charges", "2018") - cell("Other operating expenses", "2018")')
    assert not compute.is_tally('(cell("Impairment charges", "2018") < 100) * 2')


def test_the_count_decision_and_the_route_s_share_a_prompt_but_not_a_cache_entry():
    # One prompt, its kept state shared, serves two decisions (any computed kind; "count" alone): each margin is
    # cached under its own key (the kinds it weighs), so a cached route decision is never read as a count's (a cached decision loads no
    # model, so a stand-in for one whose fingerprint names it is enough here).
    from localcr.cache import key, open_cache

    llm = SimpleNamespace(spec=SimpleNamespace(fingerprint=lambda: "a model's fingerprint"))
    named = [(tables_in("|  | 2018 |\n|---|---|\n| Revenue | 5 |\n")[0], [])]
    question = "How many segments in 2018 were below $100 million?"
    message = route._kind_message(question, named)
    with open_cache("answers") as cache:
        cache.set(key("route", "a model's fingerprint", route.ROUTE_VERSION, route._ROUTE_INSTRUCTION, message,
                      *sorted(route.COMPUTED_KINDS)), 1.5, "route")
        cache.set(key("route", "a model's fingerprint", route.ROUTE_VERSION, route._ROUTE_INSTRUCTION, message,
                      "count"), -2.0, "route")
    assert route.arithmetic_margin(llm, question, named) == 1.5
    assert route.count_margin(llm, question, named) == -2.0


def figures_of(result):
    return [route.Figure(o.cell.shown, o.hit, o.cell.years, o.cell.percent) for o in result.operands]


def test_a_computed_answer_stands_only_where_each_operand_is_in_the_chunk_it_cites():
    _, cells = cells_for(SEGMENTS)
    result = compute.evaluated('cell("Automotive", "2019") - cell("Automotive", "2018")', cells)
    question = "What was the change in Automotive from 2018 to 2019?"
    assert route.check(question, result.value, "amount", figures_of(result), "million") == ""
    elsewhere = [route.Figure(f.shown, hit("Sensors 914 918"), f.years, f.percent) for f in figures_of(result)]
    assert route.check(question, result.value, "amount", elsewhere, "million") == "$ 5,686 is not in the source it cites"


@pytest.mark.parametrize("question, plan, why", [
    ("What was the change in Automotive from 2017 to 2018?", 'cell("Automotive", "2019") - cell("Automotive", "2018")',
     "$ 5,686 is of 2019, not a year the question names"),
    ("What was the percentage change in Automotive from 2018 to 2019?",
     'cell("Automotive", "2019") - cell("Automotive", "2018")', "the question asks for a percentage and the result is none"),
    ("What share of the total was Automotive in 2019, as a percentage of total sales?",
     'cell("Total", "2019") / cell("Sensors", "2019") * 100', "a share of a whole cannot be 1,471.33%"),
    ("What were sales per share in 2019?", 'cell("Total", "2019") - cell("Sensors", "2019")',
     "a figure per share or per unit is not in million"),
])
def test_a_computed_answer_of_another_period_kind_or_an_implausible_size_is_withdrawn(question, plan, why):
    _, cells = cells_for(SEGMENTS)
    result = compute.evaluated(plan, cells)
    assert route.check(question, result.value, result.kind, figures_of(result), result.scale) == why


def test_an_average_must_divide_the_sum_not_its_last_term():
    question = "What was the average Automotive sales in 2018 and 2019?"
    assert route.not_averaged(question, 'cell("A", "2019") + cell("A", "2018") / 2') == "the formula divides no sum"
    assert route.not_averaged(question, '(cell("A", "2019") + cell("A", "2018")) / 2') == ""


def test_a_range_of_years_names_the_years_inside_it():
    assert route.asked_years("What was the average rate over 2017-2019?") == {2017, 2018, 2019}
    assert route.asked_years("from FY18 to FY20") == {2018, 2020}


def test_a_pdf_s_headings_in_their_many_forms_name_the_columns():
    text = ("Reconciliation of profit to EBITDA is as follows:\n30 June 2019 30 June 2018 Change\n$’000 $’000 %\n"
            "Net profit/(loss) after tax (9,819) 6,639 (248%)\nAdd: finance costs 54,897 25,803 113%\n\n"
            "December 31\n2019 2 0 1 8\nU.S. $ in thousands\nOperating loss carryforward 73,260 57,768\n"
            "Valuation allowance (19,911) (15,916)\n\n($ in millions)\nFor the year ended December 31: 2019 2018 2017\n"
            "Cost $100 $82 $91\nSelling, general and administrative 453 361 384\n")
    first, second, third = tables_in(text)
    assert first.columns == ["30 June 2019", "30 June 2018", "Change"]
    profit = cells_of(first)[("Net profit/(loss) after tax", "Change")]
    assert (profit.value, profit.percent) == (-248.0, True)
    assert cells_of(first)[("Add: finance costs", "30 June 2018")].scale == "thousand"
    assert second.columns == ["2019", "2018"] and cells_of(second)[("Valuation allowance", "2018")].value == -15916
    assert third.columns == ["2019", "2018", "2017"] and "For the year ended December 31" not in dict(third.rows)
    assert cells_of(third)[("Cost", "2017")].amount == 91e6


def test_rows_of_one_label_under_two_groups_are_named_by_their_group():
    text = "|  | 2019 | 2018 |\n|---|---|---|\n| Current: |  |  |\n| State | 49 | 44 |\n| Deferred: |  |  |\n| State | 7 | 9 |\n"
    [table] = tables_in(text)
    assert [label for label, _ in table.rows] == ["Current: State", "Deferred: State"]


@pytest.mark.parametrize("question, written, oriented", [
    ("What was the change in Sensors from 2018 to 2019?", 'cell("Sensors", "2018") - cell("Sensors", "2019")',
     'cell("Sensors", "2019") - cell("Sensors", "2018")'),
    ("What was the percentage increase in Sensors between 2018 and 2019?",
     '(cell("Sensors", "2018") - cell("Sensors", "2019")) / cell("Sensors", "2019") * 100',
     '(cell("Sensors", "2019") - cell("Sensors", "2018")) / cell("Sensors", "2018") * 100'),
    ("What is the difference in Sensors between 2018 and 2019?", 'cell("Sensors", "2019") - cell("Sensors", "2018")',
     'cell("Sensors", "2018") - cell("Sensors", "2019")'),
    ("What is the difference between Sensors and Energy in 2019?", 'cell("Energy", "2019") - cell("Sensors", "2019")',
     'cell("Energy", "2019") - cell("Sensors", "2019")'),
    ("What was the change in Pumps from 2018 to 2019?", 'cell("Pumps", "2018") - cell("Pumps", "2019")',
     'cell("Pumps", "2018") - cell("Pumps", "2019")'),  # no such row: left for `evaluated` to refuse
])
def test_a_change_runs_from_the_earlier_period_and_a_difference_in_the_order_asked(question, written, oriented):
    _, cells = cells_for(SEGMENTS)
    assert compute.oriented(written, cells, question) == oriented


def test_a_plan_that_compares_a_figure_with_itself_or_gives_an_unasked_percentage_is_withdrawn():
    _, cells = cells_for(SEGMENTS)
    same = compute.evaluated('(cell("Sensors", "2019") - cell("Sensors", "2019")) / cell("Sensors", "2019") * 100', cells)
    assert route.plan_faults("What is the percentage change in Sensors?", same) == "the formula compares a figure with itself"
    unasked = compute.evaluated('(cell("Sensors", "2019") - cell("Sensors", "2018")) / cell("Sensors", "2018") * 100', cells)
    assert route.plan_faults("What is the increase in Sensors from 2018 to 2019?", unasked) == \
        "the question asks for no percentage"
    assert route.plan_faults("What is the growth rate of Sensors from 2018 to 2019?", unasked) == ""


def test_an_operand_of_a_column_with_no_head_is_of_no_period_the_question_can_name():
    text = "Receivables\nTrade 601 118\nOther receivables 4,223 4,082\n"
    [table] = tables_in(text)
    assert table.columns == ["column 2", "column 3"]
    _, cells = compute.shown_tables([(table, [hit(text)])])
    result = compute.evaluated('cell("Other receivables", "column 2") - cell("Other receivables", "column 3")', cells)
    operands = [route.Figure(o.cell.shown, o.hit, o.cell.years, o.cell.percent, False) for o in result.operands]
    assert route.check("What is the change in Other receivables from 2018 to 2019?", result.value, result.kind,
                       operands, "") == "the period of 4,223 is not known (its column has no head)"


def test_a_pdf_line_that_runs_several_rows_together_is_no_row():
    assert tables_in("2019 2018\nEmployee terminations costs $53.0 $39.2, Fiscal 2018: $2.0 1.5\nOther 3 4\n") == []


def test_a_figure_is_held_as_written_a_dash_as_a_dash():
    assert compute.holds("| Energy | 699 | — | 685 |", "—") and compute.holds("Land $ 1,949 $ 2,185", "$ 1,949")
    assert not compute.holds("Land $ 11,949", "1,949") and not compute.holds("Land 1,949.5", "1,949")


def test_a_pdf_table_goes_on_past_its_unlabelled_subtotals_and_long_group_headings():
    text = ("2019 2018\nNotes $'000 $'000\nCurrent\nTrade receivables 3,770 3,054\nAllowance for expected credit losses"
            " (135) (23)\n3,635 3,031\nOther receivables 4,223 4,082\nDerivative liabilities designated and effective "
            "as hedging instruments\nCross currency swaps 1,429 —\n")
    [table] = tables_in(text)
    assert table.columns == ["2019", "2018"] and table.cells()[0].scale == "thousand"
    assert cells_of(table)[("Other receivables", "2018")].value == 4082
    assert cells_of(table)[("Cross currency swaps", "2018")].value == 0


# -- tables as the readers write them, in the conventions of their documents' languages ------------------------------

def test_a_german_pdf_s_text_rows_read_in_its_convention_dots_grouping_and_commas_marking_decimals():
    from conftest import make_pdf
    from localcr.readers import pdf

    text = pdf.read(make_pdf([["Konzern-Gewinn- und Verlustrechnung (in Mio. EUR)", "2023 2022",
                               "Umsatzerlöse 45.210 41.876", "Materialaufwand (12.345,6) (11.002,1)",
                               "Sonstige Erträge 12,3- 7,5"]])).text
    [table] = tables_in(text, language="de")
    cells = cells_of(table)
    revenue = cells[("Umsatzerlöse", "2023")]
    assert (revenue.value, revenue.scale, revenue.unit) == (45210, "million", "€")
    assert cells[("Materialaufwand", "2022")].value == -11002.1
    assert cells[("Sonstige Erträge", "2023")].value == -12.3  # a trailing minus


def test_the_same_digits_read_by_the_table_s_other_cells_else_by_its_document_s_language():
    rows = "| | 2023 | 2022 |\n| Umsatz | 45.210 | 41.876 |\n"
    assert cells_of(tables_in(rows, language="de")[0])[("Umsatz", "2023")].value == 45210
    assert cells_of(tables_in(rows, language="en")[0])[("Umsatz", "2023")].value == 45.21
    settled = rows + "| Marge | 11,8 | 10,2 |\n"  # a decimal comma settles the table's convention, whatever the language
    assert cells_of(tables_in(settled, language="en")[0])[("Umsatz", "2023")].value == 45210


def test_a_french_web_page_s_table_reads_its_spaced_thousands_its_scale_and_its_missing_cell():
    from localcr.readers import html

    page = ("<html lang=fr><body><h1>Rapport annuel</h1><table><caption>Compte de résultat (en milliers d'euros)"
            "</caption><tr><th></th><th>2024</th><th>2023</th></tr>"
            "<tr><td>Chiffre d'affaires</td><td>12\u00a0345,6</td><td>11\u202f002,1</td></tr>"
            "<tr><td>Résultat net</td><td>1 234,5</td><td>n/a</td></tr></table></body></html>")
    [table] = tables_in(html.read(page.encode()).text, language="fr")
    cells = cells_of(table)
    sales = cells[("Chiffre d'affaires", "2024")]
    assert (sales.value, sales.scale, sales.unit) == (12345.6, "thousand", "€")
    assert cells[("Chiffre d'affaires", "2023")].value == 11002.1
    assert cells[("Résultat net", "2023")].missing and cells[("Résultat net", "2023")].amount is None


def test_a_docx_table_under_fiscal_year_heads_reads_a_percentage_row_by_its_label(tmp_path):
    import docx

    from conftest import saved
    from localcr.readers import office

    document = docx.Document()
    document.add_heading("Kennzahlen (in Tsd. €)", 1)
    table = document.add_table(rows=4, cols=3)
    for row, values in zip(table.rows, [["", "FY24", "FY23"], ["Umsatz", "1.234,5", "1.100,0"],
                                        ["EBIT-Marge (%)", "12,5", "11,8"], ["Mitarbeiter", "k. A.", "412"]]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    read = office.read_docx(saved(document))
    [found] = tables_in(read.text, "Kennzahlen (in Tsd. €)", language="de")
    cells = cells_of(found)
    assert found.columns == ["FY24", "FY23"] and cells[("Umsatz", "FY24")].years == {2024}
    assert (cells[("Umsatz", "FY24")].value, cells[("Umsatz", "FY24")].scale) == (1234.5, "thousand")
    margin = cells[("EBIT-Marge (%)", "FY23")]
    assert (margin.value, margin.percent, margin.scale) == (11.8, True, "")
    assert cells[("Mitarbeiter", "FY24")].missing


def test_a_japanese_workbook_s_sheet_reads_its_fiscal_years_and_its_scale():
    from made_files import xlsx
    from localcr.readers import sheets

    text = sheets.read_xlsx(xlsx({"連結損益計算書": [["（単位：百万円）", "2023年度", "2022年度"],
                                                  ["売上高", 152340, 148210], ["営業利益", 12050, 11870]]})).text
    [table] = tables_in(text, language="ja")
    sales = cells_of(table)[("売上高", "2023年度")]
    assert (sales.value, sales.scale, sales.unit, sales.years) == (152340, "million", "¥", {2023})


def test_an_odt_table_whose_rows_are_years_is_named_by_its_column():
    from odf.table import Table as OdfTable, TableCell, TableColumn, TableRow
    from odf.text import P

    from made_files import odf
    from localcr.readers import opendocument

    def build(document):
        table = OdfTable(name="Fünfjahresübersicht")
        table.addElement(TableColumn(numbercolumnsrepeated=3))
        for values in [["Jahr", "Umsatz", "Mitarbeiter"], ["2023", "45.210", "1.204"], ["2022", "41.876", "1.150"]]:
            row = TableRow()
            for value in values:
                cell = TableCell()
                cell.addElement(P(text=value))
                row.addElement(cell)
            table.addElement(row)
        document.text.addElement(table)

    text = opendocument.read_odt(odf("text", build)).text
    [table] = tables_in(text, language="de")
    assert cells_of(table)[("2023", "Umsatz")].value == 45210
    assert compute.named_tables("Wie stark wuchs der Umsatz von 2022 auf 2023?", [(table, [])])


@pytest.mark.parametrize("written, years", [
    ("FY24", {2024}), ("FY 2024", {2024}), ("fiscal 2024", {2024}), ("2023/24", {2023, 2024}), ("Q3 2024", {2024}),
    ("3Q24", {2024}), ("H1 23", {2023}), ("2023年度", {2023}), ("2023年3月期", {2023}), ("Geschäftsjahr 2023", {2023}),
    ("Revenue", set()),
])
def test_periods_in_the_spellings_reports_use(written, years):
    from localcr.answers.periods import years_of

    assert years_of(written) == years


def test_a_change_runs_from_the_earlier_quarter_or_fiscal_year():
    text = "| | Q2 2024 | Q3 2024 |\n| Revenue | 100 | 120 |\n"
    shown, cells = cells_for(text)
    written = 'cell("Revenue", "Q2 2024") - cell("Revenue", "Q3 2024")'
    assert compute.oriented(written, cells, "What was the change in revenue?") == \
        'cell("Revenue", "Q3 2024") - cell("Revenue", "Q2 2024")'


def test_a_change_of_percentages_is_in_percentage_points_and_a_missing_operand_computes_nothing():
    text = "| | 2024 | 2023 |\n| Margin (%) | 12.5 | 11.8 |\n| Staff | n/a | 120 |\n"
    _, cells = cells_for(text)
    formula = compute.in_points('cell("Margin (%)", "2024") - cell("Margin (%)", "2023") * 100', cells)
    result = compute.evaluated(formula, cells)
    assert (result.kind, compute.result_shown(result)) == ("points", "0.7 percentage points")
    plan = 'cell("Staff", "2024") - cell("Staff", "2023")'
    assert [c.shown for c in compute.missing_named(plan, cells)] == ["n/a"] and compute.evaluated(plan, cells) is None


def test_a_loss_in_parentheses_after_its_currency_stays_negative():
    [table] = tables_in("| | 2019 |\n| Net loss | $(52,982) |\n| Other | $ (5) |\n")
    cells = cells_of(table)
    assert cells[("Net loss", "2019")].value == -52982 and cells[("Other", "2019")].value == -5


def test_a_row_the_model_took_for_its_neighbour_is_put_right_and_a_ratio_s_divisor_is_left():
    text = ("| | 2019 | 2018 |\n| Total deferred tax assets | 500 | 450 |\n| Net deferred tax assets | 320 | 300 |\n"
            "| Revenue | 1,000 | 900 |\n| Cost of sales | 600 | 560 |\n")
    _, cells = cells_for(text)
    written = 'cell("Total deferred tax assets", "2019") - cell("Total deferred tax assets", "2018")'
    assert compute.better_rows(written, cells, "What was the change in net deferred tax assets?") == \
        'cell("Net deferred tax assets", "2019") - cell("Net deferred tax assets", "2018")'
    ratio = 'cell("Cost of sales", "2019") / cell("Revenue", "2019") * 100'
    assert compute.better_rows(ratio, cells, "What was cost of sales as a percentage of revenue in 2019?") == ratio


def test_a_year_spanning_two_quarters_heads_each_quarter_s_column_with_both():
    from localcr.readers import html

    page = ("<table><caption>Revenue by segment (Millions of dollars)</caption><tr><th></th><th colspan=2>2024</th>"
            "<th colspan=2>2023</th></tr><tr><th></th><th>Q1</th><th>Q2</th><th>Q1</th><th>Q2</th></tr>"
            "<tr><td>Cloud</td><td>1,234.5</td><td>1,310.2</td><td>1,102.7</td><td>1,150.9</td></tr></table>")
    [table] = tables_in(html.read(page.encode()).text)
    assert table.columns == ["2024 Q1", "2024 Q2", "2023 Q1", "2023 Q2"]
    cloud = cells_of(table)[("Cloud", "2023 Q2")]
    assert (cloud.value, cloud.scale, cloud.unit) == (1150.9, "million", "$")


def test_a_percentage_change_of_a_margin_asked_in_points_is_their_difference():
    _, cells = cells_for("| | 2023 | 2022 |\n| EBIT margin (%) | 10.0 | 8.8 |\n")
    written = '((cell("EBIT margin (%)", "2023") - cell("EBIT margin (%)", "2022")) / cell("EBIT margin (%)", "2022")) * 100'
    assert compute.in_points(written, cells, points_asked=True) == \
        'cell("EBIT margin (%)", "2023") - cell("EBIT margin (%)", "2022")'
    assert compute.in_points(written, cells) == written  # a percentage change of a margin, where one is asked


def test_a_table_whose_rows_are_years_is_named_by_a_column_whatever_its_unit():
    [table] = tables_in("| Year | Revenue ($m) | Operating margin (%) |\n| 2022 | 1,402.1 | 9.0 |\n| 2023 | 1,477.9 | 9.5 |\n")
    assert compute.named_tables("By how much did revenue grow from 2022 to 2023?", [(table, [])])


def test_a_stray_hundred_after_a_difference_or_an_unasked_percentage_change_is_mended():
    _, cells = cells_for("| | 2023 | 2022 |\n| Het Baken | 1.236 | 1.187 |\n")
    difference = '(cell("Het Baken", "2023") - cell("Het Baken", "2022")) * 100'
    assert compute.without_stray_hundred(difference, False) == '(cell("Het Baken", "2023") - cell("Het Baken", "2022"))'
    change = '((cell("Het Baken", "2023") - cell("Het Baken", "2022")) / cell("Het Baken", "2022")) * 100'
    assert compute.without_stray_hundred(change, False) == 'cell("Het Baken", "2023") - cell("Het Baken", "2022")'
    assert compute.without_stray_hundred(change, True) == change


@pytest.mark.parametrize("text, shown", [("Umsatz | 48.907,6 | 45.210", "48.907,6"), ("CHF 1'234.5", "1'234.5"),
                                         ("Cotisations 12\u202f345,6", "12 345,6")])
def test_a_figure_is_held_by_its_chunk_in_its_own_convention(text, shown):
    assert compute.holds(text, shown) and not compute.holds(text.replace("4", "9"), shown)


def test_a_count_of_the_years_a_figure_exceeds_a_value_is_comparisons_added_up():
    from localcr.llm import load_grammar

    shown, cells = cells_for(SEGMENTS)
    grammar = compute.grammar_of(cells)
    load_grammar(grammar)
    assert "root ::= sum" in grammar and "| tally" in grammar.splitlines()[0]
    plan = ('(cell("Automotive", "2019") > 5500) + (cell("Automotive", "2018") > 5500) + '
            '(cell("Automotive", "2017") > 5500)')
    result = compute.evaluated(plan, cells)
    assert (result.kind, compute.result_shown(result)) == ("count", "2")
    assert compute.formula_shown(result) == "(5,686 > 5500) + (6,092 > 5500) + (5,228 > 5500)"
    question = "How many years did the percentage of Automotive sales exceed 5,500?"  # "percentage": still a count
    assert route.check(question, result.value, result.kind, figures_of(result), result.scale) == ""
    below = compute.evaluated('(cell("Sensors", "2017") <= 0) + (cell("Sensors", "2018") <= 0)', cells)
    assert below.value == 1  # (814) is negative


@pytest.mark.parametrize("question, written, mended", [
    ("How many years did Automotive exceed $5,500 million?", "> 5500000000", "> 5500"),
    ("How many years did Automotive exceed $5.5 billion?", "> 55", "> 5500"),
    ("How many years did Automotive exceed 5,500?", "> 55", "> 55"),  # no scale stated: as written
    ("From 2017 to 2019, how many years did Automotive exceed $5,500 million?", "> 5", "> 5500"),
])
def test_a_count_plan_compares_in_the_table_s_units_the_question_s_figure_with_its_scale(question, written, mended):
    _, cells = cells_for(SEGMENTS)
    plan = f'(cell("Automotive", "2019") {written}) + (cell("Automotive", "2018") {written})'
    assert compute.tally_in_units(plan, cells, question) == plan.replace(written, mended)


def test_over_a_table_of_no_stated_scale_a_count_plan_compares_with_the_question_s_figure_as_stated():
    _, cells = cells_for(SEGMENTS.replace("(in millions)", ""))
    plan = '(cell("Automotive", "2019") > 5500000) + (cell("Automotive", "2018") > 5500000)'
    assert compute.tally_in_units(plan, cells, "How many years did Automotive exceed $5,500 thousand?") == \
        plan.replace("5500000", "5500")


INVESTMENTS = """|  | 2019 | 2018 |
|---|---|---|
| Equity securities |  |  |
| Canadian | 1,017 | 844 |
| Foreign | 4,534 | 3,770 |
| Alternative investments |  |  |
| Private equities | 2,119 | 1,804 |
| Hedge funds | 1,001 | 1,014 |
| Real estate | 948 | 758 |
| Total | 9,619 | 8,190 |
"""


def test_a_table_s_headings_and_totals_hold_the_rows_they_head_or_add_up():
    [table] = tables_in(INVESTMENTS)
    assert table.parts() == {"Total": ["Canadian", "Foreign", "Private equities", "Hedge funds", "Real estate"],
                             "Equity securities": ["Canadian", "Foreign"],
                             "Alternative investments": ["Private equities", "Hedge funds", "Real estate"]}
    question = "How many components are there under alternative investments?"
    assert route.named_part(question, [(table, [])])[:2] == ("Alternative investments",
                                                              ["Private equities", "Hedge funds", "Real estate"])
    assert route.named_part("How many equity securities are there?", [(table, [])])[0] == "Equity securities"
    assert route.named_part("What were foreign equity securities in 2019?", [(table, [])]) is None  # Foreign's figure
    assert route.named_part("What was revenue in 2019?", [(table, [])]) is None
    assert route.named_part("How many securities are there?", [(table, [])]) is None  # half of "Equity securities"
    # A question that names a period asks for a figure of it, and a plan that counts comes first: no model is asked
    assert route.counted_part(None, "How many alternative investments were there in 2019?", [(table, [])]) is None
    tally = '(cell("Hedge funds", "2019") > 1000) + (cell("Hedge funds", "2018") > 1000)'
    assert route.counted_part(None, "How many times did hedge funds exceed 1,000?", [(table, [])], tally) is None
    sheet = [(table, [SimpleNamespace(kind="csv")])]  # a sheet's rows are records, which SQL counts
    assert route.part_asked(question, sheet) is None and route.part_asked(question, [(table, [])])
    [cut] = tables_in(INVESTMENTS.split("| Total")[0])  # a chunk that ends inside a group: its rows may go on
    assert cut.parts() == {"Equity securities": ["Canadian", "Foreign"]}


def test_a_question_naming_a_row_of_a_total_asks_for_that_row_s_figure_not_how_many_rows_it_adds():
    """A medal table pasted into a page (no sheet's, so no SQL): its "Total" row adds up the nations, and "how many
    total medals" names it, but a question naming a nation too asks for that nation's figure; in German too."""
    [medals] = tables_in("| Nation | Gold | Silver | Total |\n|---|---|---|---|\n| Norway | 5 | 2 | 7 |\n"
                         "| Finland | 4 | 3 | 7 |\n| Sweden | 3 | 7 | 10 |\n| Total | 12 | 12 | 24 |\n")
    assert medals.parts() == {"Total": ["Norway", "Finland", "Sweden"]}
    assert route.part_asked("How many total medals did Norway win?", [(medals, [])]) is None
    assert route.part_asked("How many nations are in the total?", [(medals, [])])[0] == "Total"
    [german] = tables_in("| Land | Gold | Gesamt |\n|---|---|---|\n| Norwegen | 5 | 7 |\n| Finnland | 4 | 7 |\n"
                         "| Gesamt | 9 | 14 |\n")
    assert route.part_asked("Wie viele Medaillen hat Norwegen gesamt gewonnen?", [(german, [])]) is None
    assert route.part_asked("Wie viele Länder zählt Gesamt?", [(german, [])])[0] == "Gesamt"
    [ranked] = tables_in("| Rank | Nation | Gold | Total |\n|---|---|---|---|\n| 1 | Norway (NOR) | 5 | 7 |\n"
                         "| 2 | Finland (FIN) | 4 | 7 |\n| Total | Total | 9 | 14 |\n")
    assert ranked.parts() == {"Total": ["1", "2"]}  # rows by rank: the nations are no figures, so not read
    assert route.part_asked("How many total medals did Norway win?", [(ranked, [])]) is None


def test_a_total_adds_up_within_its_cells_rounding_and_a_column_of_percentages_is_no_sum():
    text = ("|  | 2019 | 2018 | Change (%) |\n|---|---|---|---|\n| Operating | 5,368 | 5,955 | -9.9 |\n"
            "| Investing | (2,329) | (1,951) | 19.4 |\n| Financing | (3,056) | (4,009) | -23.8 |\n"
            "| Net change in cash | (16) | (5) | 248.9 |\n| Cash at end of year | 513 | 525 | -2.3 |\n")
    [table] = tables_in(text)
    assert table.parts() == {"Net change in cash": ["Operating", "Investing", "Financing"]}  # -17 for (16): rounding


def test_a_german_table_s_total_adds_up_in_its_own_convention():
    text = ("| Posten | 2023 | 2022 |\n|---|---|---|\n| Personal | 1.204,5 | 1.100,0 |\n| Miete | 300,5 | 290,0 |\n"
            "| Reisen | 95,0 | 80,0 |\n| Betriebskosten gesamt | 1.600,0 | 1.470,0 |\n")
    [table] = tables_in(text, language="de")
    assert table.parts() == {"Betriebskosten gesamt": ["Personal", "Miete", "Reisen"]}


def test_a_japanese_or_chinese_table_s_heading_and_total_are_named_by_their_character_pairs():
    """CJK names have no spaces: a heading is named where the question holds each of its character pairs
    (`lexical.tokenize`), so "営業費用合計" (the total) is named only by a question that says 合計 too."""
    [japanese] = tables_in("| 項目 | 2023年度 | 2022年度 |\n|---|---|---|\n| 営業費用 |  |  |\n| 人件費 | 1,204 | 1,100 |\n"
                           "| 賃借料 | 300 | 290 |\n| 旅費交通費 | 95 | 80 |\n| 営業費用合計 | 1,599 | 1,470 |\n"
                           "| 営業利益 | 500 | 400 |\n", language="ja")
    rows = ["人件費", "賃借料", "旅費交通費"]
    assert japanese.parts() == {"営業費用合計": rows, "営業費用": rows}
    assert route.named_part("営業費用にはいくつの項目がありますか？", [(japanese, [])])[:2] == ("営業費用", rows)
    assert route.named_part("営業費用合計は何項目から成りますか？", [(japanese, [])])[0] == "営業費用合計"
    assert route.named_part("人件費の営業費用はいくらですか？", [(japanese, [])]) is None  # a row's figure
    assert route.named_part("費用は何項目ですか？", [(japanese, [])]) is None  # half of 営業費用
    [chinese] = tables_in("| 项目 | 2023年 | 2022年 |\n|---|---|---|\n| 员工薪酬 | 820 | 790 |\n| 租金 | 210 | 200 |\n"
                          "| 营业费用合计 | 1,030 | 990 |\n", language="zh")
    assert chinese.parts() == {"营业费用合计": ["员工薪酬", "租金"]}
    assert route.named_part("营业费用合计包括几个项目？", [(chinese, [])])[0] == "营业费用合计"
    assert route.named_part("租金的营业费用合计是多少？", [(chinese, [])]) is None
