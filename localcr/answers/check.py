"""Citations in a generated answer, checked against the sources they point at.

A small model cites a source that does not exist, puts one citation after three sentences, or writes a year that
no source holds ("1881" where the source says 1981). So an answer is split into sentences, each sentence's
citations read ("[2]", "[1][3]", "[1, 3]"), citations to sources that do not exist dropped, and each sentence
checked: its figures (numbers, with their scale words: "$1.2 billion" matches a table's "1,200" in millions), its
names (capitalised words that are not the first of the sentence) and its quoted phrases must each occur in one
of the sources it cites. A sentence without a citation of its own takes those of the next cited sentence of its
paragraph (the "A. B. [1]" habit). A sentence that its cited sources do not hold (or that cites none) but
another source does has its citation corrected to that source (and says so): small models often cite the source
next to the right one, or forget to cite; a short answer citing no source that exists ("Melatonin [2]" with
one source read) cites the one holding it word for word; a sentence joining two sources cites both; one that no
source holds is unsupported. Numbers written in words count as their figures ("fifty thousand" holds "50,000":
localcr.answers.numerals); a sentence that only restates the question is no answer; a source answers only for the subject
the question names (its names, also abbreviated, aliased in parentheses or misspelt by a letter, and its years).
Pure functions: no model, no index.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from localcr.answers.numerals import as_digits, ascii_digits

CITATION = re.compile(r"\s*\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
# A figure: digits with thousands separators or a decimal part; the scale word after it, if any.
_FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s*(thousand|million|billion|trillion|"
                     r"[kKmMbB]n?)\b)?")
# A figure written in digits right after a Chinese or Japanese character, which runs into it without a space ("党歴30年").
_FIGURE_AFTER_CJK = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])"
                               r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "b": 1e9, "bn": 1e9,
           "trillion": 1e12}
_NUMBER_WORDS = {w: float(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}
# A sentence that adds at least MIN_CLAIM_WORDS words to the question, more than MAX_ABSENT_SHARE of them in no
# cited source, says something its sources do not (chosen on benchmarks/answers/answers.py: see BENCHMARKS.md "Answers").
MIN_CLAIM_WORDS = 2
MAX_ABSENT_SHARE = 0.5
# A question's name this long may be misspelt from a source's word in lower case (a species, "beroids"); a shorter
# one only from a capitalised word.
MISSPELT_ANY_CASE = 7
WORDS = re.compile(r"\w+")
_COMMON_WORDS = set("""that this with from were which what when where have been their there they them than then also
into only other some such more most over about after before between both each many much very does done will would
could should these those while being because during under until again further here just like same""".split())
# Quoted phrases: straight, curly, guillemets, CJK corner brackets.
_QUOTED = re.compile(r"\"([^\"\n]{2,200})\"|\u201c([^\u201d\n]{2,200})\u201d|\u00ab([^\u00bb\n]{2,200})\u00bb|"
                     r"\u300c([^\u300d\n]{2,200})\u300d")
_NAME = re.compile(r"\b[A-Z][\w'&.-]*[A-Za-z0-9](?:\s+[A-Z][\w'&.-]*[A-Za-z0-9])*")
# Capitalised words that are no name: sentence openers and the words an answer is made of.
_NOT_NAMES = {"The", "A", "An", "This", "That", "These", "Those", "It", "Its", "In", "On", "At", "For", "By", "As",
              "According", "Yes", "No", "However", "Source", "Sources", "FY", "Q1", "Q2", "Q3", "Q4", "I", "If", "To",
              "And", "Or", "But", "With", "From", "Of", "USD", "US"}


@dataclass
class Sentence:
    text: str  # as written, its citations taken out
    citations: list[int]  # the existing sources it cites (its own, or its paragraph's next ones), 1-based
    supported: bool
    missing: list[str] = field(default_factory=list)  # figures, names or phrases no cited source holds
    inherited: bool = False  # its citations came from the next sentence of its paragraph
    corrected: list[int] = field(default_factory=list)  # what it cited, where another source holds it instead

    def to_dict(self) -> dict:
        return {"text": self.text, "citations": self.citations, "supported": self.supported, "missing": self.missing,
                "inherited": self.inherited, "corrected": self.corrected}


@dataclass
class Checked:
    """An answer's sentences with their citations checked."""

    sentences: list[Sentence]
    dropped: list[int]  # citation numbers that named no source

    @property
    def text(self) -> str:
        """The answer with only the citations that hold a source, each sentence followed by its own."""
        return " ".join(_cited(s.text, [] if s.inherited else s.citations) for s in self.sentences)

    @property
    def cited(self) -> list[int]:
        return sorted({n for s in self.sentences for n in s.citations})

    @property
    def corrected(self) -> list[Sentence]:
        return [s for s in self.sentences if s.corrected]

    @property
    def unsupported(self) -> list[Sentence]:
        return [s for s in self.sentences if not s.supported]


