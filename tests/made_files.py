"""Files of the formats localcr reads, written by the tests themselves with the libraries that write them (no
fixture file, no network): each holds the needle the test searches for."""
from __future__ import annotations

import io
from email.message import EmailMessage


def xlsx(sheets: dict[str, list[list]], cached: dict[str, str] | None = None) -> bytes:
    """A workbook of named sheets of rows; a cell that is a string starting with `=` is a formula, whose value as
    last calculated (which openpyxl does not write, a spreadsheet program does) `cached` gives by formula."""
    import openpyxl
    import zipfile

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    if not cached:
        return buffer.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            for formula, value in cached.items():
                data = data.replace(f"<f>{formula[1:]}</f><v></v>".encode(), f"<f>{formula[1:]}</f><v>{value}</v>".encode())
            target.writestr(item, data)
    return out.getvalue()


def odf(kind: str, build) -> bytes:
    """An OpenDocument file (kind: "text", "spreadsheet" or "presentation") that `build(document)` fills."""
    from odf import opendocument

    document = getattr(opendocument, {"text": "OpenDocumentText", "spreadsheet": "OpenDocumentSpreadsheet",
                                      "presentation": "OpenDocumentPresentation"}[kind])()
    build(document)
    buffer = io.BytesIO()
    document.write(buffer)
    return buffer.getvalue()


def odt(heading: str, paragraphs: list[str]) -> bytes:
    from odf.text import H, P

    def build(document):
        document.text.addElement(H(outlinelevel=1, text=heading))
        for paragraph in paragraphs:
            document.text.addElement(P(text=paragraph))

    return odf("text", build)


def odp(slides: list[tuple[str, str]]) -> bytes:
    """A presentation of (title, body) slides, the title in a frame of presentation class "title" as an office suite
    writes it (odfpy's own checks do not allow that attribute, so it is set by namespace)."""
    from odf.draw import Frame, Page, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    def build(document):
        layout = PageLayout(name="layout")
        document.automaticstyles.addElement(layout)
        master = MasterPage(name="master", pagelayoutname=layout)
        document.masterstyles.addElement(master)
        for title, body in slides:
            page = Page(masterpagename=master)
            for role, text in (("title", title), ("outline", body)):
                frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
                frame.setAttrNS(PRESENTATIONNS, "class", role)
                box = TextBox()
                box.addElement(P(text=text))
                frame.addElement(box)
                page.addElement(frame)
            document.presentation.addElement(page)

    return odf("presentation", build)


def odp_shapes(title: str, shapes: list[tuple[str, str, str]]) -> bytes:
    """A one-slide presentation: its title in a frame, then (shape, top, text) drawing shapes in this order in the
    file, each its text in a paragraph of its own: "custom-shape" (as office suites write a slide's boxes and
    callouts), "rect", or "group" (a custom shape inside a group)."""
    from odf.draw import CustomShape, EnhancedGeometry, Frame, G, Page, Rect, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    def build(document):
        layout = PageLayout(name="layout")
        document.automaticstyles.addElement(layout)
        master = MasterPage(name="master", pagelayoutname=layout)
        document.masterstyles.addElement(master)
        page = Page(masterpagename=master)
        frame = Frame(width="20cm", height="3cm", x="1cm", y="1cm")
        frame.setAttrNS(PRESENTATIONNS, "class", "title")
        box = TextBox()
        box.addElement(P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        for kind, top, text in shapes:
            place = dict(width="8cm", height="2cm", x="2cm", y=top)
            shape = Rect(**place) if kind == "rect" else CustomShape(**place)
            if kind != "rect":
                shape.addElement(EnhancedGeometry(type="rectangle"))
            shape.addElement(P(text=text))
            if kind == "group":
                group = G()
                group.addElement(shape)
                shape = group
            page.addElement(shape)
        document.presentation.addElement(page)

    return odf("presentation", build)


def ods(rows: list[list[str]], name: str = "Sheet1") -> bytes:
    """A sheet of rows; a value with a newline is a cell of several paragraphs (lines)."""
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    def build(document):
        table = Table(name=name)
        for row in rows:
            tr = TableRow()
            for value in row:
                cell = TableCell()
                for line in str(value).split("\n"):
                    cell.addElement(P(text=line))
                tr.addElement(cell)
            table.addElement(tr)
        document.spreadsheet.addElement(table)

    return odf("spreadsheet", build)


def epub(title: str, chapters: list[tuple[str, str]]) -> bytes:
    """An e-book of (chapter title, paragraph) in order; the chapters' XHTML has no heading of its own, so a
    chapter's title comes from the table of contents."""
    from ebooklib import epub as ebook

    book = ebook.EpubBook()
    book.set_identifier("localcr-test")
    book.set_title(title)
    book.set_language("en")
    items = []
    for n, (name, paragraph) in enumerate(chapters, 1):
        item = ebook.EpubHtml(title=name, file_name=f"chapter{n}.xhtml", lang="en")
        item.content = f"<html><body><p>{paragraph}</p></body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(ebook.EpubNcx())
    book.add_item(ebook.EpubNav())
    book.spine = items
    buffer = io.BytesIO()
    ebook.write_epub(buffer, book)
    return buffer.getvalue()


def rtf(paragraphs: list[str]) -> bytes:
    """An RTF file in code page 1252, its accented letters written as `\\'xx` escapes, as word processors write them."""
    escaped = ["".join(c if ord(c) < 128 else f"\\'{ord(c):02x}" for c in p) for p in paragraphs]
    body = "".join(f"{{\\pard {p}\\par}}\n" for p in escaped)
    return ("{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times New Roman;}}\n" + body + "}").encode("ascii")


def message(subject: str, body: str, attachments: dict[str, bytes] | None = None, sender: str = "Ana Ribeiro <ana@example.com>",
            to: str = "Board <board@example.com>", date: str = "Tue, 14 May 2024 09:30:00 +0000") -> bytes:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"], mail["Date"] = sender, to, subject, date
    mail.set_content(body)
    for name, data in (attachments or {}).items():
        mail.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return bytes(mail)


def mbox(messages: list[bytes]) -> bytes:
    return b"".join(b"From MAILER-DAEMON Tue May 14 09:30:00 2024\n" + m.replace(b"\nFrom ", b"\n>From ") + b"\n"
                    for m in messages)
