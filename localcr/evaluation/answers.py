"""Scoring answers (`localcr ask`) against a query file's gold, with no judge model.

    queries = load_queries("queries.jsonl", index)        # lines may carry a reference "answer"
    result = evaluate_answers(index, queries, answerer, k=5)
    print(format_answer_table([result]))

Per question: whether the normalised reference answer is contained in the answer (case, punctuation, articles and
spacing folded, English number words as digits), and in what the model wrote before the check (so the check's own
cost shows: a right answer it withdrew); leniently, whether the answer holds every term of the reference as the
index analyses words (an inflected or clitic form counts: German "weiß" for "weiße"); token F1 (characters for Japanese and Chinese), and for a
reference that states a figure (a filing's "$831 million"), whether the answer states it within 1% in any scale.
Per cited source: whether it holds gold (a gold chunk, a chunk of a gold document, or text overlapping a gold
span): citation precision. Per sentence: unsupported, or its citation corrected (localcr.answers.check). And the
refusal rate, seconds to the first token and in all.
"""
from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from localcr.answers.check import figures_with_scale
from localcr.evaluation.query_files import Query, QuerySet
from localcr.evaluation.reports import markdown_table
from localcr.evaluation.runner import progress_bar

_NUMBER_WORDS = dict(zip("zero one two three four five six seven eight nine ten eleven twelve".split(), map(str, range(13))))
_YEAR = re.compile(r"(19|20)\d\d")
FIGURE_TOLERANCE = 0.01
ESTIMATE_TOLERANCE = 0.3  # how far a time estimate may miss and still hold: ±30%


def normalise(text: str, language: str = "en") -> str:
    """Case, punctuation, articles and spacing folded; number words as digits ("Three" = "3", "drei" = "3",
    "三" = "3": localcr.answers.numerals, as the answer check reads them). No space beside a character of a script written
    without them (Han, kana, hangul): "1900 年" is "1900年", and "关系，或" (its comma a space) is "关系或"."""
    from localcr.lexical import BESIDE_CJK
    from localcr.answers.numerals import as_digits

    text = as_digits(unicodedata.normalize("NFKC", text), language).casefold()
    text = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return BESIDE_CJK.sub("", " ".join(_NUMBER_WORDS.get(word, word) for word in text.split()))


def contains(answer: str, reference: str, language: str = "en") -> bool:
    return normalise(reference, language) in normalise(answer, language)


def terms_contained(answer: str, reference: str, language: str = "en") -> bool:
    """A lenient `contains`: the answer contains the reference, or holds every term of it as the index analyses
    words (stemmed, stop words out, number words as digits): "weiß" holds the gold "weiße", "либеральной партии" holds
    "Либеральная партия", "مقسم" holds "المقسم". Reported beside `contains`, never in its place."""
    from localcr.lexical import tokenize
    from localcr.answers.numerals import as_digits

    def terms(text: str) -> set[str]:
        return set(tokenize(as_digits(unicodedata.normalize("NFKC", text), language), language))

    wanted = terms(reference)
    return contains(answer, reference, language) or bool(wanted) and wanted <= terms(answer)