def _cited(sentence: str, numbers: list[int]) -> str:
    """A sentence with its citations before its final stop: "It opened in 1981 [2]." """
    marks = "".join(f"[{n}]" for n in numbers)
    if not marks:
        return sentence
    body = sentence.rstrip(".!?。！？")
    return f"{body} {marks}{sentence[len(body):]}"


def citations_in(text: str) -> list[int]:
    """Every source number cited in text, in order, repeats included."""
    return [int(n) for match in CITATION.finditer(text) for n in re.split(r"\s*[,;]\s*", match[1])]


def split_sentences(text: str, language: str = "en") -> list[tuple[str, list[int], int]]:
    """(sentence without its citations, the numbers it cites, paragraph number) for each sentence: each line cut
    as sources are (localcr.answers.evidence.sentence_spans: not at an initial or an abbreviation, where a stop followed by
    a space had cut "Rajendra K." from "Pachauri was the first chair of the IPCC" and left the name unchecked);
    the citations after a stop belong to the sentence before it ("... in 1981. [2] Then ...")."""
    from localcr.answers.evidence import sentence_spans

    out = []
    for paragraph, block in enumerate(re.split(r"\n\s*\n", text.strip())):
        for line in block.splitlines():
            for start, end in sentence_spans(line, language):
                piece = line[start:end]
                cited = citations_in(piece)
                plain = " ".join(CITATION.sub("", piece).split())
                if plain.strip(" .;:-*"):
                    out.append((plain, cited, paragraph))
                elif cited and out and out[-1][2] == paragraph:  # citations alone after the stop: the sentence before
                    out[-1] = (out[-1][0], out[-1][1] + cited, paragraph)
    return out


