"""Structural contexts: situate a chunk without an LLM, from what the document's own structure says.

For every chunk: the document's path, a one-line summary of the document (its title, or the leading
doc comment of a source file), for prose its *lead* (the first informative sentence, which usually names the
subject, product or period that later paragraphs only refer to), the heading path above the chunk (Markdown,
reStructuredText, HTML and DOCX converted to Markdown) with the lead of the chunk's section, for a spreadsheet
the header row of the chunk's sheet, for a message its sender, recipients and date, and, for code, the
definitions that enclose the chunk's first line (impl, class, fn, def, struct ...). A document's card (LLM),
or where it has none the company, form and date its cover page prints (localcr.parsing.cover), stands in every
chunk's context. This is what a person skimming the file would use to place the chunk, costs microseconds, and
fills the same slot an LLM-written context fills later. A lead the chunk itself holds is left out: it would add
nothing.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from localcr.documents import Chunk, Document
from localcr.parsing import code, cover, markdown, plaintext
from localcr.readers import CELL_SEPARATOR, SHEET_KINDS

MAX_WORDS = 48
HEADER_WORDS = 40  # a spreadsheet's header row in a chunk's context is cut after this many words
MAX_OUTLINE = 8
CARD_WORDS = 40  # a document card (localcr.contexts.cards) is one sentence; never more than this
LEAD_WORDS = 30  # a document's lead sentence is cut after this many words
SECTION_LEAD_WORDS = 20
RECOGNISED_HEADING_WORDS = 24  # a statement's heading carries its title block, periods and units (parsing.plaintext)
LEAD_CHARS = 90  # ... or, in text written without spaces (Chinese, Japanese), after this many characters

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_MODIFIERS = r"(?:(?:pub(?:\([^)]*\))?|export|default|public|private|protected|internal|static|async|unsafe|extern(?:\s+\"C\")?|abstract|final|override|virtual|inline|const|sealed|open|data)\s+)*"
_DEFINITION = re.compile(
    r"^(?P<indent>[ \t]*)" + _MODIFIERS
    + r"(?P<kw>fn|struct|enum|trait|impl|mod|class|def|func|function|interface|type|union|namespace|module|macro_rules!|object)\b(?P<rest>[^\n]*)"
)
_C_FUNCTION = re.compile(r"^(?P<indent>)(?!(?:if|for|while|switch|return|else|do|case)\b)[A-Za-z_][\w\s\*&:<>,\[\]]*?\b\w+\s*\([^;]*$")
_COMMENT_LINE = re.compile(r"^\s*(//[!/]?|#(?![!\[]|include|define|if|pragma)|--|;;|\*|/\*\*?)\s?")
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\\n])*\'')
_LINE_COMMENT = re.compile(r"//.*$|#.*$")
_LICENCE = re.compile(r"licen[cs]e|copyright|spdx|all rights reserved|\(c\)", re.IGNORECASE)
_PACKAGE = re.compile(r"^\s*(?:package|namespace)\s+([\w.:]+)", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_][\w]*")
_HEADING_WORDS = re.compile(r"[^\W\d_]")
MAX_HEADING_WORDS = 16
_CONTAINERS = ("namespace", "mod", "module")  # their members are the file's top level


def structural_contexts(doc: Document, chunks: list[Chunk], *, with_path: bool = True, leads: bool = True) -> None:
    """Set chunk.context (and context_source) for every chunk of one document. leads: add the document's and
    the section's lead sentences to prose chunks (see document_lead)."""
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", doc.text)]
    lead, section_leads, headers = None, [], []
    if doc.is_code:
        scopes, outline = _code_scopes(doc)
        about = [document_summary(doc), _package(doc.text)]
        if outline:
            about.append("Defines " + ", ".join(outline[:MAX_OUTLINE]) + (" ..." if len(outline) > MAX_OUTLINE else "") + ".")
    else:
        sections = _heading_paths(doc)
        scopes = [[title for title, _ in path] for path in sections]
        about = [document_summary(doc), doc.about]
        if doc.kind in SHEET_KINDS:  # rows, not prose: no leads; the sheet's header row instead
            headers = _sheet_headers(doc.text, sections)
        elif leads and not _recognised(doc):
            lead = document_lead(doc)
            section_leads = _section_leads(doc, sections, line_starts)
    head = ([f"File {doc.doc_id}."] if with_path and not doc.path.endswith(f"#{doc.doc_id}") else []) + [a for a in about if a]
    # a line recognised as a heading that is the document's title (its first line) is not its section too
    head_titles = set(about[:1]) if not doc.is_code and _recognised(doc) else set()
    # a document without a card (too short for one, or its card fell back) still names what its cover prints
    card = doc.card or ("" if doc.is_code or doc.kind in SHEET_KINDS else cover.cover_line(doc.text))
    card = _clip(card, CARD_WORDS) if card else ""
    for chunk in chunks:
        scope, section_lead, header = [], None, None
        if chunk.start >= 0:
            line = bisect.bisect_right(line_starts, chunk.start) - 1
            scope = [s for s in scopes[line] if not chunk.text.lstrip().startswith(s) and f"{s}." not in head_titles]
            section_lead = section_leads[line] if section_leads else None
            header = headers[line] if headers else None  # a chunk that holds its header row starts above it: None
        tail = (("In " if doc.is_code else "Section: ") + " > ".join(scope) + ".") if scope else ""
        if header:
            tail = f"{tail} Columns: {_clip(header, HEADER_WORDS)}.".lstrip()
        extra = [ld.text for ld in (lead, section_lead) if ld and not ld.within(chunk)]
        if len(extra) == 2 and extra[0] == extra[1]:
            extra.pop()
        # the chunk-specific scope is never the part that gets clipped
        room = MAX_WORDS - len(tail.split())
        chunk.context = " ".join(p for p in (_clip(" ".join(head), max(room, 8)), card, tail, *extra) if p)
        chunk.context_source = "structural"


