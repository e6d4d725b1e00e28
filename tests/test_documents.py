"""Reading files: kinds by extension, HTML as text, binary and non-UTF-8 files, stable ids."""
from __future__ import annotations

import json

from localcr.documents import load_paths


def test_html_becomes_text_with_headings(tmp_path):
    (tmp_path / "page.html").write_text("<html><head><style>p{}</style><script>var x=1;</script></head><body>"
                                        "<h1>Title</h1><p>First &amp; only <b>paragraph</b>.</p><h2>Part</h2><p>More</p></body></html>")
    (doc,) = load_paths([tmp_path / "page.html"]).documents
    assert doc.kind == "html"
    assert doc.text == "# Title\n\nFirst & only paragraph.\n\n## Part\n\nMore\n"


def test_ids_are_relative_to_the_named_folder_and_skips_are_reported(corpus):
    report = load_paths([corpus])
    ids = sorted(d.doc_id for d in report.documents)
    assert ids == ["orbit/docs/guide.md", "orbit/docs/notes.txt", "orbit/src/journal.rs", "orbit/src/scheduler.py"]
    assert report.skipped == 2  # logo.png (unsupported), dump.txt (binary); .git is not walked
    notes = next(d for d in report.documents if d.doc_id.endswith("notes.txt"))
    assert "\ufffd" in notes.text and notes.kind == "text"
    assert {d.kind for d in report.documents} >= {"markdown", "code:py", "code:rs"}


def test_prechunked_import_gives_its_chunks_the_documents_kind(tmp_path):
    code = "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n" * 4
    corpus = [{"doc_id": "d", "original_uuid": "u", "content": code,
               "chunks": [{"chunk_id": "d_0", "original_index": 0, "content": code[:40]}]},
              {"doc_id": "p", "original_uuid": "v", "content": "Plain prose about gardens.",
               "chunks": [{"chunk_id": "p_0", "original_index": 0, "content": "Plain prose about gardens."}]}]
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(corpus))
    docs = load_paths([path]).documents
    assert [(d.kind, [c.kind for c in d.given_chunks]) for d in docs] == [("code", ["code"]), ("text", ["text"])]
