"""docs/commands.md, the one reference (localcr/reference.py makes it): the page is what the command line makes, and
what it says is checked against the code: every option has help and says what it takes, every environment
variable the source reads is in it, every field a command's --json prints is in it (the commands run on a tiny index,
lexically or with no model loaded but the embedder), old spellings still work, and shell completion is there."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import run

from localcr import reference
from localcr.cli import cli

ROOT = Path(__file__).parent.parent
VALUE_METAVARS = re.compile(r"\b(TEXT|INTEGER|FLOAT|DIRECTORY|PATH|FILENAME|RANGE|BOOLEAN)\b")
# Variables the reference names that localcr's own source does not: read by the libraries themselves.
READ_BY_LIBRARIES = {"WATCHFILES_FORCE_POLLING": "watchfiles", "_LOCALCR_COMPLETE": "click"}


def test_the_reference_is_what_the_command_line_makes():
    made = reference.render()
    assert made == reference.PAGE.read_text(encoding="utf-8"), (
        f"docs/commands.md is not what localcr's command line makes: run `{reference.REGENERATE}` and commit it")
    assert reference.main(["--check"]) == 0
    for said in ("130", "`--debug`", "LOCALCR_DEBUG=1", "`Usage:`", "_LOCALCR_COMPLETE=bash_source localcr"):
        assert said in made
    assert set(cli.commands) <= set(reference.ORDER), "a command missing from localcr.reference.ORDER"


def _options():
    root = click.Context(cli, info_name="localcr", **cli.context_settings)
    yield "localcr", root, [p for p in cli.get_params(root) if isinstance(p, click.Option)]
    for name, command in cli.commands.items():
        ctx = click.Context(command, info_name=name, parent=root)
        yield f"localcr {name}", ctx, [p for p in command.get_params(ctx) if isinstance(p, click.Option)]


def test_every_option_has_help_and_says_what_it_takes():
    """--help and the reference show each option with a help text, and an option that takes a value with a name
    for it (N, NAME, FILE, [NAME] for an optional one), not click's TEXT, INTEGER RANGE or DIRECTORY."""
    problems = []
    for where, ctx, options in _options():
        for option in options:
            if option.hidden:
                continue
            if not (option.help or "").strip():
                problems.append(f"{where} {option.opts[0]}: no help")
            spelled = option.get_help_record(ctx)[0]
            if VALUE_METAVARS.search(spelled):
                problems.append(f"{where}: {spelled}")
    assert not problems, "\n".join(problems)
    text = run("search", "--help")
    assert "--rerank [NAME]" in text and "TEXT" not in text


def test_an_old_spelling_still_works_and_is_shown_nowhere():
    """eval's cut-offs were `--k`; search, ask and demo spell `-k`, and so does eval now: `--k` is read as `-k`."""
    command = cli.commands["eval"]
    for args, ks in ((["--k", "1,5"], "1,5"), (["--k=3"], "3"), (["-k", "2"], "2"), ([], "5,10,20")):
        assert command.make_context("eval", [*args, "--queries", "q.jsonl"]).params["ks_text"] == ks
    assert "--k" not in run("eval", "--help").replace("--kind", "")
    assert "`--k`, the old spelling of `-k`, still works." in reference.PAGE.read_text()
    for name in ("search", "ask", "demo", "eval"):
        assert any(p.opts == ["-k"] for p in cli.commands[name].params), name