def _sheet_headers(text: str, sections: list[list[tuple[str, int]]]) -> list[str | None]:
    """For each line of a spreadsheet's text, its sheet's header row: the first row of two cells or more in the
    sheet (a sheet's section begins at its heading); None above it."""
    headers: list[str | None] = []
    sheet, header = None, None
    for line, path in zip(text.split("\n"), sections):
        if (path[-1][1] if path else None) != sheet:
            sheet, header = (path[-1][1] if path else None), None
        headers.append(header)
        if header is None and CELL_SEPARATOR in line:
            header = line
    return headers


def outline_items(doc: Document) -> list[str]:
    """What a reader skims to see a whole document's shape: its headings in order (each once), or a code
    file's top-level definitions."""
    if doc.is_code:
        return _code_scopes(doc)[1]
    seen: dict[str, None] = {}
    for path in _heading_paths(doc):
        if path:
            seen.setdefault(path[-1][0], None)
    return list(seen)


def document_summary(doc: Document) -> str:
    """The document's title (from its metadata, else its front matter's `title:`, else its first heading, else a
    first line that reads as a title: plaintext.first_line_title) or, for code, its first comment or docstring that
    is not a licence."""
    if doc.title:
        return _clip(doc.title, 16) + "."
    lines = doc.text.split("\n")
    if doc.kind == "markdown" and (title := front_matter_title(doc.text)):
        return _clip(title, 16) + "."
    if doc.kind in SHEET_KINDS:  # a workbook's first heading is only its first sheet's name
        return ""
    if not doc.is_code:  # a first line that reads as a title, else the first heading as the parser reads it (a `#`
        #                   line inside a code fence is none; recognised headings are sections, no title)
        if title := plaintext.first_line_title(doc.text):
            return _clip(title, 16) + "."
        first = None if _recognised(doc) else next((path[-1][1] for path in _heading_paths(doc) if path), None)
        return "" if first is None else _clip(_heading_text(lines[first], lines[first + 1:first + 2]), 16) + "."
    for block in _leading_comments(doc):
        if not _LICENCE.search(block):
            return _clip(block, 20)
    return ""


def _heading_text(line: str, underline: list[str]) -> str:
    """A heading line's words: without its `#` marks (ATX), or as it stands (underlined reST/setext)."""
    m = _MD_HEADING.match(line)
    return m.group(2) if m and not (underline and _RST_UNDERLINE.match(underline[0])) else line.strip()


def _leading_comments(doc: Document):
    """Comment blocks and docstrings before the first definition: licence headers, module docs, class docs;
    from the syntax tree, else (no grammar) from the lines."""
    if (syntax := code.parse(doc.text, doc.kind)) is not None:
        yield from syntax.leading_comments()
        return
    lines = doc.text.split("\n")
    block: list[str] = []
    in_docstring = False
    for line in lines[:300]:
        stripped = line.strip()
        if in_docstring:
            block.append(stripped.replace('"""', "").replace("'''", ""))
            if '"""' in stripped or "'''" in stripped:
                in_docstring = False
                yield " ".join(b for b in block if b)
                block = []
            continue
        if stripped.startswith(('"""', "'''")):
            body = stripped[3:]
            if body.endswith(('"""', "'''")) and len(body) >= 3:
                yield body[:-3]
                continue
            block, in_docstring = [body], True
            continue
        m = _COMMENT_LINE.match(line)
        if m and not stripped.startswith("#!"):
            block.append(line[m.end():].strip().rstrip("*/").strip())
            continue
        if block:
            yield " ".join(b for b in block if b and not b.startswith("@"))
            block = []
        if _DEFINITION.match(line):
            return


