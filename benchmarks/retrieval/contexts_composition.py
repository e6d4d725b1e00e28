"""What each part of a chunk's context is worth, per set: structural contexts as before, + the record's title,
+ lead sentences, and LLM contexts under each rule for sentences borrowed from the document.

    .venv/bin/python benchmarks/retrieval/contexts_composition.py --data ../shared/data [--sets anthropic-codebase,xquad-en]
        [--llm NAME] [--llm-chunks 100] [--llm-sets anthropic-codebase,xquad-en]

Whole sets, no LLM: the published chunks are indexed three times, their contexts built by localcr.structure
(a) as before 2026-11 (a pre-chunked record's `title` unread, no leads), (b) with the title, (c) with the title
and the document's and the section's lead sentences (the default). The embedder is the one localcr picks for
the set. Hybrid Pass@1/5/20 and dense Pass@5 over all queries.

LLM rows (with --llm, or the registry's default LLM unless --no-llm): the first documents of the set, until
they hold --llm-chunks chunks, get contexts from the LLM (cached in --work: a second run only evaluates, an
interrupted one resumes). The raw answers are judged by the guard under each rule for a sentence borrowed from
another part of the document (localcr.guard.GuardLimits.borrowed): "reject" (the rule before: a context whose
4-grams mostly occur anywhere in the document is a copy), "lead" (the default: such a sentence stays if it comes
from the document's title, headings or lead paragraph, and is dropped otherwise) and "keep". Each set of
contexts, the LLM's alone and after the structural context, goes into an index of the whole set (the other
chunks keep their structural contexts) and is scored on the queries whose gold chunks lie in the subset, beside
structural contexts alone on the same queries. The fallback column counts the answers the guard rejected, by
reason. Tables go to stdout and benchmarks/results/contexts_composition[-SETS].md.
"""
from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, machine, parser, results_suffix, set_directory, subset_quality, table  # noqa: E402

SETS = ("anthropic-codebase", "xquad-en", "xquad-de", "xquad-zh", "jsquad-ja", "written-en", "written-fr")
CONFIGS = ("hybrid", "dense")
KS = (1, 5, 20)
RULES = ("reject", "lead", "keep")
HEAD = ["set", "contexts", "hybrid P@1", "hybrid P@5", "hybrid P@20", "dense P@5", "queries", "LLM fallbacks"]


def structural(docs, *, titles: bool, leads: bool) -> dict[str, str]:
    """{chunk_id: structural context} of every published chunk, with or without titles and leads."""
    from localcr.structure import structural_contexts

    contexts = {}
    for doc in docs:
        chunks = [replace(c) for c in doc.given_chunks]
        structural_contexts(doc if titles else replace(doc, title=""), chunks, leads=leads)
        contexts.update((c.chunk_id, c.context) for c in chunks)
    return contexts


def first_chunks(docs, min_chunks: int):
    """The first documents, until they hold at least min_chunks chunks (the same subset on every run)."""
    chosen = []
    for doc in docs:
        if sum(len(d.given_chunks) for d in chosen) >= min_chunks:
            break
        chosen.append(doc)
    return chosen


def row(label: str, set_name: str, result: list[list[float]], n_queries: int, fallbacks: str = "") -> list:
    (hybrid, dense) = result
    return [set_name, label, hybrid[0], hybrid[1], hybrid[2], dense[1], n_queries, fallbacks]


def llm_rows(set_name: str, chunks_file: Path, queries_file: Path, docs, spec, min_chunks: int, work: Path) -> list[list]:
    from localcr.contexts import write_llm_contexts
    from localcr.guard import GuardLimits

    subset = first_chunks(docs, min_chunks)
    total = sum(len(d.given_chunks) for d in subset)
    label = f"{set_name}-{len(subset)}docs"
    baseline, n = subset_quality(chunks_file, queries_file, subset, {}, work, f"{label}-structural", CONFIGS, KS)
    rows = [row(f"first {len(subset)} documents ({total} chunks): structural + titles + leads", set_name, baseline, n)]
    for rule in RULES:
        for composition in ("llm", "structural+llm"):
            chunks_by_doc = {d.doc_id: [replace(c) for c in d.given_chunks] for d in subset}
            if composition == "structural+llm":
                from localcr.structure import structural_contexts

                for doc in subset:
                    structural_contexts(doc, chunks_by_doc[doc.doc_id])
            stats = write_llm_contexts(subset, chunks_by_doc, spec, guard=GuardLimits(borrowed=rule),
                                       composition=composition, progress=sys.stderr.isatty())
            contexts = {c.chunk_id: c.context for cs in chunks_by_doc.values() for c in cs}
            result, n = subset_quality(chunks_file, queries_file, subset, contexts, work, f"{label}-{rule}-{composition}",
                                       CONFIGS, KS)
            reasons = stats.fallback_reasons
            fallbacks = f"{sum(reasons.values())}/{total}" + (f" ({', '.join(f'{r} {k}' for r, k in sorted(reasons.items()))})"
                                                               if reasons else "")
            what = "LLM alone" if composition == "llm" else "structural + titles + leads + LLM"
            rows.append(row(f"{what}, guard rule {rule!r}", set_name, result, n, fallbacks))
            print(table(HEAD, rows[-1:]), file=sys.stderr)
    return rows


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--sets", default=",".join(SETS), help=f"comma-separated (default {','.join(SETS)})")
    p.add_argument("--llm", help="llm name in models.toml (default: the registry's default)")
    p.add_argument("--no-llm", action="store_true", help="only the structural rows")
    p.add_argument("--llm-chunks", type=int, default=100, help="LLM contexts for the first documents holding this many chunks")
    p.add_argument("--llm-sets", help="LLM rows only for these of the sets (comma-separated; default: every set)")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr.documents import import_prechunked
    from localcr.models import load_registry

    spec = None if args.no_llm else load_registry().require("llm", args.llm)
    rows = []
    for set_name in args.sets.split(","):
        chunks_file, queries_file = corpus_files(set_directory(args.data, set_name))
        docs = import_prechunked(chunks_file)
        work = args.work / f"composition-{set_name}"
        for label, titles, leads in (("structural as before (no title, no leads)", False, False),
                                     ("structural + titles", True, False),
                                     ("structural + titles + leads (default)", True, True)):
            contexts = structural(docs, titles=titles, leads=leads)
            key = f"all-{int(titles)}{int(leads)}"
            result, n = subset_quality(chunks_file, queries_file, docs, contexts, work, key, CONFIGS, KS)
            rows.append(row(f"all documents: {label}", set_name, result, n))
            print(table(HEAD, rows[-1:]), file=sys.stderr)
        if spec is not None and set_name in (args.llm_sets or args.sets).split(","):
            rows += llm_rows(set_name, chunks_file, queries_file, docs, spec, args.llm_chunks, work)
        head = f"machine: {machine()}" + (f"; llm {spec.name}" if spec else "")
        text = head + "\n\n" + table(HEAD, rows)
        out = ROOT / "benchmarks" / "results" / f"contexts_composition{results_suffix(args.sets, SETS)}.md"
        out.write_text(text + "\n")  # after every set: a long run that is stopped keeps what it measured
    print(text)


if __name__ == "__main__":
    main()
