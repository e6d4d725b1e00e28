"""Words and identifier parts, shared by the lexical tokenizer and the embedder."""
from __future__ import annotations

import re

from localcr.text import identifier_parts, printable, reflow, snippet, spell_out_identifiers, words


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


def _marked(pieces):
    return "".join(f"[{piece}]" if marked else piece for piece, marked in pieces)


def test_a_snippet_is_cut_around_the_most_matches_between_words():
    text = "filler words here. " * 30 + "The retry backoff doubles after every attempt.\n\n  Retry   limits apply. " + "more filler text. " * 30
    spans = [(m.start(), m.end()) for m in re.finditer(r"(?i)retry|backoff", text)]
    shown = _marked(snippet(text, spans, width=120))
    assert shown.startswith("… ") and shown.endswith(" …")
    assert "The [retry] [backoff] doubles after every attempt.\n  [Retry]   limits apply." in shown  # no blank line
    inner = shown[2:-2]
    assert len(inner) <= 120 + 2 * 4 and inner == inner.strip()  # the marks add two brackets each
    assert inner.split()[0] in text.split() and inner.split()[-1] in text.split()  # cut between words


def test_a_snippet_without_matches_is_the_start_and_a_short_text_is_whole():
    text = "word " * 200
    assert _marked(snippet(text, [], width=50)) == ("word " * 10).strip() + " …"
    assert snippet("  two\n\n  lines  ", [(2, 5)]) == [("two", True), ("\n  lines", False)]
    assert snippet("", []) == []


HARD_WRAPPED = """## Troubleshooting

A job whose previous run is still going and that is
marked `exclusive` is skipped, not queued. Raise the
timeout or make the job faster.

- *A job never starts*: check `tern status JOB`; a job
  whose run is still going is skipped.
- *Clock changes*: set `timezone = "UTC"`.

| option | default |
| ------ | ------- |

```toml
timeout = 30
retries = 3
```

    indented = "code"
    stays = "too"
Ends with a hard break\\
and a line of its own.
"""


def test_reflow_joins_hard_wrapped_prose_and_keeps_code_lists_and_tables():
    spans = [(m.start(), m.end()) for m in re.finditer("exclusive|whose|retries", HARD_WRAPPED)]
    text, moved = reflow(HARD_WRAPPED, spans)
    assert text.splitlines() == [
        "## Troubleshooting", "",
        "A job whose previous run is still going and that is marked `exclusive` is skipped, not queued. Raise the "
        "timeout or make the job faster.", "",
        "- *A job never starts*: check `tern status JOB`; a job whose run is still going is skipped.",
        "- *Clock changes*: set `timezone = \"UTC\"`.", "",
        "| option | default |", "| ------ | ------- |", "",
        "```toml", "timeout = 30", "retries = 3", "```", "",
        "    indented = \"code\"", "    stays = \"too\"",
        "Ends with a hard break\\", "and a line of its own.",
    ]
    assert [text[a:b] for a, b in moved] == ["whose", "exclusive", "whose", "retries"]
    rows = "# 2023\nBranch | Metric | Q3 2023\nLisbon | Revenue | 145\nPorto | Revenue | 99\n"  # a spreadsheet's section
    assert reflow(rows, [])[0] == rows


def test_a_snippet_of_a_hard_wrapped_paragraph_is_whole_lines():
    text = "# Scheduling\n\n" + "A job whose previous run is still going and that is\nmarked exclusive is skipped.\n" * 3
    spans = [(m.start(), m.end()) for m in re.finditer("exclusive", text)]
    shown = _marked(snippet(text, spans, prose=True))
    assert "is still going and that is marked [exclusive] is skipped. A job whose" in shown
    assert "that is\nmarked" in _marked(snippet(text, spans))  # code (prose=False) keeps its lines

