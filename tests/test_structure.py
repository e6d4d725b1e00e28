"""Structural contexts: heading paths, enclosing definitions, document summaries."""
from __future__ import annotations

from localcr.documents import Chunk, Document
from localcr.structure import structural_contexts


def contexts_at(text, kind, markers, doc_id="pkg/file"):
    doc = Document(doc_id=doc_id, path=doc_id, kind=kind, text=text, size=len(text))
    chunks = []
    for n, marker in enumerate(markers):
        start = text.index(marker)
        chunks.append(Chunk(f"c{n}", doc_id, n, start, start + len(marker), marker))
    structural_contexts(doc, chunks)
    return [c.context for c in chunks]


def test_markdown_heading_path():
    text = "# Guide\n\nintro\n\n## Install\n\nstep one\n\n### Linux\n\napt get\n\n## Use\n\nrun it\n"
    intro, linux, use = contexts_at(text, "markdown", ["intro", "apt get", "run it"])
    assert intro.startswith("File pkg/file. Guide.")
    assert "Section: Guide > Install > Linux." in linux
    assert "Section: Guide > Use." in use and "Install" not in use


def test_front_matter_title_names_the_document():
    text = "---\ntitle: Operations handbook\ntags: [ops]\n---\n\n## Backups\n\nnightly at two\n"
    [backups] = contexts_at(text, "markdown", ["nightly at two"])
    assert backups.startswith("File pkg/file. Operations handbook.") and "Section: Backups." in backups
    broken = "---\ntitle: [unclosed\n---\n\n# Heading\n\nbody\n"  # bad YAML: the first heading, as without
    assert contexts_at(broken, "markdown", ["body"])[0].startswith("File pkg/file. Heading.")


def test_rst_headings():
    text = "Title\n=====\n\nSub\n---\n\nbody text\n"
    (ctx,) = contexts_at(text, "rst", ["body text"])
    assert "Title > Sub" in ctx


def test_python_enclosing_definitions_and_docstring():
    text = '"""Job queue."""\n\nclass Queue:\n    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n\n\ndef helper():\n    return 1\n'
    push, pop, helper = contexts_at(text, "code:py", ["self.items.append", "return self.items.pop", "return 1"])
    assert "Job queue." in push
    assert "In class Queue > def push(self, x)." in push
    assert "In class Queue > def pop(self)." in pop
    assert helper.endswith("In def helper().") and "class Queue" not in helper
    assert "Defines Queue, helper." in push  # the file's outline situates every chunk


def test_rust_braces_and_module_doc():
    text = "//! Journal.\nuse std::fs;\n\nimpl Journal {\n    pub fn append(&mut self) {\n        write();\n    }\n}\n\nfn other() {\n    body();\n}\n"
    append, other = contexts_at(text, "code:rs", ["write();", "body();"])
    assert "Journal." in append and "In impl Journal > pub fn append(&mut self)." in append
    assert "In fn other()." in other and "impl" not in other


def test_licence_headers_are_skipped_and_package_and_outline_added():
    text = ("/*\n * Copyright 2020 Someone.\n * Licensed under the Apache License.\n */\npackage com.example.hash;\n\n"
            "/**\n * Builds hashes.\n */\npublic class HashBuilder {\n    public int build() {\n        return 1;\n    }\n}\n")
    (ctx,) = contexts_at(text, "code:java", ["return 1;"])
    assert "Licen" not in ctx and "Copyright" not in ctx
    assert "Builds hashes." in ctx and "Package com.example.hash." in ctx and "Defines HashBuilder." in ctx


def test_imported_documents_have_no_path_prefix():
    doc = Document(doc_id="doc_1", path="chunks.json#doc_1", kind="code", text="fn a() {\n  x();\n}\n", size=1)
    chunk = Chunk("c", "doc_1", 0, 11, 15, "x();")
    structural_contexts(doc, [chunk])
    assert chunk.context == "Defines a. In fn a()."


REPORT = """# Quarterly report

## Overview

Brightwater Anvils Ltd, the Sheffield maker of forging anvils, reports its results for the second quarter of 2023.

## Operations

The forge ran two shifts throughout the quarter. Maintenance of the main press took place in May, as planned.

Staff numbers were unchanged, and the apprentices finished their first year of training.

## Results

The company's revenue grew by 3% over the previous quarter, while forge orders from shipyards doubled.
"""


