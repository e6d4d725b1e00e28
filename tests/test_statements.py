"""The statement prior (localcr.statements): which statements a question asks for, which statement a chunk's section
is, and a filing's table row found by a question naming its line item and year (an index with the bundled MiniLM)."""
from __future__ import annotations

import json

import pytest

from localcr.statements import asked, row_labels, statement_of

FILLER = [  # prose a filing repeats in every section, using the question's words but holding none of its figures
    "Capital expenditure plans for the coming year remain under review by management and the board.",
    "Net revenue increased compared with the prior year, driven by higher volumes in the segment.",
    "Operating expenses rose as the segment invested in new production capacity and staff.",
    "Management believes that cash on hand and credit facilities are sufficient for the next twelve months.",
    "The company expects capital expenditure in 2023 to be funded from operating cash flows.",
]
ROW = "Purchases of property and equipment (1,184) (2,871) (1,047)"


def filing() -> str:
    """A 10-K's text: sections of prose that talk about capital expenditure, and a cash-flow statement whose row
    "Purchases of property and equipment" holds the figures, under its title, units and column years."""
    sections = [f"Item {n}. {name}\n" + "\n\n".join(" ".join(FILLER[(i + n) % 5] for i in range(5)) for _ in range(4))
                for n, name in enumerate(["Business", "Risk Factors", "Properties", "Liquidity and Capital Resources",
                                          "Market Risk"], start=1)]
    operating = "\n".join(f"{label} {n},210 {n},304 {n},178" for n, label in enumerate(
        ["Net income", "Depreciation and amortization", "Stock-based compensation", "Deferred income taxes",
         "Accounts receivable", "Inventories", "Accounts payable", "Net cash provided by operating activities"], 1))
    investing = "\n".join(["Cash flows from investing activities:", ROW, "Acquisitions, net of cash acquired (310) (95) (0)",
                           "Proceeds from sale of investments 412 388 150", "Net cash used in investing activities (1,082) (2,578) (897)"])
    financing = "\n".join(f"{label} ({n}12) ({n}40) ({n}05)" for n, label in enumerate(
        ["Repayments of long-term debt", "Dividends paid", "Repurchases of common stock", "Other financing"], 1))
    statement = ("BRIGHTWATER ROBOTICS INC.\nCONSOLIDATED STATEMENTS OF CASH FLOWS\n(In millions)\n"
                 "Year Ended December 31,\n2023 2022 2021\n"
                 f"Cash flows from operating activities:\n{operating}\n\n{investing}\n\n{financing}\n")
    return ("UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nFor the fiscal year ended December 31, 2023\n"
            "BRIGHTWATER ROBOTICS INC.\n(Exact name of registrant as specified in its charter)\n\n"
            + "\n\n".join(sections[:4]) + "\n\nItem 8. Financial Statements\n" + statement + "\n" + sections[4] + "\n")


def test_a_question_asks_for_the_statements_it_names_or_whose_line_items_it_wants():
    named = asked("Basing your judgments off of the balance sheet, what is the FY2018 accounts payable for MGM?")
    assert named.statements == {"balance sheet"} and "accounts payable" in named.row_words
    implied = asked("What is the FY2018 - FY2020 average capex as a % of revenue for MGM Resorts?")
    assert implied.statements == {"cash flow statement", "income statement"}
    assert "purchases of property and equipment" in implied.row_words and "net sales" in implied.row_words
    assert asked("How do I configure retries in the scheduler?").statements == frozenset()
    assert asked("What does the P&L say about COGS?").statements == {"income statement"}


def test_a_chunks_section_names_its_statement():
    assert statement_of(("Item 8", "ACME INC. — CONSOLIDATED STATEMENTS OF CASH FLOWS, Year Ended 2023 (in millions)")) \
        == "cash flow statement"
    assert statement_of(("CONSOLIDATED BALANCE SHEETS (in millions)",)) == "balance sheet"
    assert statement_of(("Consolidated Statements of Operations",)) == "income statement"
    assert statement_of(("CONSOLIDATED STATEMENTS OF INCOME AND COMPREHENSIVE INCOME",)) is None
    assert statement_of(("Item 7. Management's Discussion and Analysis", "Liquidity")) is None


@pytest.mark.model
def test_a_filings_table_row_is_found_by_a_question_naming_its_line_item_and_year(tmp_path):
    """"Capital expenditure in 2022" shares no word with the row "Purchases of property and equipment"; prose that
    says "capital expenditure" again and again outranks it without the prior. With it (the default), the
    cash-flow statement's row ranks first."""
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "10k.txt").write_text(filing())
    registry = load_registry()
    build_index([str(tmp_path / "docs")], tmp_path / "ix", registry, contexts="structural", progress=False,
                log=lambda message: None)
    index = Index(tmp_path / "ix", registry)
    question = "What was Brightwater Robotics' capital expenditure in 2022?"
    plain = index.search(question, k=5, prior=None)
    assert ROW not in plain[0].text  # the prose about capital expenditure comes first without the prior
    top = index.search(question, k=5)[0]
    assert ROW in top.text and "CONSOLIDATED STATEMENTS OF CASH FLOWS" in top.context and "2023 2022 2021" in top.context
    assert top.ranks.get("statement") == 1
    from conftest import run

    shown = json.loads(run("search", question, "--index", tmp_path / "ix", "--json").splitlines()[0])
    assert ROW in shown["text"] and shown["ranks"]["statement"] == 1
    plain = json.loads(run("search", question, "--index", tmp_path / "ix", "--json", "--no-statement-prior").splitlines()[0])
    assert ROW not in plain["text"] and "statement" not in plain["ranks"]


def test_a_metric_goes_by_no_row_of_the_line_item_it_is_computed_from():
    """The 1.5B named an operand revenue_cagr_fy2022, and "Sales to customers" was read for it as revenue."""
    assert "sales to customers" in row_labels("revenue")
    assert row_labels("revenue cagr") == ("revenue cagr",) and row_labels("gross margin") == ("gross margin",)