def check(answer: str, sources: list[str], *, names: bool = True, question: str = "", code: list[bool] | None = None,
          language: str = "en", about: list[str] | None = None, topic: list[str] | tuple = ()) -> Checked:
    """The answer's sentences with citations that name one of `sources` (1-based), each checked against the
    sources it cites. names: check capitalised words too (not for German, which capitalises every noun).
    question: its words are no evidence (a sentence restating the question and adding a claim is checked on
    the claim's words). code: which sources are source code, whose words an answer explains in its own: a
    sentence citing only code is checked on its figures, names and quotes alone. language: the answer's, for
    reading numbers written in words ("fifty thousand" holds the answer's "50,000"). about: for each source, what
    says what it is about (its path, context and whole chunk): a source answers only for the subject the question
    names (subjects_of), so a sentence citing only sources about something else is unsupported. topic: the
    question's terms few passages of the index hold (analysed as the index analyses them); where its language gives
    no names to read (names=False, or a script without capitals), a cited source must hold one of them."""
    code = code or [False] * len(sources)
    split = split_sentences(answer, language)
    dropped = sorted({n for _, cited, _ in split for n in cited if not 1 <= n <= len(sources)})
    own = [[n for n in dict.fromkeys(cited) if 1 <= n <= len(sources)] for _, cited, _ in split]
    sentences = []
    subjects = subjects_of(question, names) if about is not None else []
    aliases = aliases_of(question, subjects)
    # Where names cannot be read (German capitalises every noun; these scripts have no capitals), the question's
    # rare terms stand for its subject. Not where they can: English questions with no name lost 4 right answers of
    # 100 to it (a rare word the source rephrases), and kept every filtered-out refusal without it.
    by_topic = bool(topic) and about is not None and (not names or language in _CASELESS)
    for i, (text, cited, paragraph) in enumerate(split):
        citations, inherited = own[i], False
        # cited only a source that is not there ("[2]" of one), and states something a source must hold
        miscounted = bool(cited) and not citations and _checkable(text, question, names, language)
        if not citations:
            later = next((own[j] for j in range(i + 1, len(split)) if split[j][2] == paragraph and own[j]), [])
            citations, inherited = later, bool(later)
        words = not all(code[n - 1] for n in citations)
        missing = unsupported_facts(text, [sources[n - 1] for n in citations], names, question, words, language) if citations else []
        sentence = Sentence(text, citations, bool(citations) and not missing, missing, inherited)
        if (missing or not citations) and (holder := _holder(text, sources, names, question, code,
                                                             bool(citations) or miscounted, language)
                                           or (None if citations else phrase_holder(text, sources, language))):
            sentence.corrected, sentence.citations, sentence.missing, sentence.supported = citations, [holder], [], True
            sentence.inherited = False
        joined = []
        if missing and citations and not sentence.supported and (extra := _completing(
                text, sources, citations, names, question, words, language)):
            joined = sorted([*citations, extra])
            sentence.corrected, sentence.citations, sentence.missing, sentence.supported = citations, joined, [], True
        if sentence.supported and question and adds_nothing(text, question, language):
            sentence.supported, sentence.missing = False, ["nothing the question does not already say"]
        if sentence.supported and about is not None:
            _keep_on_subject(sentence, subjects, about, aliases)
            if sentence.supported and by_topic:
                _keep_on_topic(sentence, topic, about, language)
            if sentence.supported and joined and sentence.citations != joined:  # one of the two is off the subject
                sentence.supported, sentence.missing = False, missing
        sentences.append(sentence)
    return Checked(sentences, dropped)


# Scripts without capitals, whose names the check cannot tell from other words.
_CASELESS = {"zh", "ja", "ar"}
# Languages whose words run together or take attached particles (Arabic's al-, wa-): an answer is found inside them.
_UNSPACED = {"zh", "ja", "ar"}


def phrase_holder(phrase: str, sources: list[str], language: str = "en") -> int | None:
    """The first source holding a short answer as written, whole words (numbers in words or figures alike: "25"
    is not held by "1925"); None where none holds it or it states nothing to check (no word of four letters,
    figure or CJK character: "Yes", "It is")."""
    wanted = _plain(phrase.strip().rstrip(".。"), language)
    if not wanted or not (claim_words(phrase, language=language) or stated_figures(phrase, language)):
        return None
    bounded = re.compile(("" if language in _UNSPACED else r"(?<!\w)") + re.escape(wanted)
                         + ("" if language in _UNSPACED else r"(?!\w)"))
    return next((n for n, source in enumerate(sources, start=1) if bounded.search(_plain(source, language))), None)


def _plain(text: str, language: str) -> str:
    """Text compared as an answer is matched: folded, numbers in words as digits, no thousands separators."""
    return re.sub(r"(?<=\d)[,\u202f\u00a0 ](?=\d{3}(?!\d))", "", _fold(as_digits(text, language)))


# An answer's first word that answers a yes-or-no question, in the languages answers are checked in.
_YES_NO = {"yes", "no", "ja", "nein", "oui", "non", "si", "sí", "да", "нет", "نعم", "لا", "是", "否", "不", "はい", "いいえ"}


# A question that offers a choice ("high or low?"): an answer made of its words answers it.
_CHOICE = re.compile(r"\b(or|oder|ou|o|или|أو|أم)\b|还是|或者|それとも", re.IGNORECASE)


