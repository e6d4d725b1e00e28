"""Contexts where contextual retrieval matters: long documents whose pages never name their subject.

    .venv/bin/python benchmarks/retrieval/long_documents.py --data ../shared/data [--sets financebench-dev]
        [--variants before,sections,cards-only,cards,auto] [--alphas 0.3,0.5,0.7] [--chunk-tokens 190]
    .venv/bin/python benchmarks/retrieval/long_documents.py --data ../shared/data --openings 250,500,1000 [--opening-docs 10]

Each set is indexed once per context variant, with localcr's own `build_index` (chunks, embedder and BM25 as a
user gets them), and scored with `localcr eval`'s code: span gold for financebench-dev (its evidence passages),
published gold chunks for the code and XQuAD sets. The variants:

* before: structural contexts as before 2026-11-25: no headings recognised in unmarked text (a PDF's text, a
  plain-text file), so a filing's chunks carry only the file name;
* sections: structural contexts as now: recognised headings ("Item 7. ...", title-case lines) as section paths;
* cards-only: a document card (one sentence by the LLM from the document's opening) + structural as before;
* cards: card + sections (`--contexts cards`; what `--contexts auto` gives a long untitled document);
* auto: localcr's default (`--contexts auto`): cards for long untitled prose, structural contexts for the rest.

Cards are written once (cached under --work) and their LLM seconds per document reported from that run; an index
an earlier run left under --work with the same settings is reused (its row says so).
With --openings, no index: cards of the first filings are written afresh from openings of each size, timed, and
checked against the company documents.json names (kept for analysis, never shown to the model). Rows give
hybrid Pass@1/5/10/20, token recall@10, Pass and token recall when the reader is shown READING_CHARS characters
(the fair comparison of chunk sizes: a larger chunk covers more of a span per hit and costs more reading) and the share of questions whose gold document is in the top 10 (spans) at
the default fusion; the oracle row beside it: Pass@5/10/20 when the search is restricted to the gold document
(`glob`, filtered before the cut: what a perfect router would leave, so passage ranking is seen apart from finding
the filing); and hybrid Pass@10 under each other fusion (dynamic, weighted at each --alphas, rrf). Tables go to
stdout and benchmarks/results/long_documents[-SETS].md, written after every row so that a stopped run keeps what
it measured.
"""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, sources, table  # noqa: E402

SETS = ("financebench-dev", "anthropic-codebase", "xquad-en", "xquad-de")
VARIANTS = {  # name: (context mode, headings recognised in unmarked text)
    "before": ("structural", False), "sections": ("structural", True),
    "cards-only": ("cards", False), "cards": ("cards", True), "auto": ("auto", True),
}
KS = (1, 5, 10, 20)
# Characters a reader is shown, for comparing chunk sizes fairly: a larger chunk finds more of a span per hit, and
# costs more reading per hit. About ten chunks of the default size (190 MiniLM tokens, ~750 characters of a filing).
READING_CHARS = 7500


@contextmanager
def recognised_headings(on: bool):
    """Structural contexts with or without headings recognised in unmarked text (off: as before 2026-11-25)."""
    from localcr import structure

    kept = structure._recognised
    if not on:
        structure._recognised = lambda doc: False
    try:
        yield
    finally:
        structure._recognised = kept


def fusion_configs(alphas: list[float]) -> list[str]:
    """The fusions each row scores: localcr's default first, then dynamic, weighted at each alpha, and rrf."""
    from localcr.search import DEFAULT_ALPHA, DEFAULT_FUSION

    every = ["dynamic", *[f"weighted,alpha={a:g}" for a in alphas], "rrf"]
    default = "weighted,alpha=" + f"{DEFAULT_ALPHA:g}" if DEFAULT_FUSION == "weighted" else DEFAULT_FUSION
    return [default] + [f for f in every if f != default]


def measure(set_name: str, source: str, queries_file: Path, variant: str, work: Path, fusions: list[str],
            chunk_tokens: int | None) -> list:
    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    mode, sections = VARIANTS[variant]
    registry = load_registry()
    directory = work / f"index-{set_name}-{variant}-{chunk_tokens or 'default'}"
    notes: list[str] = []
    started = time.perf_counter()
    with recognised_headings(sections):  # an index left by an earlier run with these settings is only brought up to date
        summary = build_index([source], directory, registry, contexts=mode, chunk_tokens=chunk_tokens,
                              progress=False, log=notes.append)
    seconds = time.perf_counter() - started
    index = Index(directory, registry)
    queries = evaluation.load_queries(queries_file, index)
    configs = [evaluation.parse_config(f"hybrid,fusion={f},name={f.replace(',alpha=', ' α ')}") for f in fusions]
    results = [r.metrics for r in evaluation.evaluate(index, queries, configs, KS, progress=False)]
    default = results[0]
    documents_found = _documents_found(index, queries_file, 10)
    oracle = _oracle(index, queries)
    reading = _at_equal_reading(index, queries)
    recall = default.get("token_recall@10")
    card_line = next((n for n in summary.card_summary.splitlines()), "") if summary.card_summary else ""
    return [set_name, variant, summary.chunks, *[100 * default[f"pass@{k}"] for k in KS],
            "" if recall is None else 100 * recall, reading, documents_found,
            " / ".join(f"{100 * oracle[f'pass@{k}']:.1f}" for k in KS[1:]) if oracle else "",
            *[100 * r["pass@10"] for r in results[1:]], f"{seconds:.0f}" if summary.added else "reused", _card_cost(card_line)]


