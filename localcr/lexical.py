"""Contextual BM25 over "context + chunk", with a tokenizer that understands code identifiers.

An identifier is indexed whole and by its parts: `DiffExecutor` gives `diffexecutor`, `diff` and
`executor`; `run_target` gives `run_target`, `run` and `target`. A query that spells the identifier
matches it exactly (the rare whole token scores high), and a query in plain words ("diff executor")
still finds it through the parts. Words are lower-cased, the stop words of the document's language
dropped and the rest Snowball-stemmed in that language (see localcr.language). Chinese, Japanese and Korean
are written without spaces: their runs of characters are indexed as overlapping character bigrams, so a
word inside a sentence matches (the standard CJK analysis of Lucene and Elasticsearch). A query is analysed
in every language of the index, so it matches whichever of them it is written in.

Each segment of an index keeps raw term counts (Postings), not scores: BM25 is computed at query time with
the statistics of the live chunks of all segments, the formula bm25s computes (tests compare the two), so an
index grown by segments and tombstones scores exactly as one built from scratch, and compaction merges the
live rows' counts instead of analysing their texts again (Postings.merged). bm25s supplies the stop word lists.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

from localcr.text import identifier_parts, without_soft_hyphens, word_spans, words

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
# Spaces between two CJK characters (the answer check's) and beside one (the evaluation's), compiled when first
# imported (__getattr__): their lookarounds take some 8 ms to compile, which a search, whose BM25 is here, never uses.
_SPACE_PATTERNS = {"CJK_SPACE": f"(?<={_CJK.pattern[:-1]})\\s+(?={_CJK.pattern[:-1]})",
                   "BESIDE_CJK": f"(?<={_CJK.pattern[:-1]})\\s+|\\s+(?={_CJK.pattern[:-1]})"}


def __getattr__(name: str):
    if name not in _SPACE_PATTERNS:
        raise AttributeError(f"module 'localcr.lexical' has no attribute {name!r}")
    pattern = globals()[name] = re.compile(_SPACE_PATTERNS[name])
    return pattern


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


@lru_cache(maxsize=16)
def stopwords_id(stopwords: frozenset[str]) -> str:
    """A short name of a list of stop words, which a segment's postings record (Postings.analysed_with)."""
    return hashlib.sha256("\n".join(sorted(stopwords)).encode()).hexdigest()[:16]


@lru_cache(maxsize=200_000)
def _word_tokens(word: str, language: str, stopwords: frozenset[str]) -> tuple[str, ...]:
    word = without_soft_hyphens(word)  # a word_spans match may hold them
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


def bigram_pieces(word: str) -> list[str]:
    """A word with its runs of CJK characters as character bigrams (text written without spaces has no words to
    split at), its other pieces whole."""
    if not _CJK.search(word):
        return [word]
    out: list[str] = []
    for piece in _CJK_PIECES.split(word):
        if _CJK.fullmatch(piece):
            out.extend(_bigrams(piece))
        elif piece:
            out.append(piece)
    return out


def cjk_bigram_runs(text: str) -> list[list[str]]:
    """The character bigrams of each run of CJK characters in a text, run by run, as tokenize reads them."""
    return [_bigrams(run) for run in _CJK.findall(text)]


def is_cjk(piece: str) -> bool:
    return bool(_CJK.fullmatch(piece))


# In the languages read as character bigrams, the characters of grammar and of asking, not of what a text names:
# Japanese's hiragana (particles, endings, the copula: "は木", "材で", "です") and question words, Chinese's question
# words and particles. A bigram holding one is no term a source must hold, nor one a question is about.
_GRAMMAR_CHARACTERS = {"zh": re.compile(r"[什么哪谁几吗呢怎的了]"), "ja": re.compile(r"[\u3040-\u309f何誰]")}


def grammatical(term: str, language: str) -> bool:
    """Whether a term (a bigram) holds a character of grammar or asking in its language (_GRAMMAR_CHARACTERS)."""
    pattern = _GRAMMAR_CHARACTERS.get(language)
    return pattern is not None and pattern.search(term) is not None


def tokenize(text: str, language: str = "en", stopwords: frozenset[str] | None = None) -> list[str]:
    """Index terms of a text in a language: each word or identifier whole, plus its parts if it has several,
    stemmed, stop words (by default the language's) left out; runs of CJK characters as character bigrams."""
    stopwords = _stopwords(language) if stopwords is None else stopwords
    tokens: list[str] = []
    for word in words(text):
        for piece in bigram_pieces(word):
            tokens.extend([piece] if is_cjk(piece) else _word_tokens(piece, language, stopwords))
    return tokens


