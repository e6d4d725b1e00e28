"""The command reference, docs/commands.md, made from the command line itself: every command and option with its
default and help as `localcr COMMAND --help` gives them (localcr/cli.py), and from this module what no option
declaration holds: the settings' descriptions, every environment variable localcr reads, the exit codes, shell
completion and the fields of every `--json` output.

    python -m localcr.reference            # writes docs/commands.md
    python -m localcr.reference --check    # exit 1, saying so, when docs/commands.md is not what it would write

tests/test_reference.py regenerates the page and checks this module against the code: every option, every variable
the source reads, every field a command's JSON holds. Nothing here is imported by a command."""
from __future__ import annotations

import inspect
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import click

PAGE = Path(__file__).resolve().parent.parent / "docs" / "commands.md"
REGENERATE = "python -m localcr.reference"
WIDTH = 118

# The commands in the order a reader meets them; one left out comes last (and a test says so).
ORDER = ("index", "watch", "search", "ask", "demo", "eval", "make-qa", "serve", "mcp", "stats", "compact", "config",
         "models", "cache")

# Where each command is explained at length.
SEE = {
    "index": "[indexing-and-contexts.md](indexing-and-contexts.md), [files-and-languages.md](files-and-languages.md)",
    "watch": "[indexing-and-contexts.md](indexing-and-contexts.md#keeping-an-index-current-localcr-watch)",
    "search": "[searching.md](searching.md)",
    "ask": "[asking.md](asking.md)",
    "demo": "[demo.md](demo.md)",
    "eval": "[evaluation.md](evaluation.md), [its HTML report](evaluation.md#an-html-report-localcr-eval---report)",
    "make-qa": "[evaluation.md](evaluation.md#no-gold-set-localcr-make-qa)",
    "serve": "[serving.md](serving.md)",
    "mcp": "[serving.md](serving.md#agents-localcr-mcp)",
    "stats": "[on-disk-layout.md](on-disk-layout.md)",
    "compact": "[on-disk-layout.md](on-disk-layout.md)",
    "config": "[Settings](#settings)",
    "models": "[models.md](models.md)",
    "cache": "[on-disk-layout.md](on-disk-layout.md)",
}

# What a command's help leaves to the reference.
NOTES = {
    "watch": "Where the operating system's notifications of changes do not arrive (some network file systems), "
             "`WATCHFILES_FORCE_POLLING=1` makes it poll the folders instead.",
    "serve": "The API's requests and answers: `/openapi.json` of a running server, and [serving.md](serving.md).",
}

INTRO = """\
Every `localcr` command and option with its default and what it does (what `localcr COMMAND --help` says), every
environment variable localcr reads, its exit codes, shell completion, and the fields of every `--json` output. An
index is named by `--index DIR` everywhere: a local directory, or a Milvus collection (`milvus://HOST:PORT/COLLECTION`,
`milvus+https://...`, `milvus-lite:PATH.db/COLLECTION`; [milvus-and-ray.md](milvus-and-ray.md)). Without `--index`, a
command opens (and `localcr index` builds) the index the `index` [setting](#settings) names: `$LOCALCR_INDEX`, else the
config file's, else `index` in the data directory (`$XDG_DATA_HOME/localcr/index`, by default
`~/.local/share/localcr/index`; on macOS `~/Library/Application Support/localcr/index`, on Windows
`%LOCALAPPDATA%\\localcr\\index`)."""

# The settings (localcr.settings.SETTINGS): what each is, and its default where the code computes it.
SETTING_TEXT = {
    "index": "the index a command opens, or `localcr index` builds (`--index`; `demo` keeps its own)",
    "models": "the model registry (`--models`)",
    "embedder": "stands in for the registry's `[defaults]` embedder where a command names none (an index keeps the "
                "embedder it was built with; [models.md](models.md))",
    "llm": "stands in for the registry's `[defaults]` LLM where a command names none",
    "reranker": "stands in for the registry's `[defaults]` reranker (`--rerank` with no name)",
    "search.k": "results `localcr search` returns (`-k`)",
    "ask.k": "sources `localcr ask` reads (`-k`)",
}
SETTING_DEFAULTS = {"index": "`index` in the data directory (above)", "models": "`models.toml` of the checkout"}

CONFIG_FILE = """\
The config file is TOML: `$LOCALCR_CONFIG`, else `config.toml` in the platform's configuration directory:
`$XDG_CONFIG_HOME/localcr/config.toml`, by default `~/.config/localcr/config.toml`; on macOS
`~/Library/Application Support/localcr/config.toml`, on Windows `%APPDATA%\\localcr\\config.toml`. None is needed.

```toml
index = "~/indexes/notes"      # ~ is expanded; a relative path is relative to the directory a command runs in
llm = "qwen2.5-coder-0.5b"     # a name in models.toml

[search]
k = 10                         # the same as search.k = 10
```

A mistake in the file or a variable (TOML that does not parse, an unknown key, a count that is not a whole number, a
model the registry does not hold) is one line naming the file or the variable, and exit 1."""

