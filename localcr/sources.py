"""Models already on this machine, where other local-model tools keep them: Ollama, LM Studio and the Hugging Face
cache. localcr only reads these stores: it never downloads, never writes to them, never starts their programs.

`models.toml` names a model by where it lives (`ollama = "qwen2.5:7b-instruct"`, `lmstudio = "publisher/repo"`,
`hub = "BAAI/bge-reranker-base"`); `resolve` turns that into a local file or directory, and a miss is one line
saying where localcr looked and how to bring the model in. `discover` lists everything these stores hold, by role.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from localcr.errors import LocalcrError
from localcr.gguf_file import read_gguf_header

SOURCES = ("ollama", "lmstudio", "hub")
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"


# --- Ollama: manifests name content-addressed blobs, and the model layer's blob is a GGUF file


def ollama_roots() -> list[Path]:
    """Ollama's model stores: $OLLAMA_MODELS as Ollama itself reads it, else the user's ~/.ollama/models and the
    store of the service that Ollama's Linux installer sets up (its home is /usr/share/ollama)."""
    if os.environ.get("OLLAMA_MODELS"):
        return [Path(os.environ["OLLAMA_MODELS"]).expanduser()]
    return [Path.home() / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]


def _ollama_manifest_path(root: Path, name: str) -> Path:
    """`[host/][namespace/]model[:tag]` -> its manifest file, with Ollama's defaults (registry.ollama.ai, library,
    latest)."""
    model, _, tag = name.partition(":")
    parts = model.split("/")
    if len(parts) > 3 or not all(re.fullmatch(r"\w[\w.-]*", p) for p in [*parts, tag or "latest"]):
        raise LocalcrError(f"ollama = {name!r} is not an Ollama model name (model[:tag], namespace/model[:tag])")
    parts = (["registry.ollama.ai", "library"][: 3 - len(parts)]) + parts
    return root / "manifests" / Path(*parts) / (tag or "latest")


def ollama_model(name: str) -> Path:
    """The GGUF blob of an Ollama model, checked to exist; LocalcrError naming the manifest or blob at fault."""
    roots = ollama_roots()
    manifests = [_ollama_manifest_path(root, name) for root in roots]
    for root, manifest in zip(roots, manifests):
        if manifest.is_file():
            return _ollama_blob(root, manifest, name)
    raise LocalcrError(
        f"ollama = {name!r}: no manifest at {' or '.join(map(str, manifests))} ($OLLAMA_MODELS names another store): "
        f"run `ollama pull {name}` where Ollama can reach its registry, or copy that machine's store here"
    )


def _ollama_blob(root: Path, manifest: Path, name: str) -> Path:
    try:
        layers = json.loads(manifest.read_text(encoding="utf-8"))["layers"]
        digest = next(layer["digest"] for layer in layers if layer.get("mediaType") == OLLAMA_MODEL_LAYER)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise LocalcrError(f"ollama = {name!r}: {manifest} is not a readable Ollama manifest: "
                           f"`ollama pull {name}` writes it again") from None
    except StopIteration:
        raise LocalcrError(f"ollama = {name!r}: {manifest} lists no model layer ({OLLAMA_MODEL_LAYER})") from None
    if not isinstance(digest, str) or not re.fullmatch(r"sha256[:-][0-9a-f]{64}", digest):
        raise LocalcrError(f"ollama = {name!r}: {manifest} names the model layer {digest!r}, not a sha256 digest")
    blob = root / "blobs" / digest.replace(":", "-")
    if not blob.is_file():
        raise LocalcrError(f"ollama = {name!r}: its manifest names blob {blob.name}, which is not in {blob.parent}: "
                           f"the store is incomplete; `ollama pull {name}` fetches it again")
    return blob


