"""Cards kept, by kind of document: how many of the documents that want a card (`--contexts auto`) keep one.

    .venv/bin/python benchmarks/retrieval/cards_by_kind.py --data ../shared/data [--sets financebench-dev] [--corpus NAME=PATH ...]
        [--limit N] [--titled]

Each set's documents are read as `localcr index` reads them; those that want a card (long untitled prose,
localcr.contexts.cards.wants_card) get one from the bundled LLM (cached under --work: a second run judges the
cached outputs again, at no LLM cost), judged by the guard as it is now. A --corpus is any folder or pre-chunked
corpus (e.g. documentation pages). Rows: documents, wanting a card, kept, fell back with the guard's reasons, and
seconds a card written; every card (or the guard's reason) goes to benchmarks/results/cards_by_kind[-SETS].md. With
--limit, the first N documents that want a card, by id. With --titled, long prose that has a title of its own is
carded too (a message's subject, an e-book's title: "auto" leaves it to its title, `--contexts cards` cards it):
how the guard judges the cards of mail threads and e-books.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, results_suffix, set_directory, table  # noqa: E402


def is_long_prose(doc) -> bool:
    """Long prose whatever its title (Document.is_long_untitled_prose without the title)."""
    from localcr.documents import LONG_PROSE_CHARS

    return not doc.is_code and len(doc.text) >= LONG_PROSE_CHARS


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default="financebench-dev", help="comma-separated sets under --data (their docs folder)")
    p.add_argument("--corpus", action="append", default=[], help="NAME=PATH: a folder or pre-chunked corpus of your own")
    p.add_argument("--limit", type=int, help="only the first N documents that want a card, by id")
    p.add_argument("--titled", action="store_true", help="card long prose that has a title too (mail, e-books)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr.contexts.cards import CardStats, wants_card, write_cards
    from localcr.documents import load_paths
    from localcr.llm import LlamaRunner
    from localcr.models import load_registry

    sources = [(name, set_directory(args.data, name) / "docs") for name in args.sets.split(",") if name]
    sources += [(spec.split("=", 1)[0], Path(spec.split("=", 1)[1])) for spec in args.corpus]
    spec = load_registry().require("llm")
    runner = LlamaRunner(spec)
    rows, listing = [], []
    head = ["set", "documents", "want a card", "kept", "fell back (reasons)", "s a card written"]
    try:
        for name, path in sources:
            docs = load_paths([path]).documents
            wanting = sorted((d for d in docs if wants_card(d) or (args.titled and is_long_prose(d))),
                             key=lambda d: d.doc_id)[: args.limit]
            stats = CardStats()
            cards = write_cards(wanting, spec, runner=runner, progress=False, stats=stats)
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.fallback_reasons.items())) or "none"
            per_card = f"{stats.seconds / stats.written:.1f}" if stats.written else "cached"
            rows.append([name, len(docs), len(wanting), f"{len(cards)} ({100 * len(cards) / max(len(wanting), 1):.0f}%)",
                         f"{stats.fallbacks} ({reasons})", per_card])
            print(table(head, rows[-1:]), file=sys.stderr)
            listing += [[name, d.doc_id, (cards.get(d.doc_id) or f"(none: {stats.fell_back.get(d.doc_id)})").replace("|", "/")]
                        for d in wanting]
    finally:
        runner.close()
    text = f"machine: {machine()}\nLLM: {spec.name}\n\n" + table(head, rows)
    names = ",".join(name for name, _ in sources)
    (ROOT / "benchmarks" / "results" / f"cards_by_kind{results_suffix(names, ['financebench-dev'])}.md").write_text(
        text + "\n\n" + table(["set", "document", "card (none: the guard's reason)"], listing) + "\n")
    print(text)


if __name__ == "__main__":
    main()
