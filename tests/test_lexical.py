"""The identifier-aware tokenizer and the BM25 index over it."""
from __future__ import annotations

from localcr.lexical import LexicalIndex, tokenize


def test_camel_case_identifier_is_kept_whole_and_split():
    assert tokenize("DiffExecutor") == ["diffexecutor", "diff", "executor"]


def test_snake_case_identifier_is_kept_whole_and_split():
    assert tokenize("run_target") == ["run_target", "run", "target"]


def test_acronyms_digits_and_stemming():
    assert tokenize("HTTPServer") == ["httpserver", "http", "server"]
    assert tokenize("parse_utf8") == ["parse_utf8", "pars", "utf"]  # one-character parts are noise
    assert tokenize("running executors") == ["run", "executor"]


def test_stop_words_dropped_but_not_inside_identifiers():
    assert tokenize("What is the purpose of the struct") == ["purpos", "struct"]
    assert tokenize("is_empty") == ["is_empti", "empti"]


def test_plain_words_find_identifiers_and_identifiers_find_themselves():
    index = LexicalIndex.build(["impl DiffExecutor { fn run_target() }", "a diff of two files", "unrelated text"])
    by_words = index.scores("diff executor run target")
    assert by_words.argmax() == 0
    exact = index.scores("DiffExecutor")
    assert exact[0] > exact[1] > 0
    assert index.scores("zebra").sum() == 0


def test_save_and_load(tmp_path):
    index = LexicalIndex.build(["alpha beta", "gamma"])
    index.save(tmp_path / "lex")
    assert LexicalIndex.load(tmp_path / "lex").scores("gamma").argmax() == 1

