"""The language a document is written in: what decides how BM25 analyses its words.

Detected with py3langid (a pure-numpy langid.py; it named the language of every document of the seven
shared prose sets correctly: benchmarks/retrieval/lexical_languages.py). Code is analysed as English whatever its
comments say: identifiers are English-like and their splitting is what matters there. A document with too few
words to tell (a sheet of numbers, a one-line mail: py3langid named such documents la, lb, af, vi) takes the language
most documents of its folder are in, or stays undetermined (`und`); it never decides the embedder by itself.
"""
from __future__ import annotations

import functools
from collections import Counter

DEFAULT = "en"
UNDETERMINED = "und"  # ISO 639-2's code for a language not determined
# py3langid's probability (normalised over its 97 languages) under which a document's language is undetermined:
# sheets of numbers and column names 0.01-0.05, a mail of headers and one line 0.19; every document of the seven shared
# prose sets 0.61 or more, their first paragraphs 0.51 or more (Chinese the lowest), a sentence of English 0.89.
MIN_PROBABILITY = 0.3
_SAMPLE_CHARS = 4000  # enough text to be sure; detection time grows with the sample


def detect(text: str) -> str:
    """ISO 639-1 code of the text's language; DEFAULT for text with no letters to go on."""
    sample = text[:_SAMPLE_CHARS]
    if not any(c.isalpha() for c in sample):
        return DEFAULT
    import py3langid  # loads its model (about 1 s) on first use

    return py3langid.classify(sample)[0]


# The languages answers are instructed, refused and checked in (localcr.answers.reader).
ANSWER_LANGUAGES = ("en", "de", "fr", "es", "ru", "ar", "zh", "ja")
# A short text (a question) is often named as a close relative of its language: py3langid called 10% of XQuAD's
# Chinese questions Wu (wuu), 2% of the Arabic ones Egyptian or Moroccan Arabic, 1% of the Russian ones Bulgarian.
# Where it names a language outside those asked about, one of those with at least this share of the named one's
# probability is the text's language instead: so are all of those questions of the shared XQuAD and JSQuAD sets but
# three (0.0-0.2), and no Italian, Portuguese, Dutch or Bulgarian question (0.01 or less).
RELATIVE_SHARE = 0.2


def detect_within(text: str, languages=ANSWER_LANGUAGES) -> str:
    """ISO 639-1 code of the text's language, preferring one of `languages` over a close relative of it."""
    sample = text[:_SAMPLE_CHARS]
    if not any(c.isalpha() for c in sample):
        return DEFAULT
    ranked = _identifier().rank(sample)
    named, probability = ranked[0]
    if named in languages:
        return named
    shares = dict(ranked)
    nearest = max(languages, key=lambda language: shares.get(language, 0.0))
    return nearest if shares.get(nearest, 0.0) >= RELATIVE_SHARE * probability else named


def document_language(text: str, is_code: bool, kind: str = "") -> str:
    """A document's language; UNDETERMINED when its words are too few to tell (see `settled`). A sheet's is told
    from its words alone (`sheet_words`)."""
    from localcr.readers import SHEET_KINDS

    if is_code:
        return DEFAULT
    if kind in SHEET_KINDS:
        text = sheet_words(text)
    language, probability = _identifier().classify(text[:_SAMPLE_CHARS])
    return language if probability >= MIN_PROBABILITY else UNDETERMINED


MIN_SENTENCE_WORDS = 3  # a cell of at least this many words, most of them lower-case, is a sentence, not a name


def sheet_words(text: str) -> str:
    """The words a sheet's language shows in: each sheet's header row and the cells that are sentences ("The tallest
    pylon is on the third section"), not its names and figures. Told from all its cells, 91 of 421 English
    Wikipedia tables were Nigerian Pidgin and others Volapük or Bikol ("Miguel Indurain (ESP)", "1,234"), and
    the index chose the multilingual embedder for them."""
    from localcr.readers import CELL_SEPARATOR

    kept, header_next = [], True
    for line in text.split("\n"):
        if line.startswith("# ") or not line.strip():
            header_next = header_next or line.startswith("# ")
            continue
        cells = [c.strip() for c in line.split(CELL_SEPARATOR)]
        if header_next and len(cells) > 1:
            kept.append(" ".join(cells))
            header_next = False
            continue
        for cell in cells:
            words = [w for w in cell.split() if any(ch.isalpha() for ch in w)]
            if len(words) >= MIN_SENTENCE_WORDS and 2 * sum(w[0].islower() for w in words) >= len(words):
                kept.append(cell)
    return "\n".join(kept)


@functools.cache
def _identifier():
    """py3langid's model with probabilities that say how sure it is."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def settled(languages: dict[str, str]) -> dict[str, str]:
    """Documents' languages (by id, a path) with each undetermined one given the language most documents of its folder
    whose language was detected are in (a mailbox's messages are in the mailbox's folder); undetermined where none was."""
    by_folder: dict[str, Counter] = {}
    for doc_id, language in languages.items():
        if language != UNDETERMINED:
            by_folder.setdefault(_folder(doc_id), Counter())[language] += 1
    return {doc_id: by_folder[_folder(doc_id)].most_common(1)[0][0]
            if language == UNDETERMINED and _folder(doc_id) in by_folder else language
            for doc_id, language in languages.items()}


def _folder(doc_id: str) -> str:
    return doc_id.partition("#")[0].rpartition("/")[0]


def detected(counts: dict[str, int]) -> dict[str, int]:
    """Document counts by language without the undetermined ones: what chooses an embedder, or warns of it."""
    return {language: n for language, n in counts.items() if language != UNDETERMINED}


def languages_of(setting: str) -> set[str]:
    """The codes of an embedder's `languages` setting ("en,de, fr")."""
    return {code.strip() for code in setting.split(",") if code.strip()}


def counted(counts: dict[str, int]) -> str:
    """"de 2, en 1, zh 1": most first, then by name."""
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def embedder_warning(counts: dict[str, int], embedder: str, trained_for: str) -> str | None:
    """A warning when most documents are in languages the embedder was not trained for (`trained_for`: its
    `languages` setting, comma-separated codes; empty = not known, no warning). Undetermined documents do not count."""
    counts = detected(counts)
    known = languages_of(trained_for)
    other = {language: n for language, n in counts.items() if language not in known}
    if not known or 2 * sum(other.values()) <= sum(counts.values()):
        return None
    return (f"{sum(other.values())} of {sum(counts.values())} documents are in languages the embedder {embedder} was not "
            f"trained for ({counted(other)}): dense search will be weak on them, lexical search is not "
            "(docs/files-and-languages.md: Languages)")
