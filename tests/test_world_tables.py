"""`localcr ask` computes over tables as people have them: a German report's dot-thousands "in Mio. €", a Japanese
workbook's fiscal years, a web page's table, a DOCX's percentage row, a sheet of depots; it reads what a cell or a
sentence states and what asks why, and computes nothing from a cell that says "n/a". The bundled 1.5B decides the
route and writes the plan; the documents are written in their real formats by the tests. One model for the module."""
from __future__ import annotations

import re

import pytest

from conftest import make_pdf, run, saved
from made_files import xlsx

pytestmark = pytest.mark.model

DEPOTS = "Depot,Trains serviced,Staff\nKiel,412,96\nHamburg,1210,250\nBremen,530,120\n"
WEB_PAGE = """<html><body><h1>Harbour Ferries annual statistics</h1>
<table><caption>Passengers carried (in thousands)</caption>
<tr><th></th><th>2024</th><th>2023</th></tr>
<tr><td>North route</td><td>1,204</td><td>1,100</td></tr>
<tr><td>Island route</td><td>n/a</td><td>320</td></tr>
<tr><td>Punctuality (%)</td><td>91.5</td><td>88.0</td></tr>
</table>
<p>The North route grew after a second ferry entered service in spring, which led to the increase in passengers.</p>
</body></html>"""


def german_report() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Nordwind Energie AG Geschäftsbericht 2023", 1)
    document.add_paragraph("Konzern-Gewinn- und Verlustrechnung (in Mio. €)")
    table = document.add_table(rows=4, cols=3)
    for row, values in zip(table.rows, [["", "2023", "2022"], ["Umsatzerlöse", "45.210", "41.876"],
                                        ["Materialaufwand", "(21.340)", "(19.870)"], ["EBIT-Marge (%)", "12,5", "11,8"]]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    document.add_paragraph("Der Umsatz stieg dank höherer Strompreise.")
    return saved(document)


def japanese_workbook() -> bytes:
    return xlsx({"連結損益計算書": [["（単位：百万円）", "2023年度", "2022年度"], ["売上高", 152340, 148210],
                                  ["営業利益", 12050, 11870]]})


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from localcr.search import Index

    root = tmp_path_factory.mktemp("world")
    docs = root / "docs"
    docs.mkdir()
    (docs / "depots.csv").write_text(DEPOTS)
    (docs / "ferries.html").write_text(WEB_PAGE)
    (docs / "nordwind.docx").write_bytes(german_report())
    (docs / "kessel.pdf").write_bytes(make_pdf([["Kessel Maschinenbau GmbH", "Bilanzkennzahlen (in Tsd. EUR)",
                                                 "2023 2022", "Eigenkapital 12.450 11.980",
                                                 "Bilanzsumme 30.210 29.870"]]))
    (docs / "sakura.xlsx").write_bytes(japanese_workbook())
    run("index", docs, "--index", root / "index", "--contexts", "structural", "-q")
    return Index(root / "index")


def computed(answer) -> bool:
    return answer.note.startswith("computed in Python")


def first_number(text: str) -> float:
    return float(re.search(r"-?\d[\d,]*(?:\.\d+)?", text)[0].replace(",", ""))


def test_a_difference_over_a_german_table_s_dot_thousands_in_millions_of_euros(index, answerer):
    answer = index.ask("What was the difference between Umsatzerlöse in 2023 and 2022?", answerer=answerer,
                       glob="*nordwind.docx")
    assert computed(answer), answer.note
    assert abs(first_number(answer.text) - 3334) <= 33 and "million" in answer.text


def test_a_percentage_change_asked_in_german(index, answerer):
    answer = index.ask("Um wie viel Prozent stiegen die Umsatzerlöse von 2022 auf 2023?", answerer=answerer,
                       glob="*nordwind.docx")
    assert computed(answer), answer.note
    assert abs(first_number(answer.text) - 7.96) < 0.1 and "%" in answer.text


def test_a_percentage_change_asked_in_japanese(index, answerer):
    answer = index.ask("売上高は2022年度から2023年度に何％増加しましたか？", answerer=answerer, glob="*sakura.xlsx")
    assert computed(answer), answer.note
    assert abs(first_number(answer.text) - 2.79) < 0.05


def test_a_change_of_a_percentage_row_is_in_percentage_points(index, answerer):
    answer = index.ask("By how many percentage points did the EBIT-Marge change from 2022 to 2023?",
                       answerer=answerer, glob="*nordwind.docx")
    assert computed(answer), answer.note
    assert answer.text.startswith("0.7 percentage points")


def test_a_cell_that_says_n_a_is_no_operand(index, answerer):
    answer = index.ask("What was the change in Island route passengers from 2023 to 2024?", answerer=answerer,
                       glob="*ferries.html")
    assert not computed(answer)
    assert "n/a" in answer.note and "320" not in answer.text.split("computed")[0].replace("-320", "")


def test_what_led_to_an_increase_is_read_not_computed(index, answerer):
    answer = index.ask("What led to the increase in North route passengers?", answerer=answerer, glob="*ferries.html")
    assert not computed(answer) and "computed answer was withdrawn" not in answer.note
    assert "ferry" in answer.text.lower()


def test_a_ratio_over_two_sheet_columns_asked_with_per(index, answerer):
    answer = index.ask("How many trains were serviced per member of staff at the Kiel depot?", answerer=answerer,
                       glob="*depots.csv")
    assert computed(answer), answer.note
    assert abs(first_number(answer.text) - 412 / 96) < 0.01


def test_a_german_pdf_s_text_rows_give_a_ratio_in_thousands_of_euros(index, answerer):
    answer = index.ask("What was the ratio of Eigenkapital to Bilanzsumme in 2023?", answerer=answerer,
                       glob="*kessel.pdf")
    assert computed(answer), answer.note
    ratio = 12450 / 30210
    assert abs(first_number(answer.text) - ratio) < 0.01 or abs(first_number(answer.text) - 100 * ratio) < 1
