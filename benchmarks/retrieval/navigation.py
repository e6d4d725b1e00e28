"""Navigation by the outline (`localcr search --navigate`) on long filings: what it changes and what it costs.

    .venv/bin/python benchmarks/retrieval/navigation.py --data ../shared/data [--documents 1,2] [--limit N] [--states 5]
        [--softer]

financebench-dev is indexed as a user indexes it (the defaults: cards, recognised sections, statement titles), in
the directory benchmarks/retrieval/long_documents.py and benchmarks/retrieval/fusion.py use (an index either left under --work is
reused). Each question is searched with the default hybrid search, then with navigation over the first D documents
(each --documents value; the bundled LLM, replies cached per question and outline, so a second run costs nothing),
then with a navigator that names exactly the sections holding the question's gold span (what a perfect reader of
the outline would name: the most navigation can give), each also with the search restricted to the question's gold
filing (the oracle router of long_documents.py), and with how often the model named a section holding the gold. Rows:
Pass@5/10/20 and token recall@10, and the LLM seconds navigation spent a question (outline states read from the
cache where an earlier question left them). With --states N, the outline KV state of the first N filings is
measured: the outline's tokens, the seconds evaluating it takes, the seconds restoring its saved state takes, and
that state's size. With --softer, the model's replies (cached by the run before: no LLM runs) are used in softer
ways than "its section first": only the section's first 1 or 3 chunks first; only its chunks already among the first
10, 20 or 50 candidates first; its chunks as a second ranking fused with the search's by RRF (k 60 and 10). Tables
go to stdout and benchmarks/results/navigation.md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, sources, table  # noqa: E402

KS = (5, 10, 20)


def index_of(data: Path, work: Path):
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    source, queries_file = sources(set_directory(data, "financebench-dev"))
    registry = load_registry()
    directory = work / "long-documents" / "index-financebench-dev-auto-default"
    build_index([source], directory, registry, progress=False, log=lambda message: None)
    return Index(directory, registry), queries_file


def gold_rows(index, q) -> set:
    """The rows of the chunks that overlap the question's gold spans."""
    rows = set()
    for t in q.targets:
        records = index.store.hit_records(list(index.store.rows_of_document(t.id)))
        rows |= {r["row"] for r in records if r["start"] < t.end and r["end"] > t.start}
    return rows


def gold_navigator(index):
    """A navigator that names the sections holding the current question's gold (`.gold` is set per question)."""
    from localcr.navigation import Navigator

    class GoldNavigator(Navigator):
        gold: set = set()

        def sections(self, question, about, entries):
            return [i for i, entry in enumerate(entries) if self.gold & set(entry.rows)]

    return GoldNavigator(index.registry.require("llm"))


def named_right(index, navigator, spans) -> int:
    """For how many questions the model named (cached) a section of the gold filing that holds the gold."""
    from localcr.navigation import about, outline, rows_of

    right = 0
    for q in spans:
        records = index.store.hit_records(list(index.store.rows_of_document(q.targets[0].id)))
        entries = outline(records)
        right += bool(set(rows_of(entries, navigator.sections(q.text, about(records), entries))) & gold_rows(index, q))
    return right


def quality(index, queries, documents: list[int], limit: int | None) -> list[list]:
    from localcr.evaluation.metrics import mean_metrics, score_ranking
    from localcr.evaluation.runner import progress_bar
    from localcr.navigation import load_navigator

    spans = [q for q in queries.queries if q.targets and all(t.kind == "span" for t in q.targets)][:limit]
    rows = []
    for d in [0, *documents, "gold"]:
        navigator = gold_navigator(index) if d == "gold" else load_navigator(index.registry, documents=d) if d else None
        started = time.perf_counter()
        try:
            plain, oracle = [], []
            for q in progress_bar(spans, f"navigate {d}" if d else "hybrid", True):
                if d == "gold":
                    navigator.gold = gold_rows(index, q)
                plain.append(score_ranking(index.search(q.text, k=KS[-1], navigate=navigator), q.targets, KS))
                gold = sorted({t.id for t in q.targets})
                oracle.append(score_ranking(index.search(q.text, k=KS[-1], glob=gold, navigate=navigator), q.targets, KS))
        finally:
            if navigator is not None:
                navigator.close()
        seconds = time.perf_counter() - started
        m, o = mean_metrics(plain, KS), mean_metrics(oracle, KS)
        cost = (f"{navigator.seconds / max(navigator.written, 1):.1f} s a question written ({navigator.written} written, "
                f"{navigator.outlines_evaluated} outlines read first)") if d and d != "gold" else ""
        if d == 1:
            cost += f"; named a section holding the gold for {named_right(index, navigator, spans)} of {len(spans)}"
        label = ("navigation to the gold's sections (upper bound)" if d == "gold" else
                 f"navigation, first {d} document{'s' if d > 1 else ''}" if d else "hybrid (default)")
        rows.append([label, len(spans),
                     *[f"{100 * m[f'pass@{k}']:.1f}" for k in KS], f"{100 * m['token_recall@10']:.1f}",
                     " / ".join(f"{100 * o[f'pass@{k}']:.1f}" for k in KS), f"{100 * o['token_recall@10']:.1f}",
                     cost, f"{seconds:.0f}"])
        print(table(QUALITY_HEAD, rows[-1:]), file=sys.stderr)
    return rows


