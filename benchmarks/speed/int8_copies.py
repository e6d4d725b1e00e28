"""The 8-bit MiniLM copy and its variants (issue 60): how close each stays to the float copy, how fast it embeds
filing windows, and, with --quality, the dense and hybrid Pass@5/10/20 it keeps on code, prose and filings.

    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/int8_copies.py --data /work/shared/data
    nice -n 10 flock /work/heavy.lock .venv/bin/python benchmarks/speed/int8_copies.py --data /work/shared/data \\
        --quality --copies float,today --sets anthropic-codebase,xquad-en,xquad-de,financebench-dev

Each variant is `localcr.embeddings.onnx_export.quantize` of the float copy with other quantize_dynamic arguments
(VARIANTS). Closeness: cosine of each variant's vector to the float copy's for the same window, over --windows
windows of the code set and as many of the first two financebench-dev filings (structural contexts, as a build
writes them). Speed: windows/s on the filing windows, best of --repeats passes, as embedding_limit.py measures it.
--quality indexes each set once per copy with MiniLM (named: German text would otherwise get the multilingual
embedder), structural contexts (the filings as a folder of documents, span gold), each copy with an embedding cache
of its own under --work (cold on the first run: every window embedded; a later run reuses the index and its
vectors), and scores Pass@5/10/20 dense and hybrid with `localcr eval`'s code. A variant runs as `runtime =
"onnx-int8"` does: its copy is placed where that runtime finds it, in a models folder of its own. Rows are printed
as they come; the tables go to stdout and benchmarks/results/int8_copies[-quality|-batchN].md.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import corpus_files, machine, parser, set_directory, sources, table  # noqa: E402
from speed.embedding_limit import filing_windows, timed  # noqa: E402
from speed.search_speed import registry_file  # noqa: E402


def matmuls(layers, parts=("attention/output", "intermediate", "output")) -> list[str]:
    """The names of the exported graph's weight MatMuls in these layers (attention output, feed-forward in and out)."""
    return [f"/model/model.0/encoder/layer.{i}/{part}/dense/MatMul" for i in layers for part in parts]


LAST_LAYER, FIRST_LAYER = ["Attention_5", *matmuls([5])], ["Attention_0", *matmuls([0])]
WEIGHTS_ONLY = ["MatMul", "Attention"]  # not Gather or EmbedLayerNormalization: the embedding tables stay float
# name -> quantize() changes to localcr's INT8_QUANTISATION (today's copy); "float" is the float copy itself
VARIANTS = {
    "float": None,
    "today": {},
    "constb": {"extra_options": {"DefaultTensorType": 1, "MatMulConstBOnly": True}},
    "embed-float": {"op_types_to_quantize": WEIGHTS_ONLY},
    "embed-attn-float": {"op_types_to_quantize": ["MatMul"]},
    "embed-last-float": {"op_types_to_quantize": WEIGHTS_ONLY, "nodes_to_exclude": LAST_LAYER},
    "embed-first-float": {"op_types_to_quantize": WEIGHTS_ONLY, "nodes_to_exclude": FIRST_LAYER},
    "embed-ffn2-float": {"op_types_to_quantize": WEIGHTS_ONLY, "nodes_to_exclude": matmuls(range(6), ["output"])},
    "embed-float-reduce-range": {"op_types_to_quantize": WEIGHTS_ONLY, "reduce_range": True},
    "embed-float-quint8": {"op_types_to_quantize": WEIGHTS_ONLY, "weight_type": "QUInt8"},
    "embed-float-per-tensor": {"op_types_to_quantize": WEIGHTS_ONLY, "per_channel": False},
}
SETS = ("anthropic-codebase", "xquad-en", "xquad-de", "financebench-dev")
KS = (5, 10, 20)