def highlighter(terms, languages, stopwords: frozenset[str]):
    """A function giving where these query terms occur in a text, as (start, end) character spans in order,
    overlaps merged: the words (and CJK bigrams) that analysis in these languages turns into one of the terms."""
    terms = set(terms)
    matching: dict[str, bool] = {}  # each word's answer, computed once for all the texts (words repeat)

    def matches(word: str) -> bool:
        if word not in matching:
            matching[word] = any(t in terms for lang in languages for t in _word_tokens(word, lang, stopwords))
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


K1, B = 1.2, 0.75  # bm25s's defaults, which localcr has always used
EMPTY = "\u2400"  # the one term of a text with none, so that every chunk has a length (as bm25s requires)


def length_norms(lengths: np.ndarray, mean_length: float) -> np.ndarray:
    """Each chunk's term of the BM25 denominator, K1 * (1 - B + B * length / mean length): it depends on the
    index, not on the query, so it is computed once when the index is opened."""
    return (K1 * ((1 - B) + B * np.asarray(lengths, dtype=np.float64) / mean_length)).astype(np.float32)


def bm25(tf: np.ndarray, norm: np.ndarray, df: int, n: int) -> np.ndarray:
    """BM25 (the Lucene variant bm25s computes) of one term in chunks holding it tf times, whose length norms
    are norm: idf from the term's document frequency df among n chunks, term frequency saturated. In single
    precision, as bm25s scores (a few 1e-7 relative off double precision)."""
    idf = np.float32(np.log(1 + (n - df + 0.5) / (df + 0.5)))
    return idf * tf / (norm + tf)


TOP_BLOCK = 1024  # rows per block in top_rows


def top_rows(scores: np.ndarray, depth: int) -> np.ndarray:
    """The rows of the `depth` highest positive scores (fewer if fewer are positive), in no order.

    np.argpartition over every row took 15 ms at 1 M rows. Instead: the depth-th highest of the blocks' maxima
    is a lower bound of the depth-th highest score (the depth blocks with the highest maxima each hold a score
    at least that high), so only the rows scoring at least that bound can be among the best, and they are few:
    under a millisecond at 1 M rows."""
    full = len(scores) // TOP_BLOCK * TOP_BLOCK
    maxima = scores[:full].reshape(-1, TOP_BLOCK).max(axis=1)
    if full < len(scores):
        maxima = np.append(maxima, scores[full:].max())
    bound = np.partition(maxima, len(maxima) - depth)[len(maxima) - depth] if len(maxima) > depth else 0.0
    candidates = np.flatnonzero(scores >= bound) if bound > 0 else np.flatnonzero(scores > 0)
    if len(candidates) <= depth:
        return candidates
    return candidates[np.argpartition(scores[candidates], len(candidates) - depth)[len(candidates) - depth:]]


