"""Words and identifier parts, shared by the lexical tokenizer and the embedder."""
from __future__ import annotations

from localcr.text import identifier_parts, printable, spell_out_identifiers, words


def test_words_keep_identifiers_whole():
    assert words("impl DiffExecutor { fn run_target(_private) }") == ["impl", "DiffExecutor", "fn", "run_target", "_private"]


def test_identifier_parts():
    assert identifier_parts("DiffExecutor") == ["Diff", "Executor"]
    assert identifier_parts("run_target") == ["run", "target"]
    assert identifier_parts("HTTPServer") == ["HTTP", "Server"]
    assert identifier_parts("parse_utf8") == ["parse", "utf", "8"]


def test_identifiers_spelled_out_for_the_embedder():
    assert spell_out_identifiers("impl DiffExecutor { fn run_target() }") == "impl Diff Executor { fn run target() }"
    assert spell_out_identifiers("Plain words stay, HTTPServer splits.") == "Plain words stay, HTTP Server splits."



def test_printable_escapes_terminal_controls_but_keeps_layout():
    hostile = "title\x1b]0;pwned\x07 clip\x1b]52;c;ZXZpbA==\x07 csi\x1b[2J del\x7f c1\x9b31m\r"
    shown = printable(hostile + "\n\tnext line")
    assert shown == ("title\\x1b]0;pwned\\x07 clip\\x1b]52;c;ZXZpbA==\\x07 csi\\x1b[2J del\\x7f c1\\x9b31m\\x0d"
                     "\n\tnext line")
    assert printable("crème brûlée, 寿司 — ok") == "crème brûlée, 寿司 — ok"