def _ollama_models() -> list[tuple[str, Path, Path]]:
    """(name as `ollama list` shows it, store, manifest) of every model in the stores; a name in two stores once."""
    found: dict[str, tuple[str, Path, Path]] = {}
    for root in ollama_roots():
        manifests = root / "manifests"
        for manifest in sorted(manifests.glob("*/*/*/*")) if manifests.is_dir() else []:
            host, namespace, model, tag = manifest.relative_to(manifests).parts
            prefix = "" if host == "registry.ollama.ai" and namespace == "library" else (
                f"{namespace}/" if host == "registry.ollama.ai" else f"{host}/{namespace}/")
            found.setdefault(f"{prefix}{model}:{tag}", (f"{prefix}{model}:{tag}", root, manifest))
    return list(found.values())


# --- LM Studio: plain GGUF files under <models>/<publisher>/<repo>/


def lmstudio_roots() -> list[Path]:
    """LM Studio's model folders: the current default and the one versions before 0.3 used."""
    home = Path.home()
    return [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]


def lmstudio_model(name: str) -> Path:
    """`publisher/repo` (its one model file) or `publisher/repo/file.gguf`, from the first LM Studio folder that has it."""
    parts = name.strip("/").split("/")
    if len(parts) not in (2, 3) or any(p in ("", ".", "..") for p in parts):
        raise LocalcrError(f"lmstudio = {name!r}: write publisher/repo or publisher/repo/file.gguf, as LM Studio's "
                           "models folder lays them out")
    roots = lmstudio_roots()
    for root in roots:
        target = root.joinpath(*parts)
        if target.exists():
            return target if target.is_file() else gguf_in(target, f"lmstudio = {name!r}")
    raise LocalcrError(f"lmstudio = {name!r}: not in {' or '.join(map(str, roots))}: download it in LM Studio, or "
                       "copy its folder into one of these")


def gguf_in(directory: Path, what: str) -> Path:
    """The one model file of a folder of GGUF files (vision projectors left out; the first part of a split model)."""
    files = sorted(p for p in directory.glob("*.gguf") if not p.name.startswith("mmproj") and _first_part(p.name))
    if len(files) == 1:
        return files[0]
    if not files:
        raise LocalcrError(f"{what}: {directory} holds no .gguf model file")
    raise LocalcrError(f"{what}: {directory} holds {len(files)} GGUF files ({', '.join(p.name for p in files)}): "
                       "add the file name after a /")


def _first_part(filename: str) -> bool:
    split = re.search(r"-(\d{5})-of-\d{5}\.gguf$", filename)
    return split is None or split[1] == "00001"


# --- the Hugging Face cache: models--org--name/snapshots/<revision>/, refs/main naming the current revision


