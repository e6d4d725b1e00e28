"""Helpers shared by the benchmark scripts: the corpus location, the machine, and markdown tables."""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

# The checkout these scripts belong to, first on the path of the script and of every process it starts: run from a
# worktree without PYTHONPATH, a script imported the localcr the virtual environment has installed (editable: the
# main checkout's), so estimates.py measured main's card estimates, not the ones beside it.
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", required=True, type=Path,
                   help="a public set: ../shared/data/anthropic-codebase (code) or ../shared/data/xquad-en etc. (prose)")
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory for indexes and caches")
    return p


# Sets written for localcr itself (benchmarks/data/README.md): found there when --data does not hold them.
OWN_SETS = Path(__file__).resolve().parent / "data"


def set_directory(data: Path, name: str) -> Path:
    """The directory of a named set: under the shared data directory, else among localcr's own sets."""
    return data / name if (data / name).is_dir() or not (OWN_SETS / name).is_dir() else OWN_SETS / name


# Own sets of questions about a shared set's documents (benchmarks/data/README.md): scored on that set's index.
QUESTIONS_OVER = {"financebench-heldout": "financebench-dev"}


# The two layouts of the public sets: the codebase set's published file names, and the prose sets'.
CORPUS_NAMES = (("codebase_chunks.json", "evaluation_set.jsonl"), ("corpus.json", "queries.jsonl"))


def corpus_files(data: Path) -> tuple[Path, Path]:
    """(pre-chunked corpus, queries) of a public set directory."""
    for chunks, queries in CORPUS_NAMES:
        if (data / chunks).is_file() and (data / queries).is_file():
            return data / chunks, data / queries
    raise SystemExit(f"{data}: no corpus found; pass --data DIR holding codebase_chunks.json + evaluation_set.jsonl "
                     "or corpus.json + queries.jsonl")


def sources(set_dir: Path) -> tuple[str, Path]:
    """What to index of a set (a folder of documents, or a pre-chunked corpus) and its queries file."""
    if (set_dir / "docs").is_dir():
        return str(set_dir / "docs"), set_dir / "queries.jsonl"
    corpus, queries = corpus_files(set_dir)
    return str(corpus), queries


def machine() -> str:
    """Cores, CPU model and its widest vector extension: llama.cpp runs about 5x faster with AVX-512 than with AVX2
    alone, so every speed figure says which it came from."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    cpu = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), platform.processor())
    flags = set(next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), []))
    vector = "AVX-512" if "avx512f" in flags else "AVX2, no AVX-512" if "avx2" in flags else "no AVX2"
    return f"{os.cpu_count()} cores ({cpu}, {vector}), Python {platform.python_version()}"


def peak_rss_mb(pid: int | str = "self") -> float:
    """A process's peak resident memory (VmHWM). Not getrusage's ru_maxrss: Linux carries the parent's high-water
    mark across fork and exec, so a search process started by a benchmark that built a 100 K index reported the
    builder's 1.1 GB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024


def rss_parts_mb(pid: int | str = "self") -> tuple[float, float]:
    """A process's resident memory now, as (anonymous, file-backed) MB: memory-mapped index files count in
    the peak but are pages of the file cache, which the kernel can drop and read again."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["RssAnon"].split()[0]) / 1024, int(fields["RssFile"].split()[0]) / 1024


def table(head: list[str], rows: list[list]) -> str:
    cells = [head] + [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in cells[1:]])


def first_documents(documents, min_docs: int, min_chunks: int = 0):
    """The first documents of a pre-chunked set, until there are at least min_docs of them and min_chunks chunks
    (the same subset on every run)."""
    chosen, total = [], 0
    for doc in documents:
        if len(chosen) >= min_docs and total >= min_chunks:
            break
        chosen.append(doc)
        total += len(doc.given_chunks or [])
    return chosen


def structural_chunks(docs) -> dict:
    """Fresh copies of the documents' published chunks, with their structural contexts: {doc_id: chunks}."""
    from dataclasses import replace

    from localcr.structure import structural_contexts

    chunks_by_doc = {d.doc_id: [replace(c) for c in d.given_chunks] for d in docs}
    for d in docs:
        structural_contexts(d, chunks_by_doc[d.doc_id])
    return chunks_by_doc


def write_results(stem: str, label: str, text: str) -> None:
    """A run's table as benchmarks/results/STEM[-LABEL].md."""
    (ROOT / "benchmarks" / "results" / f"{stem}{f'-{label}' if label else ''}.md").write_text(text)


