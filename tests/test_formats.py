"""Spreadsheets, mail, e-books, OpenDocument, RTF and scans: their text, sections and parts, the files that are
skipped and why, and one index of all of them in which each file's needle is the first hit. Every file is written
by the test (tests/made_files.py, conftest.make_pdf); the scans are rendered from a PDF the test writes."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import made_files as made
import pytest
from conftest import make_pdf, run

from localcr.chunking import chunk_document
from localcr.documents import load_paths
from localcr.filters import Filter
from localcr.structure import structural_contexts

HAS_TESSERACT = shutil.which("tesseract") is not None
needs_tesseract = pytest.mark.skipif(not HAS_TESSERACT, reason="Tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
HEADER = ["Branch", "Metric", "Q1", "Q2", "Q3", "Q4"]
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Berlin", "Hamburg", "Vienna", "Zurich", "Milan", "Turin"]
SCAN_LINES = ["The observatory dome was repainted", "with heat reflecting titanium white."]
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"  # Debian's fonts-dejavu-core
needs_dejavu = pytest.mark.skipif(not Path(DEJAVU).exists(), reason="DejaVu Sans is not installed (apt-get install fonts-dejavu-core)")
PAGE_LINES = ["The observatory dome was repainted with heat reflecting", "titanium white in the spring of the year before",
              "last, and the telescope mirror was cleaned by the night", "staff, who also replaced the worn bearings of the",
              "dome motor before the winter storms came."]


def _branches() -> list[list]:
    return [HEADER] + [[city, metric, *(100 * n + q for q in range(4))]
                       for n, city in enumerate(CITIES) for metric in ("Revenue", "Headcount", "Costs")]


def _contexts(doc, tokens: int = 40):
    chunks = chunk_document(doc, lambda texts: [len(t.split()) for t in texts], tokens, 0)
    structural_contexts(doc, chunks)
    return chunks


def _scan_png() -> bytes:
    return _png(_rendered(make_pdf([SCAN_LINES])))


def _rendered(pdf: bytes):
    """A PDF's first page as a scan of it at 300 dpi."""
    import pypdfium2

    return pypdfium2.PdfDocument(pdf)[0].render(scale=300 / 72, grayscale=True).to_pil()


def _png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _lines_image(lines: list[str], size: tuple[int, int], font_size: int):
    """Lines of text drawn in DejaVu Sans (Latin, Greek, Cyrillic ...), black on white."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(DEJAVU, font_size)
    for n, line in enumerate(lines):
        draw.text((font_size, font_size + n * font_size * 7 // 4), line, font=font, fill=0)
    return image


def _scanned_pdf() -> bytes:
    """A PDF whose one page is an image of text: no text layer."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.open(io.BytesIO(_scan_png())).convert("RGB").save(buffer, "PDF", resolution=300)
    return buffer.getvalue()


def test_a_workbook_reads_its_sheets_as_sections_and_carries_the_header_row_into_every_chunk(tmp_path):
    (tmp_path / "branches.xlsx").write_bytes(made.xlsx(
        {"Quarterly": _branches() + [["Total", "Revenue", "=SUM(C2:C4)"]], "Notes": [["Figures in thousands of euros"]]},
        cached={"=SUM(C2:C4)": "300"}))
    (doc,) = load_paths([tmp_path]).documents
    assert doc.kind == "xlsx" and doc.text.startswith("# Quarterly\n\nBranch | Metric | Q1 | Q2 | Q3 | Q4\nLisbon | Revenue | 0 | 1 | 2 | 3\n")
    assert "Total | Revenue | 300\n" in doc.text  # the formula as the value it last showed
    assert "# Notes\n\nFigures in thousands of euros" in doc.text
    chunks = _contexts(doc)
    later = [c for c in chunks if "Seville | Costs" in c.text][0]
    assert later.context.endswith("Section: Quarterly. Columns: Branch | Metric | Q1 | Q2 | Q3 | Q4.")
    assert "Columns" not in chunks[0].context  # the first chunk holds the header row itself


