"""PDF, DOCX and PPTX files: their text, page starts and titles, and the files that are skipped and why; and
HTML tables, written as the other readers write theirs. The tests write every file themselves (a PDF by hand,
Office files with python-docx and python-pptx, HTML pages as text)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import make_pdf, run, saved

from localcr.chunking import chunk_document
from localcr.answers.tables import tables_in
from localcr.documents import load_paths
from localcr.readers import html, ocr
from localcr.search import page_at
from localcr.structure import document_summary, structural_contexts

PAGE_ONE = ["Orbit field manual, part one.", "The daemon starts at boot and reads its configuration."]
PAGE_TWO = ["Glacier storage keeps cold archives.", "Restoring an archive takes twelve hours."]
# A grey box is all a page of make_pdf's scan shows: OCR finds no text on it (tests/test_formats.py reads real scans).
NO_TEXT = ("no text layer (scanned PDF?), and OCR found no text" if ocr.installed_packs()
           else f"no text layer (scanned PDF?): {ocr.NOT_INSTALLED}")


def _encrypted(pdf: bytes) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt("secret", algorithm="RC4-128")  # RC4 needs no crypto library
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_a_pdf_is_read_page_by_page_with_where_each_page_starts(tmp_path):
    (tmp_path / "manual.pdf").write_bytes(make_pdf([PAGE_ONE, PAGE_TWO], title="Orbit  Field Manual"))
    report = load_paths([tmp_path / "manual.pdf"])
    (doc,) = report.documents
    assert (doc.kind, doc.encoding, doc.title, report.warnings) == ("pdf", "", "Orbit Field Manual", [])
    assert doc.text == "\n".join(PAGE_ONE) + "\n\n" + "\n".join(PAGE_TWO) + "\n"
    assert doc.pages == [0, doc.text.index(PAGE_TWO[0])]
    assert [page_at(doc.pages, doc.text.index(line)) for line in (PAGE_ONE[1], PAGE_TWO[1])] == [1, 2]
    assert document_summary(doc) == "Orbit Field Manual."  # the metadata title, for the structural context


HYPHENATED = ["Handling of the dan-", "gerous goods is audited yearly."]  # PDFium joins the lines at U+FFFE


def test_a_word_hyphenated_at_a_line_end_is_one_word_and_keeps_the_text_s_length(tmp_path):
    from localcr.lexical import tokenize
    from localcr.text import printable, spell_out_identifiers

    (tmp_path / "goods.pdf").write_bytes(make_pdf([HYPHENATED]))
    (tmp_path / "filing.txt").write_text("Handling of the dan\ufffegerous goods.\n")  # PDFium's text saved, as financebench's
    docs = {Path(d.path).name: d for d in load_paths([tmp_path]).documents}
    assert docs["goods.pdf"].text == "Handling of the dan\u00adgerous goods is audited yearly.\n"  # as long as PDFium's
    assert docs["filing.txt"].text == "Handling of the dan\u00adgerous goods.\n"
    for doc in docs.values():
        assert "danger" in tokenize(doc.text) and "dan" not in tokenize(doc.text)  # BM25: one word, stemmed
        assert "the dangerous goods" in spell_out_identifiers(doc.text)  # what the embedder reads
        assert "the dangerous goods" in printable(doc.text)  # what a terminal shows


def test_a_metadata_title_that_only_names_a_file_is_no_title(tmp_path):
    for n, title in enumerate(("Binder1.pdf", "Microsoft Word - annual report.docx")):
        (tmp_path / f"{n}.pdf").write_bytes(make_pdf([PAGE_ONE], title=title))
    (tmp_path / "titled.pdf").write_bytes(make_pdf([PAGE_ONE], title="Orbit Field Manual v2.1"))
    assert sorted(d.title for d in load_paths([tmp_path]).documents) == ["", "", "Orbit Field Manual v2.1"]


def test_page_at():
    assert [page_at([0, 10, 10, 30], offset) for offset in (0, 9, 10, 29, 30, 500)] == [1, 1, 3, 3, 4, 4]
    assert page_at([], 5) is None and page_at([0, 10], -1) is None  # no pages; an imported chunk not found


def test_unreadable_pdfs_are_skipped_with_their_reasons_while_the_rest_is_read(tmp_path):
    (tmp_path / "scan.pdf").write_bytes(make_pdf([[], []]))
    (tmp_path / "locked.pdf").write_bytes(_encrypted(make_pdf([PAGE_ONE])))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a PDF body")
    (tmp_path / "good.pdf").write_bytes(make_pdf([PAGE_ONE]))
    (tmp_path / "notes.txt").write_text("Plain notes.\n")
    report = load_paths([tmp_path])
    assert sorted(Path(d.path).name for d in report.documents) == ["good.pdf", "notes.txt"]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("broken.pdf", "not a readable PDF (damaged, or not a PDF)"),
        ("locked.pdf", "encrypted"),
        ("scan.pdf", NO_TEXT),
    ]
    assert f"{tmp_path / 'scan.pdf'}: {NO_TEXT}, skipped" in report.warnings


def test_a_pdf_with_some_pages_scanned_is_read_with_a_warning(tmp_path):
    (tmp_path / "mixed.pdf").write_bytes(make_pdf([PAGE_ONE, [], PAGE_TWO]))
    report = load_paths([tmp_path / "mixed.pdf"])
    (doc,) = report.documents
    assert page_at(doc.pages, doc.text.index(PAGE_TWO[0])) == 3
    blank = ("page 2: no text layer, and OCR found no text" if ocr.installed_packs()
             else f"1 of 3 pages have no text layer (scanned?): their text is missing ({ocr.NOT_INSTALLED})")
    assert report.warnings == [f"{tmp_path / 'mixed.pdf'}: {blank}"]


def _report_docx():
    import docx

    document = docx.Document()
    document.core_properties.title = "Quarterly report"
    document.add_heading("Report", 0)  # the Title style
    document.add_heading("Storage", 1)
    document.add_paragraph("Glacier keeps cold archives.")
    document.add_heading("Costs", 2)
    table = document.add_table(rows=2, cols=3)
    for cell, text in zip(table.rows[0].cells, ["tier", "price", "restore"]):
        cell.text = text
    table.cell(1, 0).merge(table.cell(1, 1)).text = "cold, per GB"
    table.cell(1, 2).text = "12 h"
    document.add_paragraph("Prices fall every year.")
    return document


def test_docx_headings_become_markdown_headings_and_tables_lines_of_cells(tmp_path):
    (tmp_path / "report.docx").write_bytes(saved(_report_docx()))
    (doc,) = load_paths([tmp_path / "report.docx"]).documents
    assert (doc.kind, doc.title, doc.pages) == ("docx", "Quarterly report", [])
    assert doc.text == ("# Report\n\n# Storage\n\nGlacier keeps cold archives.\n\n## Costs\n\n"
                        "tier | price | restore\ncold, per GB | 12 h\n\nPrices fall every year.\n")
    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], 12, 0)
    structural_contexts(doc, chunks)
    table = next(c for c in chunks if "12 h" in c.text)
    assert table.context.endswith("Quarterly report. Section: Storage > Costs.")


STATEMENT = b"""<!doctype html><html><head><title>Annual report</title></head><body><main>
<h1>Annual report 2024</h1><p>The group grew in every region.</p>
<table class="financial">
  <caption>Consolidated income statement
    (in millions of euros)</caption>
  <thead>
    <tr><th></th><th colspan="2">Year ended 31 December</th></tr>
    <tr><th></th><th>2024</th><th>2023</th></tr>
  </thead>
  <tbody>
    <tr><td>Revenue</td><td>45.2</td><td>40.1</td></tr>
    <tr><td>Cost of sales | services<br>and goods</td><td>(12.0)</td><td>(11.5)</td></tr>
    <tr><td>Exceptional items</td><td></td><td>(3.0)</td></tr>
    <tr><td> </td><td></td></tr>
  </tbody>
  <tfoot><tr><th>Net <b>income</b></th><td>33.2</td><td>25.6</td><td></td></tr></tfoot>
