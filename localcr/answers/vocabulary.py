"""The words of tables and questions in the languages localcr indexes, kept as data (vocabulary.toml): scales,
currencies, missing figures and percent signs for reading tables (localcr.answers.notation), and the words a
question asks for a percentage, a share, an average, a change or a difference with, for checking a computed answer
(localcr.answers.route) and ordering a change (localcr.answers.compute). A new language is lines there."""
from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib.resources import files


@cache
def vocabulary() -> dict:
    return tomllib.loads(files("localcr.answers").joinpath("vocabulary.toml").read_text("utf-8"))


@cache
def _asked_pattern(kind: str) -> re.Pattern:
    """A question's words of one kind: a Latin-script word at a word's start, case aside; CJK anywhere."""
    words = sorted(vocabulary()["asked"][kind], key=len, reverse=True)
    return re.compile("|".join(rf"(?<![^\W\d_]){re.escape(w)}" if w[0].isascii() and w[0].isalpha()
                               else re.escape(w) for w in words), re.I)


def asks(kind: str, question: str) -> bool:
    """Whether a question asks for a result of this kind: "percent", "share", "average", "change", "difference"."""
    return bool(_asked_pattern(kind).search(question))
