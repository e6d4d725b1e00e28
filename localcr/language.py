"""The language a document is written in: what decides how BM25 analyses its words.

Detected with py3langid (a pure-numpy langid.py; it named the language of every document of the seven
shared prose sets correctly: benchmarks/retrieval/lexical_languages.py). Code is analysed as English whatever its
comments say: identifiers are English-like and their splitting is what matters there.
"""
from __future__ import annotations

DEFAULT = "en"
_SAMPLE_CHARS = 4000  # enough text to be sure; detection time grows with the sample


def detect(text: str) -> str:
    """ISO 639-1 code of the text's language; DEFAULT for text with no letters to go on."""
    sample = text[:_SAMPLE_CHARS]
    if not any(c.isalpha() for c in sample):
        return DEFAULT
    import py3langid  # loads its model (about 1 s) on first use

    return py3langid.classify(sample)[0]


def document_language(text: str, is_code: bool) -> str:
    return DEFAULT if is_code else detect(text)


def languages_of(setting: str) -> set[str]:
    """The codes of an embedder's `languages` setting ("en,de, fr")."""
    return {code.strip() for code in setting.split(",") if code.strip()}


def counted(counts: dict[str, int]) -> str:
    """"de 2, en 1, zh 1": most first, then by name."""
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def embedder_warning(counts: dict[str, int], embedder: str, trained_for: str) -> str | None:
    """A warning when most documents are in languages the embedder was not trained for (`trained_for`: its
    `languages` setting, comma-separated codes; empty = not known, no warning)."""
    known = languages_of(trained_for)
    other = {language: n for language, n in counts.items() if language not in known}
    if not known or 2 * sum(other.values()) <= sum(counts.values()):
        return None
    return (f"{sum(other.values())} of {sum(counts.values())} documents are in languages the embedder {embedder} was not "
            f"trained for ({counted(other)}): dense search will be weak on them, lexical search is not "
            "(docs/files-and-languages.md: Languages)")