def _oracle(index, queries) -> dict | None:
    """Mean metrics of the default search restricted to each question's gold documents (an oracle router); None
    for a set whose gold are chunks."""
    from localcr.evaluation.metrics import mean_metrics, score_ranking

    spans = [q for q in queries.queries if q.targets and all(t.kind == "span" for t in q.targets)]
    if not spans:
        return None
    scores = [score_ranking(index.search(q.text, k=KS[-1], glob=sorted({t.id for t in q.targets})), q.targets, KS)
              for q in spans]
    return mean_metrics(scores, KS)


def _at_equal_reading(index, queries) -> str:
    """"pass / token recall" of the default search when the reader is shown READING_CHARS characters: hits taken in
    order, the last cut to fit (so chunkings of every size are compared at the same reading); "" for chunk gold."""
    from types import SimpleNamespace

    from localcr.evaluation.span_metrics import first_ranks, token_metrics

    spans = [q for q in queries.queries if q.targets and all(t.kind == "span" for t in q.targets)]
    if not spans:
        return ""
    found = recall = 0.0
    for q in spans:
        shown, left = [], READING_CHARS
        for hit in index.search(q.text, k=100):
            if left <= 0:
                break
            shown.append(SimpleNamespace(doc_id=hit.doc_id, start=hit.start, end=min(hit.end, hit.start + left)))
            left -= hit.end - hit.start
        found += len(first_ranks(shown, q.targets)) / len(q.targets)
        recall += token_metrics(shown, q.targets, len(shown))[f"token_recall@{len(shown)}"]
    return f"{100 * found / len(spans):.1f} / {100 * recall / len(spans):.1f}"


def _documents_found(index, queries_file: Path, k: int) -> float | str:
    """Percent of span-gold questions whose gold document is among the top k hybrid hits (the document found,
    whether or not the passage is); "" for a set whose gold are chunks."""
    import json

    questions = [json.loads(line) for line in queries_file.read_text().splitlines() if line.strip()]
    questions = [q for q in questions if q.get("spans")]
    if not questions:
        return ""
    found = 0
    for q in questions:
        documents = {hit.doc_id for hit in index.search(q["query"], k=k)}
        found += any(doc in documents for doc, _, _ in q["spans"])
    return 100 * found / len(questions)


def _card_cost(line: str) -> str:
    """'12.3 s/doc (45 written, 0 fell back)' from a build's card summary; cached runs say so."""
    if not line:
        return ""
    written = line.split(" written")[0].rsplit(" ", 1)[-1]
    per_doc = line.rsplit(", ", 1)[-1].replace(" a document written", "/doc") if "a document written" in line else "cached"
    fell = line.split(" fell back")[0].rsplit(", ", 1)[-1]
    return f"{per_doc} ({written} written, {fell} fell back)"