QUALITY_HEAD = ["search", "questions", "P@5", "P@10", "P@20", "token recall@10", "oracle P@5 / 10 / 20",
                "oracle token recall@10", "LLM cost", "wall s (both searches)"]


SOFTER = ("top1", "top3", "cand10", "cand20", "cand50", "rrf60", "rrf10")


def softer(index, queries, limit: int | None) -> list[list]:
    """P@5/10/20 and token recall@10 when the navigated chunks (the model's cached replies) are used by each of
    SOFTER instead of ranking first."""
    from localcr.evaluation.metrics import mean_metrics, score_ranking
    from localcr.navigation import load_navigator
    from localcr.search import Index, rrf

    spans = [q for q in queries.queries if q.targets and all(t.kind == "span" for t in q.targets)][:limit]
    first = Index._navigated
    rows = []
    for variant in SOFTER:
        def navigated(self, query, order, navigator, how, variant=variant):
            _, named = first(self, query, order, navigator, how)
            if variant.startswith("rrf"):
                fused = rrf({"search": order, "navigated": named}, k=int(variant[3:]))
                return sorted(fused, key=lambda row: (-fused[row], row)), named
            if variant.startswith("top"):
                named = named[: int(variant[3:])]
            else:  # candN: only named chunks among the search's first N
                pool = set(order[: int(variant[4:])])
                named = [row for row in named if row in pool]
            head = set(named)
            return named + [row for row in order if row not in head], named

        Index._navigated = navigated
        navigator = load_navigator(index.registry)
        try:
            m = mean_metrics([score_ranking(index.search(q.text, k=KS[-1], navigate=navigator), q.targets, KS)
                              for q in spans], KS)
        finally:
            Index._navigated = first
            navigator.close()
        rows.append([variant, *[f"{100 * m[f'pass@{k}']:.1f}" for k in KS], f"{100 * m['token_recall@10']:.1f}",
                     navigator.written])
        print(table(SOFTER_HEAD, rows[-1:]), file=sys.stderr)
    return rows


SOFTER_HEAD = ["the first filing's named section, used as", "P@5", "P@10", "P@20", "token recall@10",
               "replies written now"]


def states(index, n: int) -> list[list]:
    """For the first n filings: the outline's tokens, seconds to evaluate it from nothing, seconds to restore its
    saved KV state, and the state's size."""
    from localcr.llm import LlamaRunner
    from localcr.navigation import SYSTEM, about, outline, render_outline

    runner = LlamaRunner(index.registry.require("llm"))
    rows = []
    try:
        for doc_id in sorted(index.store.doc_ids())[:n]:
            records = index.store.hit_records(list(index.store.rows_of_document(doc_id)))
            entries = outline(records)
            prefix, _ = runner.render(render_outline(about(records), entries) + "\n", "", SYSTEM)
            runner.llm.reset()
            runner.llm._ctx.kv_cache_clear()
            started = time.perf_counter()
            state = runner.prefix_state(prefix)
            evaluated = time.perf_counter() - started
            started = time.perf_counter()
            assert runner.restore_prefix(prefix, state)
            restored = time.perf_counter() - started
            rows.append([doc_id, len(entries), len(prefix), f"{evaluated:.1f}", f"{restored:.2f}",
                         f"{len(state) / 2**20:.1f}"])
            print(table(STATES_HEAD, rows[-1:]), file=sys.stderr)
    finally:
        runner.close()
    return rows


STATES_HEAD = ["filing", "outline sections", "outline tokens (with the instruction)", "evaluate s",
               "restore s", "state MiB"]


def main() -> None:
    from localcr import evaluation

    p = parser(__doc__.split("\n")[0])
    p.add_argument("--documents", default="1", help="numbers of first documents navigated, comma-separated (e.g. 1,2)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--states", type=int, default=0, help="also measure the outline KV state of the first N filings")
    p.add_argument("--softer", action="store_true", help="only the softer uses of the cached replies (results/navigation-softer.md)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    index, queries_file = index_of(args.data, args.work)
    queries = evaluation.load_queries(queries_file, index)
    if args.softer:
        text = f"machine: {machine()}\n\n" + table(SOFTER_HEAD, softer(index, queries, args.limit))
        (ROOT / "benchmarks" / "results" / "navigation-softer.md").write_text(text + "\n")
        print(text)
        return
    text = f"machine: {machine()}\n\n" + table(QUALITY_HEAD, quality(index, queries, [int(d) for d in args.documents.split(",")], args.limit))
    if args.states:
        text += "\n\n" + table(STATES_HEAD, states(index, args.states))
    (ROOT / "benchmarks" / "results" / "navigation.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