def test_csv_and_tsv_rows_are_lines_of_cells_under_their_header(tmp_path):
    (tmp_path / "eu.csv").write_text("Branch;Metric;Q3\nLisbon;Revenue;1 204\n" + "Porto;Costs;77\n" * 40)
    (tmp_path / "tab.tsv").write_text("Branch\tQ3\nMadrid\t9\n")
    docs = {d.kind: d for d in load_paths([tmp_path]).documents}
    assert docs["csv"].text.startswith("Branch | Metric | Q3\nLisbon | Revenue | 1 204\n")  # `;` sniffed
    assert docs["tsv"].text == "Branch | Q3\nMadrid | 9\n"
    assert _contexts(docs["csv"])[-1].context.endswith("Columns: Branch | Metric | Q3.")


def test_a_csv_that_escapes_quotes_with_backslashes_is_read_as_written(tmp_path):
    """MySQL and many scrapers write a quote in a cell as \\"; read as the RFC's "" it ran into the next row."""
    (tmp_path / "singles.csv").write_text('"Year","Single"\n"1993","\\"Freak Me\\""\n"1994","Blanche \\"Monica\\" Moran"\n')
    (tmp_path / "rfc.csv").write_text('Said,Path\n"He said ""hi""",C:\\temp\n')
    docs = {Path(d.path).name: d.text for d in load_paths([tmp_path]).documents}
    assert docs["singles.csv"] == 'Year | Single\n1993 | "Freak Me"\n1994 | Blanche "Monica" Moran\n'
    assert docs["rfc.csv"] == 'Said | Path\nHe said "hi" | C:\\temp\n'  # a backslash in an RFC file is a character
    (tmp_path / "paths.csv").write_text('Name,Folder\n"Ana","C:\\Users\\Ana\\"\n"Bo","D:\\Data\\"\n"Cy","E:\\"\n')
    folders = next(d.text for d in load_paths([tmp_path / "paths.csv"]).documents)
    assert folders == 'Name | Folder\nAna | C:\\Users\\Ana\\\nBo | D:\\Data\\\nCy | E:\\\n'  # quoted paths end in \\, no escape


def test_an_ods_sheet_is_read_like_a_workbook(tmp_path):
    (tmp_path / "b.ods").write_bytes(made.ods([["Branch", "Population\nin millions"], ["Lisbon", "42"]], name="Sales"))
    (doc,) = load_paths([tmp_path]).documents
    assert (doc.kind, doc.text) == ("ods", "# Sales\n\nBranch | Population in millions\nLisbon | 42\n")  # a cell's lines joined


def test_a_message_is_titled_by_its_subject_with_its_people_in_context_and_its_quoted_chain_a_section(tmp_path):
    body = "We accept the new terms.\n\nOn Mon, 13 May 2024, Bruno Costa <bruno@example.com> wrote:\n> Shall we renew?\n"
    (tmp_path / "reply.eml").write_bytes(made.message("Re: Warehouse lease", body))
    (doc,) = load_paths([tmp_path]).documents
    assert (doc.kind, doc.title) == ("mail", "Re: Warehouse lease")
    assert "\n\n## Quoted: On Mon, 13 May 2024, Bruno Costa <bruno@example.com> wrote:\n\n> Shall we renew?" in doc.text
    chunks = _contexts(doc, tokens=12)
    assert all("Mail from Ana Ribeiro <ana@example.com>, to Board <board@example.com>, sent Tue, 14 May 2024" in c.context for c in chunks)
    assert "Section: Re: Warehouse lease > Quoted: On Mon, 13 May 2024," in chunks[-1].context


def test_a_message_whose_body_is_text_of_another_subtype_is_read_as_plain_text(tmp_path):
    # as git's Documentation/howto mails are written: one part, `Content-type: text/asciidoc`
    (tmp_path / "howto.eml").write_bytes(b"From: Junio <junio@example.com>\nSubject: Reverting a merge\n"
                                         b"Content-type: text/asciidoc\n\nHow to revert a faulty merge\n====\n")
    (doc,) = load_paths([tmp_path]).documents
    assert doc.text.endswith("How to revert a faulty merge\n====\n")


