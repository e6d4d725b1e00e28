"""The route of a question: computed from the sources' tables, or read by the LLM.

The evidence decides, not the question's words alone: a question is computed only when the sources its search
found hold a table (Markdown, HTML, DOCX, a sheet or a PDF's text rows) and, for arithmetic over it, a row the
question names; anything else goes straight to the reader, with no plan and no added wait. A computed answer
stands only where `checked` finds nothing wrong with it; otherwise it is withdrawn, and the reader's answer is
given with a note saying why.
"""
from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass

from localcr.answers import compute, figures
from localcr.answers.check import Checked, Sentence, named_years

# The largest percentage a share of a whole can be, and the largest change in percent that is plausible.
MAX_SHARE_PERCENT = 100.0
MAX_CHANGE_PERCENT = 10_000.0
_PERCENT_ASKED = re.compile(r"\bpercent(?:age)?\b|%|\bproportion\b|\bshare of\b|\bmargin\b|\bgrowth rate\b", re.I)
_SHARE_ASKED = re.compile(r"\b(?:as a |in )?(?:percent(?:age)?|proportion|share) of\b|\bmargin\b", re.I)
_CHANGE_ASKED = re.compile(r"\b(chang(?:e|es|ed)|increas\w*|decreas\w*|differen\w*|grew|growth|declin\w*)\b", re.I)
_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
_YEAR_RANGE = re.compile(r"((?:19|20)\d\d)\s*(?:-|–|to|through|and)\s*((?:19|20)\d\d)")


@dataclass
class Figure:
    """An operand as the check sees it: as written, where it was read, and the period it is of."""

    shown: str
    hit: object
    years: set[int]
    percent: bool
    dated: bool = True  # whether its column has a head (localcr.answers.tables.Cell.headed)


def answer_stream(index, question: str, hits: list, answerer, *, compute_answers: bool = True, fresh: bool = False,
                  search_options: dict):
    """`Index.ask_stream`'s events for a question whose hits are found: a computed answer where the evidence calls
    for one and it passes the check, else the reader's (localcr.answers.reader.Answerer.stream), its note saying
    why a computed one was withdrawn."""
    withdrawn = ""
    if compute_answers and hits:
        started = time.perf_counter()
        answer, withdrawn = computed_answer(index, question, hits, answerer, fresh=fresh, search_options=search_options)
        if answer is not None:
            took = round(time.perf_counter() - started, 3)
            answer.timings = {"first_token_s": took, "total_s": took}  # the whole answer comes at once
            yield "sources", answer.sources
            yield "text", answer.text
            yield "answer", answer
            return
    for event, value in answerer.stream(question, hits, matches=index.matches(question, hits), fresh=fresh,
                                        note=_unmatched(index, hits, search_options),
                                        topic=index.rare_terms(question), embedder=lambda: index.embedder):
        if event == "answer" and withdrawn:
            value.note = "; ".join(filter(None, [value.note, f"a computed answer was withdrawn ({withdrawn})"]))
        yield event, value


def _unmatched(index, hits: list, search_options: dict) -> str:
    if hits:
        return ""
    return index.unmatched(search_options.get("glob"), search_options.get("kind"), search_options.get("lang")) or ""


def computed_answer(index, question: str, hits: list, answerer, *, fresh: bool = False,
                    search_options: dict) -> tuple[object | None, str]:
    """(the computed Answer, "") where one stands; (None, why it was withdrawn) where one failed the check; (None,
    "") where there is no table to compute from, or no plan came of it. Two ways to compute: arithmetic over the
    hits' own tables, and a filing's figure read by line item across its documents (localcr.answers.figures). A
    filing's metric that the question defines or that the figures path knows (a DPO, a quick ratio) is its alone:
    where it finds no operand, a plan over whatever tables the hits hold computed something else (an inventory
    turnover from the income statement alone, its balance sheet filtered out)."""
    steps = (_from_filing,) if figures.filing_metric(question) else (_from_tables, _from_filing)
    withdrawn = ""
    for step in steps:
        answer, why = step(index, question, hits, answerer, fresh, search_options)
        if answer is not None:
            return answer, ""
        withdrawn = withdrawn or why
    return None, withdrawn