def adds_nothing(sentence: str, question: str, language: str = "en") -> bool:
    """Whether a sentence only restates the question ("The pump stores its telemetry in a database" for "Which
    database does the pump store its telemetry in?"): every word of it, as the index analyses words (stop words
    out, stemmed: "stores" is "store"), is the question's, and so is every figure; a yes or no, or a pick among
    the alternatives a question offers ("high or low?"), is an answer. A sentence that asks a question ("To what
    may general global fields be transferred to or from?", the 1.5B with refusing forbidden) is none."""
    from localcr.lexical import tokenize

    if CITATION.sub("", sentence).rstrip().endswith(("?", "？", "؟")):  # a question asked back answers nothing
        return True
    words = WORDS.findall(_fold(sentence))
    if not words or words[0] in _YES_NO or _CHOICE.search(question):
        return False
    if not set(tokenize(sentence, language)) <= set(tokenize(question, language)):
        return False
    asked_figures = stated_numbers(question, language)
    return all(value in asked_figures for _, value, _ in stated_figures(sentence, language))


# Capitalised words of a question that ask rather than name.
_ASKING = {"What", "Which", "Who", "Whom", "Whose", "When", "Where", "Why", "How", "Did", "Does", "Do", "Is", "Was",
           "Were", "Are", "Has", "Have", "Had", "Can", "Could", "Will", "Would", "Should", "Please", "Based", "Using",
           "Given", "Assume", "Answer", "Round", "Calculate", "Compute", "What's", "FY", "Fiscal", "Year", "Q",
           # a date's month may be written otherwise in the source ("Feb.", "2/2015"); its year is checked
           "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"}
_YEAR_IN_QUESTION = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


def subjects_of(question: str, names: bool = True) -> list[str]:
    """What a question is about: the names it gives (capitalised words but its first, possessives stripped:
    "Amazon's" names Amazon) and the years it names (FY2019 names 2019). German capitalises every noun: there
    only the years count."""
    found = re.findall(r"(?<![\w.])\d+[A-Z][\w&]*", question) if names else []  # 3M, 7UP
    if names:  # each sentence's first word is capitalised anyway ("Base your answer on ...")
        for name in (n for sentence in re.split(r"(?<=[.?!])\s+", question) for n in names_in(sentence)):
            name = re.sub(r"['\u2019]s?$", "", name)
            if name not in _ASKING and not re.fullmatch(r"(FY|Q[1-4])?\d*", name) and len(name) > 1:
                found.append(name)
    found += _YEAR_IN_QUESTION.findall(question)
    return list(dict.fromkeys(found))


def aliases_of(question: str, subjects: list[str]) -> dict[str, list[str]]:
    """The other name a question gives a subject in parentheses right after it ("Block's (formerly known as
    Square)", "Kenvue (formerly Consumer Health business segment)"): a source naming either is about it."""
    aliases = {}
    for found in _ALIASED.finditer(question):
        inside = [name for name in names_in("x " + found[2]) if name in subjects]
        if found[1] in subjects and inside:
            aliases[found[1]] = inside
    return aliases


def _keep_on_subject(sentence: Sentence, subjects: list[str], about: list[str], aliases: dict[str, list[str]]) -> None:
    """A supported sentence keeps the citations of sources about every name the question gives (by the name, its
    abbreviation or the other name it is given) and about one of the years it names, if any: "from 2000 to 2005
    compared to 1995 to 2000" is answered by a source that says "the previous five years". With none left it is
    unsupported, naming the subject its sources are not about."""
    if not subjects:
        return
    folded = {n: _fold(about[n - 1]) for n in sentence.citations}
    alias = {name for names in aliases.values() for name in names}
    years = [s for s in subjects if _YEAR_IN_QUESTION.fullmatch(s)]

    def written(n: int, name: str) -> bool:  # as the source writes it, or misspelt by the question
        return _fold(name) in folded[n] or misspelt(name, about[n - 1])

    def names(n: int, subject: str) -> bool:
        return (written(n, subject) or abbreviated(subject, about[n - 1])
                or (subject in aliases and all(_fold(a) in folded[n] for a in aliases[subject]))
                # a joined name part by part: "San Diego-Carslbad-San Marcos"
                or ("-" in subject and all(written(n, part) for part in subject.split("-") if part)))

    def unnamed(n: int) -> list[str]:
        missed = [s for s in subjects if s not in alias and s not in years and not names(n, s)]
        return missed + (years if years and not any(names(n, year) for year in years) else [])

    off = {n: unnamed(n) for n in sentence.citations}
    kept = [n for n in sentence.citations if not off[n]]
    if kept:
        sentence.citations = kept
        return
    absent = list(dict.fromkeys(s for n in sentence.citations for s in off[n]))
    sentence.supported = False
    sentence.missing = [f"{s} (the question's subject)" for s in absent]


