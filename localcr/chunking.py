"""Chunking: split documents into token-bounded chunks on natural boundaries, keeping exact character offsets.

The splitter is recursive: a span that is too long is cut at the coarsest boundary its kind knows
(Markdown headings from the Markdown parser, paragraphs, lines, sentences, spaces), and only the pieces
still too long go one level finer. Source code with a grammar is cut along its syntax tree instead: its
top-level units (a definition with its doc comment and attributes, a statement), and a unit longer than a
chunk at its own children (a class at its methods, a function at its statements), so a chunk never starts
inside a statement, nor inside a function that fits in one chunk. Code without a grammar is cut at blank
lines before top-level code, then lines. The pieces are then packed greedily into chunks of at most
`max_tokens` tokens (counted with the embedder's own tokenizer), each new chunk starting with up to
`overlap_tokens` of the previous one so a sentence cut at a boundary is still seen whole once; a chunk
prefers to begin at a section (a heading, a definition) once it is half full.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

from localcr.documents import Chunk, Document
from localcr.parsing import code, markdown
from localcr.readers import SHEET_KINDS
from localcr.structure import recognised_sections

TokenCounter = Callable[[list[str]], list[int]]
MAX_TREE_DEPTH = 200  # syntax tree levels chunking descends before it cuts by lines (keeps recursion bounded)

# Boundaries, coarsest first. A match's end is where a new piece starts.
_HEADING = re.compile(r"\n(?=#{1,6} )|\n\n(?=[^\n]+\n[=\-~^\"'`#*+]{3,}\n)")
_TOP_LEVEL = re.compile(r"\n\s*\n(?=\S)")
_PARAGRAPH = re.compile(r"\n\s*\n")
_LINE = re.compile(r"\n")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+")
_SPACE = re.compile(r"\s+")
_SECTIONED = [_HEADING, _PARAGRAPH, _LINE, _SENTENCE, _SPACE]
LEVELS = {
    # Markdown and reST; the HTML, Office, OpenDocument, EPUB and mail readers write headings (slide titles, a
    # message's subject) as Markdown headings
    **dict.fromkeys(("markdown", "rst", "html", "docx", "pptx", "odt", "odp", "epub", "mail"), _SECTIONED),
    # a spreadsheet's sheets are headings, its rows lines: rows are never cut at a blank line or a sentence
    **dict.fromkeys(SHEET_KINDS, [_HEADING, _LINE, _SPACE]),
    "code": [_TOP_LEVEL, _PARAGRAPH, _LINE, _SPACE],
    "text": [_PARAGRAPH, _LINE, _SENTENCE, _SPACE],
}


def levels_for(kind: str) -> list[re.Pattern]:
    if kind.startswith("code"):
        return LEVELS["code"]
    return LEVELS.get(kind, LEVELS["text"])


Level = re.Pattern | Sequence[int]  # a boundary: a pattern whose matches end where pieces start, or the offsets


def split_spans(text: str, count: TokenCounter, max_tokens: int, levels: list[Level],
                start: int = 0, end: int | None = None, tokens: int | None = None) -> list[tuple[int, int, int]]:
    """Cut text[start:end] into consecutive (start, end, tokens) pieces of at most max_tokens, coarsest cuts first.
    The pieces of one cut are counted in one call, a long one by its opening words where they are too many already
    (see _counts): counting was most of a long report's time from reading to searchable. tokens: the span's count
    where the caller has it already (a chunk cut into windows, a unit of code), so it is not counted again."""
    end = len(text) if end is None else end
    if tokens is None:
        tokens = _counts(text, [(start, end)], count, max_tokens, exact=not levels)[0]
    pending = [(start, end, 0, tokens)]
    pieces: list[tuple[int, int, int]] = []
    while pending:
        s, e, level, n = pending.pop()
        if n <= max_tokens or level >= len(levels) + 1:
            pieces.append((s, e, n))
            continue
        if level == len(levels):  # no boundary left (one huge word): cut by characters
            cuts = _even_cuts(s, e, -(-n // max_tokens))
        else:
            cuts = [s] + _cuts(levels[level], text, s, e) + [e]
        parts = [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
        if len(parts) == 1:
            parts = [(s, e)]
        exact = level + 1 >= len(levels)  # the last levels cut by the count itself
        counts = _counts(text, parts, count, max_tokens, exact)
        pending += reversed([(a, b, level + 1, c) for (a, b), c in zip(parts, counts)])  # popped first to last
    return pieces


# A span longer than this many characters a token of the limit is counted by its opening words first: a report of
# 400,000 characters is not tokenized whole only to learn that it must be cut. The words of an opening cut at a
# space are tokenized as in the whole text (WordPiece and SentencePiece pieces never cross a space), so the
# opening's count is at most the whole's: if it passes the limit, so does the whole.
OPENING_CHARS_A_TOKEN = 8


def _counts(text: str, spans: list[tuple[int, int]], count: TokenCounter, max_tokens: int, exact: bool) -> list[int]:
    """The token counts of text's spans in one call; unless exact, a count above max_tokens may be its opening's."""
    reach = OPENING_CHARS_A_TOKEN * max_tokens
    ends = [e if exact or e - s <= 2 * reach else _space_at_or_after(text, s + reach, e) for s, e in spans]
    counts = count([text[s:c] for (s, _), c in zip(spans, ends)])
    again = [i for i, ((_, e), c, n) in enumerate(zip(spans, ends, counts)) if c < e and n <= max_tokens]
    for i, n in zip(again, count([text[spans[i][0]:spans[i][1]] for i in again]) if again else []):
        counts[i] = n
    return counts


def _space_at_or_after(text: str, position: int, end: int) -> int:
    found = _SPACE.search(text, position, end)
    return found.start() if found else end


def _cuts(level: Level, text: str, s: int, e: int) -> list[int]:
    """Where a level's boundaries fall strictly inside text[s:e]."""
    if isinstance(level, re.Pattern):
        return [m.end() for m in level.finditer(text, s, e) if s < m.end() < e]
    return list(level[bisect_right(level, s):bisect_right(level, e - 1)])


