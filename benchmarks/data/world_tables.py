"""Tables as people have them (issue 84): reports, sheets, web pages and lab notes in eight languages, written in
their real formats, with questions whose gold is computed here from the very numbers written into the files.

    .venv/bin/python benchmarks/data/world_tables.py [--out benchmarks/data/world-tables]

Writes OUT/docs/* (HTML, DOCX, XLSX, ODT, CSV, Markdown, PDF) and OUT/questions.jsonl, one question a line:
{"id", "file" (relative to OUT), "format", "language", "question", "kind", "answer", "unit", "scale", "note"}.
`kind` is lookup, change, percent-change, ratio, sum, average, difference, points or refuse; `answer` is in the
table's own scale (3334 for 45.210 - 41.876 "in Mio. €"), `scale` what to multiply it by for the plain amount
(1e6 there), and null for a refusal: a question over a cell that says n/a, n.m., k. A., n.v.t., n.d., 不适用 or "–",
where the right answer computes nothing. The files are not committed (.gitignore): run this again, or let
benchmarks/answers/world_tables.py run it; a re-run writes the same bytes (zip entries and Office dates fixed).

Conventions covered, each where real documents have it: dot thousands with a decimal comma, space, no-break and
narrow no-break space thousands, the Swiss apostrophe, leading, Unicode, trailing and parenthesised minus,
currency before and after the figure, scale words in every language (in Mio. €, TEUR, en milliers d'euros,
（単位：百万円）, 单位：人民币万元, (000s), in miljoenen euro, in migliaia di euro ...), units in row labels,
percentage rows, fiscal periods (FY24, Q1 2024, H1 2023, 2023/24, 2023年3月期, Geschäftsjahr 2023, dates), a
transposed table (years as rows), and tables that are not financial (a lab, schools, train depots, a metro).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import html
import io
import json
import random
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.conftest import make_pdf, saved
from tests.made_files import odf

DEFAULT_OUT = Path(__file__).resolve().parent / "world-tables"
SEED = 84  # the lab's measurements are drawn from it: the same on every run
FIXED_DATE = datetime.datetime(2024, 1, 1)
FORMATS = {".html": "html", ".docx": "docx", ".xlsx": "xlsx", ".odt": "odt", ".csv": "csv", ".md": "md", ".pdf": "pdf"}

# (thousands, decimal) separators of the conventions written here.
STYLES = {"en": (",", "."), "de": (".", ","), "fr": ("\u202f", ","), "nbsp": ("\u00a0", ","), "space": (" ", ","),
          "ch": ("'", "."), "plain": ("", ".")}


def shown(value, style: str = "en", places: int = 0, minus: str = "-") -> str:
    """A number as a document of this convention writes it; minus: "-", "−" (Unicode), "()" or "trailing" ("12,3-").
    A word (n/a) stays as it is."""
    if isinstance(value, str):
        return value
    thousands, decimal = STYLES[style]
    text = f"{abs(value):,.{places}f}".replace(",", "\0").replace(".", decimal).replace("\0", thousands)
    if value >= 0:
        return text
    return {"-": "-" + text, "−": "\u2212" + text, "()": f"({text})", "trailing": text + "-"}[minus]


@dataclass
class Grid:
    """A table's figures by row label and column head: what a file writes and what the gold reads."""

    heads: list[str]
    rows: dict[str, list]  # label -> a value per head (a number, or a word for a missing one)
    places: dict[str, int] = field(default_factory=dict)  # decimals of a row, `default` where not named
    default: int = 0

    def __getitem__(self, key: tuple[str, str]):
        row, head = key
        return self.rows[row][self.heads.index(head)]

    def cells(self, style: str = "en", minus: str = "-", around: str = "{}") -> list[list[str]]:
        """The body as text, a label then each figure (`around` puts a currency around it: "{} €", "CHF {}")."""
        def written(label, value):
            places = self.places.get(label, self.default)
            return value if isinstance(value, str) else around.format(shown(value, style, places, minus))

        return [[label] + [written(label, v) for v in values] for label, values in self.rows.items()]


OPS = {
    "lookup": lambda a: a,
    "change": lambda new, old: new - old,
    "percent-change": lambda new, old: (new - old) / old * 100,
    "ratio": lambda a, b: a / b,
    "sum": lambda *values: sum(values),
    "average": lambda *values: sum(values) / len(values),
    "difference": lambda a, b: a - b,
    "points": lambda new, old: new - old,
}


def ask(kind: str, question: str, *operands, unit: str = "", scale: float = 1, note: str = "", language: str = ""):
    """A question whose gold is computed from its operands (the table's own cells); a ratio in "%" is a share times
    100. A refusal's operands hold the missing cell: its gold is null."""
    if kind == "refuse":
        assert any(isinstance(o, str) for o in operands), question
        answer = None
    else:
        assert all(isinstance(o, (int, float)) for o in operands), question
        answer = OPS[kind](*operands) * (100 if kind == "ratio" and unit == "%" else 1)
        answer = round(answer, 4)
    return {"language": language, "question": question, "kind": kind, "answer": answer, "unit": unit,
            "scale": scale, "note": note}


def variation(grid: Grid, label: str, style: str, places: int, minus: str = "-", missing: str = "n.m.") -> str:
    """A row's change from its second figure to its first, in percent, as the report's own column writes it;
    `missing` where either is not positive (a change from a loss to a profit means nothing)."""
    new, old = grid.rows[label]
    return shown(round(OPS["percent-change"](new, old), places), style, places, minus) if new > 0 and old > 0 else missing


def margin(grid: Grid, label: str, over: str, places: int = 1) -> list[float]:
    """A row of percentages (label / over × 100) as the report rounds them: the margin row the file writes."""
    return [round(a / b * 100, places) for a, b in zip(grid.rows[label], grid.rows[over])]


# ---- writers: each returns the file's bytes ------------------------------------------------------------------