def make_copies(names: list[str], float_copy: Path, work: Path) -> dict[str, Path]:
    """Each named variant's ONNX copy (its graph, the weights beside it) under work/copies (the float copy itself for
    "float")."""
    from localcr.embeddings.onnx_export import GRAPH, quantize

    folder = work / "copies"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in names:
        if VARIANTS[name] is None:
            files[name] = float_copy
            continue
        files[name] = folder / name / GRAPH
        files[name].parent.mkdir(exist_ok=True)
        quantize(float_copy, files[name], **VARIANTS[name])
    return files


def code_windows(data: Path, limit: int, embedder) -> list[str]:
    """The first windows of the code set with structural contexts."""
    from localcr.documents import import_prechunked
    from localcr.structure import structural_contexts

    docs = import_prechunked(corpus_files(set_directory(data, "anthropic-codebase"))[0])
    for d in docs:
        structural_contexts(d, d.given_chunks)
    return [w.text for w in embedder.windows([c for d in docs for c in d.given_chunks])][:limit]


def closeness(args, files: dict[str, Path]) -> str:
    from dataclasses import replace

    from localcr.embeddings import Embedder
    from localcr.embeddings.onnx import OnnxBackend
    from localcr.embeddings.onnx_export import copy_files
    from localcr.models import load_registry

    embedder = Embedder(load_registry().require("embedder", "minilm"))
    spec, path = embedder.spec, embedder.spec.resolve()
    windows = {"code": code_windows(args.data, args.windows, embedder),
               "filings": filing_windows(set_directory(args.data, "financebench-dev") / "docs", 2, args.windows, embedder)}
    reference = {part: embedder.backend.encode(texts) for part, texts in windows.items()}
    rows = []
    for name, file in files.items():
        backend = OnnxBackend(replace(spec, params={**spec.params, "batch_size": args.batch or spec.batch_size}), path, file)
        cells = []
        for part, texts in windows.items():
            cosine = (backend.encode(texts) * reference[part]).sum(axis=1)  # both normalised
            cells.append(f"{cosine.min():.4f} / {np.percentile(cosine, 1):.4f} / {cosine.mean():.5f}")
        seconds, _ = timed(backend, windows["filings"], embedder.encode_batch, args.repeats)
        parts = copy_files(file)
        rows.append([name, f"{sum(p.stat().st_size for p in parts) / 1e6:.0f}",
                     hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()[:12], *cells,
                     f"{len(windows['filings']) / seconds:.1f}"])
        print(rows[-1], flush=True)
    return (f"{len(windows['code'])} code windows, {len(windows['filings'])} filing windows (2 filings); batches of "
            f"{args.batch or spec.batch_size}, {embedder.encode_batch} windows a call; "
            f"{embedder.backend.session.get_session_options().intra_op_num_threads} threads\n\n" +
            table(["copy", "MB", "sha256", "cosine to float, code: min / 1st percentile / mean",
                   "filings: min / 1st percentile / mean", "filing windows/s"], rows))