def stated(text: str, note: str) -> str:
    """What an answer states as its result: a computed one's result before the work it shows (the formula, the SQL,
    the rows it lists, whose figures and row numbers answer nothing: "8, counted over 19 rows ... The rows counted
    are at rows 2, 3, ..." held a gold 2, and "8, computed as (1 > 0) + ... 1999 (3), Position: 5" a gold 3); the
    reader's whole text."""
    if note.startswith("computed in SQL"):
        return text.split(" by: ")[0].rsplit(", ", 1)[0]
    if "computed in Python" in note:
        return text.split(", computed as ")[0]
    return text


def append_answer(path: Path | None, record: dict) -> None:
    """One answer as a JSON line of --answers FILE (none without the option): kept as it comes, so a run cut short
    keeps what it asked."""
    if path:
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def results_suffix(chosen: str, every) -> str:
    """The suffix of a results file for a run over some sets (--sets), "" for a run over all of them."""
    return "" if chosen == ",".join(every) else "-" + chosen.replace(",", "-")


def subset_quality(chunks_file: Path, queries_file: Path, docs, contexts: dict[str, str], work: Path, label: str,
                   configs=("hybrid",), ks=(5, 10, 20)) -> tuple[list[list[float]], int]:
    """Pass@k (percent, one row per config) of an index of the whole set whose chunks in `contexts` carry those
    contexts (the others their structural ones), on the queries whose gold chunks all lie in `docs`; and how
    many queries that is."""
    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    work.mkdir(parents=True, exist_ok=True)
    imported = work / f"contexts-{label}.jsonl"
    imported.write_text("".join(json.dumps({"chunk_id": k, "context": v}) + "\n" for k, v in contexts.items()))
    uuids = {d.external_id for d in docs}
    subset_queries = work / f"queries-{label}.jsonl"
    subset_queries.write_text("".join(line + "\n" for line in queries_file.read_text().splitlines()
                                      if line.strip() and all(g[0] in uuids for g in json.loads(line)["golden_chunk_uuids"])))
    registry = load_registry()
    directory = work / f"index-{label}"
    build_index([str(chunks_file)], directory, registry, contexts="structural", contexts_from=str(imported),
                progress=False, log=lambda m: None)
    index = Index(directory, registry)
    queries = evaluation.load_queries(subset_queries, index)
    results = evaluation.evaluate(index, queries, [evaluation.parse_config(c) for c in configs], ks, progress=False)
    return [[100 * r.metrics[f"pass@{k}"] for k in ks] for r in results], len(queries)


# The answer benchmarks' sample of each set's questions (benchmarks/answers/): the same on every run.
ANSWERS_SEED = 2026


def indexed_set(set_name: str, data: Path, work: Path, folder: str, contexts: str):
    """(registry, index, queries) of a set indexed under work/folder with these contexts (an index a run left
    there with the same settings is reused); a set of questions about another set's documents gets that set's index."""
    from localcr import evaluation
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    registry = load_registry()
    documents_set = QUESTIONS_OVER.get(set_name, set_name)
    source, queries_file = sources(set_directory(data, documents_set))
    if documents_set != set_name:
        queries_file = set_directory(data, set_name) / "queries.jsonl"
    directory = work / folder / f"index-{documents_set}-{contexts}"
    build_index([source], directory, registry, contexts=contexts, progress=False, log=lambda message: None)
    index = Index(directory, registry)
    return registry, index, evaluation.load_queries(queries_file, index)


def indexed_sample(set_name: str, data: Path, work: Path, limit: int | None, contexts: str = "structural"):
    """(registry, index, queries, sampled): a set indexed with these contexts (structural: no LLM at index time;
    auto: `localcr index`'s default, cards for long untitled reports) and a seeded sample of `limit` of its queries
    (all of them for None), the same on every run."""
    import random

    registry, index, queries = indexed_set(set_name, data, work, "answers", contexts)
    sampled = list(queries.queries)
    random.Random(ANSWERS_SEED).shuffle(sampled)
    return registry, index, queries, sampled[:limit]


def gold_documents(index, query) -> list[str]:
    """The documents holding a query's gold: what a filter leaves out to make it unanswerable."""
    ids = {t.id for t in query.targets if t.kind in ("span", "doc")}
    rows = [index.store.row_of_chunk(t.id) for t in query.targets if t.kind == "chunk"]
    ids |= {record["doc_id"] for record in index.store.hit_records([r for r in rows if r is not None])}
    return sorted(ids)
