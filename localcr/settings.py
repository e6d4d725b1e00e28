"""Defaults that stay: the index, the model registry, the default models and k, set once in an environment variable
or the user's config file instead of on every command.

A setting comes from the command line, else its environment variable, else the config file, else localcr's own
default. It is resolved here, apart from the commands, so that every command and `localcr config` (which says where
each value came from) follow the one order."""
from __future__ import annotations

import dataclasses
import os
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from localcr.errors import LocalcrError
from localcr.models import DEFAULT_REGISTRY, Registry

MODEL_ROLES = ("embedder", "llm", "reranker")  # the settings that stand in for the registry's [defaults]


def _user_dir(kind: str) -> Path:
    """localcr's folder in the platform's directory for a user's configuration (kind "config") or data ("data")."""
    if sys.platform == "win32":
        variable, fallback = ("APPDATA", "Roaming") if kind == "config" else ("LOCALAPPDATA", "Local")
        return Path(os.environ.get(variable) or Path.home() / "AppData" / fallback) / "localcr"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "localcr"
    variable, fallback = ("XDG_CONFIG_HOME", ".config") if kind == "config" else ("XDG_DATA_HOME", ".local/share")
    return Path(os.environ.get(variable) or Path.home() / fallback) / "localcr"


def config_path() -> Path:
    """$LOCALCR_CONFIG, else config.toml in the platform's configuration directory."""
    return Path(os.environ.get("LOCALCR_CONFIG") or _user_dir("config") / "config.toml").expanduser()


def default_index() -> str:
    """Where an index lives when nothing names one: in the platform's data directory."""
    return str(_user_dir("data") / "index")


@dataclass(frozen=True)
class Setting:
    name: str  # its key in config.toml: search.k is the `k` of the [search] table
    env: str
    kind: str  # "path" (~ expanded), "name" (of a model in the registry) or "count" (a whole number >= 1)
    default: object | Callable[[], object]  # None for a model: the registry's [defaults] names it


# What each is for: docs/commands.md, "Settings".
SETTINGS = (
    Setting("index", "LOCALCR_INDEX", "path", default_index),
    Setting("models", "LOCALCR_MODELS", "path", str(DEFAULT_REGISTRY)),
    Setting("embedder", "LOCALCR_EMBEDDER", "name", None),
    Setting("llm", "LOCALCR_LLM", "name", None),
    Setting("reranker", "LOCALCR_RERANKER", "name", None),
    Setting("search.k", "LOCALCR_SEARCH_K", "count", 5),
    Setting("ask.k", "LOCALCR_ASK_K", "count", 3),  # localcr.answers.reader.DEFAULT_SOURCES, the API's (a test compares)
)


@dataclass(frozen=True)
class Value:
    value: object
    source: str  # "flag", "env", "file" or "default"
    where: str  # the flag, the variable or the file it came from ("" for a default)


def resolve(flags: dict[str, object] | None = None) -> dict[str, Value]:
    """Every setting's value and where it came from: flags (name: value; None where not given), else the
    environment, else the config file, else the default. A bad value is a LocalcrError naming where it was written."""
    flags, path = flags or {}, config_path()
    written = read_config(path)
    resolved = {}
    for setting in SETTINGS:
        text = os.environ.get(setting.env)
        if flags.get(setting.name) is not None:
            resolved[setting.name] = Value(flags[setting.name], "flag", f"--{setting.name}")
        elif text:
            value = int(text) if setting.kind == "count" and text.strip().isdigit() else text
            resolved[setting.name] = Value(_checked(setting, value, setting.env), "env", setting.env)
        elif setting.name in written:
            resolved[setting.name] = Value(written[setting.name], "file", str(path))
        else:
            default = setting.default() if callable(setting.default) else setting.default
            resolved[setting.name] = Value(default, "default", "")
    return resolved


def read_config(path: Path) -> dict[str, object]:
    """The settings a config file holds, each checked (none where there is no file): a mistake in it is one
    LocalcrError naming the file and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise LocalcrError(f"{path}: cannot read the config file ({exc})") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LocalcrError(f"{path}: not valid TOML ({exc}): fix the syntax") from None
    known = {setting.name: setting for setting in SETTINGS}
    found = {}
    for key, value in _flattened(raw):
        if key not in known:
            raise LocalcrError(f"{path}: unknown setting {key!r}; the settings are {', '.join(known)}")
        found[key] = _checked(known[key], value, f"{path}: {key}")
    return found


def _flattened(table: dict, prefix: str = ""):
    """(dotted key, value) of every value in a TOML table: [search] k = 5 is search.k."""
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flattened(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _checked(setting: Setting, value: object, where: str) -> object:
    if setting.kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LocalcrError(f"{where}: {value!r} is not a whole number >= 1")
        return value
    if not isinstance(value, str) or not value.strip():
        raise LocalcrError(f"{where}: {value!r} is not a {'path' if setting.kind == 'path' else 'model name'} in quotes")
    return os.path.expanduser(value) if setting.kind == "path" else value


def with_default_models(registry: Registry, resolved: dict[str, Value]) -> Registry:
    """The registry with the default models the settings name in place of its [defaults]; an index built before
    keeps the models it was built with, as with [defaults]."""
    chosen = {role: resolved[role] for role in MODEL_ROLES if resolved[role].value is not None}
    for role, setting in chosen.items():
        if setting.value not in registry.models[role]:
            known = ", ".join(registry.models[role]) or "none"
            raise LocalcrError(f"{registry.path}: no {role} named {setting.value!r} (configured: {known}), "
                               f"as {setting.where} asks")
    return dataclasses.replace(registry, defaults={**registry.defaults, **{role: v.value for role, v in chosen.items()}})