# A name and the parenthesis after it: "Block's (formerly known as Square)".
_ALIASED = re.compile(r"([A-Z][\w&.-]*?)(?:['\u2019]s?)?\s*\(([^()]*)\)")
# Words between the words a short name abbreviates, and the letters that stand for them in it ("JnJ", "P&G", "BofA").
_CONNECTORS = {"&": "&n", "and": "&n", "of": "o"}
_NAME_RUN = re.compile(r"[A-Z][\w'\u2019.-]*(?:\s+(?:&|and|of)?\s*[A-Z][\w'\u2019.-]*)+")


def abbreviated(name: str, text: str) -> bool:
    """Whether `text` writes out a short name that abbreviates a run of its capitalised words: "JnJ" and "J&J" are
    "Johnson & Johnson", "AmEx" is "American Express", "BofA" "Bank of America" (each word's start, in order, and
    the connecting "&", "and" or "of" by its letter or left out). Only names of three to six characters with two
    capitals or an "&": "GE" would abbreviate too many runs of two words."""
    short = 3 <= len(name) <= 6 and name.replace("&", "").isalpha()
    if not short or not (sum(c.isupper() for c in name) >= 2 or "&" in name):
        return False
    letters = name.casefold()
    for run in _NAME_RUN.finditer(text):
        words = [w.casefold() for w in re.findall(r"&|[\w'\u2019.-]+", run[0])]
        if any(_spells(letters, words[start:]) for start in range(len(words)) if words[start] not in _CONNECTORS):
            return True
    return False


def misspelt(name: str, text: str) -> bool:
    """Whether `text` writes a name of five letters or more that a question misspelt: a word of it with the same
    first letter, one letter added, dropped, changed or two swapped ("Zeria" for "Zeira", "Sheeshanks" for
    "Sheepshanks"; "Austria" is not "Australia"). The word is capitalised, as a name is, unless the name is long
    ("Beriods" for "beroids"): "Apple" is not "apply"."""
    from rapidfuzz.distance import OSA

    if len(name) < 5 or not name.isalpha():
        return False
    pattern = r"\b\w{4,}\b" if len(name) >= MISSPELT_ANY_CASE else r"\b[A-Z]\w{3,}\b"
    name = name.casefold()
    words = {word.casefold() for word in re.findall(pattern, text) if word[0].casefold() == name[0]}
    return any(OSA.distance(name, word, score_cutoff=1) <= 1 for word in words)


def _spells(letters: str, words: list[str], used: int = 0) -> bool:
    """Whether `letters` are the starts of `words` taken in order from the first (at least two of them), a
    connector matched by its letter, written whole or skipped."""
    if not letters:
        return used >= 2
    if not words:
        return False
    word, rest = words[0], words[1:]
    if word in _CONNECTORS:
        return ((letters[0] in _CONNECTORS[word] and _spells(letters[1:], rest, used))
                or (letters.startswith(word) and _spells(letters[len(word):], rest, used))
                or _spells(letters, rest, used))
    return any(letters[:k] == word[:k] and _spells(letters[k:], rest, used + 1)
               for k in range(1, min(len(word), len(letters)) + 1))


