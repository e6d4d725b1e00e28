"""`localcr ask` computes what a table answers by arithmetic: the bundled Qwen2.5-Coder-1.5B writes the plan over
the cells of tables the tests write (Markdown, an IFRS statement's dated heads in €m, a spreadsheet), Python
evaluates it, and the answer shows the formula and cites each operand; a question over prose goes to the reader
with no plan, `--no-compute` never computes, and a computed answer whose operand its cited chunk does not hold is
withdrawn. One model is loaded for the module; each plan costs seconds."""
from __future__ import annotations

import json

import pytest

from conftest import run

pytestmark = pytest.mark.model

SEGMENTS = """# Harbour Instruments annual review

Net sales by segment were as follows:

|  | 2019 | 2018 |
|---|---|---|
|  | (in millions) |  |
| Sensors | $ 1,150 | $ 1,000 |
| Pumps | 640 | 700 |
| Total | $ 1,790 | $ 1,700 |

Sensors grew on demand from water utilities.
"""
GROUP = """# Nordlys Group plc consolidated statement of profit or loss

| €m | 31 December 2019 | 31 December 2018 |
|---|---|---|
| Revenue | 1,204.5 | 1,100.0 |
| Operating profit | 93.8 | 16.6 |
"""
REGIONS = "Region,Sales,Costs\nNorth,120,90\nSouth,80,50\n"
FUNDS = """# Harbour Pension Plan

Plan assets at fair value:

| Asset class | 2019 | 2018 |
|---|---|---|
| Fixed income |  |  |
| Government bonds | 3,210 | 3,005 |
| Corporate bonds | 1,480 | 1,390 |
| Alternative investments |  |  |
| Private equities | 705 | 640 |
| Hedge funds | 412 | 398 |
| Infrastructure | 268 | 221 |
| Total | 6,075 | 5,654 |
"""
KOSTEN = """# Stadtwerke Nordheim: Jahresbericht 2023

Die Betriebskosten setzten sich wie folgt zusammen (in Tausend Euro):

| Posten | 2023 | 2022 |
|---|---|---|
| Personal | 1.204,5 | 1.100,0 |
| Miete | 300,5 | 290,0 |
| Reisen | 95,0 | 80,0 |
| Betriebskosten gesamt | 1.600,0 | 1.470,0 |
"""
WEATHER = """# Oslo weather note

The average temperature in Oslo in 2019 was 6.8 °C, warmer than the 6.1 °C of 2018. Snow lay for 41 days.
"""
PERCENTAGE_CHANGE = "What was the percentage change in Sensors net sales from 2018 to 2019?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("computed")
    docs = root / "docs"
    docs.mkdir()
    for name, text in (("segments.md", SEGMENTS), ("group.md", GROUP), ("regions.csv", REGIONS),
                       ("funds.md", FUNDS), ("kosten.md", KOSTEN),
                       ("weather.md", WEATHER)):
        (docs / name).write_text(text)
    run("index", docs, "--index", root / "index", "--contexts", "structural", "-q")
    return root


@pytest.fixture(scope="module")
def index(corpus):
    from localcr.search import Index

    return Index(corpus / "index")


def operand_sentences(answer) -> dict[str, str]:
    """Each operand's sentence ("Sensors, 2019: $ 1,150 (in millions).") by its row and column, with the path of
    the source it cites."""
    return {s.text.split(":")[0]: answer.sources[s.citations[0] - 1].hit.path for s in answer.checked.sentences[1:]}


def test_a_percentage_change_is_computed_from_a_markdown_table_with_both_operands_cited(index, answerer):
    answer = index.ask(PERCENTAGE_CHANGE, answerer=answerer, glob="*segments.md")
    assert "computed in Python from 2 figures" in answer.note, answer.to_dict()
    assert answer.text.startswith("15%, computed as (1,150 - 1,000) / 1,000 × 100 = 15% [1]."), answer.text
    cited = operand_sentences(answer)
    assert set(cited) == {"Sensors, 2019", "Sensors, 2018"} and all(p.endswith("segments.md") for p in cited.values())
    assert answer.unsupported == [] and not answer.refused


def test_dated_heads_and_a_euro_scale_give_the_change_in_millions_of_euros(index, answerer):
    answer = index.ask("What was the change in operating profit from 2018 to 2019?", answerer=answerer,
                       glob="*group.md")
    assert "computed in Python" in answer.note, answer.to_dict()
    assert answer.text.startswith("€77.2 million, computed as 93.8 - 16.6"), answer.text
    assert set(operand_sentences(answer)) == {"Operating profit, 31 December 2019", "Operating profit, 31 December 2018"}


def test_a_ratio_is_computed_from_a_spreadsheet_s_rows(index, answerer):
    answer = index.ask("What is the ratio of sales in the North region to sales in the South region?",
                       answerer=answerer, glob="*regions.csv")
    assert "computed in Python" in answer.note, answer.to_dict()
    assert answer.text.startswith("1.5, computed as ") and "120 / 80" in answer.text, answer.text


def test_a_question_over_prose_with_a_year_is_read_with_no_plan(index, answerer, monkeypatch):
    from localcr.answers import compute, figures

    plans = []
    for module in (compute, figures):  # neither kind of plan is made: the note holds no table
        planned = module.plan
        monkeypatch.setattr(module, "plan", lambda *args, planned=planned, **kwargs: plans.append(args) or
                            planned(*args, **kwargs))
    answer = index.ask("What was the average temperature in Oslo in 2019?", answerer=answerer, glob="*weather.md")
    assert plans == [] and "computed" not in answer.note, answer.to_dict()
    assert "6.8" in answer.text and not answer.refused


def test_a_computed_answer_whose_operand_its_cited_chunk_does_not_hold_is_withdrawn(index, answerer, monkeypatch):
    from localcr.answers import compute

    weather = index.document_hits(next(d for d in index.store.doc_ids() if d.endswith("weather.md")))[0]
    monkeypatch.setattr(compute, "_holder", lambda chunks, label, cell: weather)  # a reader that cites the wrong chunk
    answer = index.ask(PERCENTAGE_CHANGE, answerer=answerer, glob="*segments.md", fresh=True)
    assert "computed in Python" not in answer.note, answer.to_dict()
    assert "a computed answer was withdrawn ($ 1,150 is not in the source it cites)" in answer.note


def test_no_compute_has_the_reader_answer_on_the_command_line(corpus, index, answerer):
    answer = json.loads(run("ask", PERCENTAGE_CHANGE, "--index", corpus / "index", "--glob", "*segments.md",
                            "--no-compute", "--json"))
    assert "computed" not in answer["note"] and answer["answer"], answer


@pytest.mark.parametrize("question, glob, counted", [
    ("How many components are there under alternative investments?", "*funds.md",
     "3: Private equities, Hedge funds and Infrastructure, the rows under Alternative investments [1]."),
    ("Aus wie vielen Posten setzen sich die Betriebskosten gesamt zusammen?", "*kosten.md",
     "3: Personal, Miete and Reisen, the rows under Betriebskosten gesamt [1]."),
])
def test_how_many_rows_a_heading_or_a_total_holds_is_counted_and_each_named(index, answerer, question, glob, counted):
    answer = index.ask(question, answerer=answerer, glob=glob)
    assert answer.text == counted and answer.note.startswith("counted in Python"), answer.to_dict()


def test_a_total_s_own_figure_is_no_count_of_its_rows(index, answerer):
    answer = index.ask("What were the total plan assets in 2019?", answerer=answerer, glob="*funds.md")
    assert "counted in Python" not in answer.note and "6,075" in answer.text, answer.to_dict()