def token_f1(answer: str, reference: str, language: str = "en") -> float:
    """Token F1 of the normalised texts; characters for languages written without spaces (ja, zh)."""
    def tokens(text: str) -> list[str]:
        text = normalise(text, language)
        return [c for c in text if not c.isspace()] if language in ("ja", "zh") else text.split()

    a, g = tokens(answer), tokens(reference)
    common = sum((Counter(a) & Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def key_figure(reference: str) -> float | None:
    """The first figure of a reference answer that is no year, its scale word applied ("$831 million" -> 831e6)."""
    found = [scaled for shown, _, scaled in figures_with_scale(reference.replace("$", " ")) if not _YEAR.fullmatch(shown)]
    return found[0] if found else None


def states_figure(answer: str, figure: float) -> bool:
    """Whether the answer states the figure within 1%, as written or in thousands, millions or billions, whatever
    its sign: references write a fall as "-$1561M", "decreased by $2.5bn" or "(1,561)", and key_figure keeps none."""
    for _, value, scaled in figures_with_scale(answer.replace("$", " ")):
        for candidate in {value, scaled, *(value * m for m in (1e3, 1e6, 1e9))}:
            if figure and abs(abs(candidate) - abs(figure)) <= FIGURE_TOLERANCE * abs(figure):
                return True
    return False


def holds_gold(hit: Any, query: Query) -> bool:
    """Whether a source (a hit) holds some of the query's gold: is a gold chunk, or a chunk of a gold document,
    or overlaps a gold span of its document."""
    for target in query.targets:
        if target.kind == "span":
            if hit.doc_id == target.id and hit.start < target.end and target.start < hit.end:
                return True
        elif (target.kind == "doc" and hit.doc_id == target.id) or hit.chunk_id == target.id \
                or (target.text is not None and hit.text.strip() == target.text):
            return True
    return False


@dataclass
class AnswerResult:
    """The means of one run of answers (percent where a share), and one row per question."""

    label: str
    n_questions: int
    metrics: dict[str, float | None]
    per_question: list[dict] = field(default_factory=list)


def score_answer(answer, query: Query, language: str) -> dict:
    """One question's scores (None where the gold gives nothing to score)."""
    reference = query.answer
    refused = answer.refused
    figure = key_figure(reference) if reference else None
    cited = answer.cited_sources
    sentences = answer.checked.sentences if answer.checked else []
    return {
        "contains": None if not reference else float(not refused and contains(answer.text, reference, language)),
        "draft_contains": None if not reference else float(contains(answer.draft, reference, language)),
        "terms": None if not reference else float(not refused and terms_contained(answer.text, reference, language)),
        "f1": None if not reference else (0.0 if refused else token_f1(answer.text, reference, language)),
        "figure": None if figure is None else float(not refused and states_figure(answer.text, figure)),
        "cited_gold": [holds_gold(source.hit, query) for source in cited],
        "unsupported": [not s.supported for s in sentences],
        "corrected": [bool(s.corrected) for s in sentences],
        "refused": float(refused),
        "first_token_s": None if answer.cached else answer.timings.get("first_token_s"),
        "total_s": None if answer.cached else answer.timings.get("total_s"),
        "estimate_held": estimate_held(answer.timings) if not answer.cached else None,
    }


def estimate_held(timings: dict) -> float | None:
    """Whether the time from the estimate `localcr ask` gave to the answer was within ESTIMATE_TOLERANCE of what it
    said, with its second try's where it asked again (None where no time was said: a cached answer, one with no
    source, a figure computed, an answer too short to announce one)."""
    estimated, at = timings.get("estimated_s"), timings.get("estimate_at_s")
    if not estimated or at is None or not timings.get("announced"):
        return None
    return float(abs((timings["total_s"] - at) / estimated - 1) <= ESTIMATE_TOLERANCE)


def evaluate_answers(index: Any, queries: QuerySet, answerer, *, k: int = 5, language: str | None = None,
                     label: str = "", progress: bool = True, on_answer=None, **search_options) -> AnswerResult:
    """Ask every query (its `answer`, where the file gives one, is the reference) and score the answers.
    language: how token F1 splits words (default: detected from the first query)."""
    from localcr.language import detect_within

    language = language or detect_within(queries.queries[0].text)
    rows = []
    for query in progress_bar(queries.queries, label or "answers", progress, unit="question"):
        answer = index.ask(query.text, k, answerer=answerer, **search_options)
        row = {"query_id": query.qid, "query": query.text, "reference": query.answer, "answer": answer.text,
               "citations": answer.checked.cited if answer.checked else [], **score_answer(answer, query, language)}
        rows.append(row)
        if on_answer is not None:
            on_answer(query, answer, row)
    return AnswerResult(label, len(rows), means(rows), rows)


def means(rows: list[dict]) -> dict[str, float | None]:
    def share(values: list) -> float | None:
        return 100 * statistics.mean(values) if values else None

    def of(name: str) -> list:
        return [row[name] for row in rows if row[name] is not None]

    flat = lambda name: [v for row in rows for v in row[name]]  # noqa: E731
    timed = lambda name: statistics.median(of(name)) if of(name) else None  # noqa: E731
    return {"contains": share(of("contains")), "draft_contains": share(of("draft_contains")), "terms": share(of("terms")),
            "f1": share(of("f1")), "figure": share(of("figure")),
            "figure_questions": len(of("figure")), "citation_precision": share(flat("cited_gold")),
            "unsupported": share(flat("unsupported")), "corrected": share(flat("corrected")),
            "refused": share(of("refused")), "first_token_s": timed("first_token_s"), "total_s": timed("total_s"),
            "estimate_held": share(of("estimate_held"))}


ANSWER_COLUMNS = [("contains", "contains gold %"), ("draft_contains", "model's text contains gold %"),
                  ("terms", "gold's terms in answer % (lenient)"), ("f1", "token F1"),
                  ("figure", "key figure %"),
                  ("citation_precision", "citation precision %"), ("unsupported", "unsupported sentences %"),
                  ("corrected", "citations corrected %"), ("refused", "refused %"),
                  ("first_token_s", "first token s (median)"), ("total_s", "total s (median)"),
                  ("estimate_held", "estimate within ±30% %")]


def format_answer_table(results: list[AnswerResult]) -> str:
    """A markdown table, a row per run; "cached" for timings when every answer came from the cache."""
    head = ["run", "questions", *(title for _, title in ANSWER_COLUMNS)]
    return markdown_table(head, [[r.label, str(r.n_questions), *answer_cells(r.metrics)] for r in results])


def answer_cells(metrics: dict) -> list[str]:
    """The ANSWER_COLUMNS of one run, as table cells."""
    return [_cell(name, metrics) for name, _ in ANSWER_COLUMNS]


def _cell(name: str, metrics: dict) -> str:
    value = metrics.get(name)
    if value is None:
        return "cached" if name.endswith("_s") else ""
    if name == "figure":
        return f"{value:.1f} (of {metrics['figure_questions']})"
    return f"{value:.1f}"

