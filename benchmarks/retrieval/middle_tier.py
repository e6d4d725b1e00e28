"""A middle tier of contexts for the chunks that cannot say what they are: does one LLM sentence for each chunk that
is mostly numbers (a statement's rows, a table), written from the document's card, the chunk's section and the
chunk alone (no document prefix: seconds a chunk, not minutes), find those passages better, and what does it cost?

    .venv/bin/python benchmarks/retrieval/middle_tier.py --data ../shared/data [--docs doc-014,doc-016,doc-059,doc-072]
    .venv/bin/python benchmarks/retrieval/middle_tier.py --data ../shared/data --whole-set   # its cost on all 45 filings

On a subset of financebench-dev (the filings --docs names, and the questions whose gold lies in them): the filings
are indexed as a new user's `localcr index` does (`--contexts auto`: cards, recognised sections and statement
titles), then again with each numeric chunk's context followed by the LLM's sentence (through `--contexts-from`,
so nothing else differs). Rows give hybrid Pass@5/10/20 and token recall@10, and the LLM's seconds a chunk on this
CPU; the sentences are cached under --work (a second run measures the search only) and listed in
benchmarks/results/middle_tier_sentences.md. Table to stdout and benchmarks/results/middle_tier.md.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, table  # noqa: E402

DOCS = "doc-014,doc-016,doc-059,doc-072"  # the shortest filings holding two or more questions' gold
KS = (1, 5, 10, 20)
NUMERIC_SHARE = 0.25  # a chunk with this share of numbers among its words (or dashes for none) is a table: the gold
# passages of financebench-dev lie at 0.27-0.56 (their statements name line items in words), a 10-K's median at 0.02
NUMBER = re.compile(r"^[(\[$€£]*[-+]?[\d.,]*\d[\d.,]*[)%\]]*$|^[—–-]+$")
VERSION = "middle-2026.1"
SYSTEM = "You label passages of long documents so that a search can find them."
REQUEST = ("Below is a passage, mostly numbers, from the document the card names, in the section given. Write one "
           "sentence saying what the passage shows: which statement or table, which line items, which periods or "
           "units. Answer with the sentence only.\n\n")
MAX_TOKENS = 48


def numeric_share(text: str) -> float:
    words = text.split()
    return sum(bool(NUMBER.match(w)) for w in words) / len(words) if words else 0.0


def subset(set_dir: Path, names: list[str], work: Path) -> tuple[Path, Path]:
    """A folder holding copies of the named filings (their ids stay docs/doc-NNN.txt) and the questions of them."""
    docs = work / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    docs.mkdir(parents=True)
    for name in names:
        shutil.copy(set_dir / "docs" / f"{name}.txt", docs)
    ids = {f"docs/{n}.txt" for n in names}
    lines = [line for line in (set_dir / "queries.jsonl").read_text().splitlines()
             if line.strip() and all(s[0] in ids for s in json.loads(line)["spans"])]
    queries = work / "queries.jsonl"
    queries.write_text("\n".join(lines) + "\n")
    return docs, queries


def sentences(records: list[dict], spec) -> tuple[dict[str, str], float, int]:
    """chunk_id -> the LLM's sentence for each record, cached; and the seconds and count of those written now."""
    from localcr.cache import key, open_cache, tag
    from localcr.llm import LlamaRunner

    keys = {r["chunk_id"]: key(VERSION, spec.fingerprint(), r["context"], r["text"]) for r in records}
    out, seconds, written = {}, 0.0, 0
    runner = None
    with open_cache("contexts") as cache:
        todo = []
        for r in records:
            hit = cache.get(keys[r["chunk_id"]])
            if isinstance(hit, str):
                out[r["chunk_id"]] = hit
            else:
                todo.append(r)
        if todo:
            runner = LlamaRunner(spec, parallel=4)
            prefix, _ = runner.render(REQUEST, "", SYSTEM)
        for at in range(0, len(todo), 4):
            group = todo[at:at + 4]
            suffixes = [runner.render(REQUEST, f"Card and section: {r['context']}\n\nPassage:\n{r['text']}", SYSTEM)[1] for r in group]
            started = time.perf_counter()
            done = runner.complete_many(prefix, suffixes, max_tokens=MAX_TOKENS, stops=("\n\n",))
            seconds += time.perf_counter() - started
            written += len(group)
            for r, d in zip(group, done):
                out[r["chunk_id"]] = d.text.strip()
                cache.set(keys[r["chunk_id"]], out[r["chunk_id"]], tag(spec.name, VERSION))
            print(f"  {written}/{len(todo)} sentences, {seconds / written:.1f} s a chunk", file=sys.stderr)
    if runner is not None:
        runner.close()
    return out, seconds, written


