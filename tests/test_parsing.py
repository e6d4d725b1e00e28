"""Parsers: definitions from tree-sitter, chunks along syntax trees, Markdown headings from markdown-it, the
main text of HTML pages. Every file is written by the test and read by the real readers."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from localcr.chunking import chunk_document
from localcr.documents import Chunk, load_paths
from localcr.parsing import code
from localcr.parsing.markdown import to_html
from localcr.structure import structural_contexts

from conftest import run


def words(texts):
    return [len(t.split()) for t in texts]


def read(tmp_path: Path, name: str, text: str):
    (tmp_path / name).write_text(text, encoding="utf-8")
    [doc] = load_paths([tmp_path / name]).documents
    return doc


def context_at(doc, marker: str) -> str:
    start = doc.text.index(marker)
    chunk = Chunk("c", doc.doc_id, 0, start, start + len(marker), marker)
    structural_contexts(doc, [chunk])
    return chunk.context


SOURCES = {
    "shapes.py": ('class Shape:\n    """A shape."""\n\n    class Corner:\n        def angle(self, other: "Corner") -> float:\n'
                  '            """Degrees between corners."""\n            total = 0.0\n            return total + 90.0\n',
                  ["Shape", "Corner", "angle"], "total = 0.0",
                  "In class Shape > class Corner > def angle(self, other: \"Corner\") -> float."),
    "shapes.rs": ("/// Shapes.\nmod shapes {\n    pub struct Corner;\n    impl Corner {\n        /// Degrees.\n"
                  "        pub fn angle(&self, other: &Corner) -> f64 {\n            let total = 0.0;\n            total + 90.0\n"
                  "        }\n    }\n}\n",
                  ["shapes", "Corner", "angle"], "let total = 0.0;",
                  "In mod shapes > impl Corner > pub fn angle(&self, other: &Corner) -> f64."),
    "shapes.ts": ("export namespace Shapes {\n  export class Corner {\n    /** Degrees. */\n    angle(other: Corner): number {\n"
                  "      const total = 0;\n      return total + 90;\n    }\n  }\n}\n",
                  ["Shapes", "Corner", "angle"], "const total = 0;",
                  "In namespace Shapes > class Corner > angle(other: Corner): number."),
    "shapes.go": ("package shapes\n\n// Corner is a corner.\ntype Corner struct {\n\tx int\n}\n\n// Angle is in degrees.\n"
                  "func (c *Corner) Angle(other *Corner) float64 {\n\ttotal := 0.0\n\treturn total + 90\n}\n",
                  ["Corner", "Angle"], "total := 0.0", "In type Corner struct > func (c *Corner) Angle(other *Corner) float64."),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_definition_paths_from_tree_sitter(tmp_path, name):
    text, names, marker, scope = SOURCES[name]
    doc = read(tmp_path, name, text)
    syntax = code.parse(doc.text, doc.kind)
    assert syntax is not None and syntax.language == code.GRAMMARS[name.split(".")[1]]
    path, definitions = [], syntax.definitions
    while definitions:  # the innermost chain: nested class (or impl, namespace) -> method
        path.append(definitions[-1].name)
        definitions = definitions[-1].children
    assert path == names
    assert context_at(doc, marker).endswith(scope)


def test_doc_comments_and_signatures(tmp_path):
    doc = read(tmp_path, "shapes.rs", SOURCES["shapes.rs"][0])
    [shapes] = code.parse(doc.text, doc.kind).definitions
    [_, impl] = shapes.children
    [angle] = impl.children
    assert (shapes.doc, angle.doc, angle.role) == ("Shapes.", "Degrees.", "function")
    assert angle.signature == "pub fn angle(&self, other: &Corner) -> f64"


def _functions(n: int, seed: int) -> str:
    rng = random.Random(seed)
    parts = ["import os\n"]
    for i in range(n):
        body = "\n".join(f"    value_{j} = os.getpid() + {j}" for j in range(rng.choice([1, 3, 8, 20, 60])))
        parts.append(f"def function_{i}(argument):\n    \"\"\"Function {i}.\"\"\"\n{body}\n    return argument\n")
    parts.append("class Holder:\n" + "".join(f"    def method_{i}(self):\n        return {i}\n\n" for i in range(30)))
    return "\n\n".join(parts)


@pytest.mark.parametrize("max_tokens", [40, 90, 200])
def test_no_chunk_starts_inside_a_function_that_fits(tmp_path, max_tokens):
    doc = read(tmp_path, "many.py", _functions(25, max_tokens))
    definitions = []
    stack = list(code.parse(doc.text, doc.kind).definitions)
    while stack:
        d = stack.pop()
        definitions.append(d)
        stack.extend(d.children)
    chunks = chunk_document(doc, words, max_tokens, max_tokens // 8)
    assert "".join(doc.text[c.start:c.end] for c in chunks).split() and all(words([c.text])[0] <= max_tokens for c in chunks)
    for chunk in chunks:
        for d in definitions:
            if d.start < chunk.start < d.end:
                assert words([doc.text[d.start:d.end]])[0] > max_tokens, (chunk.text[:40], d.name)
    # a function too long for one chunk is cut between its statements, never inside one
    for chunk in chunks:
        assert chunk.text.startswith(("import", "def ", "class ", "value_", "return", '"""')), chunk.text[:40]


