"""Navigation by the outline (`localcr search --navigate`) on long filings: what it changes and what it costs.

    .venv/bin/python benchmarks/navigation.py --data ../shared/data [--documents 1,2] [--limit N] [--states 5]

financebench-dev is indexed as a user indexes it (the defaults: cards, recognised sections, statement titles), in
the directory benchmarks/long_documents.py and benchmarks/fusion.py use (an index either left under --work is
reused). Each question is searched with the default hybrid search, then with navigation over the first D documents
(each --documents value; the bundled LLM, replies cached per question and outline, so a second run costs nothing),
then with a navigator that names exactly the sections holding the question's gold span (what a perfect reader of
the outline would name: the most navigation can give), each also with the search restricted to the question's gold
filing (the oracle router of long_documents.py), and with how often the model named a section holding the gold. Rows:
Pass@5/10/20 and token recall@10, and the LLM seconds navigation spent a question (outline states read from the
cache where an earlier question left them). With --states N, the outline KV state of the first N filings is
measured: the outline's tokens, the seconds evaluating it takes, the seconds restoring its saved state takes, and
that state's size. Tables go to stdout and benchmarks/results/navigation.md.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, table  # noqa: E402
from long_documents import sources  # noqa: E402

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
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    index, queries_file = index_of(args.data, args.work)
    queries = evaluation.load_queries(queries_file, index)
    text = f"machine: {machine()}\n\n" + table(QUALITY_HEAD, quality(index, queries, [int(d) for d in args.documents.split(",")], args.limit))
    if args.states:
        text += "\n\n" + table(STATES_HEAD, states(index, args.states))
    (ROOT / "benchmarks" / "results" / "navigation.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
