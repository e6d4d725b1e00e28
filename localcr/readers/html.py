"""HTML: a page's main text, parsed by lexbor (selectolax, an HTML5 parser), with its headings as Markdown
headings (so heading paths work), its `<pre>` blocks as fenced code, and its tables as every reader writes them
(a row per line, cells joined by CELL_SEPARATOR, spans written out), so the table reader reads them.

Boilerplate goes: scripts and styles, navigation, headers' menus, footers, sidebars, forms, cookie and consent
banners (by element, ARIA role, or class/id words such as `cookie`, `sidebar`, `breadcrumb`). The text then
comes from the page's `<main>` (or `role="main"`), else its `<article>`, else its body. Measured on the Python
manual (benchmarks/formats/html_text.py): against trafilatura, as complete and cleaner on its pages' main text, with
more of its headings kept, and about twenty times faster.
"""
from __future__ import annotations

import re

from localcr.readers import CELL_SEPARATOR, Read, plain

_DROP = ("script, style, noscript, template, nav, footer, aside, form, iframe, svg, button, dialog, [hidden], "
         "[aria-hidden=true], [role=navigation], [role=banner], [role=contentinfo], [role=search], "
         "[role=complementary], [role=dialog], [role=alertdialog]")
_BOILERPLATE = re.compile(r"(?:^|[\s_-])(cookies?|consent|gdpr|banner|sidebar|sphinxsidebar|breadcrumbs?|related|"
                          r"footer|navbar|menu|share|social|advert|ads|popup|modal|skip-link)(?:$|[\s_-])", re.IGNORECASE)
_CONTENT = "main, [role=main], article"
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_PARAGRAPHS = {"p", "section", "article", "blockquote", "figure"}
_LINES = {"div", "main", "header", "ul", "ol", "dl", "dt", "dd", "li", "br", "hr", "figcaption", "details", "summary"}
_ROW_GROUPS = {"thead", "tbody", "tfoot"}
_CELL_SPACES = _PARAGRAPHS | _LINES | set(_HEADINGS) | _ROW_GROUPS | {"table", "caption", "tr", "td", "th", "pre"}
MAX_SPAN = 1000  # columns or rows a cell may span (the HTML standard's cap on colspan); past it, or not a number: 1
MAX_SPANNED = 16 << 20  # characters the copies of spanning cells may add to a page; past it a cell spans one place
_FENCE = "\x00"  # marks verbatim text (from <pre>) while the rest has its whitespace collapsed


def html_to_text(markup: str) -> str:
    """The main text of a page as Markdown-ish text: headings as `#` lines, `<pre>` as fences, list items
    as `- ` lines, a table's rows as lines of cells joined by ` | `."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    for node in tree.css(_DROP):
        node.decompose()
    for node in tree.css("[class], [id]"):
        words = f"{node.attributes.get('class') or ''} {node.attributes.get('id') or ''}"
        if node.tag not in ("html", "body") and _BOILERPLATE.search(words) and node.css_first(_CONTENT + ", h1") is None:
            node.decompose()
    root = tree.css_first("main, [role=main]") or tree.css_first("article") or tree.body or tree.root
    parts: list[str] = []
    if root is not None:
        _walk(root, parts, [MAX_SPANNED])
    return _tidy("".join(parts))


def _walk(node, parts: list[str], room: list[int]) -> None:
    """`room` holds the characters spanning cells may still add to the page (shared by its tables)."""
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            parts.append(child.text_content or "")
        elif tag in _HEADINGS:
            parts.append(f"\n\n{'#' * _HEADINGS[tag]} {' '.join(child.text(separator=' ').split())}\n\n")
        elif tag == "pre":
            code = child.text(deep=True).strip("\n")
            parts.append(f"\n\n{_FENCE}```\n{code}\n```{_FENCE}\n\n")
        elif tag == "table":
            parts.append(_table(child, room))
        elif tag in _PARAGRAPHS or tag in _LINES:
            parts.append("\n\n" if tag in _PARAGRAPHS else "\n")
            if tag == "li":
                parts.append("- ")
            _walk(child, parts, room)
            parts.append("\n\n" if tag in _PARAGRAPHS else "\n")
        else:
            _walk(child, parts, room)


def _table(table, room: list[int]) -> str:
    """A table as every reader writes one, so the table reader reads it: its caption on the line above its rows,
    each row one line of cells joined by CELL_SEPARATOR (an empty cell empty, trailing empty cells and empty rows
    left out, but a row of one label ends with a bar: "Continuing operations |" stays a row of the table and heads
    the rows under it), a paragraph of its own."""
    lines = [_inline(child) for child in table.iter() if child.tag == "caption"][:1]
    for cells in _grid(_rows(table), room):
        while len(cells) > 2 and not cells[-1]:
            cells.pop()
        if any(cells):
            lines.append(CELL_SEPARATOR.join(cells).rstrip())
    return "\n\n" + "\n".join(line for line in lines if line) + "\n\n"


def _rows(table) -> list[list]:
    """The cells of each of the table's own rows (in its head, bodies and foot, in document order); a nested
    table's rows are not its."""
    rows = []
    for child in table.iter():
        for row in child.iter() if child.tag in _ROW_GROUPS else [child]:
            if row.tag == "tr":
                rows.append([cell for cell in row.iter() if cell.tag in ("td", "th")])
    return rows