def quality(args, files: dict[str, Path], sets: list[str]) -> list[list]:
    """Pass@5/10/20 dense and hybrid of each set with each copy: rows of (set, copy, config, pass@k..., build)."""
    from localcr import evaluation
    from localcr.embeddings.onnx_export import copy_files, copy_path, is_checked, stamp
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.search import Index

    rows = []
    models_dir = os.environ.get("LOCALCR_MODELS_DIR")
    for name, file in files.items():
        registry = load_registry(registry_file(args.work, "onnx" if VARIANTS[name] is None else "onnx-int8"))
        if VARIANTS[name] is not None:  # where runtime = "onnx-int8" finds its copy, in a models folder of its own
            os.environ["LOCALCR_MODELS_DIR"] = str(args.work / f"models-{name}")
            target = copy_path(registry.require("embedder", "minilm"))
            pairs = zip(copy_files(file), copy_files(target))
            if not is_checked(target) or any(a.read_bytes() != b.read_bytes() for a, b in pairs):
                shutil.copytree(file.parent, target.parent, dirs_exist_ok=True)  # the graph names its weights' file
                stamp(target)
        os.environ["LOCALCR_CACHE_DIR"] = str(args.work / f"cache-{name}")
        for set_name in sets:
            source, queries_file = sources(set_directory(args.data, set_name))
            started = time.perf_counter()
            summary = build_index([source], args.work / f"index-{set_name}-{name}", registry, embedder="minilm",
                                  contexts="structural", progress=False, log=lambda message: None)
            seconds = time.perf_counter() - started
            built = f"{summary.embedded} windows, {summary.embedded / seconds:.1f}/s" if summary.embedded else "reused"
            index = Index(args.work / f"index-{set_name}-{name}", registry)
            queries = evaluation.load_queries(queries_file, index)
            configs = [evaluation.parse_config(c) for c in ("dense", "hybrid")]
            for result in evaluation.evaluate(index, queries, configs, KS, progress=False):
                rows.append([set_name, name, result.config.name, len(queries.queries),
                             *[100 * result.metrics[f"pass@{k}"] for k in KS], built])
                print(rows[-1], flush=True)
        if models_dir is None:
            os.environ.pop("LOCALCR_MODELS_DIR", None)
        else:
            os.environ["LOCALCR_MODELS_DIR"] = models_dir
    return rows


def against_float(rows: list[list]) -> list[list]:
    """Each quantised copy's Pass@k minus the float copy's, per set and config, and the largest loss."""
    floats = {(r[0], r[2]): r[4:4 + len(KS)] for r in rows if r[1] == "float"}
    out = []
    for r in rows:
        if r[1] != "float" and (r[0], r[2]) in floats:
            deltas = [now - before for now, before in zip(r[4:4 + len(KS)], floats[(r[0], r[2])])]
            out.append([r[0], r[1], r[2], " / ".join(f"{d:+.2f}" for d in deltas), f"{min(deltas):+.2f}"])
    return out


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.set_defaults(work=Path("/tmp/localcr-bench/int8_copies"))
    p.add_argument("--copies", default=",".join(VARIANTS), help=f"comma-separated of: {', '.join(VARIANTS)}")
    p.add_argument("--windows", type=int, default=300, help="windows of each kind (code, filings) for closeness and speed")
    p.add_argument("--repeats", type=int, default=2, help="passes over the filing windows (the best is kept)")
    p.add_argument("--batch", type=int, help="windows a batch for closeness and speed (default: the registry's)")
    p.add_argument("--quality", action="store_true", help="Pass@k of each copy on --sets instead of closeness and speed")
    p.add_argument("--sets", default=",".join(SETS), help=f"with --quality: comma-separated (default {','.join(SETS)})")
    args = p.parse_args()
    from localcr.embeddings.onnx_export import checked_copy
    from localcr.models import load_registry

    names = args.copies.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown copies {unknown}: choose from {', '.join(VARIANTS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    spec = load_registry().require("embedder", "minilm")
    files = make_copies(names, checked_copy(spec, spec.resolve()), args.work)
    started = time.strftime("%H:%M UTC", time.gmtime())
    head = f"machine: {machine()}; started {started}, load {os.getloadavg()[0]:.2f}"
    if args.quality:
        rows = quality(args, files, args.sets.split(","))
        text = "\n\n".join([head, table(["set", "copy", "config", "queries", *[f"Pass@{k}" for k in KS], "build"], rows),
                            table(["set", "copy", "config", "Pass@5 / 10 / 20 against float", "worst of the three"], against_float(rows))])
    else:
        text = "\n\n".join([head, closeness(args, files)])
    text += f"\n\nended {time.strftime('%H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.2f}"
    print(text)
    name = "int8_copies-quality" if args.quality else f"int8_copies{f'-batch{args.batch}' if args.batch else ''}"
    (Path(__file__).resolve().parents[1] / "results" / f"{name}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