# Every environment variable localcr (or setup.sh) reads or sets, by who defines it: {group: {variable: what it does}}.
ENVIRONMENT = {
    "localcr's own": {
        "LOCALCR_INDEX": "the `index` setting: the index a command opens without `--index`",
        "LOCALCR_MODELS": "the `models` setting: the model registry file (`--models` wins)",
        "LOCALCR_EMBEDDER": "the `embedder` setting: the default embedder, in place of models.toml's `[defaults]`",
        "LOCALCR_LLM": "the `llm` setting: the default LLM, in place of models.toml's `[defaults]`",
        "LOCALCR_RERANKER": "the `reranker` setting: the default reranker, in place of models.toml's `[defaults]`",
        "LOCALCR_SEARCH_K": "the `search.k` setting: `localcr search -k`'s default",
        "LOCALCR_ASK_K": "the `ask.k` setting: `localcr ask -k`'s default",
        "LOCALCR_CONFIG": "the config file, in place of `config.toml` in the platform's configuration directory",
        "LOCALCR_DEBUG": "`1` (or `true`): as `--debug`, an error's traceback after its one line",
        "LOCALCR_TOKEN": "`localcr serve --token`: the bearer token every API request must send",
        "LOCALCR_MILVUS_TOKEN": "the token sent to a Milvus server (`user:password`, or an API key); none by default. "
                                "Never on the command line, where the shell's history keeps it",
        "LOCALCR_MILVUS_DATABASE": "the Milvus server's database that holds the index's collections (default: the "
                                   "server's `default`)",
        "LOCALCR_CACHE_DIR": "the cache every index on the machine shares: contexts, cards, embeddings, answers "
                             "(default `~/.cache/localcr`)",
        "LOCALCR_CACHE_LIMIT": "the size each cache store is kept under, its least recently used entries evicted "
                               "first: `20GiB` (the default), `500MB`, or a number of bytes (units of 1024)",
        "LOCALCR_MODELS_DIR": "where the bundled models' files are assembled (default `~/.cache/localcr-models`)",
        "LOCALCR_CPU_FEATURES": "the CPU features localcr takes llama.cpp to report (its names, space- or "
                                "comma-separated; empty: none), for tests and benchmarks that must run as on another "
                                "CPU",
        "LOCALCR_LLM_WORK": "a file each process appends a JSON line to for each llama.cpp call and each model "
                            "load (tokens evaluated and generated, models loaded, a key of the prompt evaluated: "
                            "`localcr.llm.count_work`), for the test suite's total; unset by default",
        "LOCALCR_CMAKE_ARGS": "`setup.sh` only: the CMake flags llama.cpp is compiled with, in place of those chosen "
                              "for this CPU ([installation.md](installation.md))",
        "PYTHON": "`setup.sh` only: the Python the virtual environment is made with (default `python3.11`, else "
                  "`python3`)",
    },
    "other tools' that localcr reads": {
        "XDG_CONFIG_HOME": "Linux and other Unix: the configuration directory the config file is in (default "
                           "`~/.config`)",
        "XDG_DATA_HOME": "Linux and other Unix: the data directory the default index is in (default "
                         "`~/.local/share`)",
        "APPDATA": "Windows: the configuration directory the config file is in",
        "LOCALAPPDATA": "Windows: the data directory the default index is in",
        "OLLAMA_MODELS": "the Ollama model store that `ollama = \"...\"` sources and `models --discover` read "
                         "(default `~/.ollama/models` and the Linux service's `/usr/share/ollama/.ollama/models`)",
        "HF_HUB_CACHE": "the Hugging Face cache that `hub = \"...\"` sources and `models --discover` read",
        "HF_HOME": "its parent, where `HF_HUB_CACHE` is not set (the cache is `$HF_HOME/hub`)",
        "XDG_CACHE_HOME": "where neither is set: the cache is `$XDG_CACHE_HOME/huggingface/hub` (default "
                          "`~/.cache/huggingface/hub`)",
        "WATCHFILES_FORCE_POLLING": "read by watchfiles: `localcr watch` polls the folders instead of waiting for "
                                    "the operating system's notifications",
        "PYTHONPATH": "with `--ray`, when localcr runs from a checkout: the Ray workers get the checkout before it",
        "_LOCALCR_COMPLETE": "read by click: makes `localcr` print a [completion script](#shell-completion) or "
                             "complete a word, instead of running a command",
    },
    "set by localcr for the libraries it runs": {
        "HF_HUB_OFFLINE": "set to `1` when localcr is imported: models load from local files or not at all",
        "TRANSFORMERS_OFFLINE": "set to `1`, as `HF_HUB_OFFLINE`",
        "HF_DATASETS_OFFLINE": "set to `1`, as `HF_HUB_OFFLINE`",
        "HF_HUB_DISABLE_TELEMETRY": "`1` unless set: no usage reports",
        "TOKENIZERS_PARALLELISM": "`false` unless set: no tokenizer threads on top of localcr's own",
        "OPENBLAS_THREAD_TIMEOUT": "`4` unless set: numpy's BLAS threads sleep when idle instead of spinning for "
                                   "about 0.1 s, which took a search's core on a busy machine",
        "RAY_USAGE_STATS_ENABLED": "`0` unless set: no usage reports from Ray",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "`0` while `--ray auto` starts a local Ray instance, whose processes then "
                                             "listen on 127.0.0.1 only; restored after",
        "OMP_THREAD_LIMIT": "`1` while tesseract reads a scanned page (localcr runs pages side by side); restored "
                            "after",
    },
}

