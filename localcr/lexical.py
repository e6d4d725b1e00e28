"""Contextual BM25: a bm25s index over "context + chunk", with a tokenizer that understands code identifiers.

An identifier is indexed whole and by its parts: `DiffExecutor` gives `diffexecutor`, `diff` and
`executor`; `run_target` gives `run_target`, `run` and `target`. A query that spells the identifier
matches it exactly (the rare whole token scores high), and a query in plain words ("diff executor")
still finds it through the parts. Words are lower-cased, English stop words dropped and the rest
Snowball-stemmed.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from localcr.errors import LocalcrError
from localcr.text import identifier_parts, words

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our
ours out over own same she should so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you your
""".split())


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _word_tokens(word: str) -> tuple[str, ...]:
    parts = [p.lower() for p in identifier_parts(word)]
    whole = word.strip("_").lower()
    stem = _stemmer().stemWord
    out = []
    if whole and whole not in STOPWORDS:  # a run of underscores alone is no word
        out.append(stem(whole))
    if len(parts) > 1:
        out.extend(stem(p) for p in parts if p not in STOPWORDS and len(p) > 1)
    return tuple(out)


def tokenize(text: str) -> list[str]:
    """Index terms of a text: each word or identifier whole, plus its parts if it has several; stemmed."""
    tokens: list[str] = []
    for word in words(text):
        tokens.extend(_word_tokens(word))
    return tokens


class LexicalIndex:
    """BM25 over the chunks' indexed texts, row i = chunk row i of the store."""

    def __init__(self, retriever):
        self.retriever = retriever
        self.vocab = retriever.vocab_dict

    @classmethod
    def build(cls, texts: list[str]) -> "LexicalIndex":
        import bm25s

        retriever = bm25s.BM25(k1=1.2, b=0.75)
        corpus = [tokenize(t) or ["\u2400"] for t in texts]  # bm25s needs a token per document
        retriever.index(corpus, show_progress=False)
        return cls(retriever)

    def save(self, directory: Path) -> None:
        self.retriever.save(str(directory))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        import bm25s

        try:
            return cls(bm25s.BM25.load(str(directory), mmap=False))
        except Exception as exc:
            raise LocalcrError(f"{directory}: the lexical index is unreadable ({type(exc).__name__}): rebuild with `localcr index`") from None

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query (zeros where no term matches)."""
        terms = [t for t in tokenize(query) if t in self.vocab]
        n = self.retriever.scores["num_docs"]
        if not terms:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(terms), dtype=np.float32)
