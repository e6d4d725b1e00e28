"""Does asking for the context in the document's language help? LLM contexts with and without the clause.

    .venv/bin/python benchmarks/retrieval/context_language.py --data ../shared/data/xquad-de [--docs 6] [--llm NAME]

Takes the first --docs documents of a prose set, writes their chunks' LLM contexts twice with the default
layout: once with the English instruction alone (context_language = false) and once with the clause asking for
the document's language (context_language = true, `localcr.contexts.LANGUAGE_REQUEST`). Each set of contexts
goes into an index of the whole set (the other chunks keep their structural contexts; the embedder is the one
localcr picks for the set), and dense, lexical and hybrid Pass@1/5/20 are measured on the queries whose gold
chunks lie in the subset, beside structural contexts alone. The share of contexts written in the document's
language (py3langid on the context) says whether the model followed. Contexts are cached in --work, so a
second run only evaluates. The table goes to stdout and benchmarks/results/context_language-<set>.md.
"""
from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, first_documents, machine, parser, structural_chunks, subset_quality, table  # noqa: E402

CONFIGS = ("dense", "lexical", "hybrid")
KS = (1, 5, 20)


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=6, help="the first this many documents get LLM contexts (default 6)")
    p.add_argument("--llm", help="llm name in models.toml (default: the registry's default)")
    args = p.parse_args()
    chunks_file, queries_file = corpus_files(args.data)
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))

    from localcr import contexts as C
    from localcr.documents import import_prechunked
    from localcr.language import detect, document_language
    from localcr.models import load_registry

    base = load_registry().require("llm", args.llm)
    docs = first_documents(import_prechunked(chunks_file), args.docs)
    for doc in docs:
        doc.language = document_language(doc.text, doc.is_code)
    name = args.data.name
    work = args.work / f"context-language-{name}"

    variants = [("structural contexts", "structural", structural_chunks(docs), None)]
    for label, key, flag in (("LLM, English instruction", "english", False),
                             ("LLM, asked for the document's language", "language", True)):
        spec = replace(base, params={**base.params, "context_language": flag})
        composed, alone = structural_chunks(docs), structural_chunks(docs)
        C.write_llm_contexts(docs, composed, spec, progress=True)  # loads the model only for contexts not cached
        C.write_llm_contexts(docs, alone, spec, progress=False, composition="llm")  # all cached by now
        variants.append((label, key, composed, alone))

    language_of = {d.doc_id: d.language for d in docs}
    rows = []
    for label, key, composed, alone in variants:
        contexts = {c.chunk_id: c.context for cs in composed.values() for c in cs}
        results, n_queries = subset_quality(chunks_file, queries_file, docs, contexts, work, key, configs=CONFIGS, ks=KS)
        followed = ""
        if alone is not None:
            written = [c for cs in alone.values() for c in cs if c.context_source == "llm"]
            same = sum(detect(c.context) == language_of[c.doc_id] for c in written)
            followed = f"{100 * same / max(1, len(written)):.0f}% of {len(written)}"
        rows.append([label, *(" / ".join(f"{v:.1f}" for v in r) for r in results), followed])
    languages = sorted({d.language for d in docs})
    text = (f"set: {name}, the first {len(docs)} documents ({sum(len(d.given_chunks) for d in docs)} chunks, detected "
            f"{', '.join(languages)}), {n_queries} queries; llm {base.name}; machine: {machine()}\n\n"
            + table(["contexts", *(f"{c} P@{'/'.join(map(str, KS))}" for c in CONFIGS), "written in the document's language"], rows))
    print(text)
    (ROOT / "benchmarks" / "results" / f"context_language-{name}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
