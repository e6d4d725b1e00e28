"""Evidence before the LLM (`localcr.answers.evidence`): how often the sentences kept from an answer's top hits still hold
the gold, and how much less the model reads. No LLM runs here, so every question of a set can be measured.

    .venv/bin/python benchmarks/answers/evidence.py --data ../shared/data [--sets xquad-en,financebench-dev] [-k 3]
        [--budgets 300,600,900,1200,1800] [--limit N]

Each set is indexed with structural contexts (the index benchmarks/answers/answers.py reads, reused from --work), every
question searched with `localcr ask`'s defaults (k sources), and the hits' text pruned at each budget of
characters, with and without the embedder's vote. Gold held: XQuAD and JSQuAD: the normalised reference answer is
in the text; financebench-dev: a kept sentence overlaps a gold span (its character offsets in the filing). The
questions are split into two halves by a seeded shuffle: budgets are chosen on "tune" and reported on "held out".
The "whole" row is what the model read before: each hit's text cut to localcr.answers.SOURCE_CHARS around the
question's terms; "localcr's default" the budget `localcr ask` takes for those hits (localcr.answers.evidence.budget_for). Table to stdout and benchmarks/results/evidence[-SETS].md.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import indexed_sample, machine, parser, results_suffix, table  # noqa: E402

SETS = ("xquad-en", "financebench-dev")


def holds(query, hit, kept_text: str, kept_spans: list[tuple[int, int]]) -> bool:
    """Whether the kept text of one hit holds the query's gold: its answer (short-answer sets), or a gold span."""
    from localcr.evaluation.answers import contains

    spans = [t for t in query.targets if t.kind == "span"]
    if spans:
        return any(hit.doc_id == t.id and hit.start >= 0 and any(hit.start + a < t.end and t.start < hit.start + b
                                                                  for a, b in kept_spans) for t in spans)
    return bool(query.answer) and contains(kept_text, query.answer)


def measure(set_name: str, args) -> list[list]:
    from localcr.answers.reader import Answerer
    from localcr.answers.evidence import budget_for, render, select
    from localcr.language import detect

    registry, index, _, queries = indexed_sample(set_name, args.data, args.work, args.limit or None)
    halves = {"tune": queries[:len(queries) // 2], "held out": queries[len(queries) // 2:]}
    whole = Answerer(registry.require("llm", None))
    configs = [("whole", None, False), ("localcr's default", 0, False)] + [(f"{b} chars{' + embedder' if e else ''}", b, e)
                                          for b in args.budgets for e in args.embedder]
    rows = []
    for half, sample in halves.items():
        counts = {name: [0, 0] for name, _, _ in configs}  # gold held, characters read
        for query in sample:
            hits = index.search(query.text, args.k)
            matches = index.matches(query.text, hits)
            texts = [(h.window_text or h.text).strip() for h in hits]
            languages = [detect(t) for t in texts]
            for name, budget, embedder in configs:
                if budget is None:
                    shown = [whole._shown(h, m) for h, m in zip(hits, matches)]
                    found = any(holds(query, h, s, [_offsets(h.text, s)]) for h, s in zip(hits, shown))
                    chars = sum(map(len, shown))
                else:
                    chosen = select(query.text, texts, languages=languages,
                                    embedder=index.embedder if embedder else None,
                                    budget=budget or budget_for([h.structure for h in hits]))
                    shown = [render(t, kept) for t, kept in zip(texts, chosen)]
                    found = any(holds(query, h, s, [(x.start, x.end) for x in kept])
                                for h, s, kept in zip(hits, shown, chosen))
                    chars = sum(map(len, shown))
                counts[name][0] += found
                counts[name][1] += chars
        for name, _, _ in configs:
            held, chars = counts[name]
            rows.append([set_name, half, len(sample), name, f"{100 * held / len(sample):.1f}", f"{chars / len(sample):.0f}"])
    return rows


def _offsets(text: str, shown: str) -> tuple[int, int]:
    """Where a shown part lies in its chunk (for span gold): the whole chunk when it was not cut."""
    at = text.find(shown[:80])
    return (0, len(text)) if at < 0 else (at, at + len(shown))


HEAD = ["set", "half", "questions", "text read", "gold held %", "characters read (mean)"]


def main() -> None:
    import os

    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("-k", type=int, default=3, help="sources per question (default 3, as `localcr ask`)")
    p.add_argument("--budgets", default="300,600,900,1200,1800", help="characters kept over all sources, comma-separated")
    p.add_argument("--embedder", choices=("off", "on", "both"), default="both",
                   help="score sentences with the embedder's cosine too (default: both rows)")
    p.add_argument("--limit", type=int, default=0, help="questions per set (seeded; default all)")
    args = p.parse_args()
    args.budgets = [int(b) for b in args.budgets.split(",")]
    args.embedder = [False, True] if args.embedder == "both" else [args.embedder == "on"]
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    out = ROOT / "benchmarks" / "results" / f"evidence{results_suffix(args.sets, SETS)}.md"
    rows: list[list] = []
    for set_name in args.sets.split(","):
        rows += measure(set_name, args)
        text = f"machine: {machine()}\n\n" + table(HEAD, rows)
        out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