def _keep_on_topic(sentence: Sentence, topic: list[str] | tuple, about: list[str], language: str) -> None:
    """A supported sentence keeps the citations of sources that hold one of the question's rare terms (as the index
    analyses text: "gebardensprach" is in "Gebärdensprache"); with none left it is unsupported: its sources are
    about something else (another river's "what is got from it")."""
    from localcr.lexical import grammatical, tokenize

    wanted = {term for term in topic if not grammatical(term, language)}  # "物か" of "どのような人物か" is no subject
    if not wanted:
        return
    kept = [n for n in sentence.citations if wanted & set(tokenize(about[n - 1], language))]
    if kept:
        sentence.citations = kept
        return
    sentence.supported = False
    sentence.missing = [f"{' / '.join(sorted(wanted))} (the question's subject)"]


def _holder(sentence: str, sources: list[str], names: bool, question: str, code: list[bool], cited: bool,
            language: str = "en") -> int | None:
    """The source that holds every figure, name and quote of a sentence whose cited sources do not, or that cites
    none (small models cite the source beside the right one, or forget to): of those, the one holding the most of
    the words it adds to the question (for a sentence that cited nothing, at least _least_claim of them: a
    citation is not given to a sentence with nothing to check); or None."""
    added = claim_words(sentence, question, language)
    figures = len(figures_with_scale(sentence))
    best, most = None, -1 if cited else _least_claim(added) - 1
    for n, source in enumerate(sources, start=1):
        if unsupported_facts(sentence, [source], names, question, not code[n - 1], language):
            continue
        haystack = _fold(source)
        held = sum(_holds(haystack, word) for word in added) + figures
        if held > most:
            best, most = n, held
    return best


def _checkable(sentence: str, question: str, names: bool, language: str) -> bool:
    """Whether a sentence states something a source must hold: a figure, a name, a quote, or the words the question
    does not say that unsupported_facts would check (_least_claim: "Serotonin" alone states nothing to check, the
    first word of a sentence being no name; "木材" does)."""
    added = claim_words(sentence, question, language)
    return bool(stated_figures(sentence, language) or quoted_phrases(sentence)
                or (names and names_in(sentence)) or (added and len(added) >= _least_claim(added)))


def _completing(sentence: str, sources: list[str], cited: list[int], names: bool, question: str, words: bool,
                language: str) -> int | None:
    """The one more source that, read with the cited ones, holds every fact of a sentence none of them holds alone
    (the 1.5B joins two sources in a sentence: "Toghrul Khan of the Keraite tribe [2] was exiled to the Qara Khitai
    [1]" cited [2] alone); the best ranked such source, or None."""
    return next((n for n in range(1, len(sources) + 1) if n not in cited and not unsupported_facts(
        sentence, [sources[m - 1] for m in (*cited, n)], names, question, words, language)), None)


