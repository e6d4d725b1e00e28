"""Contextual BM25: a bm25s index over "context + chunk", with a tokenizer that understands code identifiers.

An identifier is indexed whole and by its parts: `DiffExecutor` gives `diffexecutor`, `diff` and
`executor`; `run_target` gives `run_target`, `run` and `target`. A query that spells the identifier
matches it exactly (the rare whole token scores high), and a query in plain words ("diff executor")
still finds it through the parts. Words are lower-cased, the stop words of the document's language
dropped and the rest Snowball-stemmed in that language (see localcr.language). Chinese, Japanese and Korean
are written without spaces: their runs of characters are indexed as overlapping character bigrams, so a
word inside a sentence matches (the standard CJK analysis of Lucene and Elasticsearch). A query is analysed
in every language of the index, so it matches whichever of them it is written in.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from localcr.errors import LocalcrError
from localcr.text import identifier_parts, word_spans, words

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our
ours out over own same she should so some such than that the their theirs them then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you your
""".split())


# Snowball stemmers (PyStemmer) by ISO 639-1 code; a language without one is only lower-cased.
SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "eo": "esperanto", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian", "fi": "finnish",
    "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian", "id": "indonesian",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch", "no": "norwegian", "pl": "polish",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}
# Stop words by language: ours for English (code-aware), bm25s's lists for the others it carries.
_BM25S_STOPWORDS = {"da": "DANISH", "de": "GERMAN", "es": "SPANISH", "fr": "FRENCH", "it": "ITALIAN", "nl": "DUTCH",
                    "no": "NORWEGIAN", "pt": "PORTUGUESE", "ru": "RUSSIAN", "sv": "SWEDISH", "tr": "TURKISH"}
# Han, kana and hangul: scripts written without spaces between words.
_CJK = re.compile(r"[\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf"
                  r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]+")
_CJK_PIECES = re.compile(f"({_CJK.pattern})")  # splits a word into its CJK runs and the rest, runs kept


@lru_cache(maxsize=None)
def _stemmer(language: str):
    import Stemmer

    return Stemmer.Stemmer(SNOWBALL[language]) if language in SNOWBALL else None


@lru_cache(maxsize=None)
def _stopwords(language: str) -> frozenset[str]:
    if language == "en":
        return STOPWORDS
    if language not in _BM25S_STOPWORDS:
        return frozenset()
    import bm25s.stopwords

    return frozenset(getattr(bm25s.stopwords, f"STOPWORDS_{_BM25S_STOPWORDS[language]}"))


def stopwords_of(languages) -> frozenset[str]:
    """The stop words of all these languages together. One list for every text of an index: a stop word kept in
    a few texts (a document detected as another language) would be a rare term there, and BM25 would rank
    those texts first for every query holding it (measured: Spanish Pass@1 fell from 92 to 47)."""
    return frozenset().union(*(_stopwords(language) for language in languages))


@lru_cache(maxsize=200_000)
def _word_tokens(word: str, language: str, stopwords: frozenset[str]) -> tuple[str, ...]:
    parts = [p.lower() for p in identifier_parts(word)]
    whole = word.strip("_").lower()
    stemmer = _stemmer(language)
    stem = stemmer.stemWord if stemmer else str
    out = []
    if whole and whole not in stopwords:  # a run of underscores alone is no word
        out.append(stem(whole))
    if len(parts) > 1:
        out.extend(stem(p) for p in parts if p not in stopwords and len(p) > 1)
    return tuple(out)


def _bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)] or [run]


def tokenize(text: str, language: str = "en", stopwords: frozenset[str] | None = None) -> list[str]:
    """Index terms of a text in a language: each word or identifier whole, plus its parts if it has several,
    stemmed, stop words (by default the language's) left out; runs of CJK characters as character bigrams."""
    stopwords = _stopwords(language) if stopwords is None else stopwords
    tokens: list[str] = []
    for word in words(text):
        if not _CJK.search(word):
            tokens.extend(_word_tokens(word, language, stopwords))
            continue
        for piece in _CJK_PIECES.split(word):
            if _CJK.fullmatch(piece):
                tokens.extend(_bigrams(piece))
            elif piece:
                tokens.extend(_word_tokens(piece, language, stopwords))
    return tokens


class LexicalIndex:
    """BM25 over the chunks' indexed texts, row i = chunk row i of the store."""

    LANGUAGES = "languages.json"  # beside bm25s's files: the languages the chunks were analysed in

    def __init__(self, retriever, languages: list[str]):
        self.retriever = retriever
        self.vocab = retriever.vocab_dict
        self.languages = languages
        self.stopwords = stopwords_of(languages)

    @classmethod
    def build(cls, texts: list[str], languages: list[str] | None = None) -> "LexicalIndex":
        """BM25 over texts, each analysed in its language (languages[i]; English when not given)."""
        import bm25s

        languages = languages or ["en"] * len(texts)
        stopwords = stopwords_of(set(languages))
        retriever = bm25s.BM25(k1=1.2, b=0.75)
        corpus = [tokenize(t, lang, stopwords) or ["\u2400"] for t, lang in zip(texts, languages)]  # bm25s needs a token per document
        retriever.index(corpus, show_progress=False)
        return cls(retriever, sorted(set(languages)))

    def save(self, directory: Path) -> None:
        self.retriever.save(str(directory))
        (directory / self.LANGUAGES).write_text(json.dumps(self.languages))

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        import bm25s

        try:
            retriever = bm25s.BM25.load(str(directory), mmap=False)
            path = directory / cls.LANGUAGES
            languages = json.loads(path.read_text()) if path.exists() else ["en"]  # built before languages were
        except Exception as exc:
            raise LocalcrError(f"{directory}: the lexical index is unreadable ({type(exc).__name__}): rebuild with `localcr index`") from None
        return cls(retriever, languages)

    def query_terms(self, query: str) -> list[str]:
        """The query's terms in every language of the index that the index knows, each once."""
        terms = dict.fromkeys(t for language in self.languages for t in tokenize(query, language, self.stopwords))
        return [t for t in terms if t in self.vocab]

    def highlighter(self, query: str):
        """A function giving where the query's terms occur in a text, as (start, end) character spans in order,
        overlaps merged: the words (and CJK bigrams) that the index analyses into one of the query's terms."""
        terms = set(self.query_terms(query))
        matching: dict[str, bool] = {}  # each word's answer, computed once for all the texts (words repeat)

        def matches(word: str) -> bool:
            if word not in matching:
                matching[word] = any(t in terms for lang in self.languages for t in _word_tokens(word, lang, self.stopwords))
            return matching[word]

        def spans_in(text: str) -> list[tuple[int, int]]:
            spans: list[tuple[int, int]] = []
            for found in word_spans(text):
                word, start = found.group(), found.start()
                if word.isascii() or not _CJK.search(word):
                    if matches(word):
                        spans.append((start, start + len(word)))
                    continue
                for piece in _CJK_PIECES.split(word):
                    if _CJK.fullmatch(piece):
                        spans.extend((start + i, start + i + len(g)) for i, g in enumerate(_bigrams(piece)) if g in terms)
                    elif piece and matches(piece):
                        spans.append((start, start + len(piece)))
                    start += len(piece)
            merged: list[tuple[int, int]] = []
            for start, end in spans:
                if merged and start <= merged[-1][1]:
                    merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
                else:
                    merged.append((start, end))
            return merged

        return spans_in

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query (zeros where no term matches)."""
        terms = self.query_terms(query)
        n = self.retriever.scores["num_docs"]
        if not terms:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(terms), dtype=np.float32)
