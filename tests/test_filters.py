"""Filters: a search answers from the documents a user points at (--glob, --kind, --lang), the k best of those, on the
local store and on Milvus; a pattern is data on both; bad filters are one line."""
from __future__ import annotations

import json

import pytest

from conftest import error_line, run
from localcr.errors import ArgumentError
from localcr.filters import Filter, compile_glob


@pytest.mark.parametrize("pattern, path, matches", [
    ("docs/*", "orbit/docs/guide.md", True),  # anywhere in the path, as ripgrep's -g
    ("docs/*", "orbit/docs/api/index.md", True),  # a folder the pattern matches: everything in it
    ("docs", "orbit/docs/guide.md", True),
    ("doc", "orbit/docs/guide.md", False),  # whole names only
    ("*.md", "orbit/docs/guide.md", True),
    ("*.md", "orbit/docs/guide.mdx", False),
    ("orbit/*.md", "orbit/docs/guide.md", False),  # * stays within a folder
    ("orbit/**/*.md", "orbit/docs/guide.md", True),  # ** crosses them
    ("orbit/**/*.md", "orbit/guide.md", True),
    ("reports/2022/*", "reports/2022/10k.pdf", True),
    ("reports/2022/*", "reports/2021/10k.pdf", False),
    ("reports/202?/*", "reports/2021/10k.pdf", True),
    ("reports/20[01]2/*", "reports/2012/10k.pdf", True),
    ("reports/20[!01]2/*", "reports/2012/10k.pdf", False),
    ("*.{md,rst}", "a/b.rst", True),
    ("/home/*/orbit", "/home/ann/orbit/docs/guide.md", True),  # a leading / anchors at the start
    ("/orbit", "/home/ann/orbit/docs/guide.md", False),
    # characters that mean something to a regular expression or a Milvus expression are themselves
    ('a" or doc_id != "', 'x/a" or doc_id != "', True),
    ('a" or doc_id != "', "x/a", False),
    ("(a|b).md", "(a|b).md", True),
    ("(a|b).md", "a.md", False),
    ("+.md", "a.md", False),
    ("[[]1].md", "[1].md", True),
    ("[]]x", "]x", True),
    ("[!]]x", "]x", False),
])
def test_glob_matching(pattern, path, matches):
    assert bool(compile_glob(pattern).search(path)) is matches


def test_a_document_passes_an_include_and_no_exclude_on_its_id_or_its_path():
    wanted = Filter.of(["docs/**", "!*.txt"])
    assert wanted.passes("orbit/docs/guide.md", "/abs/orbit/docs/guide.md", "markdown", "en")
    assert not wanted.passes("orbit/docs/notes.txt", "/abs/orbit/docs/notes.txt", "text", "en")
    assert not wanted.passes("orbit/src/a.py", "/abs/orbit/src/a.py", "code:py", "en")
    assert Filter.of(["/abs/orbit/src"]).passes("orbit/src/a.py", "/abs/orbit/src/a.py", "code:py", "en")  # by path
    only_excluding = Filter.of("!src")
    assert only_excluding.passes("orbit/docs/guide.md", "", "markdown", "en")
    assert not only_excluding.passes("orbit/src/a.py", "", "code:py", "en")


def test_kinds_and_families():
    assert Filter.of(kind="code").passes_kind("code:py") and Filter.of(kind="code").passes_kind("code")
    assert Filter.of(kind="code:py").passes_kind("code:py") and not Filter.of(kind="code:py").passes_kind("code:rs")
    assert Filter.of(kind="office").passes_kind("pptx") and not Filter.of(kind="office").passes_kind("pdf")
    assert not Filter.of(kind="markdown").passes_kind("text")
    assert Filter.of(lang="de").passes("a", "a", "text", "de") and not Filter.of(lang="de").passes("a", "a", "text", "en")
    assert Filter.of(lang="de").passes("a", "a", "csv", "und")  # a document too short to tell is kept ...
    assert not Filter.of(lang="=de").passes("a", "a", "csv", "und") and Filter.of(lang="=de").passes("a", "a", "text", "de")
    assert not Filter.of(lang="und").passes("a", "a", "text", "de")  # ... unless asked not to
    assert Filter.of() is None and Filter.of([], None, None) is None


@pytest.mark.parametrize("arguments, problem", [
    ({"kind": "spreadsheet"}, "kind='spreadsheet': unknown document kind; choose one of code, markdown"),
    ({"lang": "English"}, "lang='English': write a language as its ISO 639-1 code"),
    ({"glob": ["!"]}, "glob='!': an empty pattern"),
    ({"glob": "[abc"}, "glob='[abc': an unclosed '['"),
    ({"glob": "{a,b"}, "glob='{a,b': an unclosed '{'"),
])
def test_bad_filters_are_one_clear_error(arguments, problem):
    with pytest.raises(ArgumentError) as raised:
        Filter.of(**arguments)
    assert str(raised.value).startswith(problem)


def test_the_cli_refuses_an_unknown_kind_in_one_line_before_opening_anything(tmp_path):
    line = error_line("search", "q", "--index", tmp_path / "nothing-here", "--kind", "spreadsheet")
    assert line.startswith("localcr: error: --kind 'spreadsheet': unknown document kind; choose one of code, markdown")
    assert "--lang 'EN': write a language" in error_line("search", "q", "--index", tmp_path, "--lang", "EN")


