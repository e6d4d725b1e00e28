"""Search configurations, the ways of searching an evaluation compares, from their written form: a mode plus
options ("hybrid,fusion=weighted,alpha=0.3", "dense,rerank", "lexical,window=1"); and the cut-offs k."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from localcr.errors import ArgumentError
from localcr.filters import Filter
from localcr.search import DEFAULT_ALPHA, DEFAULT_CANDIDATES, DEFAULT_FUSION, FUSIONS, MODES


@dataclass
class SearchConfig:
    """One way of searching, as `Index.search` takes it."""

    name: str
    mode: str = "hybrid"
    fusion: str = DEFAULT_FUSION
    alpha: float = DEFAULT_ALPHA
    rerank: bool = False
    expand: bool = False  # the query joined by the LLM's passage (localcr.expansion)
    navigate: bool = False  # the sections the LLM names in the first documents' outlines first (localcr.navigation)
    window: int = 0
    candidates: int = DEFAULT_CANDIDATES
    glob: tuple[str, ...] = ()  # search only the documents these pass (localcr.filters)
    kind: str | None = None
    lang: str | None = None

    @property
    def filtered(self) -> bool:
        return bool(self.glob) or self.kind is not None or self.lang is not None


_CONFIG_HELP = (
    "write MODE[,option...]: MODE is hybrid, dense or lexical; options are fusion=auto|dynamic|weighted|rrf, alpha=0..1, "
    "rerank, expand, navigate, window=N, candidates=N, glob=PATTERN (repeatable), kind=KIND, lang=CODE, name=LABEL (e.g. "
    "\"hybrid,fusion=weighted,alpha=0.3\" or \"dense,rerank\" or \"hybrid,glob=docs/**\")"
)


def parse_config(config: str) -> SearchConfig:
    """A configuration from its written form, e.g. "hybrid,fusion=weighted,alpha=0.3" or "lexical,window=1"."""
    def bad(problem: str) -> ArgumentError:
        return ArgumentError(("config", config), ": " + problem)

    parts = [p.strip() for p in config.split(",")]
    mode = parts[0].lower()
    if mode not in MODES:
        raise bad(f"unknown search mode {parts[0]!r}: {_CONFIG_HELP}")
    cfg = SearchConfig(name="", mode=mode)
    given: set[str] = set()
    for part in parts[1:]:
        if not part:
            raise bad(f"empty option: {_CONFIG_HELP}")
        key, sep, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if key in given and key != "glob":
            raise bad(f"{key} given twice")
        given.add(key)
        problem = _set_option(cfg, key, value, bool(sep), part)
        if problem:
            raise bad(problem)
    if mode != "hybrid" and given & {"fusion", "alpha"}:
        raise bad("fusion and alpha apply only to hybrid search")
    if "alpha" in given and cfg.fusion != "weighted":
        raise bad("alpha applies only to fusion=weighted")
    try:
        Filter.of(cfg.glob, cfg.kind, cfg.lang)
    except ArgumentError as exc:
        raise bad(exc.spell(lambda name, value: f"{name}={value}")) from None
    if not cfg.name:
        cfg.name = describe(cfg)
    return cfg


def _set_option(cfg: SearchConfig, key: str, value: str, has_value: bool, part: str) -> str | None:
    """Set one `key=value` option of a configuration; what is wrong with it, if anything."""
    if key in ("rerank", "expand", "navigate"):
        flag = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False, "0": False, "off": False}
        if has_value and value.lower() not in flag:
            return f"{key}={value!r}: write {key}, {key}=true or {key}=false"
        setattr(cfg, key, flag[value.lower()] if has_value else True)
    elif not has_value or not value:
        return f"option {part!r} needs a value: {_CONFIG_HELP}"
    elif key == "fusion":
        if value.lower() not in FUSIONS:
            return f"fusion={value!r}: use {' or '.join(FUSIONS)}"
        cfg.fusion = value.lower()
    elif key == "alpha":
        try:
            cfg.alpha = float(value)
        except ValueError:
            cfg.alpha = math.nan
        if not 0.0 <= cfg.alpha <= 1.0:
            return f"alpha={value!r}: a number from 0 to 1 (weight of dense scores)"
    elif key in ("window", "candidates"):
        if not re.fullmatch(r"\d+", value) or (key == "candidates" and int(value) < 1):
            return f"{key}={value!r}: a whole number >= {0 if key == 'window' else 1}"
        setattr(cfg, key, int(value))
    elif key == "glob":
        cfg.glob += (value,)
    elif key in ("kind", "lang"):
        setattr(cfg, key, value)
    elif key == "name":
        cfg.name = value
    else:
        return f"unknown option {key!r}: {_CONFIG_HELP}"
    return None


def describe(cfg: SearchConfig) -> str:
    """The canonical spelling of a configuration (defaults left out), used as its name."""
    parts = [cfg.mode]
    if cfg.mode == "hybrid" and cfg.fusion != SearchConfig.fusion:
        parts.append(f"fusion={cfg.fusion}")
    if cfg.mode == "hybrid" and cfg.fusion == "weighted" and cfg.alpha != SearchConfig.alpha:
        parts.append(f"alpha={cfg.alpha:g}")
    parts += [flag for flag in ("expand", "navigate", "rerank") if getattr(cfg, flag)]
    if cfg.candidates != SearchConfig.candidates:
        parts.append(f"candidates={cfg.candidates}")
    if cfg.window:
        parts.append(f"window={cfg.window}")
    parts += [f"glob={g}" for g in cfg.glob] + [f"{key}={getattr(cfg, key)}" for key in ("kind", "lang") if getattr(cfg, key)]
    return ",".join(parts)


def parse_ks(ks: str) -> tuple[int, ...]:
    """Cut-offs from their written form, e.g. "5,10,20" -> (5, 10, 20): sorted, without repeats."""
    parts = [p.strip() for p in ks.split(",")]
    if not all(re.fullmatch(r"\d+", p) and int(p) >= 1 for p in parts):
        raise ArgumentError(("ks", ks), ": write whole numbers >= 1 separated by commas, e.g. 5,10,20")
    return tuple(sorted({int(p) for p in parts}))
