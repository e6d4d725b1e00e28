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
