"""Search where the user points: which documents a search may answer from, by glob, kind and language.

    index.search("revenue growth", k=10, glob=["reports/2022/**", "!*.draft.md"], kind="pdf", lang="en")

A glob is matched against a document's id (the path shown in brackets in a hit, e.g. `reports/2022/10k.pdf`) and
its path as indexed (absolute when the index was built from an absolute path), as ripgrep's `-g` reads one: `*`
and `?` stay within a folder, `**` crosses folders, `[abc]` and `{a,b}` choose; a pattern names a run of whole
folder and file names anywhere in the path (`docs`, `docs/*.md` and `*.md` all match `orbit/docs/guide.md`), and
a pattern matching a folder matches everything in it. Patterns starting with `!` exclude; a document passes if it
matches some other pattern (or there is none) and no excluding one.

A filter is applied before the cut: each backend searches only the documents that pass (localcr.backends), so a
search for k hits returns the k best passing chunks. A pattern is data: it is compiled here into a regular
expression of its own, never spliced into a query of either backend.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from localcr.errors import ArgumentError
from localcr.language import UNDETERMINED

# The kinds a user names (--kind): every document kind (localcr.documents.Document.kind), and two families.
KINDS = ("code", "markdown", "rst", "text", "html", "pdf", "office", "docx", "pptx", "odt", "odp", "rtf", "sheet", "csv",
         "tsv", "xlsx", "ods", "mail", "epub", "image")
# "code" is every "code:<suffix>" kind (and "code" of an imported corpus); a kind may be in more than one family.
FAMILIES = {"office": ("docx", "pptx", "xlsx", "odt", "odp", "ods", "rtf"), "sheet": ("csv", "tsv", "xlsx", "ods")}
_LANGUAGE = re.compile(r"=?[a-z]{2,3}")
SELECTIONS_KEPT = 64  # the filters whose selections a backend keeps: a served index sees the same few again and again


@dataclass(frozen=True)
class Filter:
    """Which documents pass: globs (`!` excludes), a kind (or family), a language (ISO 639-1): `en` passes English
    documents and those too short to tell (`und`: a sheet of numbers, a one-line mail, in a folder with no detected
    language), `=en` English ones only."""

    globs: tuple[str, ...] = ()
    kind: str | None = None
    lang: str | None = None

    @classmethod
    def of(cls, glob=None, kind: str | None = None, lang: str | None = None) -> "Filter | None":
        """The filter of Index.search's arguments, checked (one clear error each); None when nothing is filtered."""
        globs = (glob,) if isinstance(glob, str) else tuple(glob or ())
        for pattern in globs:
            if not isinstance(pattern, str) or not pattern.removeprefix("!"):
                raise ArgumentError(("glob", pattern), ": an empty pattern; write e.g. 'docs/**' or '!*.md'")
            compile_glob(pattern.removeprefix("!"))
        if kind is not None and kind not in KINDS and not re.fullmatch(r"code:[a-z0-9+_-]+", kind):
            raise ArgumentError(("kind", kind), f": unknown document kind; choose one of {', '.join(KINDS)} (or code:SUFFIX, e.g. code:py)")
        if lang is not None and not _LANGUAGE.fullmatch(lang):
            raise ArgumentError(("lang", lang), ": write a language as its ISO 639-1 code, e.g. en, de, zh (=en: not "
                                "the documents whose language is undetermined too)")
        if not globs and kind is None and lang is None:
            return None
        return cls(globs, kind, lang)

    @cached_property
    def _patterns(self) -> tuple[list[re.Pattern], list[re.Pattern]]:
        include = [compile_glob(p) for p in self.globs if not p.startswith("!")]
        exclude = [compile_glob(p[1:]) for p in self.globs if p.startswith("!")]
        return include, exclude

    def passes_path(self, doc_id: str, path: str) -> bool:
        """Whether a document's id or path passes the globs."""
        include, exclude = self._patterns
        names = (doc_id, path)
        if include and not any(p.search(name) for p in include for name in names):
            return False
        return not any(p.search(name) for p in exclude for name in names)

    def passes_kind(self, kind: str) -> bool:
        if self.kind is None or kind == self.kind:
            return True
        if self.kind == "code":
            return kind.startswith("code")
        return kind in FAMILIES.get(self.kind, ())

    @property
    def languages(self) -> tuple[str, ...]:
        """The document languages the filter passes (none: any)."""
        if self.lang is None:
            return ()
        exact = self.lang.removeprefix("=")
        return (exact,) if self.lang.startswith("=") or exact == UNDETERMINED else (exact, UNDETERMINED)

    def passes(self, doc_id: str, path: str, kind: str, language: str) -> bool:
        return (self.passes_kind(kind) and (self.lang is None or language in self.languages)
                and (not self.globs or self.passes_path(doc_id, path)))

    def describe(self) -> str:
        """The filter as the command line writes it, for a message."""
        parts = [f"--glob {g!r}" for g in self.globs]
        parts += [f"--kind {self.kind}"] if self.kind else []
        parts += [f"--lang {self.lang}"] if self.lang else []
        return " ".join(parts)


def exact_glob(doc_id: str) -> str:
    """The glob that passes a document by its id, every glob character written as itself (navigation searches
    inside one document through the same selection a filter uses). Like any glob it also passes an id that ends
    in this one after a `/`; navigation ranks only the rows of its own document with it."""
    return "".join(f"[{c}]" if c in "*?[{" else c for c in doc_id)


def compile_glob(pattern: str) -> re.Pattern:
    """A glob as a regular expression searched in a path: the pattern must cover whole names, from the path's start
    or a `/` to its end or a `/` (so a folder's pattern matches what it holds). A leading `/` anchors it at the start."""
    out, i = [], 0
    anchored = pattern.startswith("/")
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            first = i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1
            end = pattern.find("]", first + 1)  # a ] first in the class is itself: []] and [!]] as in ripgrep
            if end < 0:
                raise ArgumentError(("glob", pattern), ": an unclosed '[' (write [[] for a bracket itself)")
            body = pattern[i + 1:end]
            negate = body[:1] in ("!", "^")
            chars = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + "".join("\\" + ch if ch in "\\^[]" else ch for ch in chars) + "]")
            i = end + 1
            continue
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0:
                raise ArgumentError(("glob", pattern), ": an unclosed '{' (write [{] for a brace itself)")
            alternatives = pattern[i + 1:end].split(",")
            out.append("(?:" + "|".join(compile_glob(a).pattern.removeprefix(_START).removesuffix(_END) for a in alternatives) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    return re.compile(("^" if anchored else _START) + body + _END)


_START, _END = "(?:^|(?<=/))", "(?=/|$)"