def test_a_mailbox_gives_each_message_and_each_attachment_a_document_of_its_own(tmp_path):
    contract = make_pdf([["Clause 9: the tenant pays the roof repairs."]])
    first = made.message("Lease draft", "The draft is attached.", {"contract.pdf": contract, "photo.heic": b"..."})
    (tmp_path / "archive.mbox").write_bytes(made.mbox([first, made.message("Lunch", "Friday at noon?")]))
    report = load_paths([tmp_path])
    assert [(d.doc_id, d.kind, d.title) for d in report.documents] == [
        (f"{tmp_path.name}/archive.mbox#1", "mail", "Lease draft"),
        (f"{tmp_path.name}/archive.mbox#1/contract.pdf", "pdf", ""),
        (f"{tmp_path.name}/archive.mbox#2", "mail", "Lunch"),
    ]
    assert report.documents[1].text == "Clause 9: the tenant pays the roof repairs.\n"
    assert report.warnings == [f"{tmp_path / 'archive.mbox'}#1: attachment photo.heic: unsupported file type, skipped"]
    known = {d.doc_id: (d.size, d.mtime) for d in report.documents}
    again = load_paths([tmp_path], known=known)  # an unchanged mailbox is not read again
    assert (again.documents, sorted(again.unchanged)) == ([], sorted(known))


def test_a_mailbox_may_begin_with_blank_lines_and_a_bom_as_python_s_mailbox_allows(tmp_path):
    messages = made.mbox([made.message("Harbour fees", "Fees rise in June."), made.message("Ferry", "The ferry is late.")])
    (tmp_path / "blank.mbox").write_bytes(b"\n  \n\t\r\n" + messages)  # as git's sample.mbox begins
    (tmp_path / "bom.mbox").write_bytes(b"\xef\xbb\xbf\n" + messages)
    report = load_paths([tmp_path])
    assert report.skipped == [] and report.warnings == []
    assert sorted(d.doc_id.split("/")[1] for d in report.documents) == ["blank.mbox#1", "blank.mbox#2", "bom.mbox#1", "bom.mbox#2"]
    assert {d.title for d in report.documents} == {"Harbour fees", "Ferry"}


def test_an_epub_reads_its_chapters_in_spine_order_titled_by_its_table_of_contents(tmp_path):
    (tmp_path / "book.epub").write_bytes(made.epub("Harbour Tales", [("The Lighthouse", "Keeper Ines lit the lamp."),
                                                                     ("The Storm", "Waves broke the pier.")]))
    (doc,) = load_paths([tmp_path]).documents
    assert (doc.kind, doc.title) == ("epub", "Harbour Tales")
    assert doc.text == "# The Lighthouse\n\nKeeper Ines lit the lamp.\n\n# The Storm\n\nWaves broke the pier.\n"


def test_odt_odp_and_rtf_are_read(tmp_path):
    (tmp_path / "memo.odt").write_bytes(made.odt("Budget memo", ["Travel is cut by a tenth."]))
    (tmp_path / "letter.rtf").write_bytes(made.rtf(["Dear Ms Lefèvre,", "the café reopens in June."]))
    (tmp_path / "plan.odp").write_bytes(made.odp([("Roadmap", "Ship the harbour app in May."), ("Risks", "The ferry API may change.")]))
    docs = {d.kind: d for d in load_paths([tmp_path]).documents}
    assert docs["odt"].text == "# Budget memo\n\nTravel is cut by a tenth.\n"
    assert docs["odp"].text == "# Roadmap\n\nShip the harbour app in May.\n\n# Risks\n\nThe ferry API may change.\n"
    assert docs["odp"].pages == [0, docs["odp"].text.index("# Risks")]  # a page per slide
    assert docs["rtf"].text == "Dear Ms Lefèvre,\nthe café reopens in June.\n"


def test_a_slide_s_text_is_read_from_every_drawing_shape_top_to_bottom(tmp_path):
    (tmp_path / "cols.odp").write_bytes(made.odp_shapes("Columns", [
        ("custom-shape", "12cm", "Third: the harbour crane is rented."), ("rect", "4cm", "First: the quay is dredged."),
        ("group", "8cm", "Second: the pier lamps are replaced.")]))
    (doc,) = load_paths([tmp_path]).documents
    assert doc.text == ("# Columns\n\nFirst: the quay is dredged.\n\nSecond: the pier lamps are replaced.\n\n"
                        "Third: the harbour crane is rented.\n")

    def page_anchored_shape(document):  # a text document's shape anchored to the page stands among its paragraphs
        from odf.draw import CustomShape
        from odf.text import P

        document.text.addElement(P(text="Before the box."))
        shape = CustomShape(width="8cm", height="2cm", x="2cm", y="2cm", anchortype="page")
        shape.addElement(P(text="The ferry leaves at nine."))
        document.text.addElement(shape)

    (tmp_path / "cols.odp").unlink()
    (tmp_path / "memo.odt").write_bytes(made.odf("text", page_anchored_shape))
    (doc,) = load_paths([tmp_path]).documents
    assert doc.text == "Before the box.\n\nThe ferry leaves at nine.\n"


