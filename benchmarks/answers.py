"""Answers (`localcr ask`): are they right, do their citations hold, do they refuse when the documents are filtered
out, and what does a question cost on this CPU? No cloud judge: every score is computed from the sets' own gold.

    .venv/bin/python benchmarks/answers.py --data ../shared/data [--sets xquad-en,financebench-dev,anthropic-codebase]
        [--limit 40] [--llm qwen2.5-coder-1.5b] [-k 5] [--prompt cite] [--source-chars 1600] [--refusals 20]

Each set is indexed with structural contexts (no LLM at index time, so the run measures the answer step; the index
is reused from --work), a seeded sample of --limit questions asked with the defaults of `localcr ask`, and scored:

- short gold answers (XQuAD, JSQuAD): the normalised gold contained in the answer, and token F1 (characters for
  ja and zh);
- financebench-dev: the reference answer's key figure (its first number, scale words applied) found among the
  answer's figures within 1%, on the questions whose reference has one;
- every set: citation precision (a cited source holds gold: a gold chunk, or text overlapping a gold span; after
  localcr's check has corrected citations), the share of sentences marked unsupported and of those whose citation
  the check corrected, the refusal rate, and seconds to the first token and in all (medians over
  answers not served from the cache);
- refusal on filtered-out questions: --refusals of the sampled questions asked again with their gold documents
  excluded (`--glob '!DOC'`): the answer must refuse.

Answers are cached under --work, so a second run costs nothing (its timings then say "cached"; --fresh writes them
again, to time them on a quiet machine). Table to stdout and
benchmarks/results/answers[-SETS].md.
"""
from __future__ import annotations

import os
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, table  # noqa: E402
from long_documents import sources  # noqa: E402

from localcr.evaluation.answers import ANSWER_COLUMNS, answer_cells  # noqa: E402

SETS = ("xquad-en", "financebench-dev", "anthropic-codebase")
SEED = 2026


def gold_documents(index, query) -> list[str]:
    """The documents holding a query's gold: what a filter leaves out to make it unanswerable."""
    ids = {t.id for t in query.targets if t.kind in ("span", "doc")}
    rows = [index.store.row_of_chunk(t.id) for t in query.targets if t.kind == "chunk"]
    ids |= {record["doc_id"] for record in index.store.hit_records([r for r in rows if r is not None])}
    return sorted(ids)


def measure(set_name: str, args) -> list[list]:
    from dataclasses import replace

    from localcr import evaluation
    from localcr.answers import Answerer
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    source, queries_file = sources(set_directory(args.data, set_name))
    directory = args.work / "answers" / f"index-{set_name}-structural"
    build_index([source], directory, registry, contexts="structural", progress=False, log=lambda message: None)
    index = Index(directory, registry)
    queries = evaluation.load_queries(queries_file, index)
    sampled = list(queries.queries)
    random.Random(SEED).shuffle(sampled)
    sampled = sampled[:args.limit]
    spec = registry.require("llm", args.llm)
    answerer = Answerer(spec, prompt=args.prompt, source_chars=args.source_chars)
    language = "en" if set_name in ("anthropic-codebase", "financebench-dev") else None

    def show(query, answer, row):
        unsupported = sum(row["unsupported"])
        print(f"{set_name}: {query.text!r} gold {str(query.answer)[:60]!r} -> "
              f"{'refused' if answer.refused else answer.text[:300]!r}" + (f" ({unsupported} unsupported)" if unsupported else ""),
              file=sys.stderr)

    result = evaluation.evaluate_answers(index, replace(queries, queries=sampled), answerer, k=args.k, language=language,
                                         label=set_name, progress=False, on_answer=show, fresh=args.fresh)
    refused = [float(index.ask(q.text, args.k, answerer=answerer, glob=[f"!{doc}" for doc in gold_documents(index, q)]).refused)
               for q in sampled[:args.refusals]]
    answerer.close()
    return [[set_name, spec.name, args.prompt, args.k, result.n_questions, *answer_cells(result.metrics),
             f"{100 * statistics.mean(refused):.0f} (of {len(refused)})" if refused else ""]]


HEAD = ["set", "llm", "prompt", "k", "questions", *(title for _, title in ANSWER_COLUMNS), "refused when filtered out %"]


def llm_rates(llm: str | None) -> str:
    """The LLM's prompt and generation rates on this machine, as its last answers recorded them (localcr keeps the
    latest in its cache for its estimates): a figure of this CPU, for comparing timings across machines."""
    from localcr.contexts.rates import ANSWER, recorded_rates
    from localcr.llm import default_threads
    from localcr.models import load_registry

    spec = load_registry().require("llm", llm)
    rates = recorded_rates(spec, spec.n_threads or default_threads(), 1, ANSWER)
    if rates is None:
        return f"{spec.name}: no rates recorded yet (every answer came from the cache)"
    return (f"{spec.name} through llama.cpp here, as its last fresh answer ran: prompt {rates.prompt:.0f} tokens/s, "
            f"generation {rates.generate:.1f} tokens/s")


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--llm", help="the LLM that answers (default: models.toml's)")
    p.add_argument("--limit", type=int, default=40, help="questions sampled per set (seeded; default 40)")
    p.add_argument("-k", type=int, default=5, help="sources read per question (default 5, as `localcr ask`)")
    p.add_argument("--prompt", default=None, help="the answer prompt (localcr.answers.PROMPTS; default: localcr's)")
    p.add_argument("--source-chars", type=int, default=None, help="cut sources longer than this (default: localcr's)")
    p.add_argument("--refusals", type=int, default=10, help="of the sampled questions, how many are asked again with "
                   "their gold documents filtered out (default 10)")
    p.add_argument("--fresh", action="store_true", help="write every answer again (to time them), not from the cache")
    args = p.parse_args()
    from localcr.answers import DEFAULT_PROMPT, SOURCE_CHARS

    args.source_chars = args.source_chars or SOURCE_CHARS
    args.prompt = args.prompt or DEFAULT_PROMPT
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    chosen = args.sets
    out = ROOT / "benchmarks" / "results" / f"answers{results_suffix(chosen, SETS)}.md"
    rows: list[list] = []
    for set_name in chosen.split(","):
        rows += measure(set_name, args)
        text = f"machine: {machine()}\n{llm_rates(args.llm)}\n\n" + table(HEAD, rows)
        print(table(HEAD, rows[-1:]), file=sys.stderr)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