def _package(text: str) -> str:
    m = _PACKAGE.search(text[:20000])
    return f"Package {m.group(1)}." if m else ""


def front_matter_title(text: str) -> str | None:
    """The `title:` of a Markdown file's YAML front matter (Jekyll, Hugo, Obsidian ...), if it has one."""
    return markdown.front_matter_title(text)


def _heading_paths(doc: Document) -> list[list[tuple[str, int]]]:
    """For each line of a prose document, the headings above it, outermost first, as (title, line of the heading):
    Markdown's from the Markdown parser, reStructuredText's (and plain text's, either way) from their underlines
    and `#` marks."""
    if doc.kind in markdown.KINDS:
        return [[(_clip(title, 10), line) for title, line in path] for path in markdown.heading_paths(doc.text)]
    if _recognised(doc):
        return [[(_clip(title, RECOGNISED_HEADING_WORDS), line) for title, line in path]
                for path in plaintext.heading_paths(doc.text, tuple(doc.bookmarks))]
    return _marked_heading_paths(doc.text)


class RecognisedSections(NamedTuple):
    starts: list[int]  # where each recognised section begins (character offsets, in order)
    tables: frozenset[int]  # those of them where a titled table or statement begins


def recognised_sections(doc: Document) -> RecognisedSections:
    """Where the sections of a document with recognised headings begin; none for any other document. Chunking
    starts a chunk there (always at a statement), so a chunk is not told "Item 1" when most of it is the
    cash-flow statement that follows."""
    if doc.is_code or doc.kind in markdown.KINDS or not _recognised(doc):
        return RecognisedSections([], frozenset())
    lines = markdown.line_starts(doc.text)
    found = plaintext.headings(doc.text, tuple(doc.bookmarks))
    tables = frozenset(lines[h.line] for h in found if h.table) - {0}
    return RecognisedSections(sorted({lines[h.line] for h in found} - {0}), tables)


def _recognised(doc: Document) -> bool:
    """Whether a document's headings are recognised in unmarked text (a PDF's, a plain-text file's without `#`
    headings or underlines; localcr.parsing.plaintext) rather than read from markup. Such headings situate
    chunks in sections, but they are no title, and a paragraph after one is as likely a table's note or a form's
    boilerplate as an introduction: they give no summary and no leads."""
    return doc.kind == "pdf" or (doc.kind == "text" and not any(_marked_heading_paths(doc.text)))


def _titled(line: str) -> bool:
    """Whether a `#` or underlined line reads as a heading: words (a rule of underscores is none), few of them, and
    no sentence's end (a PDF's footnotes begin with `#` and end with a period)."""
    words = line.split()
    return bool(_HEADING_WORDS.search(line)) and len(words) <= MAX_HEADING_WORDS and not line.rstrip().endswith((".", ",", ";"))