def test_the_lead_situates_chunks_that_never_name_the_subject():
    overview, operations, staff, results = contexts_at(
        REPORT, "markdown", [REPORT.split("\n\n")[2], "The forge ran two shifts throughout the quarter.", "Staff numbers",
                             "The company's revenue"])
    assert "Brightwater Anvils Ltd, the Sheffield maker of forging anvils" in results
    assert results.startswith("File pkg/file. Quarterly report. Section: Quarterly report > Results.")
    assert "Brightwater" not in overview  # the chunk that holds the lead is not given it again
    # a chunk inside a section also gets the section's lead; the chunk that opens the section does not
    assert staff.endswith("The forge ran two shifts throughout the quarter.")
    assert "The forge ran" not in operations


def test_leads_skip_titles_front_matter_lists_and_licences_and_clip_long_sentences():
    text = ("---\ntitle: Handbook\n---\n\n# Handbook\n\n- a list item that is not prose at all\n\n"
            "Copyright 2024 Example Corp. All rights reserved under the licence.\n\n"
            "This handbook explains how the Tern scheduler is run " + "day and night " * 20 + "by the on-call team.\n\n"
            "Later text.\n")
    (later,) = contexts_at(text, "markdown", ["Later text."])
    assert "This handbook explains how the Tern scheduler is run" in later and later.endswith("...")
    assert "list item" not in later and "Copyright" not in later
    assert contexts_at(text, "markdown", ["Later text."])[0] == later


def test_lead_of_spaceless_text_is_its_first_sentence():
    text = "# 梅雨\n\n梅雨は、東アジアの広範囲においてみられる特有の気象現象である。雨季の一種である。\n\n梅雨入りは春の終わりとされる。\n"
    (second,) = contexts_at(text, "markdown", ["梅雨入り"])
    assert second.endswith("梅雨は、東アジアの広範囲においてみられる特有の気象現象である。")


def test_code_keeps_its_module_comment_and_gets_no_prose_lead():
    text = '"""Job queue."""\n\nclass Queue:\n    """A queue of jobs that are waiting for a free machine to run on."""\n\n    def push(self, x):\n        self.items.append(x)\n'
    (push,) = contexts_at(text, "code:py", ["self.items.append"])
    assert "Job queue." in push and "free machine" not in push


def test_a_run_of_paragraphs_without_headings_has_no_lead():
    text = "The Panthers defense gave up just 308 points in the season.\n\nThe offense scored the most points.\n"
    (offense,) = contexts_at(text, "text", ["The offense scored"])
    assert offense == "File pkg/file."


def test_leads_can_be_left_out():
    doc = Document(doc_id="r.md", path="r.md", kind="markdown", text=REPORT, size=len(REPORT))
    start = REPORT.index("The company's")
    chunk = Chunk("c", "r.md", 0, start, len(REPORT), REPORT[start:])
    structural_contexts(doc, [chunk], leads=False)
    assert "Brightwater" not in chunk.context


def test_a_titled_prechunked_record_carries_its_title(tmp_path):
    import json

    from localcr.documents import import_prechunked

    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{
        "doc_id": "doc_0", "original_uuid": "u0", "title": "Super_Bowl_50",
        "content": "The Panthers finished the season 15-1.\n\nThey lost the final game.",
        "chunks": [{"chunk_id": "doc_0_chunk_0", "original_index": 0, "content": "The Panthers finished the season 15-1."},
                   {"chunk_id": "doc_0_chunk_1", "original_index": 1, "content": "They lost the final game."}],
    }]))
    [doc] = import_prechunked(corpus)
    assert doc.title == "Super Bowl 50"
    structural_contexts(doc, doc.given_chunks)
    assert [c.context.split(".")[0] for c in doc.given_chunks] == ["Super Bowl 50", "Super Bowl 50"]
    # a record's paragraphs have no heading to mark the first as an introduction: it is not given to the others
    assert doc.given_chunks[1].context == "Super Bowl 50."


def test_a_hash_line_in_a_code_fence_is_not_the_title():
    text = "```sh\n# install it first\npip install orbit\n```\n\n# Orbit guide\n\nRun the agent on every node.\n"
    (ctx,) = contexts_at(text, "markdown", ["Run the agent"])
    assert ctx.startswith("File pkg/file. Orbit guide.") and "install it first" not in ctx
