"""Navigation by the outline (localcr.navigation): the outline read from chunks' structural contexts, the parsing of
the model's reply, and, with the bundled LLM, a question whose answer sits in a section it names only indirectly
("capital expenditure": the cash-flow statement's "purchases of property, plant and equipment")."""
from __future__ import annotations

import json

import pytest

from conftest import run
from localcr.filters import Filter, exact_glob
from localcr.navigation import Entry, document_head, named, outline, render_outline, rows_of, section_path


def record(row: int, context: str, start: int = 0, pages: list[int] | None = None) -> dict:
    return {"row": row, "context": context, "start": start, "pages": pages or []}


def test_a_section_path_keeps_heading_labels_and_leaves_out_a_lead():
    assert section_path("File a.txt. Acme, Annual report, 2023. Section: PART II > Item 7. Management's Discussion.") == \
        ("PART II", "Item 7. Management's Discussion")
    assert section_path("File a.md. Guide. Section: Setup > Install. The installer needs Python 3. It asks nothing.") == \
        ("Setup", "Install")
    assert section_path("File a.md. Guide. Section: Note 12. Leases.") == ("Note 12. Leases",)
    assert document_head("File a.txt. Acme, Annual report, 2023. Section: PART II > Item 7.") == "Acme, Annual report, 2023."
    assert document_head("File a.txt. Section: PART IV.") == "" and document_head("In class Parser.") == ""
    titled = "File a.txt. Section: ITEM 8 > Walmart Inc. — Consolidated Statements of Cash Flows, Fiscal Years Ended."
    assert section_path(titled) == ("ITEM 8", "Walmart Inc. — Consolidated Statements of Cash Flows, Fiscal Years Ended")
    assert section_path("File a.py. In class Parser.") == ()


def test_the_outline_is_a_tree_of_sections_with_their_rows_and_pages():
    records = [record(0, "File r.pdf."), record(1, "Section: PART I > Item 1. Business.", 100, [0, 90, 400]),
               record(2, "Section: PART I > Item 1. Business > Segments.", 500, [0, 90, 400]),
               record(3, "Section: PART I > Item 1. Business.", 700, [0, 90, 400]),
               record(4, "Section: PART II > Item 8. Financial Statements.", 900, [0, 90, 400])]
    entries = outline(records)
    assert [e.path[-1] for e in entries] == ["PART I", "Item 1. Business", "Segments", "PART II", "Item 8. Financial Statements"]
    assert entries[1].rows == [1, 3] and entries[2].rows == [2] and entries[0].rows == []
    assert rows_of(entries, [1]) == [1, 3, 2]  # a section takes the sections under it
    assert rows_of(entries, [4, 1]) == [4, 1, 3, 2]
    text = render_outline("File r.pdf.", entries)
    assert text.splitlines()[0] == "Sections of File r.pdf."
    assert "  - Item 1. Business (pages 2-3)" in text and "    - Segments (page 3)" in text


def test_a_title_above_every_section_is_left_out():
    records = [record(0, "Section: Report 2023."), record(1, "Section: Report 2023 > Risks."),
               record(2, "Section: Report 2023 > Cash flows.")]
    assert [e.path for e in outline(records)] == [("Risks",), ("Cash flows",)]


def test_a_long_heading_is_cut_in_the_outline():
    entry = Entry(("Consolidated Statements of Cash Flows Acme Corporation and Subsidiaries Year ended December 31 "
                   "2023 2022 2021 in millions except per share amounts",))
    assert entry.title.endswith("...") and len(entry.title.split()) == 15


def test_the_reply_names_entries_by_their_title():
    entries = [Entry(("Item 7. Management's Discussion",)), Entry(("Item 7. Management's Discussion", "Liquidity")),
               Entry(("Item 8", "Consolidated Statements of Cash Flows Acme Corporation and Subsidiaries Year ended "
                      "December 31 2023 2022 2021 in millions",)), Entry(("Item 8", "Income Taxes")),
               Entry(("Notes", "Income Taxes"))]
    assert named("Liquidity", entries) == [1]
    assert named("- income taxes (pages 80-82)", entries) == [3, 4]  # every entry of that title
    assert named(entries[2].title, entries) == [2]  # as the outline shows it, cut
    assert named("Consolidated Statements of Cash Flows", entries) == [2]
    assert named("Cash", entries) == [] and named("", entries) == [] and named("Segment results", entries) == []


def test_an_exact_glob_passes_one_document_whatever_its_id_holds():
    odd = "reports/[draft] *q1?{a}.md"
    wanted = Filter((exact_glob(odd),))
    assert wanted.passes_path(odd, "/abs/" + odd)
    assert not wanted.passes_path("reports/[draft] xq1!{a}.md", "/abs/reports/[draft] xq1!{a}.md")
    assert not wanted.passes_path("reports/d *q1?{a}.md", "/abs/reports/d *q1?{a}.md")