</table>
<p>Figures are audited.</p>
</main></body></html>"""
SEGMENTS = b"""<html><body><table>
<tr><th>Region</th><th>Line</th><th>2024</th></tr>
<tr><td colspan="3">Continuing operations</td></tr>
<tr><th rowspan="2">Europe</th><td>Revenue</td><td>20.1</td></tr>
<tr><td>Operating <i>profit</i></td><td>3.2</td></tr>
<tr><td colspan="two">Asia</td><td rowspan="1001">Revenue</td><td colspan="99999999999999999999">9.8</td></tr>
<tr><td>Notes<table><tr><td>see</td><td>note 4</td></tr></table></td><td rowspan="0">x</td><td>1.0</td></tr>
</table></body></html>"""


def test_an_html_table_is_lines_of_cells_its_spans_written_out_under_its_caption():
    assert html.read(STATEMENT).text == (
        "# Annual report 2024\n\nThe group grew in every region.\n\n"
        "Consolidated income statement (in millions of euros)\n"
        "| Year ended 31 December | Year ended 31 December\n"
        "| 2024 | 2023\n"
        "Revenue | 45.2 | 40.1\n"
        "Cost of sales / services and goods | (12.0) | (11.5)\n"
        "Exceptional items | | (3.0)\n"
        "Net income | 33.2 | 25.6\n\n"
        "Figures are audited.\n")
    assert html.read(SEGMENTS).text == (  # a span that is no number, or past 1000, is 1; a nested table is its text
        "Region | Line | 2024\nContinuing operations |\nEurope | Revenue | 20.1\nEurope | Operating profit | 3.2\n"
        "Asia | Revenue | 9.8\nNotes see note 4 | x | 1.0\n")
    [table] = tables_in(html.read(STATEMENT).text)  # one table, not a table per row
    assert [label for label, _ in table.rows] == ["Revenue", "Cost of sales / services and goods", "Exceptional items",
                                                  "Net income"]
    assert "Consolidated income statement (in millions of euros)" in table.caption


def test_the_table_reader_reads_an_html_table_s_years_over_its_figures():
    [table] = tables_in(html.read(STATEMENT).text)
    assert table.columns == ["2024", "2023"]
    cells = {(cell.row, cell.column): cell for cell in table.cells()}
    assert (cells["Revenue", "2024"].value, cells["Revenue", "2024"].scale) == (45.2, "million")
    assert cells["Net income", "2023"].value == 25.6 and cells["Exceptional items", "2023"].value == -3.0
    assert ("Exceptional items", "2024") not in cells


def test_spanning_cells_cannot_multiply_a_page_s_text(monkeypatch):
    monkeypatch.setattr(html, "MAX_SPANNED", 10_000)
    row = "<tr>" + '<th colspan="1000" rowspan="1000">spanned</th>' * 50 + "</tr>"
    text = html.read(f"<table>{row * 50}</table>".encode()).text
    assert 2_500 * len("spanned | ") <= len(text) <= 10_000 + 2_500 * len("spanned | ")


def test_a_broken_docx_is_skipped_with_the_reason(tmp_path):
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "slides.docx").write_bytes(saved(_deck()))  # a presentation under a Word name
    report = load_paths([tmp_path])
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("broken.docx", "not a readable DOCX (not a zip archive)"),
        ("slides.docx", "not a readable DOCX (the file is not a Word file, content type is "
                        "'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml')"),
    ]


def _deck():
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Storage tiers"
    first.placeholders[1].text = "Hot\nCold"
    first.notes_slide.notes_text_frame.text = "Mention the restore time."
    deck.slides.add_slide(deck.slide_layouts[6])  # blank
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Prices"
    table = third.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "tier", "price"
    table.cell(1, 0).merge(table.cell(1, 1))
    table.cell(1, 0).text = "cold is cheapest"
    return deck


def test_a_presentation_has_one_page_per_slide(tmp_path):
    (tmp_path / "deck.pptx").write_bytes(saved(_deck()))
    (doc,) = load_paths([tmp_path / "deck.pptx"]).documents
    assert doc.text == ("# Storage tiers\n\nHot\nCold\n\nMention the restore time.\n\n\n\n"
                        "# Prices\n\ntier | price\ncold is cheapest\n")
    assert [page_at(doc.pages, doc.text.index(s)) for s in ("Hot", "# Prices", "cold is")] == [1, 3, 3]


@pytest.mark.model
def test_a_word_hyphenated_at_a_line_end_is_found_and_shown_whole(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "goods.pdf").write_bytes(make_pdf([HYPHENATED]))
    (docs / "other.pdf").write_bytes(make_pdf([PAGE_ONE]))
    index = tmp_path / "index"
    run("index", docs, "--index", index, "-q", "--contexts", "structural")
    for mode in ("lexical", "dense"):
        shown = run("search", "dangerous", "--index", index, "-k", 1, "--mode", mode)
        assert "goods.pdf" in shown and "the dangerous goods" in shown, (mode, shown)


@pytest.mark.model
def test_search_names_the_page_of_a_pdf_hit(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.pdf").write_bytes(make_pdf([PAGE_ONE * 4, PAGE_TWO * 4], title="Orbit Field Manual"))
    (docs / "report.docx").write_bytes(saved(_report_docx()))
    index = tmp_path / "index"
    out = run("index", docs, "--index", index, "-q", "--chunk-tokens", 48)
    assert "indexed 2 documents" in out
    shown = run("search", "restoring an archive takes twelve hours", "--index", index, "-k", 1)
    assert "manual.pdf" in shown and "  page 2  chars" in shown
    assert "Orbit Field Manual." in shown  # the PDF's title in the structural context
    hits = [json.loads(line) for line in run("search", "glacier archives", "--index", index, "--json").splitlines()]
    assert {(Path(h["path"]).name, h["page"]) for h in hits} >= {("manual.pdf", 2), ("report.docx", None)}