@functools.lru_cache(maxsize=8)
def _marked_heading_paths(text: str) -> list[list[tuple[str, int]]]:
    """_heading_paths of reStructuredText (and of plain text written with `#` headings or underlines)."""
    lines = text.split("\n")
    repeated = {line for line, n in Counter(lines).items() if n >= plaintext.REPEATED and line.strip()}
    stack: list[tuple[int, str, int]] = []
    rst_levels: list[str] = []
    result: list[list[tuple[str, int]]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None
        if not in_fence and line not in repeated:  # a line repeated on many pages is a footnote mark or a header
            m = _MD_HEADING.match(line)
            if m and _titled(m.group(2)):
                heading = (len(m.group(1)), m.group(2), i)
            elif not m and i + 1 < len(lines) and _titled(line) and _RST_UNDERLINE.match(lines[i + 1]) \
                    and len(lines[i + 1].strip()) >= len(line.strip()):
                mark = lines[i + 1].strip()[0]
                if mark not in rst_levels:
                    rst_levels.append(mark)
                heading = (rst_levels.index(mark) + 1, line.strip(), i)
        if heading:
            stack = [h for h in stack if h[0] < heading[0]] + [heading]
        result.append([(_clip(h[1], 10), h[2]) for h in stack])
    return result


@dataclass(frozen=True)
class Lead:
    """A lead sentence, clipped for the context, and where it stands in the document's text."""

    text: str
    start: int
    end: int
    paragraph_end: int  # where the paragraph it opens ends

    def within(self, chunk: Chunk) -> bool:
        """Whether the chunk already holds this sentence (by offsets, or by its text for chunks found nowhere)."""
        if chunk.start >= 0:
            return chunk.start <= self.start and self.end <= chunk.end
        return " ".join(self.text.rstrip(" .").split()[:8]) in " ".join(chunk.text.split())


_BLOCK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9\u00c0-\u024f\u0400-\u04ff])|(?<=[。！？])")
_NOT_PROSE = re.compile(r"^\s*(?:#|[|!<>\[{]|[-*+]\s|\d+[.)]\s|```|~~~|\.\. |:\w+:)")
_SPACELESS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def document_lead(doc: Document) -> Lead | None:
    """The document's lead: the first sentence of its first paragraph of prose (after the title, front matter,
    headings, lists, tables, code and licence text), in a prose document whose headings mark that paragraph as
    its opening. None for code (its module comment is its summary), for documents without such a paragraph, and
    for a run of paragraphs with no heading (plain text, a PDF's pages, a pre-chunked record), where the first
    paragraph is as likely one passage among others as an introduction: measured on XQuAD, whose records are
    such runs, giving every paragraph the first one's opening sentence cost 1.8 points of hybrid Pass@1
    (benchmarks/retrieval/contexts_composition.py)."""
    if doc.is_code or _recognised(doc) or not any(_heading_paths(doc)):
        return None
    body = markdown.outline(doc.text).body_start if doc.kind == "markdown" else 0  # after the front matter
    return _first_sentence(doc.text, body, len(doc.text), LEAD_WORDS, skip=doc.title)


def situating_text(doc: Document) -> str:
    """What situates every chunk of a document, for the guard: its title, its headings and its opening up to the
    end of the lead paragraph (prose), or its leading comments and package line (code). A context sentence taken
    from here names what the chunk is part of; one taken from elsewhere in the document repeats another chunk."""
    if doc.is_code:
        parts = [doc.title, *_leading_comments(doc), _package(doc.text)]
    else:
        lead = document_lead(doc)
        headings = {title for path in _heading_paths(doc) for title, _ in path}
        parts = [doc.title, *sorted(headings), doc.text[: lead.paragraph_end] if lead else ""]
    return "\n".join(p for p in parts if p)


def _section_leads(doc: Document, sections: list[list[tuple[str, int]]], line_starts: list[int]) -> list[Lead | None]:
    """For each line, the lead sentence of the innermost section it is in (None outside sections, and in
    documents with fewer than two headings: they have no sections worth situating in)."""
    heading_lines = sorted({path[-1][1] for path in sections if path})
    if len(heading_lines) < 2:
        return [None] * len(sections)
    bounds = heading_lines + [len(line_starts)]
    leads = {}
    for line, following in zip(bounds, bounds[1:]):
        end = line_starts[following] if following < len(line_starts) else len(doc.text)
        leads[line] = _first_sentence(doc.text, line_starts[line], end, SECTION_LEAD_WORDS)
    return [leads.get(path[-1][1]) if path else None for path in sections]


def _first_sentence(text: str, start: int, end: int, max_words: int, skip: str = "") -> Lead | None:
    """The first sentence of the first paragraph of prose in text[start:end]: a block of at least six words (or
    twenty characters of spaceless script) that is not a heading, list, table, quote, code fence or licence text,
    and not the title (`skip`) again."""
    in_fence = False
    cursor = start
    for block_end in [m.start() for m in _BLOCK.finditer(text, start, end)] + [end]:
        block, block_start = text[cursor:block_end], cursor
        cursor = block_end
        stripped = block.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = stripped.count("```") % 2 == 1 or stripped.count("~~~") % 2 == 1
            continue
        if in_fence:
            in_fence = not ("```" in stripped or "~~~" in stripped)
            continue
        lines = [ln for ln in stripped.split("\n") if ln.strip() and not _RST_UNDERLINE.match(ln)]
        if not lines or _NOT_PROSE.match(lines[0]) or _LICENCE.search(stripped):
            continue
        prose = " ".join(" ".join(lines).split())
        if skip and prose.rstrip(".") == " ".join(skip.split()).rstrip("."):
            continue
        if len(prose.split()) < 6 and not (_SPACELESS.search(prose) and len(prose) >= 20):
            continue
        sentence = _SENTENCE_END.split(prose, 1)[0].strip()
        offset = block_start + len(block) - len(block.lstrip())
        return Lead(_clip_lead(sentence, max_words), offset, _end_of(text, offset, sentence), block_end)
    return None


