"""Parsing: localcr's own chunking of the code set against the published chunks, scored on spans; structural
contexts from tree-sitter against regular expressions; parse speed; a prose set for regressions.

    .venv/bin/python benchmarks/formats/parsing.py --data ../shared/data/anthropic-codebase [--prose ../shared/data/xquad-en]

Every index uses structural contexts (no LLM) and the default embedder, searched hybrid. "regex" runs the
same code with tree-sitter switched off, which is today's path for a language without a grammar (regex
definitions, blank-line and line cuts):

1. The 90 documents' full text (the corpus without its chunks) chunked by localcr, regex vs tree-sitter, and
   the published chunks, all scored against the published gold as character spans (`localcr eval --gold
   spans`): span Pass@1/5/10/20, token recall and IoU at 20.
2. The published chunks with structural contexts from regexes vs tree-sitter, scored on chunk ids (the
   published Pass@k).
3. Parse speed: files per second of tree-sitter (language guess, parse, definitions) on the 90 documents, and
   how many chunks start inside a definition that fits in one chunk, with tree-sitter and without.
4. With --prose: a prose set's published chunks, structural contexts, hybrid (chunk ids): the regex and the
   parser paths side by side.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, parser, table  # noqa: E402


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--prose", type=Path, help="also a prose set (e.g. ../shared/data/xquad-en): no regression")
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    chunks_file, queries_file = corpus_files(args.data)
    args.work.mkdir(parents=True, exist_ok=True)
    full_text = args.work / "codebase_documents.json"  # the same documents, without their chunks
    corpus = json.loads(chunks_file.read_text())
    full_text.write_text(json.dumps([{k: v for k, v in e.items() if k != "chunks"} for e in corpus]))

    from localcr import evaluation
    from localcr.documents import import_prechunked
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.parsing import code
    from localcr.search import Index

    registry = load_registry()
    hybrid = [evaluation.parse_config("hybrid")]
    ks = (1, 5, 10, 20)
    tree_parse = code.parse

    def run(label: str, source: Path, parsing: str, gold: str, queries: Path = queries_file, chunk_tokens=None) -> list:
        code.parse = tree_parse if parsing == "tree-sitter" else (lambda text, kind: None)
        directory = args.work / f"parsing-{source.stem}-{parsing}-{chunk_tokens or 'default'}"
        shutil.rmtree(directory, ignore_errors=True)  # an index left by an earlier run would be reused unchanged
        started = time.perf_counter()
        build_index([str(source)], directory, registry, contexts="structural", chunk_tokens=chunk_tokens,
                    progress=False, log=lambda m: None)
        built = time.perf_counter() - started
        index = Index(directory, registry)
        chunks = index.store.stats()["chunks"]
        query_set = evaluation.load_queries(queries, index, gold=gold)
        m = evaluation.evaluate(index, query_set, hybrid, ks, progress=False)[0].metrics
        code.parse = tree_parse
        print(f"{label}: {chunks} chunks, built in {built:.0f} s", file=sys.stderr)
        return [label, chunks, *(100 * m[f"pass@{k}"] for k in ks),
                *((100 * m["token_recall@20"], 100 * m["iou@20"]) if gold == "spans" else ("", "")), f"{built:.0f}"]

    head = ["index", "chunks", *(f"Pass@{k}" for k in ks), "token recall@20", "IoU@20", "build s"]
    spans = [
        run("published chunks, tree-sitter contexts", chunks_file, "tree-sitter", "spans"),
        run("localcr chunks, regex (as before)", full_text, "regex", "spans"),
        run("localcr chunks, tree-sitter", full_text, "tree-sitter", "spans"),
        # the published chunks average 213 MiniLM tokens, localcr's default (190 at most) about 136
        run("localcr chunks, tree-sitter, --chunk-tokens 320", full_text, "tree-sitter", "spans", chunk_tokens=320),
    ]
    contexts = [
        run("published chunks, regex contexts", chunks_file, "regex", "chunks"),
        run("published chunks, tree-sitter contexts", chunks_file, "tree-sitter", "chunks"),
    ]
    prose = []
    if args.prose:
        prose_chunks, prose_queries = corpus_files(args.prose)
        prose = [run(f"{args.prose.name} published chunks, {parsing}", prose_chunks, parsing, "chunks", prose_queries)
                 for parsing in ("regex", "tree-sitter")]

    docs = import_prechunked(chunks_file)
    starts = inside_fitting_definitions(docs, registry)
    started = time.perf_counter()
    for doc in docs:
        code._guesses.clear()
        code.parse.cache_clear()
        syntax = code.parse(doc.text, doc.kind)
        _ = syntax.definitions if syntax else None
    seconds = time.perf_counter() - started
    size = sum(len(d.text.encode()) for d in docs) / 1e6
    speed = (f"tree-sitter on the code set: {len(docs)} files ({size:.2f} MB) in {seconds:.2f} s = "
             f"{len(docs) / seconds:.0f} files/s (language guessed, parsed, definitions read)")

    text = (f"set: {args.data.name} ({len(corpus)} documents); machine: {machine()}\n\n"
            "Span gold (published gold chunks as character spans of their documents), hybrid:\n\n"
            + table(head, spans)
            + "\n\nChunk gold (published Pass@k), published chunks, hybrid:\n\n" + table(head, contexts)
            + (f"\n\nProse, chunk gold, hybrid:\n\n" + table(head, prose) if prose else "")
            + f"\n\n{speed}\n{starts}\n")
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / "parsing.md").write_text(text)


def inside_fitting_definitions(docs, registry) -> str:
    """How many of localcr's chunks of the code set start inside a definition that fits in one chunk, with
    tree-sitter and without (definitions as tree-sitter finds them, sizes in the embedder's tokens)."""
    from localcr.chunking import chunk_document
    from localcr.embeddings import load_backend
    from localcr.pipeline import default_chunk_tokens
    from localcr.parsing import code

    backend = load_backend(registry.require("embedder"))
    size = default_chunk_tokens(backend.max_length)
    fitting = {}
    for doc in docs:
        found, stack = [], list(code.parse(doc.text, doc.kind).definitions)
        while stack:
            definition = stack.pop()
            found.append(definition)
            stack.extend(definition.children)
        tokens = backend.count_tokens([doc.text[d.start:d.end] for d in found]) if found else []
        fitting[doc.doc_id] = [(d.start, d.end) for d, n in zip(found, tokens) if n <= size]
    tree_parse, line = code.parse, []
    for label, parse in (("regex", lambda text, kind: None), ("tree-sitter", tree_parse)):
        code.parse = parse
        chunks = [c for doc in docs for c in chunk_document(
            type(doc)(**{**doc.__dict__, "given_chunks": None}), backend.count_tokens, size, size // 8)]
        inside = sum(any(a < c.start < b for a, b in fitting[c.doc_id]) for c in chunks)
        line.append(f"{label}: {inside} of {len(chunks)} chunks start inside a definition that fits in a chunk")
    code.parse = tree_parse
    return "; ".join(line)


if __name__ == "__main__":
    main()
