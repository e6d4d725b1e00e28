"""Markdown through markdown-it-py (CommonMark) with mdit-py-plugins' front matter: the headings (ATX and
setext, never a `#` line inside fenced or indented code) and the YAML front matter, as line numbers and
character offsets of the text; and a chunk rendered as HTML for the search page, its raw HTML left as text."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

# Document kinds whose text is Markdown: Markdown files, and what the HTML, DOCX, PPTX, ODT, ODP and EPUB readers write.
KINDS = {"markdown", "html", "docx", "pptx", "odt", "odp", "epub"}


@dataclass
class Heading:
    line: int  # 0-based line of its text
    start: int  # character offset where that line begins
    level: int  # 1..6
    title: str


@dataclass
class Outline:
    headings: list[Heading] = field(default_factory=list)
    front_matter: str | None = None  # the YAML between the front matter's fences, if the text opens with one
    body_start: int = 0  # where the text after the front matter begins


@functools.cache
def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").use(front_matter_plugin)


# Chunking, the structural contexts and the guard (once per chunk) ask for the same document's outline: it is
# parsed once and shared, so no caller changes it.
@functools.lru_cache(maxsize=8)
def outline(text: str) -> Outline:
    tokens = _parser().parse(text)
    starts = line_starts(text)
    found = Outline()
    for i, token in enumerate(tokens):
        if token.type == "front_matter" and token.map:
            found.front_matter = token.content
            found.body_start = starts[min(token.map[1], len(starts) - 1)]
        elif token.type == "heading_open" and token.map:
            title = " ".join(tokens[i + 1].content.split()) if i + 1 < len(tokens) else ""
            line = token.map[0]
            found.headings.append(Heading(line, starts[line], int(token.tag[1]), title))
    return found


def front_matter_title(text: str) -> str | None:
    """The `title:` of the text's YAML front matter (Jekyll, Hugo, Obsidian ...), if it has one."""
    if not text.startswith("---"):
        return None
    meta_text = outline(text).front_matter
    if not meta_text:
        return None
    import yaml

    try:
        meta = yaml.safe_load(meta_text)
    except yaml.YAMLError:
        return None
    title = meta.get("title") if isinstance(meta, dict) else None
    return " ".join(str(title).split()) or None if title is not None else None


def heading_paths(text: str) -> list[list[tuple[str, int]]]:
    """For each line, the headings above it, outermost first, as (title, line of the heading)."""
    return nested(outline(text).headings, text.count("\n") + 1)


def nested(headings, n_lines: int) -> list[list[tuple[str, int]]]:
    """For each of n_lines lines, the headings (anything with .level, .title and .line, in order) open at it,
    outermost first, as (title, line of the heading): a heading closes those of its level and deeper. A heading
    whose line comes before the previous one's (a PDF's bookmarks may) opens at the line it is met on."""
    paths: list[list[tuple[str, int]]] = []
    stack: list = []
    found = iter(headings)
    upcoming = next(found, None)
    for line in range(n_lines):
        while upcoming is not None and upcoming.line <= line:
            stack = [h for h in stack if h.level < upcoming.level] + [upcoming]
            upcoming = next(found, None)
        paths.append([(h.title, h.line) for h in stack])
    return paths


def line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


# Where a marked span opens and closes while the text goes through the renderer: private-use characters, which
# Markdown treats as letters, so they neither end a word nor start any syntax (a document's own are replaced).
_OPEN, _CLOSE = "\ue000", "\ue001"
_TAG = re.compile(r"<[^>]*>")  # the renderer escapes "<" and ">" inside attribute values, so this is one tag


@functools.cache
def _renderer():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    # html=False: a document is untrusted input, so its own tags (<script>, <img onerror>) stay escaped text
    return MarkdownIt("commonmark", {"html": False}).enable("table").use(front_matter_plugin)


def to_html(text: str, marks: list[tuple[int, int]]) -> str:
    """The text rendered from Markdown (headings, lists, code, emphasis, tables; raw HTML escaped, as text), with
    the character spans `marks` (in order, not overlapping: words of the query) in <mark> elements."""
    text = text.replace(_OPEN, "\ufffd").replace(_CLOSE, "\ufffd")
    pieces, at = [], 0
    for start, end in marks:
        pieces += [text[at:start], _OPEN, text[start:end], _CLOSE]
        at = end
    html = _renderer().render("".join(pieces) + text[at:])
    # inside a tag (a link's address, a code block's language) a mark has no place: dropped, as is its
    # percent-encoded form in an address
    html = _TAG.sub(lambda tag: re.sub(f"{_OPEN}|{_CLOSE}|%EE%80%8[01]", "", tag.group()), html)
    return html.replace(_OPEN, "<mark>").replace(_CLOSE, "</mark>")