EXIT_CODES = """\
- 0: done (a search that finds nothing included).
- 1: a runtime error, as one line on stderr, `localcr: error: ...`, saying what to do: a missing or damaged index,
  a bad config file, a model that is not there, an option's value that only localcr can judge (a `--glob` pattern, a
  `--kind`).
- 2: a usage error, click's own: an unknown option, a missing argument, a value of the wrong type or outside its
  choices; `Usage:` and `Error: ...` lines.
- 130: Ctrl-C, as one line; the index holds what was committed before, finished work is cached, and the same
  command goes on from there.

`--debug` (or `LOCALCR_DEBUG=1`) prints the traceback after the one line, for a bug report. An exception localcr
did not expect (a bug) prints its traceback and exits 1 either way."""

COMPLETION = """\
click, which localcr's command line is made with, completes commands, options and their choices in bash (4.4 or
later), zsh and fish. The script comes from `localcr` itself, run with `_LOCALCR_COMPLETE` set to the shell's
`*_source`; add the line to the shell's start-up file:

```sh
eval "$(_LOCALCR_COMPLETE=bash_source localcr)"                 # ~/.bashrc
eval "$(_LOCALCR_COMPLETE=zsh_source localcr)"                  # ~/.zshrc
_LOCALCR_COMPLETE=fish_source localcr | source                  # ~/.config/fish/completions/localcr.fish
```

Each completion then runs `localcr` once, which reads no index and loads no model. To save even that start, write the
script to a file once (`_LOCALCR_COMPLETE=bash_source localcr > ~/.localcr-complete.bash`) and source the file; write
it again after upgrading localcr."""


@dataclass(frozen=True)
class Json:
    """A command's `--json` output (variant: the options that make it, beside --json): what it is, then its fields.
    A field is a path: `a.b` a key of object `a`, `a[]` the objects of list `a`, `a.*` every key of `a`, a map whose
    keys are data (a kind, a language, a file). A field that only some outputs hold says when with "only"."""

    command: str
    says: str
    fields: tuple[tuple[str, str], ...]
    variant: str = ""


HIT_FIELDS = (
    ("chunk_id", "the chunk's id: `DOC_ID#N`, or a pre-chunked corpus's own id"),
    ("doc_id", "its document's id: the path under the indexed folder, or the corpus's id"),
    ("path", "its document's file"),
    ("position", "the chunk's place in its document, from 0"),
    ("start", "its first character's offset in the document's text"),
    ("end", "the offset after its last character"),
    ("score", "the final score (fused, or the reranker's), higher first"),
    ("ranks", "its rank, from 1, in each list it was found in"),
    ("ranks.*", "`dense`, `lexical`, `fused`, `rerank`: that list's rank"),
    ("context", "the context it was indexed with (structural, a card, an LLM's), \"\" for none"),
    ("text", "the chunk's text"),
    ("neighbours", "chunk ids `--window` added, in document order"),
    ("window_text", "the chunk and its neighbours as one passage (\"\" without `--window`)"),
    ("external_doc_id", "a pre-chunked corpus's document id (null for files)"),
    ("external_index", "a pre-chunked corpus's chunk number (null for files)"),
    ("page", "the page (slide) the chunk starts on, from 1; null for a document without pages"),
    ("kind", "its document's kind: `markdown`, `pdf`, `code:py` ... (`--kind`'s values)"),
    ("structure", "how its document's structure was read (`tree-sitter:python`, `regex`, `long-prose` ...)"),
    ("language", "its document's language, ISO 639-1 (`und`: too short to tell; \"\" where the index keeps none)"),
)

