"""BM25 in every language of the shared sets: localcr's analysis before (English only, a run of CJK characters
one token), English with CJK bigrams, and per-language analysis.

    .venv/bin/python benchmarks/retrieval/lexical_languages.py --data ../shared/data

For each set (XQuAD en/de/es/ru/ar/zh, JSQuAD ja, the codebase set) the published chunks are indexed with
localcr's BM25 (no contexts: the analysis alone is compared) three times: as before (English stemmer and stop
words, a run of CJK characters one token), as English with CJK runs as character bigrams, and each document
in the language localcr.language detects for it (its stemmer, the stop words of all the index's languages,
CJK bigrams), the queries in every language of the index. Pass@1/5/20 (share of
a query's gold chunks in the top k, as published) per set, and how often the detected language is the
set's. If jieba is installed, Chinese is also indexed with its dictionary segmenter in place of bigrams
(one more row), to compare the two. No embedder is loaded. The table goes to stdout and benchmarks/results/lexical_languages.md.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, machine, results_suffix, set_directory, table  # noqa: E402

SETS = {"xquad-en": "en", "xquad-de": "de", "xquad-es": "es", "xquad-ru": "ru", "xquad-ar": "ar", "xquad-zh": "zh",
        "jsquad-ja": "ja", "anthropic-codebase": "en", "written-en": "en", "written-fr": "fr"}
KS = (1, 5, 20)


def pass_at(index, queries: list[tuple[str, set[int]]]) -> list[float]:
    """Pass@k in percent: the share of each query's gold rows in its top k, averaged over queries."""
    totals = np.zeros(len(KS))
    for text, gold in queries:
        scores = index.scores(text)
        ranked = np.argsort(-scores, kind="stable")[:max(KS)]
        ranked = [r for r in ranked if scores[r] > 0]
        totals += [len(gold & set(ranked[:k])) / len(gold) for k in KS]
    return list(100 * totals / len(queries))


class _Patched:
    """An index built, and its queries analysed, with one attribute of localcr.lexical replaced."""

    def __init__(self, name: str, value, build):
        self.name, self.value = name, value
        self.index = self._run(build)

    def _run(self, fn):
        from localcr import lexical

        original = getattr(lexical, self.name)
        setattr(lexical, self.name, self.value)
        lexical._word_tokens.cache_clear()
        try:
            return fn()
        finally:
            setattr(lexical, self.name, original)
            lexical._word_tokens.cache_clear()

    def scores(self, query):
        return self._run(lambda: self.index.scores(query))


def _without_bigrams(build):
    """CJK runs left whole, as localcr analysed them before."""
    return _Patched("_CJK", re.compile(r"(?!)"), build)


def _segmented(jieba, build):
    """CJK runs cut into dictionary words by jieba instead of bigrams."""
    return _Patched("_bigrams", lambda run: [w for w in jieba.lcut(run) if w.strip()], build)


def _jieba():
    try:
        import logging

        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(logging.WARNING)
    return jieba


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True, help="the shared data directory")
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated set names (default: all)")
    args = p.parse_args()
    from localcr.documents import import_prechunked
    from localcr.language import document_language
    from localcr.lexical import LexicalIndex

    rows = []
    for name in args.sets.split(","):
        expected = SETS[name]
        if not (directory := set_directory(args.data, name)).is_dir():
            continue
        chunks_file, queries_file = corpus_files(directory)
        docs = import_prechunked(chunks_file)
        chunks = [c for d in docs for c in d.given_chunks]
        row_of = {(d.external_id, c.external_index): i for i, (d, c) in enumerate((d, c) for d in docs for c in d.given_chunks)}
        detected = {d.doc_id: document_language(d.text, d.is_code) for d in docs}
        queries = []
        for line in queries_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                queries.append((q["query"], {row_of[tuple(g)] for g in q["golden_chunk_uuids"] if tuple(g) in row_of}))
        texts = [c.text for c in chunks]
        before = pass_at(_without_bigrams(lambda: LexicalIndex.build(texts)), queries)
        english = pass_at(LexicalIndex.build(texts), queries)
        own = pass_at(LexicalIndex.build(texts, [detected[c.doc_id] for c in chunks]), queries)
        right = sum(lang == expected for lang in detected.values()) / len(detected)
        rows.append([name, len(chunks), len(queries), f"{100 * right:.0f}",
                     *(" / ".join(f"{v:.1f}" for v in result) for result in (before, english, own))])
        print(rows[-1], file=sys.stderr)
        if expected == "zh" and (segmenter := _jieba()):
            segmented = pass_at(_segmented(segmenter, lambda: LexicalIndex.build(texts, ["zh"] * len(texts))), queries)
            rows.append([f"{name}, jieba words", len(chunks), len(queries), "", "", "", " / ".join(f"{v:.1f}" for v in segmented)])
    head = ["set", "chunks", "queries", "language detected right %", "before: English P@1/5/20",
            "English + CJK bigrams", "per language (default)"]
    text = f"# BM25 by language\n\n{machine()}\n\n" + table(head, rows) + "\n"
    print(text)
    (ROOT / "benchmarks" / "results" / f"lexical_languages{results_suffix(args.sets, SETS)}.md").write_text(text)


if __name__ == "__main__":
    main()
