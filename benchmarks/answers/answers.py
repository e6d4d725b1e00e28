"""Answers (`localcr ask`): are they right, do their citations hold, do they refuse when the documents are filtered
out, and what does a question cost on this CPU? No cloud judge: every score is computed from the sets' own gold.

    .venv/bin/python benchmarks/answers/answers.py --data ../shared/data [--sets xquad-en,financebench-dev,anthropic-codebase]
        [--limit 100] [--llm qwen2.5-coder-1.5b] [-k 3] [--prompt cite] [--evidence-chars 600] [--refusals 20]

Each set is indexed with structural contexts (no LLM at index time, so the run measures the answer step; the index
is reused from --work), a seeded sample of --limit questions asked with the defaults of `localcr ask`, and scored
on each half of the sample: "tune" (the first half, where defaults are chosen) and "held out" (reported beside it):

- short gold answers (XQuAD, JSQuAD): the normalised gold contained in the answer, and in the model's own text
  before the check, and token F1 (characters for ja and zh);
- financebench-dev: the reference answer's key figure (its first number, scale words applied) found among the
  answer's figures within 1%, on the questions whose reference has one; and a row per question type (all the
  sampled questions of that type, where the sample mixes types);
- financebench-heldout (benchmarks/data/: computed-metric questions written for issue 58 over the same filings,
  scored on financebench-dev's index): the same, in one row: no default is chosen on it, so it has no tuning half;
- every set: citation precision (a cited source holds gold: a gold chunk, or text overlapping a gold span; after
  localcr's check has corrected citations), the share of sentences marked unsupported and of those whose citation
  the check corrected, the refusal rate, seconds to the first token and in all (medians over
  answers not served from the cache), and the share of those answers whose time after `localcr ask`'s estimate was
  within ±30% of what it said;
- refusal on filtered-out questions: --refusals of the sampled questions asked again with their gold documents
  excluded (`--glob '!DOC'`): the answer must refuse.

Answers are cached under --work, so a second run costs nothing (its timings then say "cached"; --fresh writes them
again, to time them on a quiet machine). Table to stdout and
benchmarks/results/answers[-SETS].md; each answer as a line on stderr, and with --answers FILE as a JSON line (its
set, its place in the sample, the question, gold, answer, the model's text, the note, each source's text as the
model read it, its scores and, where written afresh, its timings), for reading the misses of one half without
parsing the printed lines.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import gold_documents, indexed_sample, machine, parser, results_suffix, table  # noqa: E402

from localcr.evaluation.answers import ANSWER_COLUMNS, answer_cells, means  # noqa: E402

SETS = ("xquad-en", "financebench-dev", "anthropic-codebase")
HELD_OUT_SETS = ("financebench-heldout",)  # no default is chosen on them: scored whole, without a tuning half


def measure(set_name: str, args) -> list[list]:
    from dataclasses import replace

    from localcr import evaluation
    from localcr.answers.reader import Answerer
    from localcr.answers.check import CITATION

    registry, index, queries, sampled = indexed_sample(set_name, args.data, args.work, args.limit, args.contexts)
    spec = registry.require("llm", args.llm)
    answerer = Answerer(spec, prompt=args.prompt, source_chars=args.source_chars, evidence_chars=args.evidence_chars)
    language = "en" if set_name in ("anthropic-codebase", "financebench-dev", *HELD_OUT_SETS) else None

    placed = iter(range(len(sampled)))

    def show(query, answer, row):
        if args.answers:
            with open(args.answers, "a", encoding="utf-8") as out:
                out.write(json.dumps({"set": set_name, "place": next(placed), "question": query.text,
                                      "gold": query.answer, "answer": answer.text, "refused": answer.refused,
                                      "draft": answer.draft, "note": answer.note,
                                      "sources": [source.shown for source in answer.sources],
                                      "scores": {name: row[name] for name in ("contains", "draft_contains", "figure")},
                                      "timings": {} if answer.cached else answer.timings},
                                     ensure_ascii=False) + "\n")
        unsupported = sum(row["unsupported"])
        draft = " ".join(answer.draft.split())  # what the model wrote, where the check changed more than citations
        changed = answer.refused or CITATION.sub("", draft) != CITATION.sub("", " ".join(answer.text.split()))
        print(f"{set_name}: {query.text!r} gold {str(query.answer)[:60]!r} -> "
              f"{'refused' if answer.refused else answer.text[:300]!r}" + (f" ({unsupported} unsupported)" if unsupported else "")
              + (f" (model wrote {draft[:300]!r}{'; ' + answer.note if answer.note else ''})" if draft and changed else ""),
              file=sys.stderr)

    result = evaluation.evaluate_answers(index, replace(queries, queries=sampled), answerer, k=args.k, language=language,
                                         label=set_name, progress=False, on_answer=show, fresh=args.fresh)
    refused = []
    for query in sampled[:args.refusals]:
        answer = index.ask(query.text, args.k, answerer=answerer, glob=[f"!{doc}" for doc in gold_documents(index, query)])
        refused.append(float(answer.refused))
        if not answer.refused:  # an answer from the other documents: right (a later filing repeats a figure) or not
            print(f"{set_name}: answered with its gold documents filtered out: {query.text!r} -> {answer.text[:300]!r}",
                  file=sys.stderr)
    answerer.close()
    if set_name in HELD_OUT_SETS:
        halves = {"held out (all)": result.per_question}
    else:
        halves = {"tune": result.per_question[:len(sampled) // 2], "held out": result.per_question[len(sampled) // 2:]}
    kinds = question_types(queries.path, result.per_question)
    for kind, rows in kinds.items() if len(kinds) > 1 else ():
        halves[f"all: {kind}"] = rows
    filtered = f"{100 * statistics.mean(refused):.0f} (of {len(refused)})" if refused else ""
    return [[set_name, half, spec.name, args.prompt, args.evidence_chars, args.k, len(rows), *answer_cells(means(rows)),
             filtered] for half, rows in halves.items() if rows]


def question_types(path, rows: list[dict]) -> dict[str, list[dict]]:
    """The rows of each question type, where the set's query file gives one (financebench-dev: metrics-generated,
    domain-relevant, novel-generated): a row each in the table, so computed metrics and judgements are seen apart."""
    import json

    kinds = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                if "question_type" in record:
                    kinds[str(record.get("id", record.get("_id")))] = record["question_type"]
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        if row["query_id"] in kinds:
            grouped.setdefault(kinds[row["query_id"]], []).append(row)
    return dict(sorted(grouped.items()))


HEAD = ["set", "half", "llm", "prompt", "evidence chars", "k", "questions", *(title for _, title in ANSWER_COLUMNS), "refused when filtered out %"]


def llm_rates(llm: str | None) -> str:
    """The LLM's prompt and generation rates on this machine, as its last answers recorded them (localcr keeps the
    latest in its cache for its estimates): a figure of this CPU, for comparing timings across machines."""
    from localcr.contexts.rates import ANSWER, recorded_rates
    from localcr.threads import default_threads
    from localcr.models import load_registry

    spec = load_registry().require("llm", llm)
    rates = recorded_rates(spec, spec.n_threads or default_threads(), 1, ANSWER)
    if rates is None:
        return f"{spec.name}: no rates recorded yet (every answer came from the cache)"
    return (f"{spec.name} through llama.cpp here, as its last fresh answer ran: prompt {rates.prompt:.0f} tokens/s, "
            f"generation {rates.generate:.1f} tokens/s")


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)}; also "
                   f"{','.join(HELD_OUT_SETS)}: questions no default was tuned on, benchmarks/data/)")
    p.add_argument("--llm", help="the LLM that answers (default: models.toml's)")
    p.add_argument("--limit", type=int, default=40, help="questions sampled per set (seeded; default 40)")
    p.add_argument("-k", type=int, default=None, help="sources read per question (default: `localcr ask`'s)")
    p.add_argument("--evidence-chars", type=int, default=None,
                   help="characters of evidence the model reads (0: whole hits, as before; default: localcr's)")
    p.add_argument("--prompt", default=None, help="the answer prompt (localcr.answers.PROMPTS; default: localcr's)")
    p.add_argument("--source-chars", type=int, default=None, help="cut sources longer than this (default: localcr's)")
    p.add_argument("--refusals", type=int, default=10, help="of the sampled questions, how many are asked again with "
                   "their gold documents filtered out (default 10)")
    p.add_argument("--contexts", choices=("structural", "auto"), default="structural",
                   help="the index's contexts: structural (no LLM at index time; default) or auto (`localcr index`'s "
                        "default: a card for each long untitled report, written by the LLM once and cached)")
    p.add_argument("--fresh", action="store_true", help="write every answer again (to time them), not from the cache")
    p.add_argument("--answers", type=Path, help="append each answer to this file as a JSON line")
    args = p.parse_args()
    from localcr.answers.reader import DEFAULT_PROMPT, DEFAULT_SOURCES, SOURCE_CHARS
    from localcr.answers.evidence import BUDGET_CHARS

    args.k = args.k or DEFAULT_SOURCES
    args.evidence_chars = BUDGET_CHARS if args.evidence_chars is None else args.evidence_chars

    args.source_chars = args.source_chars or SOURCE_CHARS
    args.prompt = args.prompt or DEFAULT_PROMPT
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    chosen = args.sets
    suffix = results_suffix(chosen, SETS) + ("" if args.contexts == "structural" else f"-{args.contexts}")
    out = ROOT / "benchmarks" / "results" / f"answers{suffix}.md"
    rows: list[list] = []
    for set_name in chosen.split(","):
        rows += measure(set_name, args)
        text = f"machine: {machine()}\n{llm_rates(args.llm)}\n\n" + table(HEAD, rows)
        print(table(HEAD, rows[-2:]), file=sys.stderr)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