def hf_cache_root() -> Path:
    """Where huggingface_hub caches models: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def hub_model(repo: str) -> Path:
    """`org/name` (its snapshot directory) or `org/name/path/in/repo`, from the local Hugging Face cache only."""
    parts = repo.strip("/").split("/")
    if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
        raise LocalcrError(f"hub = {repo!r}: write a model id such as \"BAAI/bge-reranker-base\"")
    root = hf_cache_root()
    folder = root / f"models--{parts[0]}--{parts[1]}"
    snapshot = _snapshot(folder)
    if snapshot is None:
        raise LocalcrError(
            f"hub = {repo!r}: not in the local Hugging Face cache ({folder} has no snapshot; $HF_HUB_CACHE or $HF_HOME "
            "move the cache) and localcr never downloads: on a connected machine run "
            f"`huggingface-cli download {parts[0]}/{parts[1]}`, then copy its cache folder {folder.name} into {root}"
        )
    target = snapshot.joinpath(*parts[2:])
    if not target.exists():
        dangling = target.is_symlink()
        raise LocalcrError(f"hub = {repo!r}: {target} " + ("points at a blob that is missing from the cache (an "
                           "interrupted download): download it again" if dangling else "is not in the cached snapshot"))
    return target


def _snapshot(folder: Path) -> Path | None:
    """The revision refs/main names, else the newest snapshot (a cache filled with a pinned revision has no refs/main)."""
    try:
        revision = (folder / "refs" / "main").read_text().strip()
        if (folder / "snapshots" / revision).is_dir():
            return folder / "snapshots" / revision
    except OSError:
        pass
    snapshots = [p for p in (folder / "snapshots").glob("*") if p.is_dir()]
    return max(snapshots, key=lambda p: p.stat().st_mtime) if snapshots else None


RESOLVERS = {"ollama": ollama_model, "lmstudio": lmstudio_model, "hub": hub_model}


def resolve(source: str, name: str) -> Path:
    """The local file or directory of a model named in one of the stores above."""
    return RESOLVERS[source](name)


# --- discovery


@dataclass(frozen=True)
class Found:
    """A model found in a local store: what it is, how big, whether localcr can run it, and the models.toml line."""

    role: str  # llm, embedder, reranker
    source: str  # ollama, lmstudio, hub
    name: str  # what models.toml takes as `source = "name"`
    path: Path
    bytes: int
    runnable: bool
    note: str  # why not runnable, or what runs it
    chat: bool = False  # an LLM whose GGUF carries a chat template

    @property
    def toml_lines(self) -> list[str]:
        """The models.toml entry that uses this model."""
        entry = re.sub(r"[^\w.-]+", "-", self.name.split("/")[-1].removesuffix(".gguf")).strip("-").lower()
        lines = [f"[{self.role}.{json.dumps(entry) if '.' in entry else entry}]", f"{self.source} = {json.dumps(self.name)}"]
        if self.chat:
            lines.append('prompt_style = "chat"')
        return lines


def discover() -> list[Found]:
    """Every model in Ollama's store, LM Studio's folders and the Hugging Face cache, skipping what cannot be read."""
    found: list[Found] = []
    for name, root, manifest in _ollama_models():
        try:
            blob = _ollama_blob(root, manifest, name)
        except LocalcrError:
            continue
        found += _gguf_found("ollama", name, blob)
    for root in lmstudio_roots():
        for path in sorted(root.glob("*/*/*.gguf")) if root.is_dir() else []:
            if not path.name.startswith("mmproj") and _first_part(path.name):
                found += _gguf_found("lmstudio", "/".join(path.relative_to(root).parts), path)
    cache = hf_cache_root()
    for folder in sorted(cache.glob("models--*--*")) if cache.is_dir() else []:
        repo = folder.name.removeprefix("models--").replace("--", "/", 1)
        snapshot = _snapshot(folder)
        if snapshot is None:
            continue
        ggufs = [p for p in sorted(snapshot.rglob("*.gguf")) if not p.name.startswith("mmproj") and _first_part(p.name)]
        for path in ggufs:
            found += _gguf_found("hub", f"{repo}/{path.relative_to(snapshot).as_posix()}", path)
        if not ggufs:
            found += _directory_found(repo, snapshot)
    return found


def _gguf_found(source: str, name: str, path: Path) -> list[Found]:
    try:
        header = read_gguf_header(path)
        size = path.stat().st_size
    except LocalcrError:
        return []
    role = header.role
    if role == "embedder":
        return [Found(role, source, name, path, size, False,
                      f"GGUF {header.architecture} embedder: localcr embeds with sentence-transformers directories")]
    return [Found(role, source, name, path, size, True, f"GGUF {header.architecture or 'model'}, run by llama.cpp",
                  chat=role == "llm" and "tokenizer.chat_template" in header.metadata)]


def _directory_found(repo: str, snapshot: Path) -> list[Found]:
    try:
        config = json.loads((snapshot / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return []
    if not isinstance(config, dict):
        return []
    architectures = [str(a) for a in config.get("architectures") or []]
    size = sum(p.stat().st_size for p in snapshot.rglob("*") if p.is_file())
    if any(a.endswith("ForSequenceClassification") for a in architectures) and len(config.get("id2label") or {0: ""}) == 1:
        return [Found("reranker", "hub", repo, snapshot, size, True, "cross-encoder, run by FlagEmbedding (torch)")]
    if (snapshot / "modules.json").is_file() or (snapshot / "config_sentence_transformers.json").is_file():
        return [Found("embedder", "hub", repo, snapshot, size, True, "sentence-transformers model")]
    if any(a.endswith(("ForCausalLM", "ForConditionalGeneration")) for a in architectures):
        return [Found("llm", "hub", repo, snapshot, size, False,
                      "safetensors weights: localcr runs LLMs as GGUF (convert with llama.cpp's convert_hf_to_gguf.py)")]
    return []