def _read_names(path: Path) -> set[str]:
    """The environment variables a module reads or sets: every LOCALCR_ name, and every name os.environ or
    os.getenv is asked for, as a literal, a module constant, or (where the key is a variable, as in a loop) the
    upper-case string literals of the statement around it."""
    text = path.read_text(encoding="utf-8")
    names = set(re.findall(r"(?<![\w$])LOCALCR_[A-Z0-9_]+", text))
    tree = ast.parse(text)
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def is_environ(node) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ"

    keys = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_environ(node.value):
            keys.append(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and (
                (is_environ(node.func.value) and node.func.attr in ("get", "setdefault", "pop"))
                or node.func.attr == "getenv"):
            keys.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            keys.append(node.left)
    for key in keys:
        if isinstance(key, ast.Constant):
            names.add(key.value)
        elif isinstance(key, ast.Name) and key.id in constants:
            names.add(constants[key.id])
        elif isinstance(key, ast.Name):
            statement = key
            while not isinstance(statement, (ast.For, ast.FunctionDef)) and statement in parents:
                statement = parents[statement]
            names |= {n.value for n in ast.walk(statement) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                      and re.fullmatch(r"[A-Z][A-Z0-9_]{2,}", n.value)}
    return names


def test_every_environment_variable_the_source_reads_is_in_the_reference():
    found = set()
    for path in sorted((ROOT / "localcr").rglob("*.py")):
        found |= _read_names(path)
    setup = (ROOT / "setup.sh").read_text()
    found |= set(re.findall(r"\$\{(LOCALCR_[A-Z0-9_]+|PYTHON)\b", setup))
    assert {"LOCALCR_CACHE_LIMIT", "LOCALCR_MILVUS_TOKEN", "LOCALCR_MILVUS_DATABASE", "LOCALCR_DEBUG", "LOCALCR_INDEX",
            "XDG_DATA_HOME", "HF_HUB_OFFLINE", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"} <= found  # the search finds them
    documented = {name for variables in reference.ENVIRONMENT.values() for name in variables}
    assert not found - documented, f"read by localcr, not in localcr.reference.ENVIRONMENT: {sorted(found - documented)}"
    stale = documented - found - set(READ_BY_LIBRARIES)
    assert not stale, f"in the reference, read nowhere: {sorted(stale)}"


def _emitted(value, documented: set[str], prefix: str = "") -> set[str]:
    """Every field path of a JSON value, as the reference writes them: `a.b`, `a[].b`, and `a.*` where the
    reference documents `a` as a map (its keys are data)."""
    paths = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.*" if f"{prefix}.*" in documented else (f"{prefix}.{key}" if prefix else key)
            paths |= {path} | _emitted(item, documented, path)
    elif isinstance(value, list):
        for item in value:
            paths |= _emitted(item, documented, prefix + "[]")
    return paths


def _check(command: str, values: list, variant: str = "") -> list[str]:
    """What the reference misses of these outputs of a command, and the top-level fields it names that none holds
    (allowed for a field it says is there "only" sometimes)."""
    (out,) = [o for o in reference.json_outputs(command) if o.variant == variant]
    documented = {path for path, _ in out.fields}
    emitted = set().union(*(_emitted(value, documented) for value in values))
    where = f"{command} {variant}".strip()
    missing = [f"{where}: {path} is not in the reference" for path in sorted(emitted - documented)]
    absent = [f"{where}: {path} is in the reference but not in the output"
              for path, text in out.fields if re.fullmatch(r"\w+", path) and path not in emitted
              and not text.startswith("only")]
    return missing + absent


def _json(*args, lines: bool = False):
    """A command's --json output, from its stdout alone (what it says on stderr is for people); lines: a JSON value
    a line."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()] if lines else json.loads(result.stdout)


def test_every_command_with_json_has_its_fields_in_the_reference():
    with_json = {name for name, command in cli.commands.items() if any("--json" in p.opts for p in command.params)}
    assert with_json == {o.command for o in reference.JSON_OUTPUTS}
    assert {"index", "search", "ask", "eval", "stats", "compact", "cache"} <= with_json


def test_the_json_of_config_models_and_cache_is_in_the_reference(tmp_path, monkeypatch):
    from localcr.answers.check import Checked, Sentence
    from localcr.answers.reader import Answer, Source
    from localcr.cli import _answers_json, _found_json
    from localcr.evaluation.answers import AnswerResult, means
    from localcr.search import Hit
    from localcr.sources import Found

    problems = _check("config", [_json("config", "--json")])
    problems += _check("models", [_json("models", "--json")])
    found = Found("llm", "ollama", "qwen2.5:0.5b", tmp_path / "blob", 1024, True, "runs on llama.cpp", chat=True)
    problems += _check("models", [{"looked_in": {"Ollama": str(tmp_path)}, "models": [_found_json(found)]}], "--discover")
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # a cache of its own, with an entry
    from localcr import cache

    with cache.open_cache("contexts") as store:
        store.set("key", "a context", cache.tag("qwen2.5-coder-1.5b", "prompt 1"))
    listed = _json("cache", "--json")
    assert listed["stores"][0]["tags"][0]["model"] == "qwen2.5-coder-1.5b"
    pruned = _json("cache", "--prune-model", "qwen2.5-coder-1.5b", "--dry-run", "--json")
    assert pruned["entries"] == 1 and pruned["dry_run"]
    problems += _check("cache", [listed]) + _check("cache", [pruned], "--prune-model")
    # ask: an answer the model wrote, with a source and a checked sentence, as Answer.to_dict gives it
    hit = Hit("a.md#0", "a.md", "/a.md", 0, 0, 10, 1.0, {"lexical": 1}, "", "Ten apples.")
    timings = {key: 0 for key in _timing_keys()}
    answer = Answer("how many?", "Ten [1].", False, [Source(1, hit, "Ten apples.", "Ten apples.", 0, 11)],
                    Checked([Sentence("Ten.", [1], True)], []), model="m", timings=timings)
    problems += _check("ask", [answer.to_dict()])
    # eval --answers: the metrics of a run (means of no rows has every key)
    summary = {"ks": [1], "configs": [], "query_file": "q", "skipped": {}, "dropped_queries": 0,
               "answers": [_answers_json(AnswerResult("hybrid", 0, means([]), []), 1)]}
    problems += _check("eval", [summary])
    assert not problems, "\n".join(problems)


def _timing_keys() -> set[str]:
    """Every key an answer's timings are given (a dict literal assigned to `timings` or passed as timings=)."""
    keys = set()
    for path in (ROOT / "localcr" / "answers").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            dicts = []
            if isinstance(node, ast.keyword) and node.arg == "timings":
                dicts.append(node.value)
            elif isinstance(node, ast.Assign) and any(getattr(t, "id", getattr(t, "attr", "")) == "timings"
                                                      for t in node.targets):
                dicts.append(node.value)
            keys |= {k.value for d in dicts if isinstance(d, ast.Dict) for k in d.keys if isinstance(k, ast.Constant)}
    assert {"first_token_s", "total_s", "prompt_tokens", "setup_s"} <= keys
    return keys


@pytest.mark.model
def test_the_json_of_index_search_ask_eval_stats_and_compact_is_in_the_reference(small_corpus, tmp_path):
    """Each command's --json on a tiny index (the embedder is the only model loaded: ask's question passes no
    filter, so the answer is a refusal and no LLM loads)."""
    index = tmp_path / "index"
    built = _json("index", small_corpus, "--index", index, "-q", "--chunk-tokens", 48, "--json")
    (small_corpus / "docs" / "guide.md").write_text("# Orbit\n\nThe daemon restarts nightly.\n")
    again = _json("index", small_corpus, "--index", index, "-q", "--json")
    assert again["changed"] == 1 and built["added"] == 3
    problems = _check("index", [built, again])
    hits = _json("search", "retried backoff", "--index", index, "--mode", "lexical", "-k", 3, "--window", 1, "--json",
                 lines=True)
    assert hits and hits[0]["neighbours"] is not None
    problems += _check("search", hits)
    refusal = _json("ask", "how often is a job retried?", "--index", index, "--glob", "nothing/**", "--json")
    assert refusal["refused"] and refusal["sources"] == []
    problems += _check("ask", [refusal])
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query": "retried backoff", "relevant": [hits[0]["doc_id"]]}) + "\n"
                       + json.dumps({"query": "backoff", "relevant": ["no/such/file.py"]}) + "\n")  # one dropped
    evaluated = _json("eval", "--index", index, "--queries", queries, "--config", "lexical", "-k", "1,2",
                      "--json", "-q")
    problems += _check("eval", [evaluated])
    problems += _check("stats", [_json("stats", "--index", index, "--json")])
    compacted = _json("compact", "--index", index, "--json")
    assert compacted["segments"] == 1
    problems += _check("compact", [compacted])
    assert not problems, "\n".join(problems)


def test_shell_completion_is_there(tmp_path):
    """The scripts docs/commands.md gives, from the installed `localcr` itself, and a word completed."""
    script = Path(sys.executable).parent / "localcr"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "localcr"]
    env = {**os.environ, "_LOCALCR_COMPLETE": "bash_source"}
    bash = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert bash.returncode == 0 and "_localcr_completion" in bash.stdout and "complete -o" in bash.stdout, bash.stderr
    for shell, says in (("zsh_source", "#compdef localcr"), ("fish_source", "complete --no-files --command localcr")):
        result = CliRunner().invoke(cli, [], prog_name="localcr", env={"_LOCALCR_COMPLETE": shell})
        assert says in result.output
    completed = CliRunner().invoke(cli, [], prog_name="localcr", env={
        "_LOCALCR_COMPLETE": "bash_complete", "COMP_WORDS": "localcr search --mo", "COMP_CWORD": "2"})
    assert "plain,--mode" in completed.output.splitlines()
    completed = CliRunner().invoke(cli, [], prog_name="localcr", env={
        "_LOCALCR_COMPLETE": "bash_complete", "COMP_WORDS": "localcr search --mode ", "COMP_CWORD": "3"})
    assert {"plain,hybrid", "plain,dense", "plain,lexical"} <= set(completed.output.splitlines())
