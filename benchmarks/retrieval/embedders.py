"""Both bundled embedders on every shared set: dense, lexical and hybrid (RRF and weighted) Pass@1/5/20.

    .venv/bin/python benchmarks/retrieval/embedders.py --data ../shared/data [--sets xquad-de,jsquad-ja]

For each set (the code set, XQuAD en/de/es/ru/ar/zh, JSQuAD ja, and "mixed": a third of the XQuAD articles
in English, another third in German, the last third in Chinese, with their queries) and each embedder (MiniLM; the Universal
Sentence Encoder Multilingual), an index of the published chunks with structural contexts is built (embeddings
cached in --work) and evaluated with every fusion rule, so that the default rule can be chosen across all of
them; the embedder localcr picks for the set by itself is marked. Embedding speed (windows/s, from a cold
cache only) is reported per embedder. The table goes to stdout and benchmarks/results/embedders.md
(embedders-<sets>.md for a choice of sets).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import corpus_files, machine, results_suffix, set_directory, table  # noqa: E402

SETS = ("anthropic-codebase", "xquad-en", "xquad-de", "xquad-es", "xquad-ru", "xquad-ar", "xquad-zh", "jsquad-ja", "mixed",
        "written-en", "written-fr")
MIXED = ("xquad-en", "xquad-de", "xquad-zh")  # each gives a different third of the (parallel) articles


def mixed_set(data: Path, work: Path) -> Path:
    """A corpus in three languages with no article in two of them (translations would be near-duplicates)."""
    out = work / "mixed"
    out.mkdir(parents=True, exist_ok=True)
    corpus, queries = [], []
    for part, name in enumerate(MIXED):
        docs = json.loads((data / name / "corpus.json").read_text(encoding="utf-8"))
        third = len(docs) // len(MIXED)
        chosen = docs[part * third:(part + 1) * third]
        for doc in chosen:
            doc = {**doc, "doc_id": f"{name}-{doc['doc_id']}"}
            doc["chunks"] = [{**c, "chunk_id": f"{name}-{c['chunk_id']}"} for c in doc["chunks"]]
            corpus.append(doc)
        uuids = {d["original_uuid"] for d in chosen}
        queries += [line for line in (data / name / "queries.jsonl").read_text(encoding="utf-8").splitlines()
                    if line.strip() and all(g[0] in uuids for g in json.loads(line)["golden_chunk_uuids"])]
    (out / "corpus.json").write_text(json.dumps(corpus, ensure_ascii=False))
    (out / "queries.jsonl").write_text("\n".join(queries) + "\n")
    return out
EMBEDDERS = ("minilm", "use-multilingual")
CONFIGS = ("dense", "lexical", "hybrid,fusion=rrf", "hybrid,fusion=weighted,alpha=0.3", "hybrid,fusion=weighted,alpha=0.5",
           "hybrid,fusion=weighted,alpha=0.7")
KS = (1, 5, 20)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True, help="the shared data directory")
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"))
    args = p.parse_args()
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr import evaluation
    from localcr.documents import import_prechunked
    from localcr.index import build_index
    from localcr.pipeline import choose_embedder
    from localcr.language import document_language
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    configs = [evaluation.parse_config(c) for c in CONFIGS]
    rows, speed = [], {name: [0, 0.0] for name in EMBEDDERS}
    for name in args.sets.split(","):
        chunks, queries_file = corpus_files(mixed_set(args.data, args.work) if name == "mixed" else set_directory(args.data, name))
        docs = import_prechunked(chunks)
        for doc in docs:
            doc.language = document_language(doc.text, doc.is_code)
        chosen, _ = choose_embedder(registry, Counter(doc.language for doc in docs))
        for embedder in EMBEDDERS:
            directory = args.work / f"embedders-{name}-{embedder}"
            started = time.perf_counter()
            summary = build_index([str(chunks)], directory, registry, embedder=embedder, contexts="structural",
                                  progress=False, log=lambda m: None)
            if summary.embedded == summary.windows:  # a cold cache: the time is the embedder's
                speed[embedder][0] += summary.embedded
                speed[embedder][1] += time.perf_counter() - started
            index = Index(directory, registry)
            queries = evaluation.load_queries(queries_file, index)
            for result in evaluation.evaluate(index, queries, configs, KS, progress=False):
                rows.append([name, embedder + (" (auto)" if embedder == chosen.name else ""), result.config.name,
                             " / ".join(f"{100 * result.metrics[f'pass@{k}']:.1f}" for k in KS)])
            print(rows[-len(configs):], file=sys.stderr)
    rates = ", ".join(f"{e} {n / s:.1f} windows/s ({n} windows)" for e, (n, s) in speed.items() if s)
    text = (f"# Embedders by set\n\n{machine()}; structural contexts; Pass@1 / @5 / @20\n\n"
            + table(["set", "embedder", "config", "Pass@1 / 5 / 20"], rows) + f"\n\n- embedding speed (cold cache, "
            f"with indexing): {rates or 'all cached'}\n")
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / f"embedders{results_suffix(args.sets, SETS)}.md").write_text(text)


if __name__ == "__main__":
    main()
