"""HTML: a page's main text, parsed by lexbor (selectolax, an HTML5 parser), with its headings as Markdown
headings (so heading paths work) and its `<pre>` blocks as fenced code.

Boilerplate goes: scripts and styles, navigation, headers' menus, footers, sidebars, forms, cookie and consent
banners (by element, ARIA role, or class/id words such as `cookie`, `sidebar`, `breadcrumb`). The text then
comes from the page's `<main>` (or `role="main"`), else its `<article>`, else its body. Measured on the Python
manual (benchmarks/formats/html_text.py): against trafilatura, as complete and cleaner on its pages' main text, with
more of its headings kept, and about twenty times faster.
"""
from __future__ import annotations

import re

from localcr.readers import Read, plain

_DROP = ("script, style, noscript, template, nav, footer, aside, form, iframe, svg, button, dialog, [hidden], "
         "[aria-hidden=true], [role=navigation], [role=banner], [role=contentinfo], [role=search], "
         "[role=complementary], [role=dialog], [role=alertdialog]")
_BOILERPLATE = re.compile(r"(?:^|[\s_-])(cookies?|consent|gdpr|banner|sidebar|sphinxsidebar|breadcrumbs?|related|"
                          r"footer|navbar|menu|share|social|advert|ads|popup|modal|skip-link)(?:$|[\s_-])", re.IGNORECASE)
_CONTENT = "main, [role=main], article"
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_PARAGRAPHS = {"p", "table", "section", "article", "blockquote", "figure"}
_LINES = {"div", "main", "header", "ul", "ol", "dl", "dt", "dd", "tr", "li", "br", "hr", "figcaption", "details",
          "summary", "caption"}
_FENCE = "\x00"  # marks verbatim text (from <pre>) while the rest has its whitespace collapsed


def html_to_text(markup: str) -> str:
    """The main text of a page as Markdown-ish text: headings as `#` lines, `<pre>` as fences, list items
    as `- ` lines, table cells separated by ` | `."""
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
        _walk(root, parts)
    return _tidy("".join(parts))


def _walk(node, parts: list[str]) -> None:
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            parts.append(child.text_content or "")
        elif tag in _HEADINGS:
            parts.append(f"\n\n{'#' * _HEADINGS[tag]} {' '.join(child.text(separator=' ').split())}\n\n")
        elif tag == "pre":
            code = child.text(deep=True).strip("\n")
            parts.append(f"\n\n{_FENCE}```\n{code}\n```{_FENCE}\n\n")
        elif tag in ("td", "th"):
            _walk(child, parts)
            parts.append(" | ")
        elif tag in _PARAGRAPHS or tag in _LINES:
            parts.append("\n\n" if tag in _PARAGRAPHS else "\n")
            if tag == "li":
                parts.append("- ")
            _walk(child, parts)
            parts.append("\n\n" if tag in _PARAGRAPHS else "\n")
        else:
            _walk(child, parts)


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