class Postings:
    """One segment's raw BM25 statistics: for each term the chunks holding it and how often (a CSC matrix:
    terms x chunks), and each chunk's length. Scores are not stored: they depend on statistics of the whole
    index (chunk count, mean length, document frequencies), which change as segments come and go."""

    FILES = ("indptr", "rows", "tfs", "lengths")
    TERMS, LANGUAGES, STOPWORDS = "terms.json", "languages.json", "stopwords.txt"

    def __init__(self, terms: dict[str, int], indptr, rows, tfs, lengths, languages: list[str],
                 stopwords_id: str | None = None):
        self.terms, self.indptr, self.rows, self.tfs, self.lengths = terms, indptr, rows, tfs, lengths
        self.languages = languages
        self.stopwords_id = stopwords_id  # which stop words its texts were analysed with; None: not recorded (older)

    def analysed_with(self, stopwords: frozenset[str]) -> bool:
        """Whether its texts were analysed with these stop words: only then may its postings be merged with others
        analysed with them (a stop word kept in some texts would be a rare term there, see stopwords_of)."""
        return self.stopwords_id == stopwords_id(stopwords)

    @classmethod
    def build(cls, texts: list[str], languages: list[str], stopwords: frozenset[str]) -> "Postings":
        terms: dict[str, int] = {}
        term_ids, rows, tfs, lengths = [], [], [], np.zeros(len(texts), dtype=np.float32)
        for row, (text, language) in enumerate(zip(texts, languages)):
            tokens = tokenize(text, language, stopwords) or [EMPTY]
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                term_ids.append(terms.setdefault(term, len(terms)))
                rows.append(row)
                tfs.append(count)
        order = np.argsort(np.asarray(term_ids, dtype=np.int64), kind="stable")
        counts = np.bincount(np.asarray(term_ids, dtype=np.int64), minlength=len(terms))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(terms, indptr, np.asarray(rows, dtype=np.int32)[order], np.asarray(tfs, dtype=np.float32)[order],
                   lengths, sorted(set(languages)), stopwords_id(stopwords))

    @classmethod
    def merged(cls, picks: list[tuple["Postings", np.ndarray]], languages, stopwords: frozenset[str]) -> "Postings":
        """Postings of rows of other postings, without analysing their texts again (tokenizing is most of what
        compaction cost): `picks` are (postings, rows of them), each pick's rows following the last's in the result.
        Terms keep their counts, rows their lengths, each term's postings are in row order and a term left with
        none is dropped, so the result scores as build over the same texts. Every part must have been analysed
        with these stop words; languages: those of the texts the rows hold."""
        if not all(part.analysed_with(stopwords) for part, _ in picks):
            raise ValueError("postings analysed with other stop words cannot be merged: build them from the texts")
        lengths = np.zeros(sum(len(chosen) for _, chosen in picks), dtype=np.float32)
        targets: dict[int, tuple[Postings, np.ndarray]] = {}  # per part: each of its rows' row in the result, or -1
        start = 0
        for part, chosen in picks:
            _, target = targets.setdefault(id(part), (part, np.full(len(part.lengths), -1, dtype=np.int64)))
            target[chosen] = np.arange(start, start + len(chosen))
            lengths[start:start + len(chosen)] = part.lengths[chosen]
            start += len(chosen)
        terms: dict[str, int] = {}
        term_ids, rows, tfs = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.float32)]
        for part, target in targets.values():
            moved = target[part.rows]
            kept = moved >= 0
            local = np.repeat(np.arange(len(part.indptr) - 1), np.diff(part.indptr))[kept]
            used = np.unique(local)
            names = list(part.terms)  # in id order, as save writes them
            renumbered = np.zeros(len(part.indptr) - 1, dtype=np.int64)
            renumbered[used] = [terms.setdefault(names[i], len(terms)) for i in used.tolist()]
            term_ids.append(renumbered[local])
            rows.append(moved[kept])
            tfs.append(part.tfs[kept])
        term_ids, rows, tfs = np.concatenate(term_ids), np.concatenate(rows), np.concatenate(tfs)
        order = np.lexsort((rows, term_ids))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(term_ids, minlength=len(terms)))]).astype(np.int64)
        return cls(terms, indptr, rows[order].astype(np.int32), tfs[order].astype(np.float32), lengths,
                   sorted(set(languages)), stopwords_id(stopwords))

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for name in self.FILES:
            np.save(directory / f"{name}.npy", getattr(self, name))
        (directory / self.TERMS).write_text(json.dumps(list(self.terms), ensure_ascii=False))
        (directory / self.LANGUAGES).write_text(json.dumps(self.languages))
        (directory / self.STOPWORDS).write_text(self.stopwords_id or "")

    @classmethod
    def load(cls, directory: Path) -> "Postings":
        """Memory-mapped: opening an index reads the term list, not the postings. A missing or unreadable file
        raises OSError or ValueError (the store says which segment is damaged)."""
        # Plain array views of the maps: slicing an np.memmap costs ~10 µs of Python per call (bookkeeping
        # for flushing, which a read-only map never needs), and a query slices every term of every segment.
        arrays = {name: np.asarray(np.load(directory / f"{name}.npy", mmap_mode="r")) for name in cls.FILES}
        terms = {term: i for i, term in enumerate(json.loads((directory / cls.TERMS).read_text()))}
        languages = json.loads((directory / cls.LANGUAGES).read_text())
        recorded = directory / cls.STOPWORDS  # absent in segments written before compaction merged postings
        return cls(terms, languages=languages, stopwords_id=(recorded.read_text() if recorded.exists() else "") or None,
                   **arrays)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk rows, term frequencies) of a term; empty if the segment never saw it."""
        i = self.terms.get(term)
        if i is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        return self.rows[self.indptr[i]:self.indptr[i + 1]], self.tfs[self.indptr[i]:self.indptr[i + 1]]


def _live_postings(rows: np.ndarray, live: np.ndarray | None, dead: np.ndarray | None) -> int:
    """How many of a term's postings (rows, ascending, as Postings.build writes them) are live: by binary search
    for the dead rows when they are few against the postings (a change leaves a handful in a large segment),
    else by looking every posting up in the live mask."""
    if live is None:
        return len(rows)
    if 16 * len(dead) < len(rows):
        at = np.searchsorted(rows, dead)
        inside = at < len(rows)
        return len(rows) - int(np.count_nonzero(rows[at[inside]] == dead[inside]))
    return int(np.count_nonzero(live[rows]))


class LexicalIndex:
    """BM25 over the live chunks of one or more segments (`parts`, whose rows follow each other: part i's row r
    is row offset_i + r). The collection statistics are those of the live chunks of all parts together, counted
    at query time (chunk count and total length once, document frequency per query term), so scores equal
    those of one index built from the live chunks alone, whatever the segments and tombstones."""

    def __init__(self, parts: list[Postings], live: list[np.ndarray | None] | None = None):
        self.parts = parts
        self.live = live or [None] * len(parts)  # per part: a boolean mask of live rows (None: all live)
        self.dead = [None if m is None else np.flatnonzero(~m) for m in self.live]  # per part: its dead rows
        self.offsets = np.cumsum([0] + [len(p.lengths) for p in parts])
        self.languages = sorted({language for p in parts for language in p.languages})
        self.stopwords = stopwords_of(self.languages)
        lengths = [np.asarray(p.lengths if m is None else p.lengths[m], dtype=np.float64) for p, m in zip(parts, self.live)]
        self.n_live = sum(len(x) for x in lengths)
        self.mean_length = sum(float(x.sum()) for x in lengths) / max(self.n_live, 1)
        self.norms = [length_norms(p.lengths, self.mean_length) for p in parts]

    @classmethod
    def build(cls, texts: list[str], languages: list[str] | None = None,
              stopwords: frozenset[str] | None = None) -> "LexicalIndex":
        """BM25 over texts, each analysed in its language (languages[i]; English when not given), with the
        stop words of all of them unless given (see stopwords_of)."""
        languages = languages or ["en"] * len(texts)
        return cls([Postings.build(texts, languages, stopwords_of(set(languages)) if stopwords is None else stopwords)])

    def save(self, directory: Path) -> None:
        (part,) = self.parts
        part.save(directory)

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        return cls([Postings.load(directory)])

    def query_terms(self, query: str) -> list[str]:
        """The query's terms in every language of the index that some part knows, each once."""
        terms = dict.fromkeys(t for language in self.languages for t in tokenize(query, language, self.stopwords))
        return [t for t in terms if any(t in p.terms for p in self.parts)]

    def term_shares(self, query: str) -> dict[str, float]:
        """Each of the query's terms and the share of the live chunks that hold it (its document frequency)."""
        return {term: self._document_frequency([part.postings(term) for part in self.parts]) / max(self.n_live, 1)
                for term in self.query_terms(query)}

    def _document_frequency(self, found: list[tuple[np.ndarray, np.ndarray]]) -> int:
        """The live chunks among a term's postings in each part (`found`, part by part)."""
        return sum(_live_postings(rows, live, dead) for (rows, _), live, dead in zip(found, self.live, self.dead))

    def highlighter(self, query: str):
        """A function giving where the query's terms occur in a text (see highlighter)."""
        return highlighter(self.query_terms(query), self.languages, self.stopwords)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row for the query (zeros where no term matches, and for dead rows).

        Dead rows are scored like the others and zeroed at the end, and a term's document frequency is its
        postings less the dead ones among them: counting them is cheaper than filtering every posting list
        (a change leaves a few dead rows in a large segment)."""
        out = np.zeros(int(self.offsets[-1]), dtype=np.float32)
        views = [out[start:end] for start, end in zip(self.offsets[:-1], self.offsets[1:])]  # per part, its rows
        for term in self.query_terms(query):
            found = [part.postings(term) for part in self.parts]
            df = self._document_frequency(found)
            for (rows, tfs), norms, view in zip(found, self.norms, views):
                view[rows] += bm25(tfs, norms[rows], df, self.n_live)
        for live, view in zip(self.live, views):
            if live is not None:
                view[~live] = 0
        return out