def _from_tables(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """Arithmetic over the hits' own tables, where the question asks for some and names a row of one."""
    if not compute.asks_for_computation(question):
        return None, ""
    named = compute.named_tables(question, compute.sources_tables(index, hits))
    if not named:
        return None, ""
    shown, cells = compute.shown_tables(named)
    formula = compute.plan(answerer.runner, question, shown, compute.grammar_of(cells), fresh=fresh)
    if formula and (missing := compute.missing_named(formula, cells)):
        cell = missing[0]
        return None, f"{cell.row}, {cell.column} says {cell.shown}: no figure to compute with"
    result = compute.evaluated(compute.oriented(compute.in_points(formula, cells), cells, question), cells) \
        if formula else None
    if result is None:
        return None, ""
    operands = [Figure(o.cell.shown, o.hit, o.cell.years, o.cell.percent, o.cell.headed) for o in result.operands]
    withdrawn = check(question, result.value, result.kind, operands, result.scale,
                      reach_back=bool(_AVERAGE.search(question))) or \
        not_averaged(question, result.formula) or plan_faults(question, result)
    return (None, withdrawn) if withdrawn else (table_answer(question, result, answerer.spec.name), "")


def _from_filing(index, question: str, hits: list, answerer, fresh: bool, search_options: dict):
    """A filing's figure read across its documents (localcr.answers.figures), each year's result checked."""
    work = figures.worked(index, question, hits, answerer, fresh=fresh, **search_options)
    if work is None:
        return None, ""
    for result in work.results:
        operands = [Figure(r.shown, r.hit, {r.operand.year}, r.percent) for r in result.readings]
        shown = figures.shown_result(question, result.formula, result.value, result.readings)
        kind = "percent" if shown.endswith("%") else "amount" if figures.is_amount(result.formula) else "ratio"
        value = float(shown.rstrip("%").split()[0].replace(",", "")) if kind == "percent" else result.value
        scale = shown.split()[1] if kind == "amount" and len(shown.split()) > 1 else ""
        if why := check(question, value, kind, operands, scale, reach_back=True, judged=True):
            return None, why
    return figures.answer_of(question, work.figure, work.results, answerer.spec.name, work.common), ""


def check(question: str, value: float, kind: str, operands: list[Figure], scale: str, *,
          reach_back: bool = False, judged: bool = False) -> str:
    """Why a computed result may not stand, or "" where it may: each operand is in the chunk it cites (as written,
    scale apart), of a period the question names (and of a known one: a column whose head was not found is of none)
    (judged: a filing's figure, which a judgement compares across years: "improved" asks for no change as such) (with reach_back, also the year before the first: an average
    balance of FY2019 opens in FY2018), the result of the kind the question asks for (a percentage, a change) and
    of a plausible size (a share of a whole within 100%, a per-share figure in no millions)."""
    for operand in operands:
        if not compute.holds(operand.hit.text, operand.shown):
            return f"{operand.shown} is not in the source it cites"
    years = asked_years(question)
    if years:
        allowed = set(range(min(years) - reach_back, max(years) + 1))
        for operand in operands:
            if operand.years and not operand.years & allowed:
                return f"{operand.shown} is of {'/'.join(map(str, sorted(operand.years)))}, not a year the question names"
            if not operand.years and not operand.dated:
                return f"the period of {operand.shown} is not known (its column has no head)"
    if _PERCENT_ASKED.search(question) and kind not in ("percent", "points") \
            and not re.search(r"percentage points?", question, re.I):
        return "the question asks for a percentage and the result is none"
    if not judged and _CHANGE_ASKED.search(question) and not _PERCENT_ASKED.search(question) and kind == "ratio":
        return "the question asks for a change and the result is a ratio"
    if _SHARE_ASKED.search(question) and kind == "percent" and abs(value) > MAX_SHARE_PERCENT:
        return f"a share of a whole cannot be {compute.number_shown(value)}%"
    if kind == "percent" and abs(value) > MAX_CHANGE_PERCENT:
        return f"{compute.number_shown(value)}% is no plausible percentage"
    if re.search(r"\bper (?:share|unit|employee|customer)\b", question, re.I) and scale in ("million", "billion",
                                                                                           "millions", "billions"):
        return f"a figure per share or per unit is not in {scale}"
    return ""


def not_averaged(question: str, formula: str) -> str:
    """Why a plan for an average is none ("a + b + c / 3" divides only the last), or ""."""
    if not _AVERAGE.search(question):
        return ""
    body = ast.parse(compute.placeholders(formula), mode="eval").body
    return "" if isinstance(body, ast.BinOp) and isinstance(body.op, ast.Div) else "the formula divides no sum"


def plan_faults(question: str, result: compute.Computed) -> str:
    """Why a plan does not compute what the question asks, or "": a figure compared with itself ("(795 - 795) /
    795"), or a percentage the question does not ask for (a "* 100" on an increase in a count)."""
    if len(result.operands) > 1 and len({(o.cell.row, o.cell.column) for o in result.operands}) == 1:
        return "the formula compares a figure with itself"
    if re.search(r"\*\s*100\b", result.formula) and not _PERCENT_ASKED.search(question) \
            and not re.search(r"\b(rate|ratio|margin)\b", question, re.I):
        return "the question asks for no percentage"
    return ""


def asked_years(question: str) -> set[int]:
    """The years a question names, a range ("2017-2019", "from 2017 to 2019") with the years inside it."""
    years = named_years(question)
    for first, last in _YEAR_RANGE.findall(question):
        low, high = sorted((int(first), int(last)))
        years |= set(range(low, high + 1)) if high - low <= 10 else set()
    return years


def table_answer(question: str, result: compute.Computed, model: str):
    """The computed answer: the result with its formula, then each operand with its row, column and source."""
    from localcr.answers.reader import Answer, Source

    sources: dict[str, Source] = {}
    for operand in result.operands:
        if operand.hit.chunk_id not in sources:
            sources[operand.hit.chunk_id] = Source(len(sources) + 1, operand.hit, operand.hit.text)
    cited = list(dict.fromkeys(sources[o.hit.chunk_id].number for o in result.operands))
    shown = compute.result_shown(result)
    sentences = [Sentence(f"{shown}, computed as {compute.formula_shown(result)} = {shown}.", cited, True)]
    for operand in _distinct(result.operands):
        source = sources[operand.hit.chunk_id]
        sentences.append(Sentence(f"{operand.cell.row}, {operand.cell.column}: {operand.cell.shown}"
                                  f"{f' (in {operand.cell.scale}s)' if operand.cell.scale else ''}.",
                                  [source.number], True))
        source.support = f"{operand.cell.row} {operand.cell.shown}"
    checked = Checked(sentences, [])
    count = len(sentences) - 1  # an operand's sentence each
    return Answer(question, checked.text, False, list(sources.values()), checked, model=model,
                  note=f"computed in Python from {count} figure{'s' if count > 1 else ''} of the sources' tables",
                  draft=result.formula)


def _distinct(operands: list[compute.Operand]) -> list[compute.Operand]:
    seen, out = set(), []
    for operand in operands:
        where = (operand.cell.row, operand.cell.column, operand.hit.chunk_id)
        if where not in seen:
            seen.add(where)
            out.append(operand)
    return out
