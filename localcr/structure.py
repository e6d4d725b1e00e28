"""Structural contexts: situate a chunk without an LLM, from what the document's own structure says.

For every chunk: the document's path, a one-line summary of the document (its title, or the leading
doc comment of a source file), the heading path above the chunk (Markdown, reStructuredText, HTML
converted to Markdown) and, for code, the definitions that enclose the chunk's first line (impl, class,
fn, def, struct ...). This is what a person skimming the file would use to place the chunk, costs
microseconds, and fills the same slot an LLM-written context fills later.
"""
from __future__ import annotations

import bisect
import re

from localcr.documents import Chunk, Document

MAX_WORDS = 48

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


def structural_contexts(doc: Document, chunks: list[Chunk], *, with_path: bool = True) -> None:
    """Set chunk.context (and context_source) for every chunk of one document."""
    summary = document_summary(doc)
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", doc.text)]
    scopes = _code_scopes(doc) if doc.is_code else _heading_paths(doc)
    for chunk in chunks:
        parts = []
        if with_path and not doc.path.endswith(f"#{doc.doc_id}"):
            parts.append(f"File {doc.doc_id}.")
        if summary:
            parts.append(summary)
        if chunk.start >= 0:
            line = bisect.bisect_right(line_starts, chunk.start) - 1
            scope = [s for s in scopes[line] if not chunk.text.lstrip().startswith(s)]
            if scope:
                parts.append(("In " if doc.is_code else "Section: ") + " > ".join(scope) + ".")
        chunk.context = _clip(" ".join(parts), MAX_WORDS)
        chunk.context_source = "structural"


def document_summary(doc: Document) -> str:
    """The document's title (first heading) or, for code, its leading comment / docstring, in one short line."""
    lines = doc.text.split("\n")
    if not doc.is_code:
        for i, line in enumerate(lines[:200]):
            m = _MD_HEADING.match(line)
            if m:
                return _clip(m.group(2), 16) + "."
            if i + 1 < len(lines) and line.strip() and _RST_UNDERLINE.match(lines[i + 1]) and len(lines[i + 1].strip()) >= len(line.strip()):
                return _clip(line.strip(), 16) + "."
        return ""
    comment: list[str] = []
    in_docstring = False
    for line in lines[:60]:
        stripped = line.strip()
        if in_docstring:
            if '"""' in stripped or "'''" in stripped:
                comment.append(stripped.replace('"""', "").replace("'''", ""))
                break
            comment.append(stripped)
            continue
        if stripped.startswith(('"""', "'''")) and not comment:
            body = stripped[3:]
            if body.endswith(('"""', "'''")):
                comment.append(body[:-3])
                break
            comment.append(body)
            in_docstring = True
            continue
        m = _COMMENT_LINE.match(line)
        if m and not stripped.startswith("#!"):
            comment.append(line[m.end():].strip().rstrip("*/").strip())
        elif stripped.startswith("#!") or (not stripped and not comment):
            continue
        else:
            break
    text = " ".join(c for c in comment if c and not c.startswith(("-*-", "SPDX", "Copyright", "@")))
    return _clip(text, 24)


def _heading_paths(doc: Document) -> list[list[str]]:
    """For each line of a prose document, the headings above it, outermost first."""
    lines = doc.text.split("\n")
    stack: list[tuple[int, str]] = []
    rst_levels: list[str] = []
    result: list[list[str]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None
        if not in_fence:
            m = _MD_HEADING.match(line)
            if m:
                heading = (len(m.group(1)), m.group(2))
            elif i + 1 < len(lines) and line.strip() and _RST_UNDERLINE.match(lines[i + 1]) \
                    and len(lines[i + 1].strip()) >= len(line.strip()):
                mark = lines[i + 1].strip()[0]
                if mark not in rst_levels:
                    rst_levels.append(mark)
                heading = (rst_levels.index(mark) + 1, line.strip())
        if heading:
            stack = [h for h in stack if h[0] < heading[0]] + [heading]
        result.append([_clip(h[1], 10) for h in stack])
    return result


def _code_scopes(doc: Document) -> list[list[str]]:
    """For each line of a source file, the signatures of the definitions open at that line, outermost first.

    Brace languages are tracked by brace depth, the rest (Python, YAML ...) by indentation.
    """
    lines = doc.text.split("\n")
    braces = doc.text.count("{") > len(lines) // 20
    stack: list[list] = []  # [depth or indent, signature, opened]
    depth = 0
    result: list[list[str]] = []
    for line in lines:
        result.append([entry[1] for entry in stack])
        code = _LINE_COMMENT.sub("", _STRINGS.sub('""', line)) if braces else line
        if not code.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if not braces:
            stack = [e for e in stack if e[0] < indent]
        match = _DEFINITION.match(line) or (_C_FUNCTION.match(line) if braces and indent == 0 else None)
        if match:
            level = depth if braces else indent
            stack = [e for e in stack if e[2] or e[0] < level]  # an unopened declaration ends at the next one
            stack.append([level, _signature(line), False])
        if braces:
            depth += code.count("{") - code.count("}")
            for entry in stack:
                if not entry[2] and depth > entry[0]:
                    entry[2] = True
            stack = [e for e in stack if not (e[2] and depth <= e[0])]
            if code.rstrip().endswith(";"):
                stack = [e for e in stack if e[2]]
    return result


def _signature(line: str) -> str:
    sig = line.strip().rstrip("{:").strip()
    sig = re.sub(r"\s+", " ", sig)
    return sig if len(sig) <= 80 else sig[:77] + "..."


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts) if len(parts) <= words else " ".join(parts[:words]) + " ..."