def html_page(lang: str, title: str, intro: str, caption: str, head_rows: list[list[tuple[str, int]]],
              body: list[list[str]], after: str = "") -> bytes:
    """A web page with one `<table>`: `<caption>`, a `<thead>` of (text, colspan) cells (an empty first one is the
    corner), a `<tbody>` whose first cell is a row head."""
    e = html.escape
    th = lambda text, span: f"<th colspan={span}>{e(text)}</th>" if span > 1 else f"<th>{e(text)}</th>"
    thead = "".join("<tr>" + "".join(th(text, span) for text, span in row) + "</tr>\n" for row in head_rows)
    tbody = "".join(f"<tr><th scope=\"row\">{e(row[0])}</th>" + "".join(f"<td>{e(c)}</td>" for c in row[1:]) + "</tr>\n"
                    for row in body)
    page = (f"<!DOCTYPE html>\n<html lang=\"{lang}\">\n<head><meta charset=\"utf-8\"><title>{e(title)}</title></head>\n"
            f"<body>\n<nav><a href=\"/\">Home</a> | <a href=\"/investors\">Investors</a></nav>\n"
            f"<main>\n<h1>{e(title)}</h1>\n<p>{e(intro)}</p>\n"
            f"<table>\n<caption>{e(caption)}</caption>\n<thead>\n{thead}</thead>\n<tbody>\n{tbody}</tbody>\n</table>\n"
            f"{f'<p>{e(after)}</p>' if after else ''}\n</main>\n<footer>© 2024</footer>\n</body>\n</html>\n")
    return page.encode("utf-8")


def docx_file(title: str, section: str, scale_line: str, rows: list[list[str]], after: str = "") -> bytes:
    """A Word document: a title, a section heading, the scale in a paragraph of its own above a real table."""
    import docx

    document = docx.Document()
    document.core_properties.created = document.core_properties.modified = FIXED_DATE
    document.core_properties.author = document.core_properties.last_modified_by = "localcr benchmarks"
    document.core_properties.revision = 1
    document.add_heading(title, level=1)
    document.add_heading(section, level=2)
    document.add_paragraph(scale_line)
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    table.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    if after:
        document.add_paragraph(after)
    return pinned(saved(document))


