"""sentence-transformers models run by ONNX Runtime: the model's own `tokenizer.json` through the `tokenizers`
package and an ONNX copy of its network (Transformer, Pooling, Normalize), so embedding a query imports neither
torch nor transformers (about 7 s of imports before a search of a few milliseconds).

The ONNX copy it runs is made once from the model's own weights and checked against sentence-transformers' vectors
by `localcr.embeddings.onnx_export`, which owns the copies (where they live, making and checking them) and loads
this backend on a checked one (`load_onnx_backend`, what the registry's table names); this module only runs a
copy, so the two do not import each other.

`runtime = "onnx-int8"` runs a copy quantised to 8 bits (weights per output channel, activations per batch):
about 1.7 times the windows/s of the float copy on long windows, and other vectors (another fingerprint, so other
cache entries and indexes), chosen by the Pass@k it keeps (BENCHMARKS.md), never by default.
"""
from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import numpy as np

from localcr.embeddings.backend import Backend
from localcr.errors import LocalcrError
from localcr.models import ModelSpec

# The sentence-transformers modules the exported graph reproduces, and the architectures exported and checked:
# BERT (MiniLM; BGE, E5 and GTE small/base are BERTs too). Anything else runs on torch.
MODULES = {"sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
           "sentence_transformers.models.Normalize"}
MODEL_TYPES = ("bert",)


def unsupported(path: Path) -> str | None:
    """Why ONNX Runtime cannot run the sentence-transformers directory at path, or None if it can."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        model_type = json.loads((path / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as exc:
        return f"no readable modules.json and config.json ({type(exc).__name__})"
    others = sorted({m.get("type") for m in modules if isinstance(m, dict)} - MODULES)
    if others:
        return f"it has modules the export does not cover ({', '.join(map(str, others))})"
    if model_type not in MODEL_TYPES:
        return f"its architecture {model_type!r} is not one the export covers ({', '.join(MODEL_TYPES)})"
    if not (path / "tokenizer.json").is_file():
        return "it has no tokenizer.json"
    return None


class OnnxBackend(Backend):
    added_tokens = 2  # [CLS] and [SEP]

    def __init__(self, spec: ModelSpec, path: Path, model_file: Path, threads: int | None = None, purpose: str = "build"):
        """Run the ONNX file model_file of the model at path (onnx_export.load_onnx_backend: its checked copy), with
        the session options of its purpose (localcr.embeddings.PURPOSES)."""
        import onnxruntime
        import tokenizers

        from localcr.threads import default_threads

        self.spec, self.path = spec, path
        settings = _sentence_transformers_settings(path)
        self.max_length = min(spec.max_length, settings["max_seq_length"])
        self.lowercase = settings["do_lower_case"]
        # tokenizer.json may carry its own padding and truncation (MiniLM's: pad and cut at 128): this tokenizer
        # cuts texts at the model's length as sentence-transformers does, `tokenizer` counts whole texts
        self.truncating = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
        self.truncating.no_padding()
        self.truncating.enable_truncation(self.max_length)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if purpose == "build" else "0")
        options.add_session_config_entry("session.disable_prepacking", "1" if purpose == "one query" else "0")
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's business
        try:
            self.session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged file fails with onnxruntime's own exception types
            raise LocalcrError(f"{spec.where}: cannot load the ONNX copy {model_file} ({type(exc).__name__}: {exc}): "
                               "delete it and it is made again") from None
        self.dimension = int(self.session.get_outputs()[0].shape[1])

    @cached_property
    def tokenizer(self):
        """The tokenizer that counts and clips whole texts, read when first used: a document's windows need it, a
        query only `truncating` (each reading of tokenizer.json takes some 20 ms of a search's start)."""
        import tokenizers

        tokenizer = tokenizers.Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(self._cased(texts), add_special_tokens=False)]

    def clip(self, text: str, n: int) -> str:
        ids = self.tokenizer.encode(self._cased([text])[0], add_special_tokens=False).ids[:n]
        return self.tokenizer.decode(ids, skip_special_tokens=False)  # as transformers decodes: [UNK] stays

    def encode(self, texts: list[str]) -> np.ndarray:
        """Batches of similar lengths (less padding), each padded to its longest text; vectors in input order."""
        ids = [e.ids for e in self.truncating.encode_batch(self._cased(texts))]
        order = np.argsort([len(i) for i in ids], kind="stable")
        out = np.empty((len(texts), self.dimension), np.float32)
        batch = max(self.spec.batch_size, 1)
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            width = max(len(ids[r]) for r in rows)
            input_ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.int64)
            for i, r in enumerate(rows):
                input_ids[i, :len(ids[r])] = ids[r]
                mask[i, :len(ids[r])] = 1
            out[rows] = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        if self.spec.normalize:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def _cased(self, texts: list[str]) -> list[str]:
        return [t.lower() for t in texts] if self.lowercase else list(texts)


def _sentence_transformers_settings(path: Path) -> dict:
    """max_seq_length and do_lower_case as sentence-transformers reads them (its config, else the model's limit)."""
    try:
        settings = json.loads((path / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    if not settings.get("max_seq_length"):
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        settings["max_seq_length"] = config.get("max_position_embeddings", 512)
    return {"max_seq_length": int(settings["max_seq_length"]), "do_lower_case": bool(settings.get("do_lower_case"))}