def whole_set(directory: Path, seconds: float) -> str:
    """How many chunks of each filing of an index are numeric, and the hours their sentences would take."""
    from collections import Counter

    from localcr.search import Index

    if not directory.is_dir():
        raise SystemExit(f"{directory}: no index; run benchmarks/retrieval/long_documents.py --sets financebench-dev --variants auto first")
    store = Index(directory).store
    numeric = Counter(r["doc_id"] for r in store.hit_records(list(range(store.n_chunks)))
                      if numeric_share(r["text"]) >= NUMERIC_SHARE)
    total = sum(numeric.values())
    return (f"machine: {machine()}\n{store.n_chunks} chunks, {total} numeric in {len(numeric)} filings "
            f"({min(numeric.values())}-{max(numeric.values())} a filing); at {seconds} s a chunk: "
            f"{total * seconds / 3600:.1f} h, {min(numeric.values()) * seconds / 60:.0f}-{max(numeric.values()) * seconds / 60:.0f} min a filing")


def evaluate(directory: Path, queries_file: Path, registry) -> list:
    from localcr import evaluation
    from localcr.search import Index

    index = Index(directory, registry)
    queries = evaluation.load_queries(queries_file, index)
    metrics = evaluation.evaluate(index, queries, [evaluation.parse_config("hybrid")], KS, progress=False)[0].metrics
    return [len(queries), *[100 * metrics[f"pass@{k}"] for k in KS], 100 * metrics["token_recall@10"]]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--docs", default=DOCS, help=f"comma-separated financebench-dev file names (default {DOCS})")
    p.add_argument("--whole-set", action="store_true", help="instead: count the numeric chunks of all 45 filings in the "
                   "default index benchmarks/retrieval/long_documents.py leaves under --work, and what their sentences would cost")
    p.add_argument("--seconds", type=float, default=11.8, help="with --whole-set: LLM seconds a numeric chunk (this "
                   "script's measured figure on the subset)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    if args.whole_set:
        print(whole_set(args.work / "long-documents" / "index-financebench-dev-auto-default", args.seconds))
        return
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    work = args.work / "middle-tier"
    docs, queries = subset(set_directory(args.data, "financebench-dev"), args.docs.split(","), work)
    quiet = {"progress": False, "log": lambda message: None}
    build_index([str(docs)], work / "index-auto", registry, contexts="auto", rebuild=True, **quiet)
    store = Index(work / "index-auto", registry).store
    records = store.hit_records(list(range(store.n_chunks)))
    numeric = [r for r in records if numeric_share(r["text"]) >= NUMERIC_SHARE]
    written, seconds, count = sentences(numeric, registry.require("llm"))
    imported = work / "middle.jsonl"
    imported.write_text("".join(json.dumps({"chunk_id": r["chunk_id"], "context": f"{r['context']} {written[r['chunk_id']]}".strip()}) + "\n"
                                for r in numeric))
    build_index([str(docs)], work / "index-middle", registry, contexts="auto", contexts_from=imported, rebuild=True, **quiet)
    cost = f"{seconds / count:.1f}" if count else "cached"
    head = ["contexts", "chunks", "numeric chunks", "questions", *[f"hybrid P@{k}" for k in KS], "token recall@10",
            "LLM s per numeric chunk"]
    rows = [["auto (cards, sections, statement titles)", len(records), "", *evaluate(work / "index-auto", queries, registry), ""],
            ["auto + a sentence for each numeric chunk", len(records), len(numeric),
             *evaluate(work / "index-middle", queries, registry), cost]]
    text = f"machine: {machine()}\nfilings: {args.docs}\n\n" + table(head, rows)
    (ROOT / "benchmarks" / "results" / "middle_tier.md").write_text(text + "\n")
    (ROOT / "benchmarks" / "results" / "middle_tier_sentences.md").write_text(
        table(["chunk", "numbers among its words", "sentence"],  # the filings' own text stays out (their licence)
              [[r["chunk_id"], f"{numeric_share(r['text']):.2f}", written[r["chunk_id"]].replace("|", "/")] for r in numeric]) + "\n")
    print(text)


if __name__ == "__main__":
    main()
