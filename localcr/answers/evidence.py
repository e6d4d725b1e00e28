"""Evidence for an answer: the sentences of the best hits that bear on the question, so a small model reads a few
hundred tokens instead of whole chunks.

A 1.5B model given three XQuAD paragraphs (about 1,300 tokens) often picks the wrong figure or name among them and
takes seconds per hundred tokens to read them; given the few sentences that share the question's words and meaning
it reads less and has fewer wrong candidates (sentence-level pruning, as Provence did, arXiv 2501.16214). Each
sentence of the hits is ranked by BM25 over the hits' sentences (localcr.lexical, the index's own analysis) and by
its hit's rank, the two fused by RRF; the best sentences are kept up to a budget of characters, each with the
sentence before it (pronouns point back). A hit none of whose sentences is kept is not read. A line of a table
keeps its table's first line (the column heads say which year a figure is). Sentences are cut by sentencex, which
knows abbreviations and decimal points in every language the index supports, across a paragraph's hard line
breaks; in a table each row is a sentence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

GAP = " … "  # between kept sentences that are not next to each other
# Characters of evidence kept over all sources. Chosen by the answers the 1.5B writes on the "tune" half of 100
# XQuAD-en questions (benchmarks/answers/answers.py --evidence-chars; BENCHMARKS.md "Why the answer defaults are what
# they are"): 400 held the gold in 80% of answers, 300 and 600 in 76% (held out: 64% at 400, 62% at 600); less to
# read is fewer wrong names and figures to pick. Without the LLM (benchmarks/answers/evidence.py) 600 kept the gold
# in 96.5% of the kept texts, 300 in 91.5%, at a third of a whole chunk's characters.
BUDGET_CHARS = 400
# The budget where most hits are chunks of long untitled prose (filings: documents.LONG_PROSE), whose answers sit in
# statements' rows: on financebench-dev's "tune" half 2,400 characters kept every gold span the whole hits held
# (32.4%), 600 two thirds of them (21.6%), 1,800 29.7%; 2,400 is 70% of the whole hits' 3,828 characters.
LONG_PROSE_BUDGET_CHARS = 2400


def budget_for(structures: list[str], budget: int = BUDGET_CHARS) -> int:
    """The evidence budget for hits of these document structures: LONG_PROSE_BUDGET_CHARS (scaled as `budget` is
    to BUDGET_CHARS) where most are long untitled prose, else `budget`."""
    from localcr.documents import LONG_PROSE

    if 2 * sum(structure == LONG_PROSE for structure in structures) > len(structures):
        return budget * LONG_PROSE_BUDGET_CHARS // BUDGET_CHARS
    return budget


_TABLE_ROW = re.compile(r"(\|.*\|)|(\S\s{2,}\S.*\d)|(\t)")


@dataclass(frozen=True)
class Sentence:
    source: int  # which hit (0-based)
    start: int  # offsets in that hit's text
    end: int

    def text(self, texts: list[str]) -> str:
        return texts[self.source][self.start:self.end].strip()


@lru_cache(maxsize=512)
def sentence_spans(text: str, language: str = "en") -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence of a text: a sentence may run across a paragraph's line breaks (hard-wrapped
    prose, a PDF's lines), a table's row is a sentence of its own; blank lines and bare markup are skipped."""
    spans: list[tuple[int, int]] = []
    prose_start = None
    for line in re.finditer(r"^.*$", text, re.MULTILINE):
        if line[0].strip() and not _TABLE_ROW.search(line[0]):
            prose_start = line.start() if prose_start is None else prose_start
            continue
        if prose_start is not None:  # the prose lines before this one, cut into sentences
            spans += _sentences(text, prose_start, line.start(), language)
            prose_start = None
        if line[0].strip():  # a table's row, or a line of bare markup
            lead, trail = len(line[0]) - len(line[0].lstrip()), len(line[0]) - len(line[0].rstrip())
            spans.append((line.start() + lead, line.end() - trail))
    if prose_start is not None:
        spans += _sentences(text, prose_start, len(text), language)
    return tuple(spans)


