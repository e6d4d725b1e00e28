"""A documentation set with and without cards: Node.js's API pages as untitled prose records, Pass@k of queries made
by rule from the pages themselves (no LLM, no hand-written questions).

    .venv/bin/python benchmarks/retrieval/documentation_pages.py --data ../shared/data [--pages /usr/share/doc/nodejs/api]
        [--contexts structural,auto] [--sample 500]

The corpus: every `*.md` page under --pages (Debian's nodejs-doc installs them) as a pre-chunked-style JSON record
without file extension, the page's title on its first line without its `#`, HTML comments dropped: as the held-out
documentation pages of issue 59 are written (the same records benchmarks/retrieval/cards_by_kind.py reads with
`--corpus nodejs-api=WORK/nodejs-api.json`, so the cards it wrote are the ones this index takes from the cache).
The queries, built from the installed pages into --work (they copy the pages' words, so they stay out of the
repository), two per section where the rule finds them, each with the section's span (its heading to the next
heading) as gold:

* heading: the section's heading, code marks dropped, where no other section of any page has the same heading
  (`fs.readFile(path[, options], callback)`, `Class: Worker`; "Event: 'close'" of eleven pages is left out);
* sentence: the first sentence of the section's first paragraph of prose (not a list, a stability note, a table or
  a sample), code spans and English stop words dropped, at most 12 words, where it keeps 4 or more and no other
  query is the same ("asynchronously reads entire contents file").

Of each kind, --sample queries drawn with a fixed seed (all of them with --sample 0).

Each --contexts mode is one index (`--contexts auto`: the pages that want a card get the one the cache holds, or
the bundled LLM writes it); rows give hybrid Pass@1/5/10/20 per query kind and mode. Results:
benchmarks/results/documentation_pages.md. --data is not read (kept for the shared options).
"""
from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, table  # noqa: E402

