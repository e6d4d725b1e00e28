"""Estimates that hold (issue 60): what localcr says its cards, LLM contexts, embedding and `localcr ask` will take
against what followed, before this machine has measured anything (typical rates) and after.

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/estimates.py \\
        --data /work/shared/data/financebench-dev/docs --docs 6

In a cache of its own (nothing measured yet), each kind of work runs twice, on two halves of the filings: the first
half's estimate has no rates of that work yet (typical ones; cards and contexts long enough measure the machine
first, a row says so with the seconds that took; the dense stage says nothing before it has a pace), its work
measures this machine; the second half's estimate uses what the first measured. Cards: the filings' cards. Contexts: the
per-chunk contexts of each filing's first --context-words words (the bundled 1.5B, eight side by side). Embedding:
a structural build of the filings, timed from its dense stage's start to its end. Answers: four questions about
the filings answered from passages of them, each estimate set against its time to the answer. Every estimate is
the figure localcr computes, before it is rounded for the user.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, parser, table  # noqa: E402

QUESTIONS = ("What was the company's total revenue for the fiscal year?", "What were the main risk factors?",
             "How much cash did operating activities provide?", "Who audited the financial statements?")


def halves(docs):
    half = len(docs) // 2
    return (("nothing measured", docs[:half]), ("measured", docs[half:]))


def cards(docs, spec, rows) -> None:
    from localcr.contexts.cards import CardWriter, write_cards
    from localcr.llm import LlamaRunner

    runner = LlamaRunner(spec)
    try:
        for label, part in halves(docs):
            said, asked = [], time.perf_counter()
            estimate = CardWriter(runner).seconds_for(part, said.append)
            began = time.perf_counter()
            write_cards(part, spec, runner=runner, progress=False, log=lambda m: None)
            measuring = f" (measured first, {began - asked:.1f} s)" if said else ""
            rows.append([f"cards, {label}{measuring}", len(part), estimate, time.perf_counter() - began])
    finally:
        runner.close()


def contexts(docs, spec, words: int, rows) -> None:
    """Each filing's opening `words` words as a document of its own, its chunks given LLM contexts."""
    from dataclasses import replace

    from localcr.chunking import chunk_document
    from localcr.contexts import run as R
    from localcr.embeddings import Embedder
    from localcr.models import load_registry
    from localcr.structure import structural_contexts

    counter = Embedder(load_registry().require("embedder")).count_tokens
    said: list[float] = []
    estimate = R.Run.estimate
    R.Run.estimate = lambda run, todo, log=None: said.append(estimate(run, todo, log)) or said[-1]  # what it says
    try:
        for label, part in halves(docs):
            openings = [replace(d, text=" ".join(d.text.split()[:words])) for d in part]
            chunks_by_doc = {d.doc_id: chunk_document(d, counter, 190, 24) for d in openings}
            for d in openings:
                structural_contexts(d, chunks_by_doc[d.doc_id])
            began = time.perf_counter()
            R.write_llm_contexts(openings, chunks_by_doc, spec, progress=False, log=lambda m: None)
            rows.append([f"contexts, {label}", sum(map(len, chunks_by_doc.values())), said[-1], time.perf_counter() - began])
    finally:
        R.Run.estimate = estimate


def embedding(docs, registry, work: Path, rows) -> None:
    """A structural build of each half, its dense stage timed; the estimate is the one the stage says (none before
    a stage has measured this machine's pace)."""
    from localcr import pipeline
    from localcr.index import build_index

    stages: list[list] = []
    embed_all = pipeline._embed_all

    def timed(stage_docs, batches, progress, log):
        rate = batches.made.model.recorded_rate()
        chunks = sum(len(batches.made.chunks_by_doc[d.doc_id]) for d in stage_docs)
        began = time.perf_counter()
        embed_all(stage_docs, batches, progress, log)
        stages.append([chunks * rate[1] / rate[0] if rate else None, time.perf_counter() - began])

    pipeline._embed_all = timed
    try:
        for n, (label, part) in enumerate(halves(docs)):
            stages.clear()
            summary = build_index([d.path for d in part], work / f"index-{n}", registry, contexts="structural",
                                  progress=False, log=lambda m: None)
            rows.append([f"embedding, {label}", summary.windows, stages[0][0], sum(took for _, took in stages)])
    finally:
        pipeline._embed_all = embed_all


def answers(docs, registry, rows) -> None:
    from localcr.answers.reader import load_answerer
    from localcr.search import Hit

    answerer = load_answerer(registry, log=lambda m: None)
    said: list[float] = []
    seconds_for = answerer.seconds_for
    answerer.seconds_for = lambda runner, *prompt: said.append(seconds_for(runner, *prompt)) or said[-1]  # unrounded
    try:
        for n, question in enumerate(QUESTIONS):
            doc = docs[n % len(docs)]
            hits = [Hit(f"{doc.doc_id}#{i}", doc.doc_id, doc.path, i, 3000 * i, 3000 * i + 1500, 1.0, {}, "",
                        doc.text[3000 * i:3000 * i + 1500]) for i in range(3)]
            began = time.perf_counter()
            for _event in answerer.stream(question, hits, fresh=True):
                pass
            rows.append([f"answer {n + 1}" + (", nothing measured" if n == 0 else ", measured"), 1, said[-1],
                         time.perf_counter() - began])
    finally:
        answerer.close()


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=6, help="how many filings (the first, by name)")
    p.add_argument("--context-words", type=int, default=1200, help="words of each filing given per-chunk LLM contexts")
    p.add_argument("--work-kinds", default="cards,contexts,embedding,answers", help="which kinds of work to estimate")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="estimates-", dir=args.work if args.work.is_dir() else None))
    os.environ["LOCALCR_CACHE_DIR"] = str(work / "cache")  # nothing measured yet
    from localcr.documents import load_paths
    from localcr.models import load_registry

    docs = load_paths([str(path) for path in sorted(args.data.glob("*.txt"))[: args.docs]]).documents
    registry = load_registry()
    rows: list[list] = []
    kinds = args.work_kinds.split(",")
    work_of = {"cards": lambda: cards(docs, registry.require("llm"), rows),
               "contexts": lambda: contexts(docs, registry.require("llm"), args.context_words, rows),
               "embedding": lambda: embedding(docs, registry, work, rows), "answers": lambda: answers(docs, registry, rows)}
    for kind in (k for k in work_of if k in kinds):
        done = len(rows)
        work_of[kind]()
        print(*rows[done:], sep="\n", flush=True)  # as it goes: a run stopped early keeps what it measured
    print(f"machine: {machine()}; load average {os.getloadavg()}")
    print(table(["work", "items", "estimated s", "took s", "took / estimated"],
                [row[:2] + [row[2] if row[2] else "none said"] + row[3:] + [f"{row[3] / row[2]:.2f}" if row[2] else "-"]
                 for row in rows]))


if __name__ == "__main__":
    main()