def _end_of(text: str, start: int, sentence: str) -> int:
    """Where a sentence (its white space folded) that begins at `start` ends in the original text."""
    for word in sentence.split():
        start = text.index(word, start) + len(word)
    return start


def _clip_lead(sentence: str, max_words: int) -> str:
    if _SPACELESS.search(sentence) and len(sentence) > LEAD_CHARS:
        return sentence[:LEAD_CHARS] + " ..."
    clipped = _clip(sentence, max_words)
    return clipped if clipped.endswith((".", "!", "?", "。", "！", "？", "...")) else clipped + "."


def _code_scopes(doc: Document) -> tuple[list[list[str]], list[str]]:
    """For each line of a source file, the signatures of the definitions open at that line, outermost first;
    and the file's outline: the names of its top-level definitions (and of their direct members' owners).

    From the tree-sitter syntax tree; for a language without a grammar, brace languages are tracked by brace
    depth, the rest by indentation.
    """
    if (syntax := code.parse(doc.text, doc.kind)) is not None:
        return _tree_scopes(doc.text, syntax.definitions)
    outline: list[str] = []
    lines = doc.text.split("\n")
    braces = doc.text.count("{") > len(lines) // 20
    stack: list[list] = []  # [depth or indent, signature, opened, keyword]
    depth = 0
    result: list[list[str]] = []
    for line in lines:
        result.append([entry[1] for entry in stack])
        bare = _LINE_COMMENT.sub("", _STRINGS.sub('""', line)) if braces else line
        if not bare.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if not braces:
            stack = [e for e in stack if e[0] < indent]
        match = _DEFINITION.match(line) or (_C_FUNCTION.match(line) if braces and indent == 0 else None)
        if match:
            level = depth if braces else indent
            stack = [e for e in stack if e[2] or e[0] < level]  # an unopened declaration ends at the next one
            name, kw = _definition_name(match), match.groupdict().get("kw")
            if name and name not in outline and all(e[3] in _CONTAINERS for e in stack) and kw not in _CONTAINERS:
                outline.append(name)
            stack.append([level, _signature(line), False, kw])
        if braces:
            depth += bare.count("{") - bare.count("}")
            for entry in stack:
                if not entry[2] and depth > entry[0]:
                    entry[2] = True
            stack = [e for e in stack if not (e[2] and depth <= e[0])]
            if bare.rstrip().endswith(";"):
                stack = [e for e in stack if e[2]]
    return result, outline


def _tree_scopes(text: str, definitions: list[code.Definition]) -> tuple[list[list[str]], list[str]]:
    """_code_scopes from a syntax tree: a definition is open from the line after its first to its last."""
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    result: list[list[str]] = [[] for _ in line_starts]
    outline: list[str] = []

    def visit(defs: list[code.Definition], path: list[str], top: bool) -> None:
        for d in defs:
            name = re.sub(r"<.*", "", d.name.split(" for ")[-1]).strip()  # impl<T> Trait for Type<T> defines on Type
            if top and d.kind not in code.CONTAINERS and name not in outline:
                outline.append(name)
            first, last = (bisect.bisect_right(line_starts, pos) - 1 for pos in (d.start, max(d.start, d.end - 1)))
            for line in range(first + 1, last + 1):
                result[line] = path + [d.signature]
            visit(d.children, path + [d.signature], top and d.kind in code.CONTAINERS)

    visit(definitions, [], True)
    return result, outline


def _definition_name(match: re.Match) -> str:
    """The defined name: the first identifier after the keyword (impl blocks name their type), or a C function's."""
    kw = match.groupdict().get("kw")
    if kw is None:
        before_paren = match.group(0).split("(")[0].split()
        return before_paren[-1].lstrip("*&") if before_paren else ""
    rest = re.sub(r"<[^>]*>", "", match.group("rest"))
    if kw == "impl":
        rest = rest.split(" for ")[-1]
    m = _NAME.search(rest)
    return m.group(0) if m else ""


def _signature(line: str) -> str:
    sig = line.strip().rstrip("{:").strip()
    sig = re.sub(r"\s+", " ", sig)
    return sig if len(sig) <= 80 else sig[:77] + "..."


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + " ..."
