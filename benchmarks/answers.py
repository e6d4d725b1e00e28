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

Answers are cached under --work, so a second run costs nothing (its timings then say "cached"). Table to stdout and
benchmarks/results/answers[-SETS].md.
"""
from __future__ import annotations

import json
import os
import random
import re
import statistics
import sys
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, table  # noqa: E402
from long_documents import sources  # noqa: E402

SETS = ("xquad-en", "financebench-dev", "anthropic-codebase")
SEED = 2026


def sample(queries_file: Path, limit: int) -> list[dict]:
    lines = [json.loads(line) for line in queries_file.read_text().splitlines() if line.strip()]
    random.Random(SEED).shuffle(lines)
    return lines[:limit]


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def tokens(text: str, language: str) -> list[str]:
    text = normalise(text)
    return [c for c in text if not c.isspace()] if language in ("ja", "zh") else text.split()


def token_f1(answer: str, gold: str, language: str) -> float:
    a, g = tokens(answer, language), tokens(gold, language)
    common = sum((Counter(a) & Counter(g)).values())
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def key_figure(reference: str) -> float | None:
    """The first figure of a reference answer, its scale word applied ("$831 million" -> 831e6)."""
    from localcr.citations import _figures

    found = [scaled for shown, value, scaled in _figures(reference.replace("$", " ")) if not _is_year(shown)]
    return found[0] if found else None


def _is_year(shown: str) -> bool:
    return bool(re.fullmatch(r"(19|20)\d\d", shown))


def figure_right(answer: str, figure: float) -> bool:
    """The figure among the answer's, within 1%, in any of the scales a filing states figures in."""
    from localcr.citations import _figures

    for _, value, scaled in _figures(answer.replace("$", " ")):
        for candidate in {value, scaled, *(value * m for m in (1e3, 1e6, 1e9))}:
            if figure and abs(candidate - figure) <= 0.01 * abs(figure):
                return True
    return False


def holds_gold(source: dict, query: dict, gold_docs: set[str], index) -> bool:
    if "spans" in query:  # span gold: the cited chunk overlaps a gold span of its document
        return any(Path(path).name == Path(source["path"]).name and source["start"] < end and start < source["end"]
                   for path, start, end in query["spans"])
    gold = {(uuid, int(i)) for uuid, i in query.get("golden_chunk_uuids", [])}
    external = index.store.hit_records([index.store.row_of_chunk(source["chunk_id"])])[0]
    return (external["external_id"], external["external_index"]) in gold


def gold_documents(query: dict) -> list[str]:
    if "spans" in query:
        return sorted({Path(path).name for path, _, _ in query["spans"]})
    return sorted({uuid for uuid, _ in query.get("golden_chunk_uuids", [])})


def measure(set_name: str, args) -> list[list]:
    from localcr.answers import Answerer
    from localcr.index import build_index
    from localcr.language import detect
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    source, queries_file = sources(set_directory(args.data, set_name))
    directory = args.work / "answers" / f"index-{set_name}-structural"
    build_index([source], directory, registry, contexts="structural", progress=False, log=lambda message: None)
    index = Index(directory, registry)
    spec = registry.require("llm", args.llm)
    answerer = Answerer(spec, prompt=args.prompt, source_chars=args.source_chars)
    questions = sample(queries_file, args.limit)
    language = "en" if set_name in ("anthropic-codebase", "financebench-dev") else detect(questions[0]["query"])
    scores: dict[str, list[float]] = {k: [] for k in ("contains", "f1", "figure", "precision", "unsupported", "corrected", "refused",
                                                      "first", "total", "refused_filtered")}
    for n, query in enumerate(questions, start=1):
        answer = index.ask(query["query"], args.k, answerer=answerer).to_dict()
        gold_docs = set(gold_documents(query))
        if answer["refused"]:
            scores["refused"].append(1.0)
        else:
            scores["refused"].append(0.0)
            cited = [s for s in answer["sources"] if s["number"] in answer["citations"]]
            scores["precision"] += [float(holds_gold(s, query, gold_docs, index)) for s in cited]
            scores["unsupported"] += [float(not s["supported"]) for s in answer["sentences"]]
            scores["corrected"] += [float(bool(s["corrected"])) for s in answer["sentences"]]
        reference = query.get("answer")
        if reference and set_name != "financebench-dev":
            scores["contains"].append(float(normalise(reference) in normalise(answer["answer"])) if not answer["refused"] else 0.0)
            scores["f1"].append(0.0 if answer["refused"] else token_f1(answer["answer"], reference, language))
        if reference and set_name == "financebench-dev" and (figure := key_figure(reference)) is not None:
            scores["figure"].append(0.0 if answer["refused"] else float(figure_right(answer["answer"], figure)))
        if not answer["cached"]:
            scores["first"].append(answer["timings"]["first_token_s"])
            scores["total"].append(answer["timings"]["total_s"])
        if n <= args.refusals:
            excluded = [f"!{doc}" for doc in gold_docs]
            filtered = index.ask(query["query"], args.k, answerer=answerer, glob=excluded).to_dict()
            scores["refused_filtered"].append(float(filtered["refused"]))
        unsupported = sum(not s["supported"] for s in answer["sentences"])
        print(f"{set_name} {n}/{len(questions)}: {query['query']!r} gold {str(reference)[:60]!r} -> "
              f"{'refused' if answer['refused'] else answer['answer'][:300]!r}"
              + (f" ({unsupported} unsupported)" if unsupported else ""), file=sys.stderr)
    answerer.close()
    mean = lambda values: 100 * statistics.mean(values) if values else ""  # noqa: E731
    median = lambda values: statistics.median(values) if values else "cached"  # noqa: E731
    return [[set_name, spec.name, args.prompt, args.k, len(questions), mean(scores["contains"]), mean(scores["f1"]),
             f"{mean(scores['figure']):.1f} (of {len(scores['figure'])})" if scores["figure"] else "",
             mean(scores["precision"]), mean(scores["unsupported"]), mean(scores["corrected"]), mean(scores["refused"]),
             f"{mean(scores['refused_filtered']):.0f} (of {len(scores['refused_filtered'])})" if scores["refused_filtered"] else "",
             median(scores["first"]), median(scores["total"])]]


HEAD = ["set", "llm", "prompt", "k", "questions", "contains gold %", "token F1", "key figure %", "citation precision %",
        "unsupported sentences %", "citations corrected %", "refused %", "refused when filtered out %", "first token s (median)", "total s (median)"]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--llm", help="the LLM that answers (default: models.toml's)")
    p.add_argument("--limit", type=int, default=40, help="questions sampled per set (seeded; default 40)")
    p.add_argument("-k", type=int, default=5, help="sources read per question (default 5, as `localcr ask`)")
    p.add_argument("--prompt", default="cite", help="the answer prompt (localcr.answers.PROMPTS)")
    p.add_argument("--source-chars", type=int, default=None, help="cut sources longer than this (default: localcr's)")
    p.add_argument("--refusals", type=int, default=10, help="of the sampled questions, how many are asked again with "
                   "their gold documents filtered out (default 10)")
    args = p.parse_args()
    from localcr.answers import SOURCE_CHARS

    args.source_chars = args.source_chars or SOURCE_CHARS
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    chosen = args.sets
    out = ROOT / "benchmarks" / "results" / f"answers{results_suffix(chosen, SETS)}.md"
    rows: list[list] = []
    for set_name in chosen.split(","):
        rows += measure(set_name, args)
        text = f"machine: {machine()}\n\n" + table(HEAD, rows)
        print(table(HEAD, rows[-1:]), file=sys.stderr)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