def test_markdown_fences_and_front_matter(tmp_path):
    text = ("---\ntitle: Operations handbook\n---\n\n# Install\n\nRun this:\n\n```sh\n# not a heading\nmake install\n"
            "## neither\n```\n\nthen restart.\n\n## Linux\n\napt details\n")
    doc = read(tmp_path, "guide.md", text)
    assert context_at(doc, "make install").endswith("Section: Install.")
    assert context_at(doc, "then restart.").endswith("Section: Install.")
    assert context_at(doc, "apt details") == "File guide.md. Operations handbook. Section: Install > Linux."
    chunks = chunk_document(doc, words, 12, 0)
    assert doc.text.index("## Linux") in [c.start for c in chunks]
    assert any(c.text.startswith("```sh\n# not a heading\nmake install\n## neither\n```") for c in chunks)


PAGE = """<!doctype html><html><head><title>Retries</title><script>track()</script></head>
<body class="has-sidebar"><header><nav><a href="/">Home</a> <a href="/blog">Blog</a></nav></header>
<div id="cookie-consent">We use cookies. <button>Accept all</button></div>
<div class="page"><aside class="sidebar">Popular posts</aside>
<main><article><h1>Retry policy</h1><p>Retries back   off exponentially.</p>
<h2>Limits</h2><p>At most five attempts.</p>
<pre>def backoff(n):
    # doubled each time
    return 2 ** n</pre></article></main></div>
<footer>Copyright 2026 Example Corp. <a href="/privacy">Privacy</a></footer></body></html>"""


def test_html_main_text_without_boilerplate(tmp_path):
    doc = read(tmp_path, "retries.html", PAGE)
    assert doc.text == ("# Retry policy\n\nRetries back off exponentially.\n\n## Limits\n\nAt most five attempts.\n\n"
                        "```\ndef backoff(n):\n    # doubled each time\n    return 2 ** n\n```\n")
    assert context_at(doc, "return 2 ** n").endswith("Section: Retry policy > Limits.")


MANUAL = Path("/usr/share/doc/python3-doc/html/library/json.html")


@pytest.mark.skipif(not MANUAL.exists(), reason="Debian's python3-doc is not installed (setup.sh --test installs it)")
def test_a_real_manual_page(tmp_path):
    (tmp_path / "json.html").write_bytes(MANUAL.read_bytes())
    [doc] = load_paths([tmp_path / "json.html"]).documents
    headings = [line for line in doc.text.split("\n") if line.startswith("#")]
    assert headings[0].startswith("# json") and any(h.startswith("## Basic Usage") for h in headings)
    assert "Navigation" not in doc.text and "Quick search" not in doc.text and "Table of Contents" not in doc.text
    assert "```\n>>> import json" in doc.text


def test_a_language_without_grammar_falls_back(tmp_path):
    doc = read(tmp_path, "notes.rs", "this is not rust at all { it is } prose ; with ) stray ( brackets\n" * 5)
    assert code.parse(doc.text, doc.kind) is None and code.label(doc.text, doc.kind) == "regex"
    assert chunk_document(doc, words, 12, 0)  # the line rules still chunk it


@pytest.mark.model
def test_stats_name_the_documents_that_fell_back(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "shapes.py").write_text(SOURCES["shapes.py"][0])
    (src / "shapes.go").write_text(SOURCES["shapes.go"][0])
    (src / "notes.rs").write_text("this is not rust at all { it is } prose ; with ) stray ( brackets\n" * 5)
    run("index", str(src), "--index", str(tmp_path / "idx"))
    out = run("stats", "--index", str(tmp_path / "idx"))
    line = next(line for line in out.splitlines() if line.startswith("structure"))
    assert "go 1" in line and "python 1" in line and "regular expressions (no grammar) for 1: src/notes.rs" in line


def test_deeply_nested_code_is_chunked_without_recursion_errors(tmp_path):
    text = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n" + "y = " + " + ".join(f"a{i}" for i in range(5000)) + "\n"
    doc = read(tmp_path, "generated.py", text)
    chunks = chunk_document(doc, words, 50, 5)
    assert chunks and all(doc.text[c.start:c.end] == c.text for c in chunks)


def test_a_chunk_rendered_from_markdown_keeps_raw_html_as_text_and_marks_the_terms():
    text = ("## Retries\n\nA failed job is *retried*: see [the retry docs](https://example.org/retry) and\n"
            "`max_retries`. The <script>alert('owned')</script> tag stays text.\n\n- one retry\n- two\n\n"
            "```toml\nretries = 3\n```\n")
    spans = [(m.start(), m.end()) for m in re.finditer("[Rr]etr[a-z]*", text)]
    html = to_html(text, spans)
    assert html.startswith("<h2><mark>Retries</mark></h2>\n<p>A failed job is <em><mark>retried</mark></em>:")
    assert '<a href="https://example.org/retry">the <mark>retry</mark> docs</a>' in html  # no mark inside the address
    assert "<code>max_<mark>retries</mark></code>" in html
    assert "&lt;script&gt;alert('owned')&lt;/script&gt;" in html and "<script" not in html
    assert "<ul>\n<li>one <mark>retry</mark></li>\n<li>two</li>\n</ul>" in html
    assert '<pre><code class="language-toml"><mark>retries</mark> = 3\n</code></pre>' in html
    assert to_html("a \ue000b\ue001", []) == "<p>a \ufffdb\ufffd</p>\n"  # a document's own private marks are no marks