SUMMARY_COUNTS = (
    ("documents", "documents the index holds now"),
    ("chunks", "chunks it holds now"),
)

JSON_OUTPUTS = (
    Json("index", "One object when the build is done (progress and warnings go to stderr):", (
        ("index", "the index built: its directory or Milvus location"),
        *SUMMARY_COUNTS,
        ("seconds", "how long the build took"),
        ("added", "documents new to the index"),
        ("changed", "documents whose files changed, indexed again"),
        ("removed", "documents whose files are gone, dropped"),
        ("unchanged", "documents kept as they were"),
        ("restored", "documents of damaged segments, read again from their files"),
        ("waiting", "unchanged documents read again for their cards or LLM contexts (left by a Ctrl-C, or an upgrade)"),
        ("unembedded", "unchanged documents committed without their vectors, embedded now"),
        ("windows", "dense windows of the documents indexed in this build"),
        ("embedded", "of those, the windows embedded now; the rest came from the cache"),
        ("skipped", "the files the build left out"),
        ("skipped[].path", "a file left out"),
        ("skipped[].reason", "why"),
        ("warnings", "the warnings said on stderr, one string each"),
        ("cards", "the line about cards (written, from the cache, fell back), \"\" without cards"),
        ("contexts", "the lines about LLM contexts, \"\" without them"),
        ("coverage", "how far the cards and LLM contexts are, \"\" when all are in"),
    )),
    Json("search", "One object a line, a hit each, best first (notes on coverage and filters go to stderr):",
         HIT_FIELDS),
    Json("ask", "One object when the answer is written (nothing streams; notes go to stderr):", (
        ("question", "the question"),
        ("answer", "the answer with its checked citations (`[n]`: `sources[n - 1]`); a refusal is one sentence"),
        ("refused", "true when the sources do not hold the answer"),
        ("draft", "what the model wrote, before the check"),
        ("model", "the LLM that wrote it (`computed` answers name how they were computed)"),
        ("cached", "true when the answer came from the cache"),
        ("note", "what was left out to fit the model's window, or why nothing was read"),
        ("sentences", "the answer's sentences as checked"),
        ("sentences[].text", "the sentence, its citations taken out"),
        ("sentences[].citations", "the source numbers it cites, from 1"),
        ("sentences[].supported", "false when a figure, name or quote of it is in no cited source, or it cites none"),
        ("sentences[].missing", "the figures, names or quotes no cited source holds"),
        ("sentences[].inherited", "true when its citations are the next sentence's"),
        ("sentences[].corrected", "what it cited, where another source holds it instead"),
        ("citations", "every source number the answer cites"),
        ("dropped_citations", "the numbers it cited that name no source"),
        ("unsupported", "the text of each unsupported sentence"),
        ("sources", "what the model read, numbered from 1 (a refusal's: the nearest hits)"),
        ("sources[].number", "its number in the answer's citations"),
        *((f"sources[].{name}", f"as a hit's `{name}` (search)") for name in
          ("chunk_id", "doc_id", "path", "start", "end", "page", "context", "text")),
        ("sources[].shown", "the part of it the model read"),
        ("sources[].support", "the sentence of it that best supports what cites it (\"\" if nothing does)"),
        ("sources[].support_start", "that sentence's offset in the document (null without one)"),
        ("sources[].support_end", "the offset after it"),
        ("timings", "what the answer cost"),
        ("timings.first_token_s", "seconds to the first word"),
        ("timings.total_s", "seconds in all"),
        ("timings.setup_s", "only when the model wrote it: seconds loading the model and its instruction"),
        ("timings.prompt_tokens", "only when the model wrote it: tokens of the prompt"),
        ("timings.evaluated_tokens", "only when the model wrote it: of those, tokens evaluated (the rest were cached)"),
        ("timings.generated_tokens", "only when the model wrote it: tokens written"),
        ("timings.estimated_s", "only when the model wrote it: the time the estimate on stderr said"),
        ("timings.estimate_at_s", "only when the model wrote it: when that estimate was made"),
        ("timings.announced", "only when the model wrote it: whether the estimate was said (long answers only)"),
    )),
    Json("eval", "One object when every configuration has run (the query file's report goes to stderr):", (
        ("ks", "the cut-offs, as `-k` gave them"),
        ("configs", "one object a configuration, in `--config` order"),
        ("configs[].name", "its name (`hybrid`, `hybrid,rerank`, or `name=`'s)"),
        ("configs[].config", "the configuration in full, each option at its value"),
        *((f"configs[].config.{name}", f"`{name}`{text}") for name, text in (
            ("name", ""), ("mode", ": hybrid, dense or lexical"), ("fusion", ""), ("alpha", ""),
            ("rerank", ", true or false"), ("expand", ", true or false"), ("navigate", ", true or false"),
            ("window", ""), ("candidates", ""), ("glob", ": a list of patterns"), ("kind", ": null for any"),
            ("lang", ": null for any"))),
        ("configs[].queries", "the queries it scored"),
        ("configs[].metrics", "its scores, means over the queries"),
        ("configs[].metrics.*", "`METRIC@K`: `pass`, `recall`, `precision`, `hit` (fractions 0-1), `mrr`, `ndcg`; "
                                "with span gold also `token_recall`, `token_precision`, `iou`"),
        ("configs[].latency_ms", "milliseconds a search took"),
        ("configs[].latency_ms.p50", "the median"),
        ("configs[].latency_ms.p95", "the 95th percentile"),
        ("configs[].latency_ms.mean", "the mean"),
        ("query_file", "the query file"),
        ("skipped", "lines and ids of the query file left out, by reason"),
        ("skipped.*", "a reason: how many"),
        ("dropped_queries", "queries dropped in all (`--skip-bad-lines`, or gold the index does not hold)"),
        ("answers", "only with `--answers`: one object a configuration"),
        ("answers[].config", "the configuration's name"),
        ("answers[].k", "sources each question read (the first `-k`)"),
        ("answers[].questions", "questions asked"),
        ("answers[].contains", "% of answers that contain the reference answer"),
        ("answers[].draft_contains", "% of the model's texts (before the check) that contain it"),
        ("answers[].terms", "% of the reference's terms in the answer, lenient"),
        ("answers[].f1", "token F1 against the reference, %"),
        ("answers[].figure", "% of answers with the reference's key figure, of the questions that have one"),
        ("answers[].figure_questions", "questions with a key figure"),
        ("answers[].citation_precision", "% of citations that cite a gold source"),
        ("answers[].unsupported", "% of sentences marked unsupported"),
        ("answers[].corrected", "% of sentences whose citation was corrected"),
        ("answers[].refused", "% of questions refused"),
        ("answers[].first_token_s", "median seconds to the first word"),
        ("answers[].total_s", "median seconds an answer"),
        ("answers[].estimate_held", "% of answers whose time was within 30% of the estimate"),
    )),
    Json("stats", "One object with all the index holds (`--skipped` is ignored: `skipped` lists them):", (
        ("directory", "the index: its directory or Milvus location"),
        ("generation", "the generation searched (a local index's directory name, a Milvus collection)"),
        ("created", "when that generation was built, ISO 8601 in UTC"),
        ("localcr", "the localcr version that built it"),
        ("documents", "documents"),
        ("chunks", "chunks"),
        ("windows", "dense windows (a long chunk is embedded as several)"),
        ("embedded_chunks", "only for a local index: chunks with their vectors in (the rest are searched lexically)"),
        ("segments", "only for a local index: its segments"),
        ("dead_chunks", "only for a local index: chunks of replaced or deleted documents, until `localcr compact`"),
        ("embedder", "the embedder it was built with"),
        ("embedder.name", "its name in models.toml"),
        ("embedder.id", "the model's id"),
        ("embedder.dimension", "its vectors' dimension"),
        ("embedder.max_length", "its window in tokens"),
        ("embedder.chosen", "why it was chosen, where no `--embedder` named it (\"\" otherwise)"),
        ("chunking", "how documents were chunked"),
        ("chunking.chunk_tokens", "chunk size in embedder tokens"),
        ("chunking.overlap_tokens", "tokens shared by consecutive chunks"),
        ("chunking.long_prose_tokens", "chunk size of long untitled prose (null: the default)"),
        ("contexts", "the build's record of its contexts"),
        ("contexts.mode", "`--contexts`"),
        ("contexts.llm", "only with cards or LLM contexts: the LLM that writes them"),
        ("contexts.llm_id", "only with cards or LLM contexts: its fingerprint"),
        ("contexts.composition", "only with LLM contexts: how they join the structural ones"),
        ("contexts.generated", "only with LLM contexts: contexts the LLM wrote"),
        ("contexts.cached", "only with LLM contexts: contexts from the cache"),
        ("contexts.fallbacks", "only with LLM contexts: contexts the guard rejected (the structural one stands)"),
        ("contexts.windowed_documents", "only with LLM contexts: documents cut to fit the LLM's window"),
        ("contexts.cards", "only in the card modes: the documents' cards"),
        ("contexts.cards.documents", "documents that get a card"),
        ("contexts.cards.written", "cards written"),
        ("contexts.cards.cached", "cards from the cache"),
        ("contexts.cards.fallbacks", "cards the guard rejected"),
        ("contexts.cards.fallback_reasons", "those by reason"),
        ("contexts.cards.fallback_reasons.*", "a reason: how many"),
        ("contexts.cards.fell_back", "the documents without a card"),
        ("contexts.cards.fell_back.*", "a document id: why"),
        ("contexts.pending", "only for a local index: documents still waiting for their cards or LLM contexts"),
        ("contexts.carded", "only for a local index: documents with a card"),
        ("contexts.card_fallbacks", "only for a local index: documents whose card fell back"),
        ("contexts.unembedded", "only for a local index: documents committed without their vectors"),
        ("contexts.seconds_each", "only while documents wait: seconds a waiting document's cards and contexts take"),
        ("contexts.imported", "only with `--contexts-from`: chunks whose context it set"),
        ("contexts.imported_from", "only with `--contexts-from`: the file"),
        ("context_sources", "chunks by where their context came from"),
        ("context_sources.*", "`structural`, `card`, `llm`, `imported`, \"\" (none): chunks"),
        ("sources", "the files and folders the index was built from"),
        ("encodings", "documents by the text encoding they were read in"),
        ("encodings.*", "an encoding: documents"),
        ("languages", "documents by language"),
        ("languages.*", "an ISO 639-1 code (`und`: too short to tell): documents"),
        ("kinds", "documents by kind"),
        ("kinds.*", "a kind (`--kind`'s values): documents"),
        ("structure", "documents by how their structure was read"),
        ("structure.*", "`tree-sitter:LANGUAGE`, `regex`, `long-prose` ...: documents"),
        ("regex_fallback", "code documents whose structure came from regular expressions (no grammar)"),
        ("skipped", "the files the last build left out"),
        ("skipped[].path", "a file left out"),
        ("skipped[].reason", "why"),
        ("bytes", "only for a local index: size on disk by file"),
        ("bytes.*", "a segment file's name (summed over segments), or the manifest: bytes"),
        ("total_bytes", "only for a local index: size on disk in all"),
        ("milvus", "only for a Milvus index: where it lives"),
        ("milvus.server", "the server, or the Milvus Lite file"),
        ("milvus.alias", "the name searched (an alias of the current collection)"),
        ("milvus.collection", "the collection it names"),
        ("milvus.lexical", "the lexical leg, in words"),
    )),
    Json("compact", "One object when the segments are merged:", (
        ("index", "the index's directory"),
        ("segments_before", "segments it had"),
        ("segments", "segments it has now (1)"),
        ("dead_chunks", "chunks of replaced or deleted documents dropped"),
        ("chunks", "chunks it holds"),
        ("seconds", "how long it took"),
    )),
    Json("config", "One object:", (
        ("file", "the config file's path"),
        ("file_exists", "whether there is one"),
        ("settings", "every setting, by name"),
        ("settings.*", "a setting (`index`, `models`, `embedder`, `llm`, `reranker`, `search.k`, `ask.k`)"),
        ("settings.*.value", "its value; null for a model left to the registry's `[defaults]`"),
        ("settings.*.source", "`flag`, `env`, `file` or `default`"),
        ("settings.*.where", "the flag, variable or file it came from (\"\" for a default)"),
    )),
    Json("models", "One object:", (
        ("registry", "the model registry file"),
        ("models", "every configured model, by role"),
        ("models[].role", "`embedder`, `llm` or `reranker`"),
        ("models[].name", "its name in models.toml"),
        ("models[].default", "true for its role's default"),
        ("models[].source", "where it comes from (`bundled:...`, a path, `ollama = ...`, `hub = ...`)"),
        ("models[].description", "models.toml's description"),
        ("models[].present", "whether its files are there"),
        ("models[].path", "its files (null when missing)"),
        ("models[].bytes", "their size"),
        ("models[].runtime", "only when present: what runs it"),
        ("models[].speed", "only for a present LLM: its speeds on this machine once measured"),
        ("models[].problem", "only when missing: what is wrong, and what to do"),
        ("llama_cpp", "how llama.cpp was built (its CPU features, or GPU)"),
    )),
    Json("models", "With `--discover`, one object:", (
        ("looked_in", "the stores read"),
        ("looked_in.*", "`Ollama`, `LM Studio`, `Hugging Face cache`: their folders"),
        ("models", "every model found"),
        ("models[].role", "`embedder`, `llm` or `reranker`"),
        ("models[].source", "`ollama`, `lmstudio` or `hub`"),
        ("models[].name", "what models.toml takes as `source = \"name\"`"),
        ("models[].path", "its file or folder"),
        ("models[].bytes", "its size"),
        ("models[].runnable", "whether localcr can run it"),
        ("models[].note", "why not, or what runs it"),
        ("models[].toml", "the models.toml lines that use it, one string a line"),
    ), variant="--discover"),
    Json("cache", "One object:", (
        ("directory", "the cache directory"),
        ("limit_bytes", "the size each store is kept under (`LOCALCR_CACHE_LIMIT`)"),
        ("stores", "each store on disk (`contexts`, `embeddings`, `cards`, `answers` ...)"),
        ("stores[].name", "its name"),
        ("stores[].entries", "entries it holds"),
        ("stores[].bytes", "its size on disk"),
        ("stores[].tags", "its entries by tag (a model and what it was asked)"),
        ("stores[].tags[].store", "the store"),
        ("stores[].tags[].tag", "the tag (null: written before entries were tagged)"),
        ("stores[].tags[].model", "the model in the tag, as `--prune-model` takes it (null without one)"),
        ("stores[].tags[].entries", "entries"),
        ("stores[].tags[].bytes", "their keys' and values' size"),
        ("stores[].tags[].oldest", "when the first was written, ISO 8601 in UTC"),
        ("stores[].tags[].newest", "when the last was written"),
        ("damaged", "stores moved aside because they were damaged (nothing reads them)"),
        ("damaged[].path", "where one is"),
        ("damaged[].bytes", "its size"),
    )),
    Json("cache", "With `--prune-model` or `--older-than`, one object:", (
        ("directory", "the cache directory"),
        ("dry_run", "true with `--dry-run`: nothing was deleted"),
        ("pruned", "what was (or would be) deleted, by store and tag: objects as `stores[].tags[]` above"),
        *((f"pruned[].{name}", f"as `stores[].tags[].{name}`") for name in
          ("store", "tag", "model", "entries", "bytes", "oldest", "newest")),
        ("entries", "entries in all"),
        ("bytes", "their size in all"),
    ), variant="--prune-model"),
)