def xlsx_file(sheets: dict[str, list[list]], formats: dict[str, dict[str, str]] | None = None) -> bytes:
    """A workbook of sheets of rows: numbers are numeric cells, strings text cells (as pasted from a report);
    formats: by sheet, an Excel number format by column ("B") or cell ("C3") for the numeric cells there."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    book.properties.created = book.properties.modified = FIXED_DATE
    book.properties.creator = "localcr benchmarks"
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        for where, number_format in (formats or {}).get(name, {}).items():
            cells = sheet[where]
            for cell in cells if isinstance(cells, tuple) else (cells,):
                if isinstance(cell.value, (int, float)):
                    cell.number_format = number_format
    buffer = io.BytesIO()
    book.save(buffer)
    return pinned(buffer.getvalue())


def odt_file(title: str, scale_line: str, rows: list[list[str]], after: str = "") -> bytes:
    """An OpenDocument text: a heading, the scale line, a table whose first row is its head."""
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, P

    def build(document):
        document.text.addElement(H(outlinelevel=1, text=title))
        document.text.addElement(P(text=scale_line))
        table = Table(name="Tableau1")
        table.addElement(TableColumn(numbercolumnsrepeated=len(rows[0])))
        for row in rows:
            tr = TableRow()
            for text in row:
                cell = TableCell(valuetype="string")
                cell.addElement(P(text=text))
                tr.addElement(cell)
            table.addElement(tr)
        document.text.addElement(table)
        if after:
            document.text.addElement(P(text=after))

    return pinned(odf("text", build))


def csv_file(rows: list[list[str]], delimiter: str = ",", encoding: str = "utf-8") -> bytes:
    """A CSV as a spreadsheet program saves it (CRLF lines; European Excel: `;` and its ANSI code page)."""
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter).writerows(rows)
    return buffer.getvalue().encode(encoding)


def markdown_file(title: str, intro: str, rows: list[list[str]], after: str = "") -> bytes:
    """A Markdown note with a pipe table, its first row the head."""
    lines = [f"# {title}", "", intro, "", "| " + " | ".join(rows[0]) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(rows[0]) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return ("\n".join(lines + ["", after] if after else lines) + "\n").encode("utf-8")


def pdf_rows(title: str, lines_above: list[str], rows: list[list[str]]) -> bytes:
    """A PDF whose text layer has a table as text rows ("Umsatzerlöse 45.210 41.876"), the heads a line above."""
    return make_pdf([[title, *lines_above, *(" ".join(row) for row in rows)]])


def pinned(data: bytes) -> bytes:
    """A zip-based file (DOCX, XLSX, ODT) again with fixed entry dates and core dates (openpyxl stamps `modified`
    when it saves, zipfile every entry), so a re-run writes the same bytes."""
    stamp = FIXED_DATE.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            body = source.read(item)
            if item.filename == "docProps/core.xml":
                body = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>" + stamp, body)
            info = zipfile.ZipInfo(item.filename, date_time=FIXED_DATE.timetuple()[:6])
            info.compress_type, info.external_attr = item.compress_type, item.external_attr
            target.writestr(info, body)
    return out.getvalue()


# ---- the documents: each returns (file name, language, bytes, questions) -------------------------------------

def en_segments():
    g = Grid(["Q1 2024", "Q2 2024", "Q1 2023", "Q2 2023"], {
        "Cloud": [1234.5, 1310.2, 1102.7, 1150.9],
        "Devices": [842.0, 815.6, 798.3, 770.1],
        "Services": [301.4, 322.8, 280.0, 295.5]}, default=1)
    g.rows["Total"] = [round(sum(column), 1) for column in zip(*g.rows.values())]
    g.rows["Operating margin (%)"] = [18.4, 19.1, 16.9, 17.2]
    head = [[("", 1), ("2024", 2), ("2023", 2)], [("", 1), ("Q1", 1), ("Q2", 1), ("Q1", 1), ("Q2", 1)]]
    data = html_page("en", "Northwind Systems: second quarter 2024 results",
                     "Revenue grew in every segment; the table compares each quarter with the same quarter a year ago.",
                     "Revenue by segment (Millions of dollars)", head, g.cells("en"),
                     "Operating margin is operating income as a share of total revenue.")
    m = "$"
    return "en-segments.html", "en", data, [
        ask("change", "How much did Cloud revenue change from Q2 2023 to Q2 2024?",
            g["Cloud", "Q2 2024"], g["Cloud", "Q2 2023"], unit=m, scale=1e6, note="quarters under colspan year heads"),
        ask("sum", "What was Devices revenue in Q1 and Q2 2024 together?",
            g["Devices", "Q1 2024"], g["Devices", "Q2 2024"], unit=m, scale=1e6),
        ask("lookup", "What was Services revenue in Q1 2023?", g["Services", "Q1 2023"], unit=m, scale=1e6,
            note="the second Q1 column: under the 2023 colspan"),
        ask("points", "By how many percentage points did the operating margin change from Q2 2023 to Q2 2024?",
            g["Operating margin (%)", "Q2 2024"], g["Operating margin (%)", "Q2 2023"], unit="pp",
            note="a unit in the row label"),
        ask("percent-change", "By what percentage did total revenue grow from Q1 2023 to Q1 2024?",
            g["Total", "Q1 2024"], g["Total", "Q1 2023"], unit="%"),
    ]


def ja_kessan():
    g = Grid(["2023年3月期", "2024年3月期"], {
        "売上高": [1284310, 1352907],
        "営業利益": [98452, 110385],
        "経常利益": [101230, 112004],
        "親会社株主に帰属する当期純利益": [65118, 71902]})
    g.rows["営業利益率（％）"] = margin(g, "営業利益", "売上高")
    g.places["営業利益率（％）"] = 1
    dividend = [42, 48]  # yen a share, under a table in millions of yen
    body = g.cells("en") + [["1株当たり配当金", *(f"¥{d}" for d in dividend)]]
    data = html_page("ja", "株式会社サクラ電機 2024年3月期 決算短信〔日本基準〕（連結）",
                     "連結経営成績は以下のとおりです。", "連結損益計算書（単位：百万円）",
                     [[("", 1), ("2023年3月期", 1), ("2024年3月期", 1)]], body)
    return "ja-kessan.html", "ja", data, [
        ask("percent-change", "2023年3月期から2024年3月期にかけて、売上高は何パーセント増加しましたか？",
            g["売上高", "2024年3月期"], g["売上高", "2023年3月期"], unit="%", note="older year first"),
        ask("lookup", "2024年3月期の営業利益はいくらですか？", g["営業利益", "2024年3月期"], unit="円", scale=1e6),
        ask("change", "How much did net income attributable to owners of the parent change from the year ended "
            "March 2023 to the year ended March 2024?", g["親会社株主に帰属する当期純利益", "2024年3月期"],
            g["親会社株主に帰属する当期純利益", "2023年3月期"], unit="円", scale=1e6, language="en"),
        ask("points", "営業利益率は2023年3月期から2024年3月期にかけて何ポイント改善しましたか？",
            g["営業利益率（％）", "2024年3月期"], g["営業利益率（％）", "2023年3月期"], unit="pp"),
        ask("lookup", "What was the dividend per share for the year ended March 2024?", dividend[1], unit="¥",
            note="a per-share row in yen under a table in millions of yen: no scale", language="en"),
    ]


def fr_resultats():
    g = Grid(["2023", "2022"], {
        "Chiffre d'affaires": [12345.6, 11872.3],
        "Résultat opérationnel courant": [1502.4, 1388.9],
        "Résultat financier": [-212.7, -198.4],
        "Résultat net part du groupe": [845.1, -120.6]}, default=1)
    body = [row + [variation(g, row[0], "nbsp", 1, "−")] for row in g.cells("nbsp", "−")]
    data = html_page("fr", "Groupe Lumière : résultats annuels 2023",
                     "Le chiffre d'affaires progresse ; le résultat net redevient positif.",
                     "Compte de résultat consolidé (en millions d'euros)",
                     [[("", 1), ("2023", 1), ("2022", 1), ("Variation (%)", 1)]], body)
    return "fr-resultats.html", "fr", data, [
        ask("ratio", "Quelle est la marge opérationnelle courante en 2023, c'est-à-dire le résultat opérationnel "
            "courant rapporté au chiffre d'affaires, en pourcentage ?",
            g["Résultat opérationnel courant", "2023"], g["Chiffre d'affaires", "2023"], unit="%"),
        ask("change", "De combien le chiffre d'affaires a-t-il augmenté entre 2022 et 2023 ?",
            g["Chiffre d'affaires", "2023"], g["Chiffre d'affaires", "2022"], unit="€", scale=1e6,
            note="no-break space thousands, as &nbsp; writes them"),
        ask("refuse", "De quel pourcentage le résultat net part du groupe a-t-il varié entre 2022 et 2023 ?",
            "n.m.", note="the variation cell says n.m. (from a loss to a profit)"),
        ask("lookup", "What was the Lumière group's financial result in 2022?", g["Résultat financier", "2022"],
            unit="€", scale=1e6, note="Unicode minus", language="en"),
    ]


def nl_leerlingen():
    g = Grid(["2021/22", "2022/23", "2023/24"], {
        "De Regenboog": [412, 398, 421],
        "Het Baken": [1204, 1187, 1236],
        "Sint-Jozef": [287, 301, 295],
        "Montessori Duinrand": [156, 162, 171]})
    g.rows["Totaal"] = [sum(column) for column in zip(*g.rows.values())]
    head = [[("", 1), ("Schooljaar", 3)], [("School", 1), ("2021/22", 1), ("2022/23", 1), ("2023/24", 1)]]
    data = html_page("nl", "Gemeente Zandvoort-Noord: onderwijsmonitor",
                     "Het aantal leerlingen op 1 oktober van elk schooljaar, per basisschool in de gemeente.",
                     "Aantal leerlingen per school", head, g.cells("de"))
    return "nl-leerlingen.html", "nl", data, [
        ask("change", "Met hoeveel leerlingen is Het Baken gegroeid van 2022/23 tot 2023/24?",
            g["Het Baken", "2023/24"], g["Het Baken", "2022/23"], note="not financial; dot thousands"),
        ask("average", "Hoeveel leerlingen had De Regenboog gemiddeld over de drie schooljaren?",
            *g.rows["De Regenboog"]),
        ask("percent-change", "By what percentage did total enrolment change from 2021/22 to 2023/24?",
            g["Totaal", "2023/24"], g["Totaal", "2021/22"], unit="%", language="en"),
        ask("lookup", "Hoeveel leerlingen telde Sint-Jozef in 2022/23?", g["Sint-Jozef", "2022/23"]),
    ]


def de_konzern():
    g = Grid(["Geschäftsjahr 2023", "Geschäftsjahr 2022"], {
        "Umsatzerlöse": [18742, 17015],
        "Umsatzkosten": [-12904, -11876],
        "EBIT": [1873, 1502],
        "Konzernergebnis": [1204, 987]})
    g.rows["EBIT-Marge (%)"] = margin(g, "EBIT", "Umsatzerlöse")
    g.places["EBIT-Marge (%)"] = 1
    rows = [["", *g.heads]] + g.cells("de", "−") + [["Dividende je Aktie", "2,40 €", "2,10 €"]]
    data = docx_file("Konzernabschluss der Brandtwerke AG", "Konzern-Gewinn- und Verlustrechnung", "in Mio. €", rows,
                     "Die EBIT-Marge ist das EBIT im Verhältnis zu den Umsatzerlösen.")
    y, p = "Geschäftsjahr 2023", "Geschäftsjahr 2022"
    return "de-konzern.docx", "de", data, [
        ask("change", "Um wie viel sind die Umsatzerlöse im Geschäftsjahr 2023 gegenüber dem Vorjahr gestiegen?",
            g["Umsatzerlöse", y], g["Umsatzerlöse", p], unit="€", scale=1e6, note="dot thousands in Mio. €"),
        ask("percent-change", "Um wie viel Prozent ist das EBIT von 2022 auf 2023 gestiegen?",
            g["EBIT", y], g["EBIT", p], unit="%"),
        ask("points", "By how many percentage points did the EBIT margin change from fiscal 2022 to fiscal 2023?",
            g["EBIT-Marge (%)", y], g["EBIT-Marge (%)", p], unit="pp", language="en"),
        ask("lookup", "Wie hoch war das Konzernergebnis im Geschäftsjahr 2022?", g["Konzernergebnis", p],
            unit="€", scale=1e6),
    ]


def en_tensile():
    rng = random.Random(SEED)
    samples = {f"Sample {name}": [round(rng.uniform(420, 480), 1) for _ in range(3)] for name in "ABCDE"}
    samples["Sample C"][2] = "n/a"
    g = Grid(["Run 1", "Run 2", "Run 3"], samples, default=1)
    data = docx_file("Tensile strength of welded joints, batch 7", "Results",
                     "Ultimate tensile strength (MPa); three runs per sample, a run lost to a clamp failure is n/a.",
                     [["", *g.heads]] + g.cells("en"), "Tested at 21 °C on the 100 kN frame.")
    return "en-tensile.docx", "en", data, [
        ask("average", "What is the mean tensile strength of sample B over its three runs?", *g.rows["Sample B"],
            unit="MPa", note="a lab's measurements"),
        ask("difference", "What is the difference in tensile strength between sample D and sample B in run 1?",
            g["Sample D", "Run 1"], g["Sample B", "Run 1"], unit="MPa"),
        ask("refuse", "By how much did the strength of sample C change from run 2 to run 3?", g["Sample C", "Run 3"],
            note="run 3 of sample C is n/a"),
        ask("lookup", "What strength did sample E reach in run 2?", g["Sample E", "Run 2"], unit="MPa"),
    ]


def it_bilancio():
    g = Grid(["2023", "2022"], {
        "Ricavi delle vendite": [284512, 261037],
        "EBITDA": [41226, 35804],
        "Oneri non ricorrenti": ["n.d.", 2150],
        "Utile netto": [18904, 15377]})
    data = docx_file("Bilancio consolidato 2023: Officine Rinaldi S.p.A.", "Conto economico consolidato",
                     "(in migliaia di euro)", [["", *g.heads]] + g.cells("de"))
    return "it-bilancio.docx", "it", data, [
        ask("change", "Di quanto sono aumentati i ricavi delle vendite dal 2022 al 2023?",
            g["Ricavi delle vendite", "2023"], g["Ricavi delle vendite", "2022"], unit="€", scale=1e3),
        ask("percent-change", "Di quale percentuale è cresciuto l'utile netto nel 2023 rispetto al 2022?",
            g["Utile netto", "2023"], g["Utile netto", "2022"], unit="%"),
        ask("refuse", "Di quanto sono variati gli oneri non ricorrenti dal 2022 al 2023?",
            g["Oneri non ricorrenti", "2023"], note="n.d. (non disponibile) in 2023"),
        ask("ratio", "What share of EBITDA was net profit in 2023, in percent?",
            g["Utile netto", "2023"], g["EBITDA", "2023"], unit="%", language="en"),
    ]


def en_five_year():
    years = ["2019", "2020", "2021", "2022", "2023"]
    revenue = [1204.3, 1150.8, 1298.6, 1402.1, 1477.9]
    profit = [98.2, 71.4, 110.5, 126.3, 139.8]
    staff = [8412, 8105, 8630, 9012, 9240]
    heads = ["Revenue ($m)", "Operating profit ($m)", "Operating margin (%)", "Employees"]
    g = Grid(heads, {y: [r, p, round(p / r * 100, 1), s] for y, r, p, s in zip(years, revenue, profit, staff)})
    rows = [["Harbour Foods plc: five-year summary"], [], ["Year", *heads]] + [[int(y), *v] for y, v in g.rows.items()]
    data = xlsx_file({"Five-year summary": rows}, {"Five-year summary": {"B": "#,##0.0", "C": "#,##0.0", "E": "#,##0"}})
    return "en-five-year.xlsx", "en", data, [
        ask("change", "By how much did Harbour Foods' revenue grow from 2021 to 2023?",
            g["2023", "Revenue ($m)"], g["2021", "Revenue ($m)"], unit="$", scale=1e6,
            note="transposed: years are rows; the scale is in the column head"),
        ask("average", "What was the average number of employees from 2019 to 2023?",
            *(g[y, "Employees"] for y in years)),
        ask("points", "By how many percentage points did the operating margin change between 2020 and 2023?",
            g["2023", "Operating margin (%)"], g["2020", "Operating margin (%)"], unit="pp"),
        ask("lookup", "What was operating profit in 2020?", g["2020", "Operating profit ($m)"], unit="$", scale=1e6),
        ask("ratio", "What was revenue per employee in 2023?", g["2023", "Revenue ($m)"], g["2023", "Employees"],
            unit="$", scale=1e6, note="$m per employee: 0.16 in the table's scale, about $160,000"),
    ]


def de_quartal():
    g = Grid(["Q1 2024", "Q1 2023"], {
        "Umsatzerlöse": [52814.3, 48907.6],
        "Materialaufwand": [-21408.9, -19877.2],
        "Personalaufwand": [-14220.5, -13905.0],
        "Sonstige betriebliche Erträge": ["k. A.", 1204.7],
        "EBITDA": [6548.9, 5771.1]}, default=1)
    as_text = {("Umsatzerlöse", 1), ("Materialaufwand", 1), ("Personalaufwand", 0)}  # pasted from the report as text
    body = [[label] + [shown(v, "de", 1) if (label, i) in as_text else v for i, v in enumerate(values)]
            for label, values in g.rows.items()]
    margins = margin(g, "EBITDA", "Umsatzerlöse")
    kennzahlen = [["Kennzahl", *g.heads], ["EBITDA-Marge", shown(margins[0], "de", 1) + " %", margins[1] / 100],
                  ["Mitarbeitende (FTE)", 1204, 1187]]
    data = xlsx_file({"GuV": [["Quartalsbericht Q1 2024, Konzern"], ["in TEUR"], ["Position", *g.heads], *body],
                      "Kennzahlen": kennzahlen}, {"GuV": {"B": "#,##0.0", "C": "#,##0.0"}, "Kennzahlen": {"C2": "0.0%"}})
    return "de-quartal.xlsx", "de", data, [
        ask("change", "Um wie viel sind die Umsatzerlöse im Q1 2024 gegenüber dem Q1 2023 gestiegen?",
            g["Umsatzerlöse", "Q1 2024"], g["Umsatzerlöse", "Q1 2023"], unit="€", scale=1e3,
            note="TEUR; one figure a numeric cell, the other text '48.907,6'"),
        ask("points", "Um wie viele Prozentpunkte hat sich die EBITDA-Marge im Q1 2024 gegenüber dem Vorjahresquartal "
            "verändert?", *margins, unit="pp", note="'12,4 %' as text against a numeric cell formatted 0.0%"),
        ask("refuse", "Um wie viel Prozent haben sich die sonstigen betrieblichen Erträge gegenüber dem Q1 2023 "
            "verändert?", g["Sonstige betriebliche Erträge", "Q1 2024"], note="k. A. in Q1 2024"),
        ask("lookup", "What were personnel expenses in Q1 2023?", g["Personalaufwand", "Q1 2023"], unit="€",
            scale=1e3, language="en"),
    ]


def zh_caiwu():
    g = Grid(["2023年度", "2022年度"], {
        "营业收入": [185623.45, 162908.12],
        "营业成本": [121488.30, 109877.64],
        "净利润": [23406.71, 19822.05],
        "新业务收入": [4210.00, "–"]}, default=2)
    gross = [round((r - c) / r * 100, 2) for r, c in zip(g.rows["营业收入"], g.rows["营业成本"])]
    rows = [["合并利润表"], ["单位：人民币万元"], ["项目", *g.heads], *([k, *v] for k, v in g.rows.items()),
            ["毛利率(%)", *gross]]
    data = xlsx_file({"利润表": rows}, {"利润表": {"B": "#,##0.00", "C": "#,##0.00"}})
    return "zh-caiwu.xlsx", "zh", data, [
        ask("percent-change", "2023年度营业收入比2022年度增长了百分之几？", g["营业收入", "2023年度"],
            g["营业收入", "2022年度"], unit="%", note="单位：人民币万元 in a line above the head"),
        ask("points", "2023年度毛利率比上年提高了多少个百分点？", *gross, unit="pp"),
        ask("refuse", "新业务收入2023年度比2022年度增长了百分之几？", g["新业务收入", "2022年度"],
            note="the new business has no 2022 figure: '–'"),
        ask("difference", "What was the difference between operating revenue and operating costs in 2023?",
            g["营业收入", "2023年度"], g["营业成本", "2023年度"], unit="¥", scale=1e4, language="en"),
    ]


def de_ch_filialen():
    heads = ["H1 2024", "H1 2023", "Mitarbeitende"]
    g = Grid(heads, {
        "Zürich": [4812.3, 4590.8, 38],
        "Basel": [2904.2, 2761.5, 24],
        "Bern": [1987.4, 2010.6, 17],
        "Luzern": [1234.5, 1178.9, 11]})
    rows = [["Umsatz nach Filiale (in Tausend CHF)"], ["Filiale", *heads]]
    rows += [[name, "CHF " + shown(h1, "ch", 1), h0, staff] for name, (h1, h0, staff) in g.rows.items()]
    data = xlsx_file({"Filialen": rows}, {"Filialen": {"C": "#,##0.0"}})
    return "de-ch-filialen.xlsx", "de", data, [
        ask("change", "Um wie viel ist der Umsatz der Filiale Basel vom H1 2023 auf das H1 2024 gestiegen?",
            g["Basel", "H1 2024"], g["Basel", "H1 2023"], unit="CHF", scale=1e3,
            note="text cells 'CHF 2'904.2' against numeric ones"),
        ask("ratio", "Wie viel Umsatz erzielte die Filiale Zürich im H1 2024 pro Mitarbeitendem?",
            g["Zürich", "H1 2024"], g["Zürich", "Mitarbeitende"], unit="CHF", scale=1e3),
        ask("sum", "What was the combined H1 2024 revenue of the Bern and Luzern branches?",
            g["Bern", "H1 2024"], g["Luzern", "H1 2024"], unit="CHF", scale=1e3, language="en"),
    ]


def fr_association():
    g = Grid(["2023/24", "2022/23"], {
        "Cotisations": [1284.5, 1190.2],
        "Subventions publiques": [3402.0, 3655.8],
        "Dons": [512.7, 488.1],
        "Charges de personnel": [2904.3, 2811.6],
        "Résultat de l'exercice": [118.4, -65.2]}, default=1)
    data = odt_file("Rapport financier 2023/24 : association Les Jardins Partagés",
                    "Compte de résultat (en milliers d'euros)", [["", *g.heads]] + g.cells("fr", "−"),
                    "L'exercice court du 1er septembre au 31 août.")
    y, p = "2023/24", "2022/23"
    return "fr-association.odt", "fr", data, [
        ask("sum", "Quel est le total des cotisations et des dons en 2023/24 ?", g["Cotisations", y], g["Dons", y],
            unit="€", scale=1e3, note="narrow no-break space thousands"),
        ask("percent-change", "De quel pourcentage les subventions publiques ont-elles baissé entre 2022/23 et 2023/24 ?",
            g["Subventions publiques", y], g["Subventions publiques", p], unit="%"),
        ask("change", "How much did the association's result for the year change from 2022/23 to 2023/24?",
            g["Résultat de l'exercice", y], g["Résultat de l'exercice", p], unit="€", scale=1e3, language="en",
            note="from a Unicode-minus loss to a profit"),
        ask("lookup", "À combien s'élevaient les charges de personnel en 2022/23 ?", g["Charges de personnel", p],
            unit="€", scale=1e3),
    ]


def es_memoria():
    g = Grid(["1S 2024", "1S 2023"], {
        "Importe neto de la cifra de negocios": [98452, 91230],
        "EBITDA": [14208, 12911],
        "Resultado neto": [6034, 5387],
        "Deuda financiera neta": [41775, 44902]})
    data = odt_file("Informe financiero semestral: Grupo Almendral",
                    "Cuenta de resultados consolidada (en miles de euros)", [["", *g.heads]] + g.cells("space"))
    y, p = "1S 2024", "1S 2023"
    return "es-memoria.odt", "es", data, [
        ask("change", "¿Cuánto aumentó el importe neto de la cifra de negocios en el primer semestre de 2024 respecto "
            "al primer semestre de 2023?", g["Importe neto de la cifra de negocios", y],
            g["Importe neto de la cifra de negocios", p], unit="€", scale=1e3, note="halves written 1S; space thousands"),
        ask("percent-change", "¿En qué porcentaje creció el EBITDA del primer semestre de 2024 frente al de 2023?",
            g["EBITDA", y], g["EBITDA", p], unit="%"),
        ask("change", "How much did net financial debt change from H1 2023 to H1 2024?", g["Deuda financiera neta", y],
            g["Deuda financiera neta", p], unit="€", scale=1e3, language="en"),
    ]


def en_depots():
    g = Grid(["Region", "Trains serviced", "Staff", "Average turnaround (h)"], {
        "Kiel": ["North", 1248, 52, 3.4],
        "Hamburg-Eidelstedt": ["North", 3102, 131, 2.9],
        "Rostock": ["North-East", 876, 41, 4.1],
        "Lübeck": ["North", 1044, 47, 3.6],
        "Hannover": ["Central", 2530, 98, 3.1]})
    rows = [["Depot", *g.heads]] + [[name, region, str(trains), str(staff), f"{hours:.1f}"]
                                    for name, (region, trains, staff, hours) in g.rows.items()]
    staff = [v[2] for v in g.rows.values()]
    return "en-depots.csv", "en", csv_file(rows), [
        ask("ratio", "How many trains were serviced per member of staff at the Kiel depot?",
            g["Kiel", "Trains serviced"], g["Kiel", "Staff"], note="the issue's question; no arithmetic word"),
        ask("sum", "How many staff work at the Kiel and Lübeck depots together?",
            g["Kiel", "Staff"], g["Lübeck", "Staff"]),
        ask("difference", "How many more trains were serviced at Hannover than at Rostock?",
            g["Hannover", "Trains serviced"], g["Rostock", "Trains serviced"]),
        ask("lookup", "What is the average turnaround at the Rostock depot?", g["Rostock", "Average turnaround (h)"],
            unit="h"),
        ask("average", "What is the average number of staff across the five depots?", *staff),
    ]


def de_kostenstellen():
    heads = ["Ist 2023 (Tsd. €)", "Plan 2023 (Tsd. €)", "Abweichung (Tsd. €)"]
    centres = {"4100 Fertigung": (1234.5, 1180.0), "4200 Logistik": (842.7, 870.0), "4300 Vertrieb": (2015.4, 1950.0),
               "4400 Verwaltung": (655.1, 690.0), "4500 IT": (418.9, 400.0)}
    g = Grid(heads, {k: [ist, plan, round(ist - plan, 1)] for k, (ist, plan) in centres.items()}, default=1)
    rows = [["Kostenstelle", "Bezeichnung", *heads]] + [label.split(" ", 1) + cells[1:]
                                                        for label, cells in zip(g.rows, g.cells("de", "trailing"))]
    data = csv_file(rows, delimiter=";", encoding="cp1252")
    ist, plan, gap = heads
    return "de-kostenstellen.csv", "de", data, [
        ask("lookup", "Wie hoch war die Abweichung der Kostenstelle Logistik?", g["4200 Logistik", gap], unit="€",
            scale=1e3, note="trailing minus as SAP exports it: '27,3-'; ';' and cp1252"),
        ask("sum", "Wie hoch waren die Ist-Kosten von Fertigung und Vertrieb zusammen?",
            g["4100 Fertigung", ist], g["4300 Vertrieb", ist], unit="€", scale=1e3),
        ask("difference", "What is the difference between actual and planned costs of the Verwaltung cost centre?",
            g["4400 Verwaltung", ist], g["4400 Verwaltung", plan], unit="€", scale=1e3, language="en"),
        ask("percent-change", "Um wie viel Prozent lagen die Ist-Kosten der IT über dem Plan?",
            g["4500 IT", ist], g["4500 IT", plan], unit="%", note="actual against plan, not a year"),
    ]


def nl_omzet():
    g = Grid(["2023", "2022"], {
        "Netto-omzet (in miljoenen euro)": [4812.6, 4390.1],
        "Bedrijfsresultaat (in miljoenen euro)": [512.3, 468.9],
        "Nettowinst (in miljoenen euro)": [344.0, 301.7],
        "Dividend per aandeel": [1.45, "n.v.t."],
        "Aantal medewerkers": [12408, 11975]}, places={"Aantal medewerkers": 0, "Dividend per aandeel": 2}, default=1)
    body = [[label] + [("€ " + c if label.startswith("Dividend") and c != "n.v.t." else c) for c in cells]
            for label, *cells in g.cells("de")]
    data = csv_file([["Kerncijfers", *g.heads], *body], delimiter=";")
    omzet, winst = "Netto-omzet (in miljoenen euro)", "Nettowinst (in miljoenen euro)"
    return "nl-omzet.csv", "nl", data, [
        ask("change", "Met hoeveel is de netto-omzet gestegen van 2022 naar 2023?", g[omzet, "2023"], g[omzet, "2022"],
            unit="€", scale=1e6, note="the scale in the row label"),
        ask("percent-change", "Met hoeveel procent is de nettowinst in 2023 gestegen ten opzichte van 2022?",
            g[winst, "2023"], g[winst, "2022"], unit="%"),
        ask("refuse", "Met hoeveel is het dividend per aandeel gestegen van 2022 naar 2023?",
            g["Dividend per aandeel", "2022"], note="n.v.t. in 2022"),
        ask("ratio", "What was net revenue per employee in 2023?", g[omzet, "2023"], g["Aantal medewerkers", "2023"],
            unit="€", scale=1e6, language="en", note="millions of euros per employee: about €388,000"),
    ]


def en_units():
    g = Grid(["FY24 units (000s)", "FY23 units (000s)"], {
        "North America": [1245, 1190], "Europe": [980, 1032], "Asia Pacific": [1410, 1288], "Latin America": [312, 330]})
    change = {k: a - b for k, (a, b) in g.rows.items()}
    rows = [["Region", *g.heads, "Change (000s)"]]
    rows += [row + [shown(change[row[0]], "en", 0, "()")] for row in g.cells("plain")]
    new, old = g.heads
    return "en-units.csv", "en", csv_file(rows), [
        ask("lookup", "What was the change in units sold in Europe from FY23 to FY24?", change["Europe"], scale=1e3,
            note="parenthesised negative: (52)"),
        ask("sum", "How many units were sold in FY24 across all four regions?", *(v[0] for v in g.rows.values()),
            scale=1e3, note="(000s) in the head"),
        ask("percent-change", "By what percentage did Asia Pacific unit sales grow from FY23 to FY24?",
            g["Asia Pacific", new], g["Asia Pacific", old], unit="%"),
    ]


def en_fund():
    g = Grid(["FY2024", "FY2023", "FY2022"], {
        "Collaboration revenue": [18420, 12977, "n/a"],
        "Research and development": [-61305, -48220, -39874],
        "Net loss": [-52982, -41105, -35660],
        "Net loss per share ($)": [-1.12, -0.94, -0.87],
        "Cash and equivalents": [148550, 201337, 176002]}, places={"Net loss per share ($)": 2})
    data = markdown_file("Ridgeline Biotech: selected financial data",
                         "(in thousands of dollars, except per-share data)", [["", *g.heads], *g.cells("en", "()")],
                         "Collaboration revenue began with the Halvorsen agreement in FY2023.")
    return "en-fund.md", "en", data, [
        ask("lookup", "What was Ridgeline's net loss in FY2024?", g["Net loss", "FY2024"], unit="$", scale=1e3,
            note="(52,982): a negative stays negative"),
        ask("refuse", "By how much did collaboration revenue grow from FY2022 to FY2023?",
            g["Collaboration revenue", "FY2022"], note="n/a in FY2022: not 0"),
        ask("change", "How much did cash and equivalents change from FY2023 to FY2024?",
            g["Cash and equivalents", "FY2024"], g["Cash and equivalents", "FY2023"], unit="$", scale=1e3),
        ask("percent-change", "By what percentage did research and development spending increase from FY2023 to FY2024?",
            g["Research and development", "FY2024"], g["Research and development", "FY2023"], unit="%"),
    ]


def ja_eki():
    g = Grid(["2022年度", "2023年度"], {
        "中央駅": [48215, 52904], "港町": [21330, 22018], "大学前": [15872, 17455], "市役所前": [12044, 11803]})
    data = markdown_file("市営地下鉄 駅別乗車人員", "一日平均乗車人員（単位：人）", [["駅名", *g.heads], *g.cells("en")],
                         "大学前駅は2023年度に新キャンパスが開業した。")
    return "ja-eki.md", "ja", data, [
        ask("change", "大学前駅の一日平均乗車人員は2022年度から2023年度にかけて何人増えましたか？",
            g["大学前", "2023年度"], g["大学前", "2022年度"], unit="人", note="a metro's ridership"),
        ask("sum", "2023年度の中央駅と港町駅の一日平均乗車人員の合計は何人ですか？", g["中央駅", "2023年度"],
            g["港町", "2023年度"], unit="人"),
        ask("percent-change", "By what percentage did daily ridership at 市役所前 station change from fiscal 2022 to "
            "fiscal 2023?", g["市役所前", "2023年度"], g["市役所前", "2022年度"], unit="%", language="en"),
    ]


def es_ventas():
    g = Grid(["1T 2024", "1T 2023"], {
        "Ventas": [1234.5, 1102.8], "Beneficio bruto": [402.1, 348.6], "Gastos de explotación": [-211.4, -198.0]},
        default=1)
    g.rows["Margen bruto (%)"] = margin(g, "Beneficio bruto", "Ventas")
    data = markdown_file("Resultados trimestrales: Distribuciones Levante, S.A.", "Cifras en millones de euros.",
                         [["", *g.heads], *g.cells("de", "−")])
    y, p = g.heads
    return "es-ventas.md", "es", data, [
        ask("points", "¿En cuántos puntos porcentuales varió el margen bruto del primer trimestre de 2024 respecto al "
            "del primer trimestre de 2023?", g["Margen bruto (%)", y], g["Margen bruto (%)", p], unit="pp"),
        ask("lookup", "¿Cuáles fueron las ventas del primer trimestre de 2023?", g["Ventas", p], unit="€", scale=1e6,
            note="'1.102,8' in millions"),
        ask("ratio", "What were operating expenses as a percentage of sales in Q1 2024?",
            g["Gastos de explotación", y], g["Ventas", y], unit="%", language="en"),
    ]


def de_geschaeftsbericht():
    g = Grid(["2023", "2022"], {
        "Umsatzerlöse": [45210, 41876], "Materialaufwand": [-28944, -27310], "Personalaufwand": [-6102, -5733],
        "EBITDA": [7861, 6902], "Abschreibungen": [-2417, -2280], "EBIT": [5444, 4622],
        "Konzernjahresüberschuss": [3608, 3015]})
    data = pdf_rows("Nordlicht Energie AG - Geschäftsbericht 2023",
                    ["Konzern-Gewinn- und Verlustrechnung", "in Mio. EUR 2023 2022"], g.cells("de"))
    return "de-geschaeftsbericht.pdf", "de", data, [
        ask("change", "Um wie viel sind die Umsatzerlöse 2023 gegenüber 2022 gestiegen?", g["Umsatzerlöse", "2023"],
            g["Umsatzerlöse", "2022"], unit="€", scale=1e6, note="'45.210' is forty-five thousand million"),
        ask("percent-change", "Um wie viel Prozent stieg der Konzernjahresüberschuss von 2022 auf 2023?",
            g["Konzernjahresüberschuss", "2023"], g["Konzernjahresüberschuss", "2022"], unit="%"),
        ask("ratio", "What was the EBITDA margin in 2023, EBITDA as a percentage of revenue?", g["EBITDA", "2023"],
            g["Umsatzerlöse", "2023"], unit="%", language="en"),
        ask("lookup", "Wie hoch waren die Abschreibungen 2022?", g["Abschreibungen", "2022"], unit="€", scale=1e6),
    ]


def en_annual():
    g = Grid(["FY2024", "FY2023"], {
        "Revenue": [3842.7, 3519.4], "Cost of sales": [-2611.0, -2497.3], "Exploration expense": [-145.2, -162.8],
        "Operating income": [1086.5, 859.3], "Net income (loss)": [702.3, -118.6],
        "Earnings (loss) per share ($)": [3.41, -0.58]}, places={"Earnings (loss) per share ($)": 2}, default=1)
    data = pdf_rows("Cobalt Ridge Mining Corp. - Annual Report 2024",
                    ["Consolidated statements of operations",
                     "(Millions of dollars, except per share amounts) FY2024 FY2023"],
                    g.cells("en", "()"))
    return "en-annual.pdf", "en", data, [
        ask("change", "How much did revenue increase from FY2023 to FY2024?", g["Revenue", "FY2024"],
            g["Revenue", "FY2023"], unit="$", scale=1e6),
        ask("lookup", "What was Cobalt Ridge's net income (loss) in FY2023?", g["Net income (loss)", "FY2023"], unit="$",
            scale=1e6, note="(118.6)"),
        ask("percent-change", "By what percentage did operating income grow from FY2023 to FY2024?",
            g["Operating income", "FY2024"], g["Operating income", "FY2023"], unit="%"),
        ask("difference", "How much lower was exploration expense in FY2024 than in FY2023?",
            g["Exploration expense", "FY2024"], g["Exploration expense", "FY2023"], unit="$", scale=1e6),
    ]


def nl_jaarverslag():
    g = Grid(["2023", "2022"], {
        "Netto-omzet": [184215, 171902], "Kosten van uitbesteed werk": [-61408, -58114],
        "Personeelskosten": [-72930, -68455], "Bedrijfsresultaat": [21874, 18390], "Nettoresultaat": [14102, 11867]})
    data = pdf_rows("Van der Berg Logistiek N.V. - Jaarverslag 2023",
                    ["Geconsolideerde winst-en-verliesrekening", "(bedragen x 1.000 euro) 2023 2022"], g.cells("de"))
    return "nl-jaarverslag.pdf", "nl", data, [
        ask("change", "Met hoeveel is het bedrijfsresultaat gestegen van 2022 naar 2023?", g["Bedrijfsresultaat", "2023"],
            g["Bedrijfsresultaat", "2022"], unit="€", scale=1e3, note="'bedragen x 1.000 euro'"),
        ask("ratio", "Hoeveel procent van de netto-omzet was het nettoresultaat in 2023?", g["Nettoresultaat", "2023"],
            g["Netto-omzet", "2023"], unit="%"),
        ask("percent-change", "By what percentage did net revenue grow from 2022 to 2023?", g["Netto-omzet", "2023"],
            g["Netto-omzet", "2022"], unit="%", language="en"),
    ]


def it_relazione():
    g = Grid(["30.06.2024", "31.12.2023"], {
        "Impieghi alla clientela": [12845.3, 12402.9], "Raccolta diretta": [15230.8, 14987.1],
        "Patrimonio netto": [1402.6, 1355.0], "CET1 ratio (%)": [15.8, 15.2]}, default=1)
    data = pdf_rows("Banca Popolare del Garda - Relazione finanziaria semestrale",
                    ["Dati patrimoniali (in milioni di euro) 30.06.2024 31.12.2023"], g.cells("de"))
    y, p = g.heads
    return "it-relazione.pdf", "it", data, [
        ask("change", "Di quanto sono cresciuti gli impieghi alla clientela tra il 31.12.2023 e il 30.06.2024?",
            g["Impieghi alla clientela", y], g["Impieghi alla clientela", p], unit="€", scale=1e6,
            note="periods are dates"),
        ask("points", "Di quanti punti percentuali è migliorato il CET1 ratio tra fine 2023 e il 30 giugno 2024?",
            g["CET1 ratio (%)", y], g["CET1 ratio (%)", p], unit="pp"),
        ask("ratio", "What is the ratio of loans to customers to direct funding at 30 June 2024?",
            g["Impieghi alla clientela", y], g["Raccolta diretta", y], language="en"),
    ]


def zh_yingye():
    g = Grid(["2024年上半年", "2023年上半年"], {
        "营业收入": [8412.5, 7306.9], "归属于上市公司股东的净利润": [912.3, 1048.7],
        "经营活动产生的现金流量净额": [-215.4, 602.8]}, default=1)
    body = [row + [variation(g, row[0], "en", 2, missing="不适用")] for row in g.cells("en")]
    data = markdown_file("华东新能源股份有限公司 2024年半年度报告", "主要会计数据（单位：百万元）",
                         [["项目", *g.heads, "本报告期比上年同期增减(%)"], *body])
    y, p = g.heads
    return "zh-yingye.md", "zh", data, [
        ask("change", "2024年上半年营业收入比2023年上半年增加了多少？", g["营业收入", y], g["营业收入", p], unit="元",
            scale=1e6, note="halves: 上半年"),
        ask("change", "归属于上市公司股东的净利润同比下降了多少？", g["归属于上市公司股东的净利润", y],
            g["归属于上市公司股东的净利润", p], unit="元", scale=1e6),
        ask("refuse", "By what percentage did net cash from operating activities change in H1 2024 against H1 2023?",
            "不适用", language="en", note="the change column says 不适用 (not applicable): from an inflow to an outflow"),
    ]


DOCUMENTS = (en_segments, ja_kessan, fr_resultats, nl_leerlingen, de_konzern, en_tensile, it_bilancio, en_five_year,
             de_quartal, zh_caiwu, de_ch_filialen, fr_association, es_memoria, en_depots, de_kostenstellen, nl_omzet,
             en_units, en_fund, ja_eki, es_ventas, de_geschaeftsbericht, en_annual, nl_jaarverslag, it_relazione, zh_yingye)


def generate(out: Path = DEFAULT_OUT) -> list[dict]:
    """Write every document under out/docs and the questions to out/questions.jsonl; the questions."""
    (out / "docs").mkdir(parents=True, exist_ok=True)
    questions = []
    for make in DOCUMENTS:
        name, language, data, asked = make()
        (out / "docs" / name).write_bytes(data)
        for number, question in enumerate(asked, start=1):
            questions.append({"id": f"{Path(name).stem}-{number}", "file": f"docs/{name}",
                              "format": FORMATS[Path(name).suffix], **question,
                              "language": question["language"] or language})
    (out / "questions.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                                         encoding="utf-8")
    return questions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the folder to write docs/ and questions.jsonl into")
    out = p.parse_args().out
    questions = generate(out)
    print(f"{len(DOCUMENTS)} documents, {len(questions)} questions in {out}")


if __name__ == "__main__":
    main()
