"""The context guard: decide whether what a small LLM wrote is a usable chunk context.

Small models fail in recognisable ways: they write nothing, loop, copy the chunk back, or restate the
instruction they were given ("This chunk situates the document to provide a succinct context ...").
Each failure falls back to the structural context, and the reason is counted. The guard is a pure
function of the raw output, so it runs again on cached outputs and can be tightened without the model.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
import zlib
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from localcr.parsing.cover import COVER_PERIOD, FORM_KINDS

REASONS = ("empty", "too_long", "repetitive", "echo", "copy")


@dataclass(frozen=True)
class GuardLimits:
    """What an acceptable context looks like; anything else falls back to the structural context."""

    min_chars: int = 12  # shorter (after cleaning) is "empty"
    max_chars: int = 800  # longer is "too long"
    max_copy_share: float = 0.5  # share of the context's (or a sentence's) word 4-grams found in the chunk
    # What becomes of a sentence drawn from another part of the document (more than max_copy_share of its 4-grams):
    # "lead" keeps it when it comes from what situates the whole document (title, headings, lead paragraph) and
    # drops it otherwise; "keep" keeps every such sentence; "reject" (the rule before 2026-11) rejects the whole
    # context when most of its 4-grams occur anywhere in the document.
    borrowed: str = "lead"
    max_copy_run: int = 120  # longest run of characters copied verbatim from the chunk
    max_echo_share: float = 0.4  # share of the context's word 3-grams taken from the instruction itself
    max_instruction_words: float = 0.7  # more than this share of the context's content words that only the instruction supplies
    min_distinct_trigrams: float = 0.5  # distinct / all word 3-grams; lower is a loop
    min_compression: float = 0.25  # zlib size / text size for longer texts; lower is a loop


# Every wording of the task the prompts use, plus the words a model reaches for when it restates it.
INSTRUCTION_TEXT = (
    "Here is the chunk we want to situate within the whole document. Please give a short succinct context to situate "
    "this chunk within the overall document for the purposes of improving search retrieval of the chunk. Answer only "
    "with the succinct context and nothing else. The document is divided into chunks marked; situate chunk which "
    "begins. This chunk is the part of the document that begins at. You write short contexts that situate a chunk of a document for search retrieval. We want to place the "
    "chunk in the document to provide a concise brief context about the content of the text, sitsuate, situated, "
    "situating, situation, purpose, retrieve, retrieving, searching, improve, provides, provided, given, following, "
    "section, part, piece, passage, excerpt, snippet, information, relevant, overall, entire, whole, describe, "
    "describes, context, contexts, contextual"
)
_PREFIX_RE = re.compile(
    r"^\s*(?:\*\*)?(?:succinct\s+context|short\s+context|context|answer|response)\s*(?:\*\*)?\s*[:\-]\s*(?:\*\*)?\s*",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"</?(?:context|answer|response|chunk(?:\s+\d+)?)>", re.IGNORECASE)
# A chunk named by its prompt marker ("chunk 7"): the number means nothing outside the prompt.
_MARKER_NAME_RE = re.compile(r"\b(?:the\s+|this\s+)?chunk\s+\d+\b", re.IGNORECASE)
_FILLER = frozenset(
    "a an the this that these those it its is are was were be been of in on at to for from with within by and or as "
    "into about which what who how why when where here there we you i our your they them their will would can could "
    "should only just also nothing else".split()
)


def words(text: str) -> list[str]:
    """Lower-cased words and punctuation marks, the unit of every n-gram comparison here."""
    return re.findall(r"\w+|[^\w\s]", text.lower())


def ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _stem(word: str) -> str:
    """A crude stem (first five letters) so that "situating" and "situate" count as one instruction word."""
    return word[:5]


_INSTRUCTION_GRAMS = set(ngrams(words(INSTRUCTION_TEXT), 3))
_INSTRUCTION_STEMS = {_stem(w) for w in words(INSTRUCTION_TEXT) if w.isalpha() and w not in _FILLER}


def clean_context(raw: str, finished: bool = True) -> str:
    """The context without boilerplate: "Context:" prefixes, tags, quotes, line breaks, and, when the
    generation was cut by max_tokens, the trailing unfinished sentence (if a finished one comes before).
    Prompt markers never survive: `<chunk 7>` goes, and "chunk 7" becomes "this chunk"."""
    text = _TAG_RE.sub(" ", raw)
    text = _MARKER_NAME_RE.sub(lambda m: "This chunk" if m.group(0)[0].isupper() else "this chunk", text)
    for _ in range(2):
        text = _PREFIX_RE.sub("", text.strip())
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    if not finished and text and text[-1] not in ".!?)\"'":
        cut = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
        if cut > 0:
            text = text[: cut + 1]
    return text


def longest_common_run(a: str, b: str) -> int:
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size


def is_echo(text: str, limits: GuardLimits, document_words: set[str] = frozenset()) -> bool:
    """Whether the text restates the instruction rather than the chunk: its word 3-grams come from the
    instruction, or almost all of its content words are the instruction's own (situate, chunk, document,
    context, retrieval ...) and not words of the document."""
    tokens = words(text)
    grams = ngrams(tokens, 3)
    if len(grams) >= 3 and sum(g in _INSTRUCTION_GRAMS for g in grams) / len(grams) > limits.max_echo_share:
        return True
    content = [w for w in tokens if w.isalpha() and w not in _FILLER and len(w) > 2]
    if len(content) < 3:
        return False
    borrowed = [w for w in content if _stem(w) in _INSTRUCTION_STEMS and w not in document_words]
    return len(borrowed) / len(content) > limits.max_instruction_words


QUOTE_MIN_WORDS = 3
# A quoted span, optionally in parentheses: "...", `...` or “...”.
_QUOTED = re.compile(r'\s*\(?(?:"([^"]{1,600})"|`([^`]{1,600})`|“([^”]{1,600})”)\)?')


def drop_quoted_chunk(text: str, chunk_text: str, limits: GuardLimits) -> str:
    """The text without the quotes of the chunk's own text: small models quote the chunk (or the first words a
    marked request gives) before saying what it does ('The chunk "def f(x): ..." parses dates'). The quote adds
    nothing the chunk does not index already; what follows it may be a good context (measured: 10 of the 0.5B's
    17 copies on the code subset). A quoted name stays, however much punctuation it has (`OomObserver`,
    `docs/configuration.md`): a quote of fewer than QUOTE_MIN_WORDS words is a name, not a copy."""
    chunk_grams = set(ngrams(words(chunk_text), 4))

    def keep_or_drop(match: re.Match) -> str:
        quoted = next(g for g in match.groups() if g is not None)
        grams = ngrams(words(quoted), 4)
        from_chunk = len(quoted.split()) >= QUOTE_MIN_WORDS and grams \
            and sum(g in chunk_grams for g in grams) / len(grams) > limits.max_copy_share
        return "" if from_chunk else match.group(0)

    return " ".join(_QUOTED.sub(keep_or_drop, text).split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(`])")


def drop_echoed_sentences(text: str, limits: GuardLimits, document_words: set[str] = frozenset()) -> str:
    """The text without the sentences that only restate the instruction ("This chunk is the part of the document
    that begins at ..."), when other sentences carry content; unchanged when every sentence is an echo."""
    sentences = _SENTENCE_END.split(text)
    kept = [s for s in sentences if not is_echo(s, limits, document_words)]
    return " ".join(kept) if kept and len(kept) < len(sentences) else text


@lru_cache(maxsize=4)
def _grams_of(text: str) -> frozenset:
    """Word 4-grams of a text, computed once for all chunks of its document (a str caches its hash)."""
    return frozenset(ngrams(words(text), 4))


def _share(grams: list[tuple[str, ...]], pool) -> float:
    return sum(g in pool for g in grams) / len(grams) if grams else 0.0


def drop_borrowed_sentences(text: str, chunk_text: str, document: str, situating: str,
                            limits: GuardLimits) -> tuple[str, int]:
    """The text without the sentences lifted from another part of the document, and how many there were.

    A sentence lifted from the document's title, headings or lead paragraph (`situating`) names what the chunk
    is part of (the company, the product, the period) and stays: that is what a context is for. A sentence
    lifted from another chunk's own content points this chunk at that chunk's facts (measured: asked to answer
    in German, the 1.5B gave 13 of 17 contexts a sentence of another paragraph, and hybrid Pass@1 fell from
    92.1 to 88.7), so it goes, with limits.borrowed = "lead"."""
    chunk_grams, document_grams = _grams_of(chunk_text), _grams_of(document)
    situating_grams = _grams_of(situating) if limits.borrowed == "lead" else frozenset()
    kept, borrowed = [], 0
    for sentence in _SENTENCE_END.split(text):
        grams = ngrams(words(sentence), 4)
        elsewhere = [g for g in grams if g in document_grams and g not in chunk_grams]
        if grams and len(elsewhere) / len(grams) > limits.max_copy_share \
                and _share(elsewhere, situating_grams) <= limits.max_copy_share:
            borrowed += 1
        else:
            kept.append(sentence)
    return " ".join(kept), borrowed


def loops(text: str, limits: GuardLimits) -> bool:
    """Whether the text goes round in circles: few distinct word 3-grams, or it compresses too well."""
    grams = ngrams(words(text), 3)
    if len(grams) >= 8 and len(set(grams)) / len(grams) < limits.min_distinct_trigrams:
        return True
    return len(text) >= 120 and len(zlib.compress(text.encode())) / len(text.encode()) < limits.min_compression


def guard_context(
    raw: str, chunk_text: str, limits: GuardLimits | None = None, finished: bool = True, prefill: str = "",
    document: str = "", situating: str = "",
) -> tuple[str | None, str]:
    """Check one generated context: (cleaned context, "") if acceptable, else (None, reason) with reason one of
    REASONS. `prefill` is the start of the answer that the prompt wrote, not the model: it does not count as content.
    `document`, the chunk's whole document, and `situating`, the parts of it that situate every chunk (title,
    headings, lead): sentences copied from the rest of the document are dropped (see drop_borrowed_sentences)."""
    limits = limits or GuardLimits()
    text = drop_quoted_chunk(clean_context(raw, finished), chunk_text, limits)
    text = drop_echoed_sentences(text, limits, set(words(chunk_text)))
    if document and limits.borrowed == "reject":  # the rule before sentences were told apart, for comparison
        if _share(ngrams(words(text), 4), _grams_of(document)) > limits.max_copy_share:
            return None, "copy"
    elif document and limits.borrowed == "lead":  # "keep" keeps every borrowed sentence: nothing to look for
        text, borrowed = drop_borrowed_sentences(text, chunk_text, document, situating, limits)
        if borrowed and not text.strip():
            return None, "copy"
    written = text[len(prefill.strip()) :] if prefill.strip() and text.startswith(prefill.strip()) else text
    if len(written.strip()) < limits.min_chars or not re.search(r"[^\W\d_]{2}", written):
        return None, "empty"
    if len(text) > limits.max_chars:
        return None, "too_long"
    tokens = words(text)
    if loops(text, limits):
        return None, "repetitive"
    if is_echo(written, limits, set(words(chunk_text))):
        return None, "echo"
    if _share(ngrams(tokens, 4), _grams_of(chunk_text)) > limits.max_copy_share:
        return None, "copy"
    if longest_common_run(text, " ".join(chunk_text.split())) > min(limits.max_copy_run, max(40, len(text) // 2)):
        return None, "copy"
    return text, ""


CARD_REASONS = ("empty", "too_long", "repetitive", "echo", "copy", "unnamed", "no_kind", "no_period", "unfounded")
CARD_LIMITS = GuardLimits(max_chars=400)  # three short fields; a longer answer describes pages, not the document
FIELD_CHARS = 120  # a field longer than this is cut at a word (a card is one line in every chunk's context)
CARD_FIELDS = ("subject", "kind", "period")
# "Organisation:" is the label cards were written with before the subject could be a product or a project
_FIELD_LABEL = re.compile(r"\b(subject|organi[sz]ation|kind|period)\W{0,3}:", re.IGNORECASE)
# What a model writes in a field it cannot fill, and the placeholders of the request when it copies them.
_BLANK_FIELD = re.compile(r"^(?:n/?a|none|unknown|not (?:stated|specified|given|mentioned|available)|-+|\?+|<.*>|\[.*\])"
                          r"(?:\s*[(,;:].*)?$", re.IGNORECASE)  # "none (the opening states no period)" too
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_ABBREVIATION_END = re.compile(r"\b(?:Inc|Co|Corp|Ltd|Bros|No|[A-Z](?:\.[A-Z])+)\.$")  # "Inc." keeps its period
# Capitalised words that name nothing in particular: a card made of these and no name of the document's own
# ("a report of the company for the year") places no chunk.
_GENERIC_NAMES = frozenset(
    "this the that it a an document documents report reports file page pages text section chapter part company "
    "organisation organization product project subject year period version annual quarterly form guide manual "
    "user users documentation docs article paper letter email message thread book".split()
)
# A name: a capitalised word, an all-capitals one ("AMD"), or one that begins with a digit and holds a letter
# ("3M"); the digit-only numbers of a name ("Boeing 737") count when long enough not to stand everywhere.
_NAME = re.compile(r"(?<![\w&'-])(?:[A-Z][\w&.'-]*[A-Za-z0-9]|\d[\w&'-]*[A-Za-z][\w&'-]*|[A-Z]|\d[\d,./-]*\d)(?![\w&'-])")
# Words of a company's legal form: they name no company ("Inc" stands in every filing), and a cover page may leave
# them out or write them in capitals, so an organisation is matched without them.
_LEGAL_FORMS = frozenset(
    "inc incorporated corp corporation co company companies ltd limited llc plc lp llp sa ag nv se gmbh ab asa oyj "
    "holdings holding group the and of".split()
)
# Kinds of document that cover a period: a card calling a document one of these must say which period, and a year
# it gives must stand in the opening. Any other document (a manual, a paper, a mail thread) has a period only where
# its opening states one.
_PERIODIC_KIND = re.compile(r"\b(?:annual|quarterly|10-[KQ]|8-K|earnings|fiscal|interim|semi-annual|half-year)\b",
                            re.IGNORECASE)
# Kinds any document may be called without its opening using the word (a page need not say "I am a guide"); a
# kind that names a form or a filing must be founded in the opening.
GENRES = frozenset(
    "guide manual documentation reference tutorial handbook overview introduction readme page article paper essay "
    "letter email e-mail message thread conversation correspondence memo book e-book ebook textbook chapter novel story "
    "specification notes note minutes transcript presentation slides report faq glossary changelog api poem poems poetry".split()
)
_VERSION = re.compile(r"\d+(?:\.\d+)+|\b(?:19|20)\d\d\b")


def names_in(text: str) -> list[str]:
    """The names a text gives: capitalised or all-capitals words of three or more characters, two-character ones in
    capitals ("GE") or with a digit ("3M"), and numbers of three or more digits, less generic words."""
    return [n for n in _NAME.findall(text)
            if (len(n) >= 3 or (len(n) == 2 and (n.isupper() or n[0].isdigit()))) and n.lower() not in _GENERIC_NAMES]


def _stands_in(name: str, folded: str) -> bool:
    """Whether a name stands in casefolded text: as a whole word where it is short ("3M", "GE": as letters inside
    other words they are everywhere), anywhere otherwise ("Acme" in "Acme's")."""
    name = name.casefold()
    if len(name) > 3:
        return name in folded
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded) is not None


def subject_named(subject: str, document: str) -> bool:
    """Whether the document gives the subject's name: one of its names (legal-form words aside) stands in the
    document, whatever the case ("Acme Company" on a cover page that writes "ACME COMPANY", "3M" in "3M COMPANY");
    a subject written without capitals ("the requests library") must stand whole, and name more than words any
    document has ("the company" names nothing)."""
    folded = document.casefold()
    names = [n for n in names_in(subject) if n.casefold().strip(".") not in _LEGAL_FORMS]
    if names:
        return any(_stands_in(name, folded) for name in names)
    own = [w for w in _letter_words(subject) if len(w) >= 3 and w not in _FILLER and w not in _GENERIC_NAMES
           and w not in _LEGAL_FORMS]
    return bool(own) and " ".join(subject.casefold().split()) in " ".join(folded.split())


def _letter_words(text: str) -> list[str]:
    r"""Casefolded runs of letters and combining marks: a word of a script whose vowels are marks ("महाभारत")
    whole, where `\w` cuts it at every vowel sign and no piece was long enough to name anything."""
    return ["".join(run) for is_word, run in itertools.groupby(text.casefold(), lambda c: unicodedata.category(c)[0] in "LM")
            if is_word]


def form_kind(opening: str, kind: str) -> str:
    """The kind to write: the form the opening names (a 10-K's cover page, an earnings release's headline) where the
    model's kind names none of its words ("financial report" for an earnings release), else the model's."""
    for pattern, label, words in FORM_KINDS:
        if pattern.search(opening):
            return kind if any(w in kind.casefold() for w in words) else label
    return kind


def cover_period(opening: str, period: str) -> str:
    """The period to write: the model's where it gives a year, else the one a cover page states, if any."""
    if _YEAR.search(period):
        return period
    stated = COVER_PERIOD.search(opening)
    return " ".join(stated.group(1).split()) if stated else period


def card_fields(raw: str) -> dict[str, str]:
    """The card's fields as the model filled them ({"subject", "kind", "period"} -> value; a blank or a copied
    placeholder is ""), each cut to FIELD_CHARS at a word. The labels may stand on one line or several."""
    fields = dict.fromkeys(CARD_FIELDS, "")
    labels = list(_FIELD_LABEL.finditer(raw))
    for label, following in zip(labels, labels[1:] + [None]):
        name = label.group(1).lower()
        name = "subject" if name.startswith("organi") else name
        value = raw[label.end(): following.start() if following else len(raw)]
        value = " ".join(_TAG_RE.sub(" ", value).replace("**", "").split()).strip(" ;,*")
        value = value if _ABBREVIATION_END.search(value) else value.rstrip(".")
        if fields[name] or _BLANK_FIELD.match(value):
            continue
        if len(value) > FIELD_CHARS:
            value = value[:FIELD_CHARS].rsplit(" ", 1)[0].rstrip(" ,;(") + " ..."
        fields[name] = value
    return fields


def render_card(fields: dict[str, str]) -> str:
    """The fields as the one line every chunk's context carries: "Subject, kind, period."."""
    return ", ".join(fields[name] for name in CARD_FIELDS if fields[name]) + "."


def periodic(opening: str, kind: str) -> bool:
    """Whether the document covers a period by what it is: its opening names a form or states the period a cover
    page states, or the card calls it an annual, quarterly or earnings document."""
    return (any(pattern.search(opening) for pattern, _, _ in FORM_KINDS) or COVER_PERIOD.search(opening) is not None
            or _PERIODIC_KIND.search(kind) is not None)


def _founded(text: str, opening: str) -> bool:
    """Whether some word of a kind stands in the opening (by its stem: "report" is found in "Amcor reports")."""
    opening_stems = {_stem(w) for w in words(opening)}
    stems = {_stem(w) for w in words(text) if len(w) >= 3 and w not in _FILLER} - {"docum"}
    return bool(stems & opening_stems)


def _generic_kind(kind: str) -> bool:
    """Whether a kind names a genre any document may be without saying so ("User guide", "API reference")."""
    return any(w in GENRES for w in words(kind))


def guard_card(raw: str, document: str, opening: str, limits: GuardLimits = CARD_LIMITS,
               outline: str = "") -> tuple[str | None, str]:
    """Check one document card: (the card as one line, "") if usable, else (None, reason) with reason one of
    CARD_REASONS. A card names its subject (a company, organisation, product or project) as the document names it
    (else "unnamed", and "empty" without one). The rest depends on what the document is:

    * a periodic document (a filing, an earnings release, an annual or quarterly report: see `periodic`) must
      give its kind ("no_kind") and the period it covers, with a year ("no_period": "covering the period from to"
      places nothing); its period's years and some word of its kind must stand in the opening the model read
      ("unfounded": a 1.5B model took a tax number for a date). A kind the opening names as a form (FORM_KINDS)
      replaces one that names none of its words, and the period a cover page states one without a year;
    * any other document (a manual, a paper, a mail thread) has the fields it has: a period only where its
      opening states it (a year or version the opening never gives is dropped, not the card: a manual has no
      fiscal year, and a small model writes one from nowhere), a kind only where the opening uses its word or it
      names a genre (GENRES: guide, paper, letter ...).

    Beyond that, the context guard's loop and echo, and no copy of the outline it was shown (2 of 45 filings'
    cards were their headings). The subject is matched without regard to case or legal-form words."""
    text = raw.strip()
    if len(text) > limits.max_chars:
        return None, "too_long"
    if loops(text, limits):
        return None, "repetitive"
    fields = card_fields(text)
    if not fields["subject"] or not (re.search(r"[^\W\d_]{2}", fields["subject"]) or names_in(fields["subject"])):
        return None, "empty"  # no word, and no name with digits among its letters ("W3C", "3M")
    fields["kind"] = form_kind(opening, fields["kind"])
    fields["period"] = cover_period(opening, fields["period"])
    # the opening's own form, or one of its words ("Annual report" on a 10-K's cover): founded there
    from_form = any(pattern.search(opening) for pattern, _, _ in FORM_KINDS)
    covers_period = periodic(opening, fields["kind"])
    if not covers_period:
        if fields["kind"] and not (_founded(fields["kind"], opening) or _generic_kind(fields["kind"])):
            fields["kind"] = ""
        stated = _VERSION.findall(fields["period"])
        if not stated or any(s not in opening for s in stated):
            fields["period"] = ""
    card = render_card(fields)
    if is_echo(card, limits):
        return None, "echo"
    if outline and _share(ngrams(words(card), 3), set(ngrams(words(outline), 3))) > limits.max_copy_share:
        return None, "copy"
    if not subject_named(fields["subject"], document):
        return None, "unnamed"
    if not covers_period:
        return card, ""
    if not re.search(r"[^\W\d_]{2}", fields["kind"]):
        return None, "no_kind"
    years = _YEAR.findall(fields["period"])
    if not years:
        return None, "no_period"
    stated = COVER_PERIOD.search(opening)
    if stated and any(y in opening for y in years) and any(y not in opening for y in years):
        # a founded year beside an invented one ("July 2, 2023 to December 31, 2022" for a quarter the cover says
        # ended July 2, 2023): the period the cover states
        fields["period"] = " ".join(stated.group(1).split())
        years, card = _YEAR.findall(fields["period"]), render_card(fields)
    if any(y not in opening for y in years) or not (from_form or _founded(fields["kind"], opening)):
        return None, "unfounded"
    return card, ""