def json_outputs(command: str) -> list[Json]:
    return [out for out in JSON_OUTPUTS if out.command == command]


_SPECIAL = re.compile(r"[\\*<]|(?<!\w)_|_(?!\w)")  # what Markdown reads as an escape, emphasis or HTML


def _markdown(text: str) -> str:
    """Help text as Markdown: outside its `code`, the characters Markdown would read as emphasis or HTML escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else
                   _SPECIAL.sub(lambda m: "&lt;" if m[0] == "<" else "\\" + m[0], part) for part in parts)


_BLOCK_START = re.compile(r"\s*([-+*] |#|>|\d+[.)] |\|)")


def _wrap(text: str, first: str = "", rest: str = "") -> str:
    """text wrapped at WIDTH, no line of it starting what Markdown would read as a list, heading, quote or table."""
    for width in range(WIDTH, WIDTH - 20, -1):
        lines = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                              break_on_hyphens=False)
        if not any(_BLOCK_START.match(line[len(rest):]) for line in lines[1:]):
            return "\n".join(lines)
    return "\n".join(lines)


def _range(kind) -> str:
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    if low is not None and high is not None:
        return f"{low} to {high}"
    return f"at least {low}" if low is not None else (f"at most {high}" if high is not None else "")


def _default(param, ctx, settings: dict) -> str:
    from localcr.cli import SettingOption

    if isinstance(param, SettingOption):
        setting = settings[param.setting]
        shown = setting.default if isinstance(setting.default, int) else None
        return f"the `{param.setting}` setting" + (f", {shown} unless set" if shown is not None else "")
    default = param.get_default(ctx, call=False)
    if param.secondary_opts:
        return f"`{param.opts[0] if default else param.secondary_opts[0]}`"
    unset = default is None or default is getattr(click.core, "UNSET", None) or default is False or default == ()
    if param.is_flag or unset or callable(default):
        return ""
    return f"`{default}`"


def _option(param, ctx, settings: dict) -> str:
    """One option as a list item: its spellings and metavar, its help, then its default, range and variable."""
    spelled = param.get_help_record(ctx)[0]
    spelled = " / ".join(", ".join(f"`{s}`" for s in part.split(", ")) for part in spelled.split(" / "))
    extras = []
    said = "default:" in (param.help or "").lower()  # the help says it (a setting's whole story)
    if not said and (default := _default(param, ctx, settings)):
        extras.append(f"default: {default}")
    if isinstance(param.type, (click.IntRange, click.FloatRange)) and (shown := _range(param.type)):
        extras.append(shown)
    envvar = param.envvar if isinstance(param.envvar, str) else None
    if envvar and envvar not in (param.help or ""):
        extras.append(f"env `{envvar}`")
    help_text = _markdown((param.help or "").strip())
    if extras:
        help_text += f" [{'; '.join(extras)}]"
    return _wrap(f"{spelled}: {help_text}", "- ", "  ")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _json_section(out: Json) -> str:
    rows = "\n".join(f"| `{path}` | {_cell(text)} |" for path, text in out.fields)
    return f"{out.says}\n\n| field | what it is |\n| --- | --- |\n{rows}"


def _command(name: str, command, parent, settings: dict) -> str:
    ctx = click.Context(command, info_name=name, parent=parent)
    usage = " ".join(["localcr", name, *command.collect_usage_pieces(ctx)])
    paragraphs = [_wrap(_markdown(" ".join(p.split()))) for p in inspect.cleandoc(command.help or "").split("\n\n")
                  if p.strip()]
    parts = [f"## `localcr {name}`", f"`{usage}`", *paragraphs]
    if name in NOTES:
        parts.append(_wrap(NOTES[name]))
    if name in SEE:
        parts.append(f"More: {SEE[name]}.")
    options = [_option(p, ctx, settings) for p in command.get_params(ctx)
               if isinstance(p, click.Option) and not p.hidden]
    parts.append("\n".join(options))
    old = getattr(command, "old_spellings", {})
    if old:
        parts.append(_wrap("; ".join(f"`{spelling}`, the old spelling of `{new}`" for spelling, new in sorted(old.items()))
                           + (", still works." if len(old) == 1 else ", still work.")))
    for out in json_outputs(name):
        parts.append("### JSON" + (f" with `{out.variant}`" if out.variant else "") + "\n\n" + _json_section(out))
    return "\n\n".join(parts)


def _settings_table() -> str:
    from localcr.settings import SETTINGS

    rows = []
    for setting in SETTINGS:
        default = SETTING_DEFAULTS.get(setting.name) or (
            "the registry's `[defaults]`" if setting.default is None else f"{setting.default}")
        rows.append(f"| `{setting.name}` | `{setting.env}` | {default} | {SETTING_TEXT[setting.name]} |")
    return ("| setting | variable | default | what it is |\n| --- | --- | --- | --- |\n" + "\n".join(rows))


def _environment() -> str:
    parts = []
    for group, variables in ENVIRONMENT.items():
        rows = "\n".join(f"| `{name}` | {text} |" for name, text in variables.items())
        parts.append(f"{group[0].upper()}{group[1:]}:\n\n| variable | what it does |\n| --- | --- |\n{rows}")
    return "\n\n".join(parts)


def render() -> str:
    """docs/commands.md as it should be."""
    from localcr.cli import cli
    from localcr.settings import SETTINGS

    settings = {setting.name: setting for setting in SETTINGS}
    root = click.Context(cli, info_name="localcr", **cli.context_settings)
    names = [n for n in ORDER if n in cli.commands] + sorted(set(cli.commands) - set(ORDER))
    global_options = "\n".join(_option(p, root, settings) for p in cli.get_params(root) if not p.hidden)
    contents = ", ".join(f"[`{n}`](#localcr-{n})" for n in names)
    page = [
        "# Commands and options",
        _wrap(f"<!-- Made by `{REGENERATE}` from localcr's command line (localcr/cli.py) and localcr/reference.py: "
              "edit those and run it again. tests/test_reference.py fails while this page differs from what it makes. "
              "-->"),
        INTRO,
        "Before the command, `localcr [OPTIONS] COMMAND [ARGS]...`:\n\n" + global_options,
        _wrap(f"Commands: {contents}. Also: [settings](#settings), [environment variables](#environment-variables), "
              "[exit codes](#exit-codes-and-errors), [shell completion](#shell-completion); the fields of each "
              "`--json` output are in its command's section."),
        "## Settings",
        _wrap("Defaults that stay, so that a command needs no `--index` and the same `-k` need not be typed each "
              "time. Each comes from the option on the command line, else its environment variable, else the config "
              "file, else localcr's own default; `localcr config` shows which one is in force."),
        _settings_table(),
        CONFIG_FILE,
        "## Environment variables",
        "Every variable localcr reads or sets (tests/test_reference.py finds them in the source):",
        _environment(),
        "## Exit codes and errors",
        EXIT_CODES,
        "## Shell completion",
        COMPLETION,
        *(_command(name, cli.commands[name], root, settings) for name in names),
    ]
    return "\n\n".join(page) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    made = render()
    if args == ["--check"]:
        if PAGE.read_text(encoding="utf-8") != made:
            print(f"{PAGE} is not what the command line makes: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if args:
        print(f"usage: {REGENERATE} [--check]", file=sys.stderr)
        return 2
    PAGE.write_text(made, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