def _holds(haystack: str, word: str) -> bool:
    """A folded word in a folded text, by its first two thirds: "retried" is held by "retries"."""
    return word[:max(3, 2 * len(word) // 3)] in haystack


def unsupported_facts(sentence: str, cited: list[str], names: bool = True, question: str = "", words: bool = True,
                      language: str = "en") -> list[str]:
    """The figures, names and quoted phrases of a sentence that none of its cited sources holds; and (words) where
    most of the words it adds to the question are in no cited source, those words. Numbers written in words count
    as their figures on both sides (localcr.answers.numerals)."""
    haystack = _fold(" ".join(cited))
    numbers = set().union(*(stated_numbers(source, language) for source in cited)) if cited else set()
    missing = [shown for shown, value, scaled in stated_figures(sentence, language)
               if not _figure_found(value, scaled, numbers)]
    missing += [phrase for phrase in quoted_phrases(sentence) if _fold(phrase) not in haystack]
    missing += [name for name in names_in(sentence) if names and not _name_held(name, haystack)
                and not _name_restated(name, question, " ".join(cited), language)]
    added = claim_words(sentence, question, language) if words else []
    absent = [w for w in added if not _holds(haystack, w)]
    if len(added) >= _least_claim(added) and len(absent) > len(added) * MAX_ABSENT_SHARE:
        missing += absent
    return list(dict.fromkeys(missing))


# A fiscal year as a question or an answer writes it: "FY2022", "2019" (the first group), "FY20" (the second: 2020).
FISCAL_YEAR = re.compile(r"\b(?:FY\s?'?)?((?:19|20)\d\d)\b|\bFY\s?'?(\d\d)\b", re.I)


def named_years(text: str) -> set[int]:
    """The years a text names: "FY2022", "2019", "FY20" (2020), "Q3'24", "2023/24", "2023年度"
    (localcr.answers.periods)."""
    from localcr.answers.periods import years_of

    return years_of(text)


def _name_held(name: str, haystack: str) -> bool:
    """Whether a folded text holds a name; a fiscal year ("FY2022", "FY22": the question's words, where filings
    write "2022") by its year."""
    if FISCAL_YEAR.fullmatch(name):
        return any(re.search(rf"(?<!\d){year}(?!\d)", haystack) for year in named_years(name))
    return _fold(name) in haystack


def _name_restated(name: str, question: str, cited: str, language: str) -> bool:
    """Whether a name the source does not write as the answer does only restates what the question and source
    name: the question's name in another form of its words, as the index stems them ("Kenyans" for a source's
    "Kenyan athletes", "African-Americans" for "African-American"), or the short form of a name the source writes
    out ("SNAP" for its "Supplemental Nutrition Assistance Program"). The 1.5B's answers lost to them: 3 of 200
    XQuAD-en questions whose model's text held the gold."""
    from localcr.lexical import tokenize

    if abbreviated(name, cited):
        return True
    terms = set(tokenize(name, language))
    return bool(terms) and terms <= set(tokenize(question, language)) and terms <= set(tokenize(cited, language))


def _least_claim(added: list[str]) -> int:
    """The fewest words a sentence must add for them to be checked: MIN_CLAIM_WORDS, or one where they are CJK
    bigrams without grammar, each a word of its own ("石油" for the source's "木材")."""
    from localcr.lexical import is_cjk

    return 1 if added and all(is_cjk(w) for w in added) else MIN_CLAIM_WORDS


def claim_words(sentence: str, question: str = "", language: str = "en") -> list[str]:
    """The words a sentence adds to the question: of four letters or more, not the question's, folded; Chinese
    and Japanese, written without spaces, by their character bigrams (a whole clause is no word a source holds),
    those holding grammar left out (localcr.lexical.grammatical: "木材です" adds 木材, not "材で" and "です"), and so
    are the seams between the question's words (_seams)."""
    from localcr.lexical import grammatical, is_cjk

    asked = set(_terms(question))
    seams = _seams(sentence, asked)
    return list(dict.fromkeys(w for w in _terms(CITATION.sub(" ", sentence)) if (len(w) >= 4 or is_cjk(w))
                              and not w.isdigit() and w not in asked and w not in _COMMON_WORDS
                              and not grammatical(w, language) and w not in seams))


def _seams(sentence: str, asked: set[str]) -> set[str]:
    """The CJK bigrams of a sentence that only join the question's words: between two of them ("要党" of "必要党歴",
    the question's "必要" and "党歴"), or between one and a figure or the end of the run ("年重" of
    "1936年重新占领", 重新 being the question's). No source writes them, and they say nothing: right answers were
    withdrawn for them."""
    from localcr.lexical import cjk_bigram_runs

    seams = set()
    for grams in cjk_bigram_runs(_fold(CITATION.sub(" ", sentence))):
        for i, gram in enumerate(grams):
            before = grams[i - 1] in asked if i else None  # None: the run starts here
            after = grams[i + 1] in asked if i + 1 < len(grams) else None
            if (before or after) and before is not False and after is not False:
                seams.add(gram)
    return seams


def _terms(text: str) -> list[str]:
    from localcr.lexical import bigram_pieces

    return [piece for word in WORDS.findall(_fold(text)) for piece in bigram_pieces(word)]


def figures_in(text: str) -> set[float]:
    """Every number in a text, scaled by the word after it where there is one, and also as written; English
    number words up to twenty too ("retried three times" holds the 3 of an answer)."""
    found = {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS}
    for _, value, scaled in figures_with_scale(text):
        found.update({value, scaled})
    return found


def figures_with_scale(text: str) -> list[tuple[str, float, float]]:
    """(as written, the number, the number times its scale word) for each figure; years and small counts too."""
    out = []
    for match in _FIGURE.finditer(CITATION.sub(" ", text)):
        value = float(match[1].replace(",", ""))
        scale = _SCALES.get((match[2] or "").lower(), 1.0)
        out.append((match[0].strip(), value, value * scale))
    return out


def stated_figures(text: str, language: str) -> list[tuple[str, float, float]]:
    """figures_with_scale of a text with its numbers in words as digits; in Chinese and Japanese also the figures it
    writes in digits after a character ("党歴30年"), not those the reading of numerals makes there (安倍晋三 is a name,
    not 安倍晋3)."""
    found = figures_with_scale(as_digits(text, language))
    if language in ("zh", "ja"):
        found += [(shown, value, value) for shown, value in _figures_after_cjk(ascii_digits(text))]
    return found


def stated_numbers(text: str, language: str) -> set[float]:
    """Every number of a source: as stated_figures reads them, its numbers in words (figures_in), and in Chinese and
    Japanese those numerals make after a character too (a source's "五万人" holds an answer's "50000人"; one read in
    a name can only let an answer's figure pass, never withdraw it)."""
    digits = as_digits(text, language)  # read once: a source is read for every sentence that cites it
    found = figures_in(digits) | {value for _, value, _ in figures_with_scale(digits)}
    if language in ("zh", "ja"):
        found |= {value for read in (ascii_digits(text), digits) for _, value in _figures_after_cjk(read)}
    return found


def _figures_after_cjk(text: str) -> list[tuple[str, float]]:
    """The figures a text writes in digits right after a Chinese or Japanese character, as written and as numbers."""
    return [(match[1], float(match[1].replace(",", ""))) for match in _FIGURE_AFTER_CJK.finditer(CITATION.sub(" ", text))]


def _figure_found(value: float, scaled: float, numbers: set[float]) -> bool:
    """Whether a figure occurs among a source's numbers: as written, or with a scale word as any number of the
    source in thousands, millions or billions that rounds to it (tables state their unit once, in a heading)."""
    if value in numbers or scaled in numbers:
        return True
    if scaled == value:
        return False
    digits = len(str(value).split(".")[1].rstrip("0")) if "." in str(value) else 0
    unit = scaled / value
    return any(round(n * m / unit, digits) == value for n in numbers for m in (1e3, 1e6, 1e9) if n)


def quoted_phrases(text: str) -> list[str]:
    """The phrases a text quotes, without the stop or comma a sentence puts inside its closing quote ("The Use of
    Money," is the sermon's title "The Use of Money")."""
    phrases = (next(group for group in match.groups() if group).rstrip(".,;:!?。、") for match in _QUOTED.finditer(text))
    return [phrase for phrase in phrases if phrase]


def names_in(sentence: str) -> list[str]:
    """Capitalised words and runs of them, but for the sentence's first word and words an answer is made of."""
    names = []
    first = re.search(r"\w", sentence)  # after any opening mark: "¿Cuál", "«Quel"
    for match in _NAME.finditer(sentence):
        words = match[0].split()
        if first and match.start() == first.start():  # the sentence's first word is capitalised anyway
            words = words[1:]
        words = [re.sub(r"['\u2019]s?$", "", w.rstrip(".")) for w in words if w.rstrip(".") not in _NOT_NAMES]
        if words and any(len(w) > 1 for w in words):
            names.extend(words)
    return names


def _fold(text: str) -> str:
    """Text compared without regard to case, accents' encodings, runs of whitespace or spaces between Chinese or
    Japanese characters (XQuAD's Chinese sets names apart with spaces: "另外 三种" holds "另外三种")."""
    from localcr.lexical import CJK_SPACE

    return CJK_SPACE.sub("", " ".join(unicodedata.normalize("NFKC", text).casefold().split()))
