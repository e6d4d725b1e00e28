"""Answering: everything between a question's hits and its checked answer.

- `route` decides, per question, whether the answer is computed from the sources' tables or read by the LLM.
- `reader` turns the hits into numbered sources and has the LLM answer from them (`evidence` picks the sentences
  it reads); `check` verifies every sentence's citations; `numerals` reads numbers written in words.
- `tables` reads the tables of any format localcr indexes as (row, column, value) cells with their scale;
  `compute` answers a question that needs arithmetic over them; `figures` (with `metrics`' textbook formulas)
  computes a filing's metric from line items found across the document.
"""