def test_an_eval_configuration_carries_a_filter():
    from localcr.evaluation import parse_config

    config = parse_config("hybrid,glob=docs/*,glob=!*.txt,kind=markdown")
    assert (config.glob, config.kind, config.lang, config.name) == (("docs/*", "!*.txt"), "markdown", None,
                                                                    "hybrid,glob=docs/*,glob=!*.txt,kind=markdown")
    with pytest.raises(ArgumentError, match="kind=movie: unknown document kind"):
        parse_config("hybrid,kind=movie")


# -- searching: the k best of the documents that pass -------------------------------------------------------------


def _search(location, *options) -> tuple[list[dict], str]:
    """The hits of `localcr search --json` and what it said on stderr, after checking it succeeded."""
    from click.testing import CliRunner

    from localcr.cli import cli

    result = CliRunner().invoke(cli, ["search", "quarterly revenue report", "--index", str(location), "--json", *options])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()], result.stderr


def _hits(location, *options) -> list[dict]:
    return _search(location, *options)[0]


@pytest.fixture(params=["local", "lite"])
def filtered_index(request, tmp_path, reports_corpus):
    corpus = reports_corpus
    if request.param == "local":
        location = str(tmp_path / "index")
    else:
        pytest.importorskip("pymilvus")
        location = f"milvus-lite:{tmp_path / 'milvus.db'}/reports"
    from conftest import loopback_allowed

    with loopback_allowed():
        run("index", corpus, "--index", location, "--contexts", "structural", "-q")
        yield location
    if request.param == "lite":
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(str((tmp_path / "milvus.db").resolve()))


@pytest.mark.model
@pytest.mark.loopback
def test_a_filter_is_applied_before_the_cut(filtered_index):
    location = filtered_index
    for mode in ("hybrid", "dense", "lexical"):
        unfiltered = _hits(location, "-k", "10", "--mode", mode)
        assert not any("/2022/" in h["doc_id"] for h in unfiltered), mode  # the 2021 reports outrank them all
        found = _hits(location, "-k", "10", "--mode", mode, "--glob", "reports/2022/*")
        assert len(found) == 10 and all(h["doc_id"].startswith("corpus/reports/2022/") for h in found), mode

    assert {h["kind"] for h in _hits(location, "-k", "10", "--kind", "code")} == {"code:py"}
    assert [h["doc_id"] for h in _hits(location, "-k", "10", "--lang", "de")] == ["corpus/bericht.md"]
    excluded = _hits(location, "-k", "30", "--glob", "!reports")
    assert {h["doc_id"] for h in excluded} == {"corpus/src/revenue.py", "corpus/notes.txt", "corpus/bericht.md"}
    both = _hits(location, "-k", "30", "--glob", "reports/**", "--glob", "!r0*.md", "--kind", "markdown")
    assert both and all("/r1" in h["doc_id"] for h in both)

    # a pattern that matches nothing: no hits, one line on stderr, exit 0
    found, said = _search(location, "--glob", "reports/2030/*")
    assert found == [] and said.strip().splitlines() == [f"localcr: no document of {location} passes --glob 'reports/2030/*'"]
    # nor can a pattern written as a Milvus expression or a quote widen the filter
    for pattern in ['" or doc_id != "', "*\" || true || \"", "reports/2022/*\\", "') or ('"]:
        assert _hits(location, "--glob", pattern) == []

    # the Python API, the HTTP API and MCP (one request model), and eval
    import localcr
    from localcr.serve.service import SearchRequest, Service

    api = localcr.open_index(location).search("quarterly revenue report", k=3, glob=["reports/2022/*"], kind="markdown", lang="en")
    assert len(api) == 3 and all("/2022/" in h.doc_id for h in api)
    service = Service(location)
    answer = service.search(SearchRequest(query="quarterly revenue report", k=3, glob=["reports/2022/*"]))
    assert len(answer["hits"]) == 3 and all("/2022/" in h["doc_id"] for h in answer["hits"])
    assert service.search(SearchRequest(query="revenue", glob=["nowhere"]))["unmatched"].endswith("passes --glob 'nowhere'")
    assert {"glob", "kind", "lang"} <= set(SearchRequest.model_json_schema()["properties"])  # what the MCP tool publishes


@pytest.mark.model
def test_eval_with_a_filtered_configuration(tmp_path, reports_corpus):
    corpus = reports_corpus
    location = tmp_path / "index"
    run("index", corpus, "--index", location, "--contexts", "structural", "-q")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query": "quarterly revenue report", "relevant": ["corpus/reports/2022/r03.md"]}) + "\n")
    out = run("eval", "--index", location, "--queries", queries, "--json", "-q", "--k", "10",
              "--config", "hybrid", "--config", "hybrid,glob=reports/2022/*")
    report = json.loads(out[out.index("{"):])
    passed = {c["name"]: c["metrics"]["pass@10"] for c in report["configs"]}
    assert passed == {"hybrid": 0.0, "hybrid,glob=reports/2022/*": 1.0}