def _sentences(text: str, start: int, end: int, language: str) -> list[tuple[int, int]]:
    """The sentences of text[start:end] as sentencex cuts them, by offsets in text; pieces without a letter or
    digit (bare markup) left out."""
    from sentencex import segment

    out, cursor = [], start
    for piece in segment(_segmenter_language(language), text[start:end]):
        piece = piece.strip()
        at = text.find(piece, cursor, end) if piece else -1
        if at < 0:
            continue
        cursor = at + len(piece)
        if any(ch.isalnum() for ch in piece):
            out.append((at, cursor))
    return out


def _segmenter_language(language: str) -> str:
    return language if language and language != "und" else "en"


def select(question: str, texts: list[str], *, languages: list[str] | None = None, embedder=None,
           budget: int = BUDGET_CHARS) -> list[list[Sentence]]:
    """For each text (a hit's, best hit first), the sentences kept, in text order: the best over all texts until
    `budget` characters, each with the sentence before it. A text may keep none. Sentences are ranked by BM25 and
    by their hit's rank (and the embedder's cosine, where one is given), fused by RRF."""
    from localcr.lexical import LexicalIndex
    from localcr.fusion import RRF_K, rrf

    languages = languages or ["en"] * len(texts)
    sentences = [Sentence(i, start, end) for i, (text, language) in enumerate(zip(texts, languages))
                 for start, end in sentence_spans(text, language)]
    if not sentences:
        return [[] for _ in texts]
    plain = [s.text(texts) for s in sentences]
    lexical = LexicalIndex.build(plain, [languages[s.source] for s in sentences]).scores(question)
    rankings = {"lexical": [int(i) for i in np.argsort(-lexical, kind="stable")]}
    if embedder is not None:
        vectors, _ = embedder.embed(plain)
        rankings["dense"] = [int(i) for i in np.argsort(-(vectors @ embedder.embed_query(question)), kind="stable")]
    fused = rrf(rankings)
    for i, sentence in enumerate(sentences):  # the search's own order: every sentence of a hit shares its rank
        fused[i] += 1.0 / (RRF_K + sentence.source + 1)
    order = sorted(range(len(sentences)), key=lambda i: -fused[i])
    kept: set[int] = set()
    used = 0

    def keep(i: int) -> None:
        nonlocal used
        for j in _with_company(i, sentences, texts):
            if j not in kept:
                kept.add(j)
                used += len(plain[j])

    for i in order:
        if used >= budget:
            break
        keep(i)
    chosen: list[list[Sentence]] = [[] for _ in texts]
    for i in sorted(kept):
        chosen[sentences[i].source].append(sentences[i])
    return chosen


def _with_company(i: int, sentences: list[Sentence], texts: list[str]) -> list[int]:
    """A sentence and what it needs to be read right: the sentence before it in the same text, and for a table's
    row the table's first line (its column heads)."""
    out = [i]
    sentence = sentences[i]
    if i > 0 and sentences[i - 1].source == sentence.source:
        out.insert(0, i - 1)
    if _TABLE_ROW.search(sentence.text(texts)):
        j = i
        while j > 0 and sentences[j - 1].source == sentence.source and _TABLE_ROW.search(sentences[j - 1].text(texts)):
            j -= 1
        out.insert(0, j)
    return out


def render(text: str, kept: list[Sentence]) -> str:
    """The kept sentences of one text in order, a gap mark between those not next to each other."""
    out, last = "", None
    for sentence in kept:
        piece = text[sentence.start:sentence.end].strip()
        if last is not None:
            between = text[last:sentence.start]
            out += ("\n" if "\n" in between else " ") if not between.strip() else GAP
        out += piece
        last = sentence.end
    return out
