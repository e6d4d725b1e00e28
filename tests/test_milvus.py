"""The backend contract: the same commands give the same results on a local index and on a Milvus collection.

Milvus Lite (embedded, started by these tests in their temporary directories) stands in for a server. Tests marked
milvus_server run against a real one: the server LOCALCR_MILVUS_URI names (e.g. milvus://localhost:19530, reachable
on loopback), else the standalone Milvus 2.3.5 server that PyPI's milvus package carries (the test extra installs
it), started once for the session; in collections of their own that they drop afterwards. Each runs what the
server can hold: a 2.3 server has no sparse vectors, so there the contract runs dense-only (--lexical none).
Errors: a server that is not there or too old for the lexical leg, a collection localcr did not write or wrote with
another schema, a refused token, a Lite file held by another process - one line each (pymilvus not installed:
tests/test_missing_extras.py, which this file's importorskip would skip where it matters)."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import GUIDE, error_line, free_port, loopback_allowed, run

pytest.importorskip("pymilvus")  # the test extra installs it; a user without localcr[milvus] never needs this file

SERVER_WAIT_SECONDS = 180  # the first start unpacks the server's binary (~4 s with a wiped data folder after that)
# Every part of the standalone server listens on loopback, not on the machine's network address.
SERVER_PARTS = ("rootCoord", "proxy", "queryCoord", "queryNode", "indexNode", "dataCoord", "dataNode")
SERVER_PID_FILE = Path("/run/milvus/standalone.pid")  # which the 2.3.5 server writes and leaves behind
# Queries whose top hits depend on no BM25 statistics (Milvus Lite keeps them per segment and analyses with the
# standard analyzer): dense similarity, and terms found in one chunk only.
DENSE_QUERIES = ["how often is a failed job retried", "which team's job runs next", "reading the journal back at start-up"]
RARE_TERMS = ["midnight", "orbitd", "7700", "exponential"]


def _release_lite(path: Path) -> None:
    """Let another process (or test) open the Lite file: its server lives in this process until released."""
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(path.resolve()))


@pytest.fixture
def lite_db(tmp_path) -> Path:
    """A Milvus Lite file for one test, released when it ends (its server lives in this process until then)."""
    path = tmp_path / "milvus.db"
    yield path
    _release_lite(path)


@pytest.fixture(scope="module")  # not the session's: an idle server still spends CPU on its ticks
def milvus_server(tmp_path_factory) -> str:
    """A real Milvus server's address (milvus://HOST:PORT): LOCALCR_MILVUS_URI's, or PyPI's standalone 2.3.5 server
    started here where the milvus package is installed (skipped where it is not), on a free loopback port, in a wiped
    data folder; stopped by SIGINT to its wrapper (SIGTERM would leave the server itself running)."""
    if given := os.environ.get("LOCALCR_MILVUS_URI"):
        yield given.rstrip("/")
        return
    wrapper = Path(sys.executable).parent / "milvus-server"
    if not wrapper.exists():
        pytest.skip("no Milvus server: install the test extra (milvus==2.3.5) or set LOCALCR_MILVUS_URI")
    data = tmp_path_factory.mktemp("milvus-server")
    for stale in ("data", "logs"):  # a reused data folder waits a minute for the sessions of a killed server
        shutil.rmtree(data / stale, ignore_errors=True)
    port = free_port()
    log = open(data / "wrapper.log", "w")
    process = subprocess.Popen([str(wrapper), "--data", str(data), "--proxy-port", str(port),
                                *(arg for part in SERVER_PARTS for arg in ("--extra-config", f"{part}.ip=127.0.0.1"))],
                               stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_for_port(process, port, data / "wrapper.log")
        yield f"milvus://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        if SERVER_PID_FILE.exists() and not _running(SERVER_PID_FILE.read_text().strip()):
            SERVER_PID_FILE.unlink(missing_ok=True)  # else the next start may take it for a server still running


def _wait_for_port(process: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + SERVER_WAIT_SECONDS
    with loopback_allowed():
        while time.monotonic() < deadline:
            if process.poll() is not None or "already stopped" in log.read_text():
                pytest.fail(f"the Milvus server did not start: {log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                if "Welcome to use Milvus" in log.read_text():
                    return
            except OSError:
                pass
            time.sleep(0.5)
    pytest.fail(f"the Milvus server did not answer on port {port} within {SERVER_WAIT_SECONDS} s")


def _running(pid: str) -> bool:
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


def _server_version(address: str) -> tuple[int, int]:
    from localcr.backends.milvus.connection import Connection

    found = re.match(r"v?(\d+)\.(\d+)", Connection(f"{address}/probe").server_version)
    return (int(found[1]), int(found[2])) if found else (99, 0)


def _drop_server_index(location: str) -> None:
    from localcr.backends.milvus.connection import Connection

    connection = Connection(location)
    if connection.aliased():
        connection.call("drop_alias", connection.location.name)
    for generation in connection.generations():
        connection.drop(generation)


ON_SERVER = pytest.mark.milvus_server


@pytest.fixture(params=["local", "lite-function", "lite-client", pytest.param("server-function", marks=ON_SERVER),
                        pytest.param("server-client", marks=ON_SERVER)])
def store(request, tmp_path, lite_db):
    """Where the index of one run of the contract lives, and the options of its first build: a local directory, or a
    Milvus collection with either lexical leg (Milvus's BM25 function, localcr's as client-side sparse vectors)."""
    if request.param == "local":
        yield str(tmp_path / "index"), ()
        return
    where, lexical = request.param.split("-")
    if where == "lite":
        yield f"milvus-lite:{lite_db}/orbit", ("--lexical", lexical)
    else:
        server = request.getfixturevalue("milvus_server")
        if _server_version(server) < {"client": (2, 4), "function": (2, 5)}[lexical]:
            pytest.skip(f"this Milvus server has no --lexical {lexical} (test_a_dense_only_index_on_a_real_server runs there)")
        yield from _server_index(server, ("--lexical", lexical))


def _server_index(server: str, options: tuple):
    """A collection of its own on the server, dropped when the test ends."""
    found = f"{server}/localcr_test_{uuid.uuid4().hex[:8]}"
    yield found, options
    _drop_server_index(found)


@pytest.fixture
def server_index(milvus_server):
    """A dense-only index on the real server: what every server holds, 2.3 too."""
    yield from _server_index(milvus_server, ("--lexical", "none"))


def index(corpus, location, *extra) -> str:
    return run("index", corpus, "--index", location, "--contexts", "structural", "--chunk-tokens", "48", "-q", *extra)


def hits(location, query, mode="hybrid", k=3, *extra) -> list[dict]:
    out = run("search", query, "--index", location, "--mode", mode, "-k", k, "--json", *extra)
    return [json.loads(line) for line in out.splitlines()]


def top_ids(location, query, mode, k=3) -> list[str]:
    return [h["chunk_id"] for h in hits(location, query, mode, k)]


@pytest.mark.model
@pytest.mark.loopback
def test_the_contract_index_change_delete_rebuild_search_eval_stats_serve(small_corpus, store, tmp_path):
    location, first_build = store
    summary = index(small_corpus, location, *first_build)
    assert "3 new" in summary
    for mode in ("dense", "lexical", "hybrid"):
        found = hits(location, "when do quotas reset?", mode)
        assert found and found[0]["doc_id"] == "orbit/docs/guide.md" and "midnight" in found[0]["text"]
        assert all(set(h) >= {"chunk_id", "path", "context", "text", "ranks", "score"} for h in found)
    windowed = hits(location, "midnight", "lexical", 1, "--window", "1")[0]
    assert windowed["neighbours"] and windowed["window_text"].count("midnight") == 1

    # a changed file: its new words are found, its old ones are gone; an unchanged file is not read again
    (small_corpus / "docs" / "guide.md").write_text(GUIDE.replace("midnight UTC", "noon in Reykjavik"))
    assert "1 changed, 0 removed, 2 unchanged" in index(small_corpus, location)
    assert hits(location, "Reykjavik", "lexical")[0]["doc_id"] == "orbit/docs/guide.md"
    assert not any("midnight" in h["text"] for h in hits(location, "midnight", "lexical", 10))

    # a deleted file: none of its chunks is found any more
    (small_corpus / "src" / "journal.rs").unlink()
    assert "0 changed, 1 removed, 2 unchanged" in index(small_corpus, location)
    assert all(h["doc_id"] != "orbit/src/journal.rs" for h in hits(location, "append-only journal replay", "hybrid", 20))
    stats = json.loads(run("stats", "--index", location, "--json"))
    assert stats["documents"] == 2 and stats["chunks"] == len(hits(location, "job", "dense", 100))
    assert "documents   2" in run("stats", "--index", location)

    # a rebuild: a new generation, the same results
    before = {q: top_ids(location, q, "dense") for q in DENSE_QUERIES}
    index(small_corpus, location, "--rebuild")
    assert json.loads(run("stats", "--index", location, "--json"))["generation"] != stats["generation"]
    assert {q: top_ids(location, q, "dense") for q in DENSE_QUERIES} == before

    # eval: documents named by id
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps({"query": q, "relevant": [doc]}) for q, doc in [
        ("when do team quotas reset", "orbit/docs/guide.md"), ("fair share heap of pending jobs", "orbit/src/scheduler.py")]))
    report = run("eval", "--index", location, "--queries", queries, "--json", "-q")
    report = json.loads(report[report.index("{"):])  # after the query file's report
    assert {c["name"]: c["metrics"]["pass@5"] for c in report["configs"]} == {"dense": 1.0, "lexical": 1.0, "hybrid": 1.0}

    # serve: what the HTTP API and MCP tools call, switching to a rebuilt generation
    from localcr.serve.service import SearchRequest, Service

    service = Service(location)
    answer = service.search(SearchRequest(query="Reykjavik", k=2, mode="lexical", highlight=True, window=1))
    first = answer["hits"][0]
    assert first["doc_id"] == "orbit/docs/guide.md" and first["matches"]["text"]
    document = service.document("orbit/docs/guide.md")
    assert [c["position"] for c in document["chunks"]] == list(range(len(document["chunks"])))
    chunk = service.chunk(document["chunks"][1]["chunk_id"], window=1)
    assert [c["position"] for c in chunk["before"] + [chunk["chunk"]] + chunk["after"]] == [0, 1, 2]
    assert service.health()["chunks"] == stats["chunks"]
    index(small_corpus, location, "--rebuild")
    assert service.search(SearchRequest(query="Reykjavik"))["generation"] != answer["generation"]


@pytest.mark.model
@pytest.mark.loopback
def test_both_backends_give_the_same_top_hits(small_corpus, tmp_path, lite_db):
    local, lite = str(tmp_path / "index"), f"milvus-lite:{lite_db}/orbit"
    index(small_corpus, local)
    index(small_corpus, lite, "--lexical", "function")
    for query in DENSE_QUERIES:
        assert top_ids(lite, query, "dense") == top_ids(local, query, "dense")
    for term in RARE_TERMS:
        assert top_ids(lite, term, "lexical", 1) == top_ids(local, term, "lexical", 1)
        assert top_ids(lite, term, "hybrid", 1) == top_ids(local, term, "hybrid", 1)
    # localcr's own analysis as client-side sparse vectors (the default): the local index's BM25 scores, exactly
    client = f"milvus-lite:{lite_db}/orbit_client"
    index(small_corpus, client)
    for term in ["retries", "jobs queue", "Journal::replay"]:
        got, expected = hits(client, term, "lexical", 5), hits(local, term, "lexical", 5)
        assert [h["chunk_id"] for h in got] == [h["chunk_id"] for h in expected]
        assert [h["score"] for h in got] == pytest.approx([h["score"] for h in expected], rel=1e-5)


@pytest.mark.model
@pytest.mark.loopback
def test_a_killed_rebuild_leaves_the_previous_generation_answering(small_corpus, lite_db):
    from localcr.backends.milvus.build import new_generation
    from localcr.backends.milvus.connection import Connection

    lite = f"milvus-lite:{lite_db}/orbit"
    index(small_corpus, lite)
    answering = top_ids(lite, "midnight", "hybrid")
    connection = Connection(lite)
    half_built = new_generation(connection, 384, "client")  # where a killed rebuild stopped: never aliased
    assert top_ids(lite, "midnight", "hybrid") == answering
    index(small_corpus, lite, "--rebuild")
    assert half_built not in connection.generations() and len(connection.generations()) == 2  # new and previous
    assert not connection.call("has_collection", half_built + "_terms")  # its term statistics went with it
    assert top_ids(lite, "midnight", "hybrid") == answering


@pytest.mark.model
@pytest.mark.loopback
def test_chunks_longer_than_the_embedder_reads_have_several_windows_in_milvus(small_corpus, lite_db):
    lite = f"milvus-lite:{lite_db}/orbit"
    history = " ".join(f"In year {n} the cluster grew by {n} racks and the operators wrote {n} more runbooks." for n in range(60))
    (small_corpus / "docs" / "history.md").write_text(f"# History\n\n{history}\n")
    run("index", small_corpus, "--index", lite, "--contexts", "structural", "--chunk-tokens", "250", "-q")
    stats = json.loads(run("stats", "--index", lite, "--json"))
    assert stats["windows"] > stats["chunks"]  # the extra windows: vectors only, and no terms of their own
    found = hits(lite, "midnight", "hybrid", 10)
    assert found[0]["doc_id"] == "orbit/docs/guide.md" and len({h["chunk_id"] for h in found}) == len(found)


@pytest.mark.model
def test_searching_a_local_index_imports_nothing_from_milvus(small_corpus, tmp_path):
    directory = tmp_path / "index"
    index(small_corpus, directory)
    code = ("import sys\nfrom localcr.cli import main\n"
            f"sys.argv = ['localcr', 'search', 'when do quotas reset', '--index', {str(directory)!r}]\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pymilvus', 'milvus_lite')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}).stdout
    assert "guide.md" in out and out.strip().endswith("[]")


@pytest.mark.loopback
def test_document_ids_that_look_like_expression_syntax_are_selected_exactly(lite_db):
    """A filter names documents in a Milvus expression by their ids, quoted: ids holding quotes, backslashes,
    brackets or expression syntax select exactly themselves, included or excluded."""
    from types import SimpleNamespace

    import numpy as np

    from localcr.backends.milvus import MilvusBackend
    from localcr.backends.milvus.build import entities, insert, move_alias, new_generation, set_manifest
    from localcr.backends.milvus.connection import LAYOUT, Connection
    from localcr.documents import Chunk, Document
    from localcr.filters import Filter

    ids = ['a" or doc_id != "b', "back\\slash", "brack]ets[", "quote's", "x) or (1 == 1", "plain/ok.md", "ünï/中文.md"]
    docs = [Document(doc_id=i, path=f"/abs/{i}", kind="text", text="", size=0, language="en") for i in ids]
    chunks = [Chunk(chunk_id=f"{i}#0", doc_id=i, position=0, start=0, end=1, text=f"text {n}") for n, i in enumerate(ids)]
    vectors = np.random.default_rng(0).standard_normal((len(ids), 8)).astype(np.float32)
    made = SimpleNamespace(chunks=chunks, chunks_by_doc={c.doc_id: [c] for c in chunks}, vectors=vectors,
                           window_rows=np.arange(len(ids)))
    location = f"milvus-lite:{lite_db}/tricky"
    connection = Connection(location)
    generation = new_generation(connection, 8, "none")
    insert(connection, generation, entities(docs, made, None))
    set_manifest(connection, generation, {"layout": LAYOUT, "embedder": {"dimension": 8}, "lexical": {"kind": "none"},
                                          "chunks": len(ids), "windows": len(ids), "languages": ["en"]})
    connection.call("load_collection", generation)
    move_alias(connection, generation, None)
    backend = MilvusBackend(location)

    def exactly(doc_id: str) -> str:  # a glob matching this id only: each character in a class of its own ([!] negates)
        return "".join(c if c == "/" else "?" if c == "!" else f"[{c}]" for c in doc_id)

    for doc_id in ids:
        only = backend.select(Filter.of([exactly(doc_id)]))
        assert only.documents == 1 and set(backend.dense_ranked(vectors[0], 10, only)) == {f"{doc_id}#0"}
        others = backend.select(Filter.of(["!" + exactly(doc_id)]))  # named as the one left out
        assert others.documents == len(ids) - 1
        assert set(backend.dense_ranked(vectors[0], 10, others)) == {f"{i}#0" for i in ids if i != doc_id}

    # a selection is kept while the manifest stays as it is; a write (which rewrites it) is seen by the next search
    assert backend.select(Filter.of(["plain"])).documents == 1
    added = Document(doc_id="plain/new.md", path="/abs/plain/new.md", kind="text", text="", size=0, language="en")
    chunk = Chunk(chunk_id="plain/new.md#0", doc_id="plain/new.md", position=0, start=0, end=1, text="new")
    insert(connection, generation, entities([added], SimpleNamespace(chunks=[chunk], chunks_by_doc={added.doc_id: [chunk]},
                                                                     vectors=vectors[:1], window_rows=np.arange(1)), None))
    set_manifest(connection, generation, {**backend.manifest, "chunks": len(ids) + 1})
    assert backend.select(Filter.of(["plain"])).documents == 2


# -- errors: one line each, naming what to do -------------------------------------------------------------------


@pytest.mark.loopback
def test_a_server_that_is_not_there(tmp_path):
    line = error_line("search", "quotas", "--index", f"milvus://127.0.0.1:{free_port()}/orbit")
    assert "cannot reach a Milvus server at http://127.0.0.1:" in line and "start it" in line


@pytest.mark.loopback
def test_a_collection_localcr_did_not_write(tmp_path, lite_db):
    from pymilvus import MilvusClient

    MilvusClient(str(lite_db)).create_collection("orbit", dimension=8)
    for command in (["search", "quotas"], ["index", str(tmp_path)], ["stats"]):
        line = error_line(*command, "--index", f"milvus-lite:{lite_db}/orbit")
        assert "a collection named orbit exists and is not a localcr index; choose another collection name" in line
    assert "no index there yet; build one with `localcr index PATH --index milvus-lite:" in error_line(
        "search", "quotas", "--index", f"milvus-lite:{lite_db}/other")


@pytest.mark.loopback
def test_a_collection_of_another_schema(lite_db):
    from pymilvus import DataType, MilvusClient

    from localcr.backends.milvus.connection import LAYOUT, MANIFEST_PROPERTY

    client = MilvusClient(str(lite_db))
    schema = client.create_schema(auto_id=True)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=8)
    for name, layout in [("eight", LAYOUT), ("older", "localcr-milvus-0")]:
        manifest = {"layout": layout, "embedder": {"dimension": 384}}
        client.create_collection(f"{name}__1", schema=schema, properties={MANIFEST_PROPERTY: json.dumps(manifest)})
        client.create_alias(f"{name}__1", name)
    line = error_line("search", "quotas", "--index", f"milvus-lite:{lite_db}/eight")
    assert "holds dense vectors of 8 dimensions where its manifest says 384: rebuild it with `localcr index PATH" in line
    line = error_line("stats", "--index", f"milvus-lite:{lite_db}/older")
    assert "was not written by this localcr (layout 'localcr-milvus-0'" in line and "--rebuild" in line


def test_a_refused_token_names_the_variable_to_set():
    from pymilvus.exceptions import MilvusException

    from localcr.backends.milvus.connection import failure, parse_location

    refused = MilvusException(code=1800, message="auth check failure, please check username, password or api key")
    line = str(failure(parse_location("milvus://milvus.example:19530/docs"), refused))
    assert line.startswith("milvus://milvus.example:19530/docs: the server refused the credentials: set LOCALCR_MILVUS_TOKEN")


@pytest.mark.loopback
def test_a_lite_file_held_by_another_process(lite_db):
    from pymilvus import MilvusClient

    MilvusClient(str(lite_db))  # this process holds it
    result = subprocess.run([sys.executable, "-m", "localcr", "search", "quotas", "--index", f"milvus-lite:{lite_db}/orbit"],
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert result.returncode == 1 and result.stderr.strip().splitlines() == [
        f"localcr: error: milvus-lite:{lite_db}/orbit: {lite_db} is open in another process (Milvus Lite allows one); stop "
        "that process, or search through it (localcr serve)"]


@pytest.mark.parametrize("written, problem", [
    ("milvus://localhost:19530", "is no collection name localcr can use"),
    ("milvus://localhost:19530/my-docs", "is no collection name localcr can use"),
    ("milvus:///docs", "name a Milvus server index as milvus://HOST:PORT/COLLECTION"),
    ("milvus-lite:index/docs", "name a Milvus Lite index as milvus-lite:PATH.db/COLLECTION"),
])
def test_a_location_written_wrong(written, problem):
    assert problem in error_line("search", "quotas", "--index", written)


def test_lexical_is_for_milvus_only(small_corpus, tmp_path):
    assert "--lexical is for a Milvus index" in error_line("index", small_corpus, "--index", tmp_path / "i", "--lexical", "client")


# -- a real server: what every server holds (a dense-only index), and a server too old for the lexical leg ----------


@pytest.mark.milvus_server
@pytest.mark.model
@pytest.mark.loopback
def test_a_dense_only_index_on_a_real_server(small_corpus, server_index):
    """Build, search, change, delete, the manifest, an alias moved by a rebuild, a killed build, filters."""
    from localcr.backends.milvus.build import new_generation
    from localcr.backends.milvus.connection import Connection

    location, options = server_index
    assert "3 new" in index(small_corpus, location, *options)
    found = hits(location, "when do quotas reset?", "dense")
    assert found[0]["doc_id"] == "orbit/docs/guide.md" and "midnight" in found[0]["text"]
    assert [h["chunk_id"] for h in hits(location, "when do quotas reset?", "hybrid")] == [h["chunk_id"] for h in found]
    assert "is a dense-only index (built with --lexical none): search it with --mode dense" in error_line(
        "search", "midnight", "--index", location, "--mode", "lexical")

    (small_corpus / "docs" / "guide.md").write_text(GUIDE.replace("midnight UTC", "noon in Reykjavik"))
    assert "1 changed, 0 removed, 2 unchanged" in index(small_corpus, location)
    assert not any("midnight" in h["text"] for h in hits(location, "quotas reset", "dense", 100))
    assert any("Reykjavik" in h["text"] for h in hits(location, "quotas reset", "dense", 100))
    (small_corpus / "src" / "journal.rs").unlink()
    assert "0 changed, 1 removed, 2 unchanged" in index(small_corpus, location)
    assert all(h["doc_id"] != "orbit/src/journal.rs" for h in hits(location, "append-only journal replay", "dense", 20))
    stats = json.loads(run("stats", "--index", location, "--json"))
    assert stats["documents"] == 2 and stats["chunks"] == len(hits(location, "job", "dense", 100))
    assert stats["milvus"]["lexical"] == "none (a dense-only index)"

    # a rebuild moves the alias to a new generation, with the same results; a killed one leaves it where it was
    before = {q: top_ids(location, q, "dense") for q in DENSE_QUERIES}
    connection = Connection(location)
    half_built = new_generation(connection, 384, "none")
    assert {q: top_ids(location, q, "dense") for q in DENSE_QUERIES} == before
    index(small_corpus, location, "--rebuild")
    assert json.loads(run("stats", "--index", location, "--json"))["generation"] != stats["generation"]
    assert half_built not in connection.generations() and len(connection.generations()) == 2
    assert {q: top_ids(location, q, "dense") for q in DENSE_QUERIES} == before

    # filters: a filter expression on the server
    assert {h["doc_id"] for h in hits(location, "jobs", "dense", 10, "--glob", "docs/*")} == {"orbit/docs/guide.md"}
    assert {h["kind"] for h in hits(location, "jobs", "dense", 10, "--kind", "code")} == {"code:py"}
    assert "orbit/docs/guide.md" not in {h["doc_id"] for h in hits(location, "quotas", "dense", 10, "--glob", "!docs")}
    for pattern in ['" or doc_id != "', "*\" || true || \"", "') or ('", "nothing"]:  # data, never expression syntax
        said = run("search", "jobs", "--index", location, "--glob", pattern).splitlines()
        assert said == [f"localcr: no document of {location} passes --glob {pattern!r}", "no results"]


@pytest.mark.milvus_server
@pytest.mark.model
@pytest.mark.loopback
def test_a_filter_before_the_cut_on_a_real_server(reports_corpus, server_index):
    location, options = server_index
    run("index", reports_corpus, "--index", location, "--contexts", "structural", "-q", *options)
    assert not any("/2022/" in h["doc_id"] for h in hits(location, "quarterly revenue report", "dense", 10))
    found = hits(location, "quarterly revenue report", "dense", 10, "--glob", "reports/2022/*")
    assert len(found) == 10 and all(h["doc_id"].startswith("corpus/reports/2022/") for h in found)


@pytest.mark.milvus_server
@pytest.mark.model  # not a model's cost, a server's: the session's server starts with the first of these tests
@pytest.mark.loopback
def test_a_server_too_old_for_the_lexical_leg_is_named_in_one_line(small_corpus, milvus_server):
    version = _server_version(milvus_server)
    if version >= (2, 5):
        pytest.skip("this server holds both lexical legs")
    location = f"{milvus_server}/localcr_test_{uuid.uuid4().hex[:8]}"
    lexical = "client" if version < (2, 4) else "function"
    line = error_line("index", small_corpus, "--index", location, "--lexical", lexical)
    assert re.fullmatch(rf"localcr: error: {re.escape(location)}: the server runs Milvus v?{version[0]}\.{version[1]}\S*; "
                        rf"--lexical {lexical} needs Milvus 2\.[45] or later \(.+\): index with --lexical none \(a dense-only "
                        r"index: dense and hybrid searches, no lexical leg\) or upgrade the server", line), line
