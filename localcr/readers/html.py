"""HTML: the visible text, with headings kept as Markdown headings so heading paths work."""
from __future__ import annotations

import html.parser

from localcr.readers import Read, plain


class _HTMLText(html.parser.HTMLParser):
    BLOCKS = {"p", "div", "br", "li", "tr", "section", "article", "pre", "table", "ul", "ol", "blockquote"}
    HEADINGS = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "#####", "h6": "######"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "noscript", "template"):
            self.hidden += 1
        elif tag in self.HEADINGS:
            self.parts.append("\n\n" + self.HEADINGS[tag] + " ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n" if tag in ("p", "pre", "table", "section", "article") else "\n")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "noscript", "template"):
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.HEADINGS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """HTML as Markdown-ish text: headings keep their level (so heading paths work), scripts and styles go."""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.parts).split("\n")]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip() + "\n"


def read(data: bytes) -> Read:
    page = plain.read(data)
    page.text = html_to_text(page.text)
    return page
