"""Parsing: a document's structure from the parser made for its format, for chunk boundaries and contexts.

`code` reads source files with tree-sitter (one grammar per language, from tree-sitter-language-pack):
definitions, their nesting, signatures and doc comments, and the syntax tree chunking cuts along.
`markdown` reads Markdown (and the Markdown the HTML, DOCX and PPTX readers write) with markdown-it-py:
headings, fenced code and front matter. Both hand back plain offsets into the document's text, so the
stages that use them (`chunking`, `structure`) never see a parser's own objects.
"""