def card_openings(set_dir: Path, openings: list[int], n_docs: int, work: Path) -> str:
    """How much of the opening a card needs, and what its cards say: for the first n_docs documents, cards written
    from each opening size (seconds per card on this machine, prompt tokens) and how many name the document's
    company, its kind (10-K, 10-Q, 8-K, earnings release) and its period's year as documents.json gives them (kept
    for analysis: never used to write a card). The last opening size's cards stay in the cache under --work (an
    index built there reuses them); each card, or the guard's reason, goes to benchmarks/results/cards.md."""
    import json

    from localcr.contexts.cards import CardStats, write_cards
    from localcr.documents import load_paths
    from localcr.llm import LlamaRunner
    from localcr.models import load_registry

    facts = {Path(d["id"]).name: d for d in json.loads((set_dir / "documents.json").read_text())["documents"]}
    docs = sorted(load_paths([set_dir / "docs"]).documents, key=lambda d: d.doc_id)[:n_docs]
    spec = load_registry().require("llm")
    runner = LlamaRunner(spec)
    rows, listing = [], []
    try:
        for opening in openings:
            stats = CardStats()
            cards = write_cards(docs, spec, runner=runner, use_cache=opening == openings[-1], opening_tokens=opening,
                                progress=False, stats=stats)
            named = [_naming(cards.get(d.doc_id, ""), facts[Path(d.doc_id).name]) for d in docs]
            rows.append([opening, len(docs), f"{stats.seconds / len(docs):.1f}", f"{stats.prompt_tokens / len(docs):.0f}",
                         f"{stats.generated_tokens / len(docs):.0f}", stats.fallbacks,
                         *[f"{sum(n[i] for n in named)}/{len(docs)}" for i in range(4)]])
            print(table(OPENING_HEAD, rows[-1:]), file=sys.stderr)
        listing = [[Path(d.doc_id).name, facts[Path(d.doc_id).name]["company"], facts[Path(d.doc_id).name]["doc_type"],
                    facts[Path(d.doc_id).name]["period"], cards.get(d.doc_id, "(none)").replace("|", "/")] for d in docs]
    finally:
        runner.close()
    (ROOT / "benchmarks" / "results" / "cards.md").write_text(
        f"machine: {machine()}\nopening tokens: {openings[-1]} (cards from the cache cost nothing here: their "
        "cost is the index build's)\n\n" + table(OPENING_HEAD, rows[-1:]) + "\n\n"
        + table(["file", "company", "form", "period", "card (none: the guard's fallback)"], listing) + "\n")
    return table(OPENING_HEAD, rows)


OPENING_HEAD = ["opening tokens", "documents", "s per card", "prompt tokens", "generated tokens", "fell back",
                "naming the company", "the kind", "the period's year", "all three"]


# The names the filings themselves use for two companies documents.json names otherwise.
ALIASES = {"AMD": "advanced micro devices", "Block": "square"}
# How a card may name each kind of filing documents.json lists.
KIND_WORDS = {"10k": ("10-k", "annual report"), "10q": ("10-q", "quarterly report"), "8k": ("8-k", "current report"),
              "earnings": ("earnings", "results", "press release", "news release")}


def _names(card: str, company: str) -> bool:
    """Whether a card names the company (its first word will do: "Best Buy" in "Best Buy Co., Inc. ...")."""
    card = card.lower()
    return company.split()[0].lower() in card or ALIASES.get(company, company.lower()) in card


def _naming(card: str, facts: dict) -> tuple[bool, bool, bool, bool]:
    """Whether a card names the company, the kind and the period's year of a filing (and all three)."""
    company = _names(card, facts["company"])
    kind = any(w in card.lower() for w in KIND_WORDS[facts["doc_type"].lower()])
    period = str(facts["period"]) in card
    return company, kind, period, company and kind and period


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated of {', '.join(VARIANTS)}")
    p.add_argument("--alphas", default="0.3,0.5,0.7", help="dense shares of weighted fusion to score Pass@10 at")
    p.add_argument("--chunk-tokens", type=int, help="chunk size in embedder tokens (default: localcr's)")
    p.add_argument("--openings", help="instead of indexes: card cost and naming by opening size, e.g. 500,1000 "
                   "(financebench-dev, the first --opening-docs documents)")
    p.add_argument("--opening-docs", type=int, default=10)
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    if args.openings:
        text = f"machine: {machine()}\n\n" + card_openings(set_directory(args.data, "financebench-dev"),
                                                            [int(o) for o in args.openings.split(",")], args.opening_docs, args.work)
        if len(args.openings.split(",")) > 1:  # the cost by opening size (a single size is the naming run: cards.md)
            (ROOT / "benchmarks" / "results" / "card_openings.md").write_text(text + "\n")
        print(text)
        return
    fusions = fusion_configs([float(a) for a in args.alphas.split(",") if a])
    head = ["set", "contexts", "chunks", *[f"hybrid P@{k}" for k in KS], "token recall@10",
            f"P / token recall at {READING_CHARS:,} characters", "gold document in top 10",
            "oracle P@5 / 10 / 20", *[f"P@10 {f.replace('weighted,alpha=', 'α ')}" for f in fusions[1:]], "index s",
            "LLM per card"]
    rows = []
    chunks = f"-chunks{args.chunk_tokens}" if args.chunk_tokens else ""
    out = ROOT / "benchmarks" / "results" / f"long_documents{results_suffix(args.sets, SETS)}{chunks}.md"
    for set_name in args.sets.split(","):
        source, queries_file = sources(set_directory(args.data, set_name))
        for variant in args.variants.split(","):
            rows.append(measure(set_name, source, queries_file, variant, args.work / "long-documents", fusions, args.chunk_tokens))
            print(table(head, rows[-1:]), file=sys.stderr)
            text = f"machine: {machine()}\n\n" + table(head, rows)
            out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