def _grid(rows: list[list], room: list[int]) -> list[list[str]]:
    """The rows' texts with spans written out into a rectangle: a `<th>` in every column it spans (a "Year ended"
    over two years heads both), a `<td>` in its first column with empty cells after it, and a cell spanning rows
    on each of them (a group's label stays on each row of its group). Spans cost `room`; without it a cell spans
    one place, so a hostile page cannot multiply its text."""
    grid: list[list[str | None]] = [[] for _ in rows]
    for r, cells in enumerate(rows):
        column = 0
        for cell in cells:
            text = _inline(cell)
            while column < len(grid[r]) and grid[r][column] is not None:  # a place a cell above spans into
                column += 1
            colspan, rowspan = _span(cell, "colspan"), min(_span(cell, "rowspan"), len(rows) - r)
            cost = (colspan * rowspan - 1) * (len(text) + len(CELL_SEPARATOR))
            if cost > room[0]:
                colspan, rowspan = 1, 1
            else:
                room[0] -= cost
            for row in grid[r:r + rowspan]:
                row.extend([None] * (column + colspan - len(row)))
                for k in range(colspan):
                    row[column + k] = text if k == 0 or cell.tag == "th" else ""
            column += colspan
    return [[text or "" for text in row] for row in grid]


def _span(cell, name: str) -> int:
    """A cell's colspan or rowspan: 1 where the page writes no number from 1 to MAX_SPAN."""
    written = re.fullmatch(r"\s*0*(\d{1,4})\s*", cell.attributes.get(name) or "", re.ASCII)
    return int(written[1]) if written and 1 <= int(written[1]) <= MAX_SPAN else 1


def _inline(node) -> str:
    """A cell's (or caption's) text on one line: blocks and `<br>` (a nested table's cells too) are spaces,
    white space is folded, and a "|" is a "/" so a cell never splits in two."""
    texts = []
    for part in node.traverse(include_text=True):
        if part.tag == "-text":
            texts.append(part.text_content or "")
        elif part.tag in _CELL_SPACES:
            texts.append(" ")
    return " ".join("".join(texts).split()).replace("|", "/")


def _tidy(text: str) -> str:
    """Whitespace collapsed within lines and to one blank line between blocks, except inside fences."""
    pieces = text.split(_FENCE)
    for i in range(0, len(pieces), 2):  # even pieces are outside <pre>
        lines = [" ".join(line.split()) for line in pieces[i].split("\n")]
        pieces[i] = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    return "".join(pieces).strip() + "\n"


def read(data: bytes) -> Read:
    page = plain.read(data)
    page.text = html_to_text(page.text)
    return page