def test_broken_files_of_every_new_kind_are_skipped_with_their_reasons(tmp_path):
    for name in ("a.xlsx", "a.ods", "a.odt", "a.odp", "a.epub"):
        (tmp_path / name).write_bytes(b"not a zip archive")
    (tmp_path / "locked.xlsx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500))  # how an encrypted one begins
    (tmp_path / "a.rtf").write_text("plain words")
    (tmp_path / "a.eml").write_text("no headers here, only words\n")
    (tmp_path / "a.mbox").write_text("not a mailbox\n")
    (tmp_path / "a.csv").write_bytes(b"\x00\x01binary")
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    reasons = {Path(s.path).name: s.reason for s in load_paths([tmp_path]).skipped}
    assert reasons == {
        "a.xlsx": "not a readable XLSX (not a zip archive)", "a.ods": "not a readable ODS (not a zip archive)",
        "a.odt": "not a readable ODT (not a zip archive)", "a.odp": "not a readable ODP (not a zip archive)",
        "a.epub": "not a readable EPUB (not a zip archive)",
        "locked.xlsx": "not a readable XLSX (encrypted, or an older binary format)",
        "a.rtf": "not a readable RTF file (it does not begin with {\\rtf)",
        "a.eml": "not a mail message (no From, To, Subject or Date header)",
        "a.mbox": "not a readable mailbox (an mbox file starts with a 'From ' line)",
        "a.csv": "binary file",
        "a.png": "not a readable image (not a PNG, JPEG or TIFF that Pillow can decode)" if HAS_TESSERACT else
                 "a scan: OCR needs Tesseract, which is not installed (apt-get install tesseract-ocr tesseract-ocr-eng "
                 "tesseract-ocr-deu tesseract-ocr-spa tesseract-ocr-rus tesseract-ocr-ara tesseract-ocr-chi-sim "
                 "tesseract-ocr-jpn)",
    }


@pytest.mark.model
def test_a_re_index_names_new_problems_and_counts_the_old_ones(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Notes\n\nThe ferry leaves at nine.\n")
    for name in ("a.xlsx", "b.epub"):
        (docs / name).write_bytes(b"not a zip archive")
    index = tmp_path / "index"
    first = run("index", docs, "--index", index, "-q", "--contexts", "structural")
    assert f"warning: {docs / 'a.xlsx'}: not a readable XLSX (not a zip archive), skipped" in first
    (docs / "c.odt").write_bytes(b"not a zip archive")
    (docs / "more.md").write_text("# More\n\nThe pier opens at ten.\n")
    again = run("index", docs, "--index", index, "-q")
    assert f"warning: {docs / 'c.odt'}: not a readable ODT (not a zip archive), skipped" in again
    assert "a.xlsx" not in again.split("indexed ")[0] and "b.epub" not in again.split("indexed ")[0]
    assert "2 files skipped before, still skipped: localcr stats --skipped" in again
    assert "3 files skipped by the build of " in run("stats", "--index", index, "--skipped")


def test_empty_workbooks_are_skipped_as_an_empty_document_is(tmp_path):
    import docx
    from conftest import saved

    (tmp_path / "blank.xlsx").write_bytes(made.xlsx({"Sheet1": [], "Sheet2": [[None, ""]]}))
    (tmp_path / "blank.ods").write_bytes(made.ods([]))
    (tmp_path / "blank.docx").write_bytes(saved(docx.Document()))
    (tmp_path / "half.xlsx").write_bytes(made.xlsx({"Empty": [], "Rates": [["Rate", 3]]}))
    report = load_paths([tmp_path])
    assert {Path(s.path).name: s.reason for s in report.skipped} == dict.fromkeys(("blank.xlsx", "blank.ods", "blank.docx"), "empty")
    assert [d.text for d in report.documents] == ["# Rates\n\nRate | 3\n"]  # an empty sheet is no section


def test_new_kinds_and_families_filter():
    assert Filter.of(kind="sheet").passes_kind("xlsx") and Filter.of(kind="sheet").passes_kind("csv")
    assert Filter.of(kind="office").passes_kind("odt") and not Filter.of(kind="office").passes_kind("csv")
    assert Filter.of(kind="mail").passes_kind("mail") and not Filter.of(kind="mail").passes_kind("pdf")


@needs_tesseract
def test_a_scan_is_read_by_ocr_with_its_page_numbers_and_cached(tmp_path, monkeypatch):
    (tmp_path / "scan.png").write_bytes(_scan_png())
    (tmp_path / "scan.pdf").write_bytes(_scanned_pdf())
    (tmp_path / "mixed.pdf").write_bytes(make_pdf([["A typed first page."], []]))
    docs = {Path(d.path).name: d for d in load_paths([tmp_path]).documents}
    for name in ("scan.png", "scan.pdf"):
        assert " ".join(docs[name].text.split()) == " ".join(SCAN_LINES), name
    assert docs["mixed.pdf"].pages == [0, len("A typed first page.") + 2]

    from localcr.readers import ocr

    def no_tesseract(*args, **kwargs):
        raise AssertionError("a page was recognised again")

    monkeypatch.setattr(ocr, "_page_text", no_tesseract)  # the reader in this process: from the cache only
    assert ocr.read_image(_scan_png()).text.split() == " ".join(SCAN_LINES).split()


@needs_tesseract
@pytest.mark.parametrize("turned", [180, 90])
def test_a_turned_scan_is_turned_back_before_it_is_read(turned):
    from localcr.readers import ocr

    page = _rendered(make_pdf([PAGE_LINES])).rotate(turned, expand=True, fillcolor=255)
    assert ocr.read_image(_png(page)).text.split() == " ".join(PAGE_LINES).split()


@needs_tesseract
@needs_dejavu
def test_a_scan_in_a_script_no_installed_pack_reads_is_skipped_naming_the_pack_and_a_small_one_is_read(tmp_path):
    import pytesseract

    if "ell" in pytesseract.get_languages():
        pytest.skip("Tesseract's Greek pack is installed here")
    greek = ["Η βιβλιοθήκη του πανεπιστημίου ανοίγει κάθε πρωί στις", "οκτώ και κλείνει αργά το βράδυ, ενώ οι φοιτητές",
             "μελετούν στις μεγάλες αίθουσες ανάγνωσης του ορόφου", "και δανείζονται βιβλία για τις εξετάσεις."]
    (tmp_path / "greek.png").write_bytes(_png(_lines_image(greek, (2000, 600), 40)))
    buffer = io.BytesIO()
    _lines_image(greek, (2000, 600), 40).convert("RGB").save(buffer, "PDF", resolution=300)
    (tmp_path / "greek.pdf").write_bytes(buffer.getvalue())
    # 564 x 150 pixels, far from a page, but its words are 20 pixels high: readable
    (tmp_path / "label.png").write_bytes(_png(_lines_image(SCAN_LINES, (564, 150), 24)))
    report = load_paths([tmp_path])
    missing = "in Greek script, which no installed Tesseract pack reads (apt-get install tesseract-ocr-ell)"
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("greek.pdf", f"no text layer (scanned PDF?), and OCR read none: {missing}"), ("greek.png", missing)]
    assert report.documents[0].text.split() == " ".join(SCAN_LINES).split()


@pytest.mark.model
def test_each_format_s_needle_is_the_first_hit_of_one_index(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "branches.xlsx").write_bytes(made.xlsx({"Quarterly": _branches(), "Notes": [["Figures in thousands"]]}))
    (docs / "staff.csv").write_text("Name,Role,Desk\n" + "".join(f"Person {n},Clerk,D{n}\n" for n in range(30))
                                    + "Oriana Velasquez,Harpsichord tuner,D99\n")
    contract = make_pdf([["Clause 9: the tenant pays for the copper gutter repairs."]])
    (docs / "archive.mbox").write_bytes(made.mbox([
        made.message("Lease draft", "The draft is attached.", {"contract.pdf": contract}),
        made.message("Kayak trip", "The kayak trip to the Berlenga islands leaves at dawn.")]))
    (docs / "book.epub").write_bytes(made.epub("Harbour Tales", [("The Lighthouse", "Keeper Ines polished the brass lens."),
                                                                 ("The Storm", "Waves broke the pier.")]))
    (docs / "memo.odt").write_bytes(made.odt("Budget memo", ["Travel to the Azores trade fair is cut by a tenth."]))
    (docs / "letter.rtf").write_bytes(made.rtf(["The bakery sells sourdough with fennel seeds on Sundays."]))
    if HAS_TESSERACT:
        (docs / "scan.png").write_bytes(_scan_png())
        (docs / "scan.pdf").write_bytes(_scanned_pdf())
    index = tmp_path / "index"
    run("index", docs, "--index", index, "-q", "--contexts", "structural", "--chunk-tokens", 48)
    needles = {
        "Q3 Costs of the Porto branch": "branches.xlsx", "who tunes harpsichords": "staff.csv",
        "who pays for the copper gutter repairs": "archive.mbox#1/contract.pdf", "kayak trip Berlenga": "archive.mbox#2",
        "brass lens of the lighthouse keeper": "book.epub", "Azores trade fair travel": "memo.odt",
        "sourdough with fennel": "letter.rtf",
    } | ({"repainted observatory dome titanium white": "scan."} if HAS_TESSERACT else {})
    for query, where in needles.items():
        first = run("search", query, "--index", index, "-k", 1, "--json")
        assert f'{where}' in first.split('"doc_id": ')[1].split(",")[0], (query, first)
    stats = run("stats", "--index", index)
    assert "kinds       " in stats and "xlsx 1" in stats and "mail 2" in stats
    if HAS_TESSERACT:
        assert "ocr         Tesseract " in stats
    for kind, expected in (("sheet", {"branches.xlsx", "staff.csv"}), ("mail", {"archive.mbox#1", "archive.mbox#2"})):
        hits = run("search", "branch clause trip", "--index", index, "--kind", kind, "-k", 20, "--json")
        assert {line.split('"doc_id": "')[1].split('"')[0].split("/", 1)[1] for line in hits.splitlines()} <= expected


@pytest.mark.model
def test_sheets_of_numbers_take_their_folder_s_language_and_do_not_choose_the_embedder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("# Warehouse\n\nThe warehouse in Porto ships the spare parts every Monday morning.\n")
    (docs / "kpi.xlsx").write_bytes(made.xlsx({"Sheet1": [["KPI", 2021, 2022, 2023]] + [[f"K{i}", i, i + 1, i + 2] for i in range(40)]}))
    (docs / "dates.csv").write_text("Date,Amount\n" + "".join(f"2024-0{1 + i % 9}-1{i % 9},{10 * i}\n" for i in range(20)))
    index = tmp_path / "index"
    out = run("index", docs, "--index", index, "--contexts", "structural")  # py3langid alone had named a sheet pcm
    assert "embedder: minilm, chosen for the documents' languages (en 3): trained for 3 of 3" in out
    assert "not trained for" not in out
    assert "languages   en 3" in run("stats", "--index", index)
    hits = run("search", "KPI 2022", "--index", index, "--lang", "en", "--mode", "lexical", "-k", 1)
    assert "kpi.xlsx" in hits


def test_without_tesseract_scans_are_skipped_with_what_to_install(monkeypatch):
    from localcr.readers import ReaderError, ocr, pdf

    monkeypatch.setattr(ocr, "installed_packs", lambda: [])
    with pytest.raises(ReaderError, match=r"^a scan: OCR needs Tesseract, which is not installed \(apt-get install tesseract-ocr tesseract-ocr-eng "):
        ocr.read_image(_scan_png())
    with pytest.raises(ReaderError, match=r"^no text layer \(scanned PDF\?\): OCR needs Tesseract"):
        pdf.read(make_pdf([[]]))
    mixed = pdf.read(make_pdf([["A typed page."], []]))
    assert mixed.warnings == [f"1 of 2 pages have no text layer (scanned?): their text is missing ({ocr.NOT_INSTALLED})"]
    assert "not installed" in ocr.describe()
