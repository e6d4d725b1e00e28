"""Words and identifiers in text, as both retrievers see them.

A *word* is a run of letters and digits, underscores inside it included (`run_target`, `DiffExecutor`,
`_private`); its *parts* are the words an identifier is made of (`run`, `target`; `Diff`, `Executor`;
`HTTP`, `Server`). The lexical side indexes words whole and by their parts; the dense side embeds
identifiers spelled out as their parts.
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_](?:[\w]*[^\W_])?|_+\w+", re.UNICODE)
_PART = re.compile(r"[A-Z]+(?=[A-Z][^\W\d_A-Z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """The words and identifiers of a text, in order."""
    return _WORD.findall(text)


def word_spans(text: str):
    """The words and identifiers of a text as regex matches (with their offsets), in order."""
    return _WORD.finditer(text)


def identifier_parts(word: str) -> list[str]:
    """`DiffExecutor` -> [Diff, Executor], `run_target` -> [run, target], `HTTPServer` -> [HTTP, Server]."""
    return _PART.findall(word)


def spell_out_identifiers(text: str) -> str:
    """`DiffExecutor.run_target()` -> `Diff Executor.run target()`: code identifiers as the words they are made of,
    for embedders whose word-piece vocabularies know words, not identifiers."""
    def spell(match: re.Match) -> str:
        parts = identifier_parts(match.group(0))
        return " ".join(parts) if len(parts) > 1 else match.group(0)

    return _WORD.sub(spell, text)


# C0 and C1 control characters and DEL, except newline and tab, as visible escapes.
_VISIBLE = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c not in (0x09, 0x0A)}


def printable(text: str) -> str:
    """Text safe for a terminal. Document text is untrusted: `ESC ] 0 ;` retitles a window and `ESC ] 52`
    writes the clipboard, so every control character but newline and tab is shown as a `\\xNN` escape."""
    return text.translate(_VISIBLE)