KS = (1, 5, 10, 20)
SENTENCE_WORDS = 12
STOP_WORDS = set("""a an the of to in on for by with from at as is are was were be been being it its this that these
those and or but not no if then than so such can may might must will would should could do does did has have had
which who whom whose what when where how all any each both either every into out over under about via also only
more most other same own their there they them he she we you your our i""".split())
_HEADING = re.compile(r"^(#{2,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_NOT_PROSE = re.compile(r"^\s*(?:[*+\-|>]|\d+\.\s|<|!\[|Stability:)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")


def page_records(pages: Path) -> list[dict]:
    """The pages as records: no extension, the first line's `# ` dropped, HTML comments dropped."""
    records = []
    for page in sorted(pages.glob("*.md")):
        text = re.sub(r"<!--.*?-->\n?", "", page.read_text(), flags=re.S)
        lines = text.strip().split("\n")
        if lines and lines[0].startswith("# "):
            lines[0] = lines[0][2:]
        records.append({"doc_id": page.stem, "original_uuid": page.stem, "content": "\n".join(lines) + "\n"})
    return records


def sections(text: str) -> list[tuple[str, int, int, str]]:
    """(heading, start, end, body) of every `##`-or-deeper section outside code fences: start at its heading line,
    end at the next heading of any depth."""
    found, offset, fenced = [], 0, False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (m := _HEADING.match(line.rstrip("\n"))):
            found.append([m.group(2).replace("`", "").strip(), offset])
        offset += len(line)
    bounds = [start for _, start in found] + [len(text)]
    return [(heading, start, bounds[i + 1], text[start:bounds[i + 1]]) for i, (heading, start) in enumerate(found)]


def first_sentence(body: str) -> str:
    """The first sentence of the section's first paragraph of prose (its heading line, lists, notes, tables and
    samples passed over)."""
    fenced = False
    paragraph: list[str] = []
    for line in body.split("\n")[1:]:
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.strip() or _NOT_PROSE.match(line) or line.startswith("    "):
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    return _SENTENCE_END.split(" ".join(paragraph))[0] if paragraph else ""


def keywords(sentence: str) -> str:
    """The sentence as a user might type it: code spans and stop words dropped, at most SENTENCE_WORDS words."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", re.sub(r"`[^`]*`", " ", sentence))
    return " ".join([w.lower() for w in words if w.lower() not in STOP_WORDS][:SENTENCE_WORDS])


def make_queries(corpus: Path, sample: int) -> list[dict]:
    """Heading and sentence queries of every page, with their sections' spans in the text localcr imports;
    `sample` of each kind (seeded), or all with 0."""
    from localcr.documents import import_prechunked

    by_heading: dict[str, list] = {}
    candidates = []
    for doc in import_prechunked(corpus):
        for heading, start, end, body in sections(doc.text):
            span = [doc.doc_id, start, end]
            by_heading.setdefault(heading.lower(), []).append(span)
            candidates.append((heading, span, keywords(first_sentence(body))))
    queries, seen = [], set()
    for heading, span, sentence in candidates:
        if len(by_heading[heading.lower()]) == 1:
            queries.append({"id": f"heading:{span[0]}:{span[1]}", "query": heading, "spans": [span]})
        if len(sentence.split()) >= 4 and sentence not in seen:
            seen.add(sentence)
            queries.append({"id": f"sentence:{span[0]}:{span[1]}", "query": sentence, "spans": [span]})
    if not sample:
        return queries
    chosen = []
    for kind in ("heading:", "sentence:"):
        of_kind = [q for q in queries if q["id"].startswith(kind)]
        chosen += random.Random(59).sample(of_kind, min(sample, len(of_kind)))
    return chosen


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--pages", type=Path, default=Path("/usr/share/doc/nodejs/api"), help="a folder of Markdown pages")
    p.add_argument("--contexts", default="structural,auto", help="comma-separated context modes, one index each")
    p.add_argument("--sample", type=int, default=500, help="queries of each kind, drawn with a fixed seed (0: all)")
    args = p.parse_args()
    if not any(args.pages.glob("*.md")):
        raise SystemExit(f"{args.pages}: no Markdown pages (Debian: apt-get install nodejs-doc)")
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    corpus = args.work / "nodejs-api.json"
    corpus.write_text(json.dumps(page_records(args.pages)))
    queries = make_queries(corpus, args.sample)
    queries_file = args.work / "nodejs-api-queries.jsonl"
    queries_file.write_text("".join(json.dumps(q) + "\n" for q in queries))
    kinds = {kind: [q["id"] for q in queries if q["id"].startswith(kind + ":")] for kind in ("heading", "sentence")}
    registry = load_registry()
    head = ["contexts", "chunks", "cards", "queries", *[f"P@{k}" for k in KS], "build s"]
    rows = []
    for mode in args.contexts.split(","):
        started = time.perf_counter()
        summary = build_index([str(corpus)], args.work / f"index-nodejs-api-{mode}", registry, contexts=mode,
                              progress=False, log=lambda line: print(line, file=sys.stderr))
        seconds = time.perf_counter() - started
        index = Index(args.work / f"index-nodejs-api-{mode}", registry)
        loaded = evaluation.load_queries(queries_file, index)
        (result,) = evaluation.evaluate(index, loaded, [evaluation.parse_config("hybrid")], KS, progress=False)
        passes = {row["query_id"]: row for row in result.per_query}
        cards = summary.card_summary.split(";")[0] if summary.card_summary else "none"
        for kind, ids in kinds.items():
            rows.append([mode, summary.chunks, cards, f"{kind} ({len(ids)})",
                         *[100 * sum(passes[i][f"pass@{k}"] for i in ids) / len(ids) for k in KS],
                         f"{seconds:.0f}" if summary.added else "reused"])
        print(table(head, rows[-2:]), file=sys.stderr)
    text = f"machine: {machine()}\npages: {args.pages} ({len(kinds['heading'])} heading and {len(kinds['sentence'])} " \
           f"sentence queries)\n\n" + table(head, rows)
    (ROOT / "benchmarks" / "results" / "documentation_pages.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