SECTIONS = {
    "Chair's letter": "Halvorsen Marine had a strong year. Orders for ferries rose and the yard in Ulsteinvik ran at "
    "full capacity through the winter. The board thanks every employee for the care they took with each hull. Two "
    "new customers in Chile and Canada signed framework agreements, and the first electric ferry for the Oslofjord "
    "left the yard in May. We enter the new year with the largest order book in the history of the company.",
    "Dividend policy": "Our dividend policy puts the balance sheet first: capital is returned to shareholders only "
    "when the order book is funded. The board proposes a dividend of NOK 4 a share. The board reviews the policy "
    "every quarter against the order book, the covenants of our loans and the cash needed for working capital "
    "through each hull's build.",
    "Research expenditure": "Expenditure on research went to hybrid propulsion and battery packs for coastal "
    "ferries. Research expenditure is expensed as incurred; development costs meet the criteria for capitalisation "
    "only once a design is approved. The research team grew to forty engineers, and two patents on battery cooling "
    "were granted in Norway and filed in the European Union during the year.",
    "Risk factors": "Steel prices, the krone's exchange rate and the timing of customer payments are the main risks "
    "to margins. A yard that builds few hulls a year depends on each contract: a delayed payment or a cancelled "
    "order weighs on the year's result. Suppliers of engines and batteries are few, and their delivery times set "
    "the pace of each build.",
    "Consolidated statement of cash flows": "Net cash from operating activities 1,204. Purchases of property, plant "
    "and equipment (412). Proceeds from sale of equipment 18. Net cash used in investing activities (394). "
    "Dividends paid (180). Repayment of borrowings (71). Net cash used in financing activities (251). Net increase "
    "in cash 559. Cash at the beginning of the year 1,032. Cash at the end of the year 1,591. All amounts in NOK "
    "million.",
    "Employees": "At year end the group employed 1,310 people in Norway and Poland, of whom 22 percent were women. "
    "Sick leave fell to 4.1 percent. Every new welder follows a twelve-week course at the yard's own school, and "
    "thirty apprentices joined the company from the vocational schools of the region.",
}
def test_a_document_without_an_outline_is_searched_as_without_navigation_and_says_so(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "memo.txt").write_text("The ferry order was signed in May. The hull is due in March.\n")
    run("index", tmp_path / "docs", "--index", tmp_path / "index", "--contexts", "structural", "-q")
    plain = run("search", "ferry order", "--index", tmp_path / "index", "--json")
    shown = run("search", "ferry order", "--index", tmp_path / "index", "--json", "--navigate")  # no model is loaded
    assert "localcr: not navigated: docs/memo.txt has no outline to read (its chunks' contexts name no sections)" in shown
    assert plain.strip() in shown


REPORT = "# Halvorsen Marine ASA annual report 2023\n\n" + "".join(f"## {title}\n\n{body}\n\n" for title, body in SECTIONS.items())
QUESTION = "How much did Halvorsen Marine spend on capital expenditure in 2023?"


@pytest.fixture(scope="module")
def report_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("navigate")
    (root / "docs").mkdir()
    (root / "docs" / "annual-report-2023.md").write_text(REPORT)
    # chunks of a section each, as a long report's are
    run("index", root / "docs", "--index", root / "index", "--contexts", "structural", "--chunk-tokens", "110", "-q")
    return root / "index"


@pytest.mark.model
def test_navigation_finds_the_cash_flow_statement_first_and_is_cached(report_index):
    from localcr.navigation import load_navigator
    from localcr.search import Index

    index = Index(report_index)
    plain = index.search(QUESTION, k=3, prior=None)  # without the statement prior (localcr.statements), which
    assert "Purchases of property" not in plain[0].text  # lifts it too: the words of the question lead elsewhere
    navigator = load_navigator(index.registry)
    try:
        hits = index.search(QUESTION, k=3, navigate=navigator)
        assert "Purchases of property" in hits[0].text, [h.context for h in hits]
        assert hits[0].ranks["navigated"] == 1 and navigator.written == 1 and navigator.outlines_evaluated == 1
    finally:
        navigator.close()
    again = load_navigator(index.registry)  # another process: the sections named come from the cache
    assert "Purchases of property" in index.search(QUESTION, k=3, navigate=again)[0].text
    assert again.written == 0 and again._runner is None

    shown = [json.loads(line) for line in run("search", QUESTION, "--index", report_index, "--navigate", "-k", "2",
                                                  "--json").splitlines()]
    assert "Purchases of property" in shown[0]["text"] and shown[0]["ranks"]["navigated"] == 1