def _even_cuts(s: int, e: int, n: int) -> list[int]:
    step = max(1, (e - s) // max(n, 1))
    return list(range(s, e, step)) + [e]


def chunk_document(doc: Document, count: TokenCounter, max_tokens: int, overlap_tokens: int) -> list[Chunk]:
    """Chunks of a document, with offsets into doc.text; pre-chunked documents keep their own chunks."""
    if doc.given_chunks is not None:
        return doc.given_chunks
    syntax = code.parse(doc.text, doc.kind) if doc.is_code else None
    tables: frozenset[int] = frozenset()
    if syntax is not None:
        pieces, section_starts = tree_spans(syntax, count, max_tokens)
    else:
        levels = levels_for(doc.kind)
        if doc.kind in markdown.KINDS:  # headings from the parser, not a pattern
            levels = [markdown_sections(doc.text)] + levels[1:]
        elif (recognised := recognised_sections(doc)).starts:  # headings recognised in a PDF's or plain text's lines
            levels, tables = [recognised.starts] + levels, recognised.tables
        pieces = split_spans(doc.text, count, max_tokens, levels)
        section_starts = set(_cuts(levels[0], doc.text, 0, len(doc.text)))
    return _to_chunks(doc, pack(pieces, max_tokens, overlap_tokens, section_starts, tables))


def markdown_sections(text: str) -> list[int]:
    """Where the sections of a Markdown text begin: each heading's line, and the body after front matter."""
    found = markdown.outline(text)
    return sorted({found.body_start, *(h.start for h in found.headings)} - {0})


def tree_spans(syntax: code.Syntax, count: TokenCounter, max_tokens: int) -> tuple[list[tuple[int, int, int]], set[int]]:
    """Pieces of a parsed source file along its syntax tree, and where its sections (top-level units and
    definitions) begin. A unit that fits stays whole; a longer one is cut at its children, recursively; a
    leaf longer than a chunk (a huge string or comment) at its lines."""
    text = syntax.text
    pieces: list[tuple[int, int, int]] = []
    starts: set[int] = set()

    def visit(units: list[code.Unit], depth: int) -> None:
        for unit, n in zip(units, count([text[u.start:u.end] for u in units])):
            if depth == 0 or unit.definition:
                starts.add(unit.start)
            if n <= max_tokens:
                pieces.append((unit.start, unit.end, n))
            elif depth < MAX_TREE_DEPTH and (inner := unit.inner()):
                first = len(pieces)
                visit(inner, depth + 1)
                _join_head(pieces, first, starts, max_tokens // 2)
            else:  # a leaf (a huge string or comment), or nesting deeper than any hand-written code
                pieces.extend(split_spans(text, count, max_tokens, [_LINE, _SPACE], unit.start, unit.end, n))

    visit(syntax.top(), 0)
    return pieces, starts


def _join_head(pieces: list[tuple[int, int, int]], first: int, starts: set[int], budget: int) -> None:
    """Join a split unit's first pieces (a function's header, its opening brace) with what follows them, up to
    `budget` tokens and never across a section start, so a chunk does not end on a bare header."""
    while first + 1 < len(pieces) and pieces[first + 1][0] not in starts \
            and pieces[first][2] + pieces[first + 1][2] <= budget:
        (a, _, n), (_, b, m) = pieces[first], pieces[first + 1]
        pieces[first:first + 2] = [(a, b, n + m)]


def pack(pieces: list[tuple[int, int, int]], max_tokens: int, overlap_tokens: int = 0,
         section_starts: set[int] = frozenset(), table_starts: frozenset[int] = frozenset()) -> list[list[tuple[int, int, int]]]:
    """Group consecutive pieces into runs of at most max_tokens; a new section starts a new run once the
    current one is half full, a table (table_starts) always, and each run after the first begins with the
    previous run's overlap tail."""
    groups: list[list[tuple[int, int, int]]] = []
    current: list[tuple[int, int, int]] = []
    tokens = 0
    for piece in pieces:
        starts_section = piece[0] in section_starts
        if current and (tokens + piece[2] > max_tokens or (starts_section and tokens >= max_tokens // 2)
                        or piece[0] in table_starts):
            groups.append(current)
            current = _overlap_tail(current, overlap_tokens) if not starts_section else []
            tokens = sum(p[2] for p in current)
            if current and tokens + piece[2] > max_tokens:
                current, tokens = [], 0
        current.append(piece)
        tokens += piece[2]
    if current:
        groups.append(current)
    return groups


def _overlap_tail(group: list[tuple[int, int, int]], overlap_tokens: int) -> list[tuple[int, int, int]]:
    """The trailing pieces of a chunk that fit in the overlap budget; never the whole chunk (that would not advance)."""
    tail: list[tuple[int, int, int]] = []
    total = 0
    for piece in reversed(group[1:]):
        if total + piece[2] > overlap_tokens:
            break
        tail.insert(0, piece)
        total += piece[2]
    return tail


def _to_chunks(doc: Document, groups: list[list[tuple[int, int, int]]]) -> list[Chunk]:
    chunks = []
    for group in groups:
        start, end = group[0][0], group[-1][1]
        raw = doc.text[start:end]
        start += len(raw) - len(raw.lstrip())
        end -= len(raw) - len(raw.rstrip())
        if end <= start:
            continue
        position = len(chunks)
        chunks.append(Chunk(
            chunk_id=f"{doc.doc_id}#{position}", doc_id=doc.doc_id, position=position,
            start=start, end=end, text=doc.text[start:end], kind=doc.kind,
        ))
    return chunks
