"""Searchable at once, better as the cards come: a build commits its structural index first, then each document's
chunks with its card, so a search answers during the run, a killed run keeps every card committed and the next
run writes no card twice. The plumbing runs on a card writer that needs no model (FakeCardRunner) with the bundled
MiniLM embedder (tests marked `model`); the bundled Qwen2.5-Coder-1.5B writes real cards in one end-to-end test of
the CLI; how often a build commits is a unit test (quick)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import AVX512_FEATURES, FakeCardRunner, run, start_server, stop_server
from localcr import store
from localcr.llm import CPU_FEATURES_VARIABLE
from test_cards import COMPANY, FACT, long_report

COMPANIES = (COMPANY, "Nordlys Marine", "Calder Optics")


def write_reports(root, companies=COMPANIES):
    """Long untitled reports (the default `auto` mode gives each a card), each naming its company on its cover only."""
    root.mkdir(parents=True, exist_ok=True)
    for number, company in enumerate(companies):
        (root / f"report-{number}.txt").write_text(long_report().replace(COMPANY, company))
    return root


def contexts_by_document(index) -> dict[str, list[str]]:
    """Each live document's chunk contexts, as a search sees them."""
    reader = store.StoreReader(index)
    return {doc_id: [r["context"] for r in reader.hit_records(list(reader.rows_of_document(doc_id)))]
            for doc_id in sorted(reader.doc_ids())}


def carded(index) -> dict[str, bool]:
    """Whether every chunk of each report holds its company's card."""
    names = {f"report-{n}.txt": company for n, company in enumerate(COMPANIES)}
    return {name: all(f"{names[name]} Inc., Annual report" in c for c in contexts)
            for doc_id, contexts in contexts_by_document(index).items() if (name := doc_id.rsplit("/", 1)[-1]) in names}


@pytest.fixture
def servers():
    """`localcr serve` processes a test starts (stopped after it)."""
    started = []
    yield started
    for served in started:
        stop_server(served)


def served_cards(served) -> dict[str, bool]:
    """Whether the hits a served index gives for the fact in every report hold their card."""
    status, body = served.request("POST", "/api/search", {"query": "Halden plant welding arms output", "k": 10})
    assert status == 200, body
    return {hit["path"].rsplit("/", 1)[-1]: "Inc., Annual report, fiscal year" in hit["context"]
            for hit in body["hits"] if FACT in hit["text"]}


@pytest.mark.model
@pytest.mark.loopback
def test_a_search_answers_while_cards_are_written_and_a_killed_run_goes_on_without_writing_a_card_twice(
        tmp_path, fake_llm, monkeypatch, servers):
    docs, index = write_reports(tmp_path / "docs"), tmp_path / "ix"
    seen = {}

    def midway(company):
        if company == COMPANIES[1]:  # the first card is committed: search, stats and a server see it
            try:
                seen["hit"] = json.loads(run("search", "Halden plant welding arms output", "--index", index, "--json").splitlines()[0])
                seen["carded"] = carded(index)
                seen["stats"] = run("stats", "--index", index)
                servers.append(start_server(index, Path(os.environ["LOCALCR_CACHE_DIR"])))
                seen["served"] = served_cards(servers[0])
                seen["health"] = servers[0].request("GET", "/api/health")[1]
                seen["note"] = servers[0].request("POST", "/api/search", {"query": "Halden plant", "k": 1})[1].get("note")
            except Exception as exc:  # noqa: BLE001 (the build would only exit with 1: keep what went wrong)
                seen["error"] = exc
        if company == COMPANIES[2]:
            raise KeyboardInterrupt  # killed while writing the third card

    monkeypatch.setattr(FakeCardRunner, "before_card", staticmethod(midway))
    monkeypatch.setattr("localcr.pipeline.COMMIT_SPACING", 1e9)  # the first card commits at once, the next ones wait
    run("index", docs, "--index", index, "-q", code=130)
    assert "error" not in seen, seen["error"]
    assert FACT in seen["hit"]["text"]
    assert seen["carded"] == seen["served"] == {"report-0.txt": True, "report-1.txt": False, "report-2.txt": False}
    # the first card is committed for the lexical leg: every report waits for its vectors, the other two for cards
    assert "coverage    lexical 100%, dense 0% (0 of " in seen["stats"]
    assert "cards in 1 of 3 documents that want one; 3 documents still waiting" in seen["stats"]
    assert seen["health"]["embedded_chunks"] == 0 and seen["health"]["contexts"].startswith("lexical 100%, dense 0%")
    assert "cards in 1 of 3 documents that want one; 3 documents still waiting" in seen["health"]["contexts"]
    assert seen["note"] == "lexical only until the vectors are in: 0% embedded"  # what the page shows with the hits

    assert carded(index) == seen["carded"]  # the second card was written, and cached, but not committed
    monkeypatch.setattr(FakeCardRunner, "before_card", staticmethod(lambda company: None))
    out = run("index", docs, "--index", index, "-q")
    assert "2 read again for their cards" in out and "1 waiting for their vectors" in out
    assert "cards: 2 documents: 1 from cache, 1 written" in out
    assert "coverage: cards in 3 of 3 documents that want one; complete" in out
    assert FakeCardRunner.written == list(COMPANIES)  # each card written once, over both runs
    everyone = {"report-0.txt": True, "report-1.txt": True, "report-2.txt": True}
    assert carded(index) == served_cards(servers[0]) == everyone  # the server switched to the new generation
    assert servers[0].request("GET", "/api/health")[1]["contexts"] == "cards in 3 of 3 documents that want one; complete"
    assert "coverage    cards in 3 of 3 documents that want one; complete" in run("stats", "--index", index)
    assert "(nothing to do)" in run("index", docs, "--index", index, "-q")  # nothing waits any more


def embedded_documents(index) -> dict[str, bool]:
    """Whether each live document's chunks have their vectors in the index (a build commits them lexically first)."""
    unembedded = set(current_contexts(index).get("unembedded", []))
    return {doc_id.rsplit("/", 1)[-1]: doc_id not in unembedded for doc_id in store.StoreReader(index).doc_ids()}


def write_corpus(root):
    """Three long untitled reports (each gets a card) and a short titled note (none: its contexts are final at once)."""
    write_reports(root)
    (root / "note.md").write_text("# Visitors\n\nVisitors sign in at the north gate and wear their badge.\n")
    return root


class Embedded:
    """Every text the build embeds, counted as the embedder computes or looks it up (LocalExecutor.embed), with a
    hook a test sets to search, or raise KeyboardInterrupt as a kill would, before a given call."""

    def __init__(self, monkeypatch):
        from localcr.execution.local import LocalExecutor

        self.texts: list[str] = []
        self.calls = 0
        self.before = lambda call: None
        embed = LocalExecutor.embed

        def counted(executor, model, texts, progress=None):
            self.calls += 1
            self.before(self.calls)
            self.texts += texts
            return embed(executor, model, texts, progress)

        monkeypatch.setattr(LocalExecutor, "embed", counted)


def live_windows(index) -> int:
    return json.loads(run("stats", "--index", index, "--json"))["windows"]


def analysed_texts(monkeypatch) -> list[str]:
    """Every text the build analyses for BM25 (Postings.build), as it analyses it."""
    from localcr.lexical import Postings

    texts: list[str] = []
    build = Postings.build
    monkeypatch.setattr(Postings, "build", lambda batch, languages, stopwords: texts.extend(batch) or build(batch, languages, stopwords))
    return texts


def assert_bm25_of_the_live_chunks(index, queries):
    """The index's BM25 scores are those of one index built from its live chunks' texts as they are now."""
    from localcr.lexical import LexicalIndex, stopwords_of

    reader = store.StoreReader(index)
    docs, chunks = reader.stored_documents()
    pairs = [(f"{c.context}\n{c.text}", d.language) for d in docs for c in chunks[d.doc_id]]
    built = LexicalIndex.build([t for t, _ in pairs], [lang for _, lang in pairs], stopwords_of(reader.manifest["languages"]))
    for query in queries:
        np.testing.assert_allclose(reader.lexical().scores(query)[reader.live], built.scores(query), rtol=1e-6, atol=1e-7)


@pytest.mark.model
def test_lexical_first_then_each_card_then_every_window_embedded_once(tmp_path, fake_llm, monkeypatch):
    """The issue's user: long untitled reports are searchable lexically before any vector is written, a card's
    company is found through BM25 before its report is embedded, and every window is embedded exactly once."""
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no card or vector from another test
    docs, index = write_corpus(tmp_path / "docs"), tmp_path / "ix"
    embedded, seen, analysed = Embedded(monkeypatch), {}, analysed_texts(monkeypatch)

    def before_embedding(call):
        if call == 1:  # the index is committed, not a vector yet: the note is the one document without a card
            seen["first"] = run("search", "Halden plant welding arms output", "--index", index, "--json")
            seen["stats"] = run("stats", "--index", index)
            seen["embedded"] = embedded_documents(index)

    def midway(company):
        if company == COMPANIES[1]:  # the first card is committed, for the lexical leg only
            seen["carded"] = run("search", f"{COMPANY} Halden plant welding arms output", "--index", index, "--json",
                                 "--mode", "lexical")
            seen["embedded_at_card"] = embedded_documents(index)

    embedded.before = before_embedding
    monkeypatch.setattr(FakeCardRunner, "before_card", staticmethod(midway))
    monkeypatch.setattr("localcr.pipeline.COMMIT_SPACING", 1e9)  # each stage's first document commits at once
    out = run("index", docs, "--index", index, "-q")

    first, note = seen["first"].splitlines()[0], seen["first"].splitlines()[-1]
    assert FACT in json.loads(first)["text"] and note == "localcr: lexical only until the vectors are in: 0% embedded"
    assert "coverage    lexical 100%, dense 0% (0 of " in seen["stats"] and "4 documents still waiting" in seen["stats"]
    assert seen["embedded"] == dict.fromkeys(["note.md", "report-0.txt", "report-1.txt", "report-2.txt"], False)
    hit = json.loads(seen["carded"].splitlines()[0])
    assert FACT in hit["text"] and f"{COMPANY} Inc., Annual report" in hit["context"]  # found by BM25 through its card
    assert hit["path"].endswith("report-0.txt")
    assert seen["embedded_at_card"] == {"note.md": True, "report-0.txt": False, "report-1.txt": False, "report-2.txt": False}

    live = live_windows(index)
    assert len(embedded.texts) == len(set(embedded.texts)) == live  # every window embedded once, none twice
    assert f"embeddings: {live} computed, 0 from cache" in out
    assert "coverage: cards in 3 of 3 documents that want one; complete" in out
    assert all(carded(index).values()) and all(embedded_documents(index).values())
    assert run("search", "Halden plant welding arms output", "--index", index).count("localcr:") == 0
    # every chunk analysed for BM25 once a context: the note's once, each report's with and without its card; the
    # commits with vectors and the compactions copy the postings of what is committed already
    reader = store.StoreReader(index)
    note = next(doc_id for doc_id in reader.doc_ids() if doc_id.endswith("note.md"))
    assert len(analysed) == 2 * reader.live_chunks - len(reader.rows_of_document(note))
    assert_bm25_of_the_live_chunks(index, ["Halden plant welding arms output", f"{COMPANY} annual report", "note"])


@pytest.mark.model
@pytest.mark.parametrize("stage", ["lexical", "cards", "dense"])
def test_a_run_killed_at_each_stage_goes_on_without_redoing_what_it_committed(tmp_path, fake_llm, monkeypatch, stage):
    """Killed after the lexical commit (embedding the note), while writing the third card, or while embedding the
    second carded report: the next run writes no card again and embeds, or even looks up, no window committed."""
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no card or vector from another test
    docs, index = write_corpus(tmp_path / "docs"), tmp_path / "ix"
    embedded = Embedded(monkeypatch)
    monkeypatch.setattr("localcr.pipeline.EMBED_GROUP_CHUNKS", 1)  # a document a group: a commit each, as paced
    monkeypatch.setattr("localcr.pipeline.COMMIT_SPACING", 0)  # and commit each at once

    def kill(_):
        raise KeyboardInterrupt

    if stage == "lexical":
        embedded.before = lambda call: kill(call) if call == 1 else None
    elif stage == "cards":
        monkeypatch.setattr(FakeCardRunner, "before_card", staticmethod(lambda c: kill(c) if c == COMPANIES[2] else None))
    else:
        embedded.before = lambda call: kill(call) if call == 3 else None  # the note, report-0, then report-1
    run("index", docs, "--index", index, "-q", code=130)
    committed = embedded_documents(index)
    assert set(committed) == {"note.md", "report-0.txt", "report-1.txt", "report-2.txt"}  # every document searchable
    assert committed == {"lexical": dict.fromkeys(committed, False), "cards": {**dict.fromkeys(committed, False), "note.md": True},
                         "dense": {**dict.fromkeys(committed, False), "note.md": True, "report-0.txt": True}}[stage]
    first_run = set(embedded.texts)

    embedded.before = lambda call: None
    monkeypatch.setattr(FakeCardRunner, "before_card", staticmethod(lambda company: None))
    embedded.texts = []
    out = run("index", docs, "--index", index, "-q")
    assert FakeCardRunner.written == list(COMPANIES)  # each card written once over both runs
    # every window looked up once over both runs: none committed with its vector is even looked up again
    assert not first_run & set(embedded.texts) and len(first_run) + len(embedded.texts) == live_windows(index)
    reader = store.StoreReader(index)
    assert all(carded(index).values()) and all(embedded_documents(index).values())
    assert reader.dense_coverage[0] == reader.dense_coverage[1]
    assert "coverage: cards in 3 of 3 documents that want one; complete" in out
    assert "(nothing to do)" in run("index", docs, "--index", index, "-q")


@pytest.mark.model
def test_structural_then_auto_upgrades_in_place_embedding_only_the_chunks_a_card_changes(
        tmp_path, fake_llm, small_corpus, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no card from another test
    write_reports(small_corpus / "reports", COMPANIES[:1])
    index = tmp_path / "ix"
    run("index", small_corpus, "--index", index, "--contexts", "structural", "-q")
    before = contexts_by_document(index)
    out = run("index", small_corpus, "--index", index, "--contexts", "auto", "-q")
    assert "4 unchanged; 4 read again for their cards or LLM contexts" in out
    assert "cards: 1 document: 0 from cache, 1 written" in out and "coverage: cards in 1 of 1 documents that want one; complete" in out
    after = contexts_by_document(index)
    (report_id,) = [doc_id for doc_id in after if "report" in doc_id]
    assert {d: c for d, c in after.items() if d != report_id} == {d: c for d, c in before.items() if d != report_id}
    assert all(f"{COMPANY} Inc., Annual report" in c for c in after[report_id])
    # only the report's windows (their contexts hold the card) were embedded; no other chunk was even looked up
    computed = int(re.search(r"embeddings: (\d+) computed, 0 from cache", out).group(1))
    assert len(after[report_id]) <= computed < 2 * len(after[report_id])
    assert "contexts    auto" in run("stats", "--index", index)


def current_contexts(index) -> dict:
    return store.current_manifest(index, store.read_marker(index)).get("contexts", {})


def wait_for(condition, process: subprocess.Popen, what: str, seconds: float = 600):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"the build ended before {what}: {process.stderr.read()}"
        assert time.monotonic() < deadline, f"no {what} within {seconds} s"
        time.sleep(0.5)


@pytest.mark.model
def test_the_bundled_llm_cards_arrive_in_an_index_searchable_from_the_start(tmp_path):
    """The issue's user: `localcr index` over long reports whose company only the cover names, with the bundled 1.5B
    writing their cards (7 s each on a quiet AVX-512 core) in a process of its own. Searched lexically before any
    vector is written; the first card is searchable through BM25 while the second is written, before its report is
    embedded; at the end every window was embedded exactly once. A killed run going on without writing a card or
    embedding a window twice is the tests' above, on FakeCardRunner: the same pipeline, no model. The build estimates
    its cards as on an AVX-512 CPU whatever this one is: at an AVX2 pair's typical rates two cards pass
    ANNOUNCED_FROM_SECONDS, and the build would first measure the 1.5B's speed (about 15 s there), which
    test_cards checks on FakeCardRunner."""
    companies = COMPANIES[:2]
    docs, index = write_reports(tmp_path / "docs", companies), tmp_path / "ix"
    env = {**os.environ, "LOCALCR_CACHE_DIR": str(tmp_path / "cache"), CPU_FEATURES_VARIABLE: AVX512_FEATURES}
    build = [sys.executable, "-m", "localcr", "index", str(docs), "--index", str(index)]
    lexical_only = "localcr: lexical only until the vectors are in: 0% embedded"

    def with_card() -> list[str]:
        return [c for c in companies if any(c in context for contexts in contexts_by_document(index).values()
                                            for context in contexts)]

    process = subprocess.Popen(build, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: (index / store.MARKER).exists(), process, "the lexical index")
        found = run("search", "Halden plant welding arms output", "--index", index, "--json").splitlines()
        top = json.loads(found[0])
        assert FACT in top["text"] and not any(c in top["context"] for c in companies)  # before any card
        assert found[-1] == lexical_only
        wait_for(with_card, process, "the first card")
        (first,) = with_card()  # the second is being written
        found = run("search", f"{first} Halden plant welding arms output", "--index", index, "--json").splitlines()
        top = json.loads(found[0])
        assert FACT in top["text"] and first in top["context"] and found[-1] == lexical_only  # BM25 finds its card
        out, err = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "cards: 2 documents: 0 from cache, 2 written" in out
    assert f"embeddings: {live_windows(index)} computed, 0 from cache" in out  # every window embedded once
    for company, contexts in zip(companies, contexts_by_document(index).values()):
        assert all(company in c for c in contexts), contexts[0]  # every chunk holds its card, naming its cover's company
    assert "cards in 2 of 2 documents that want one; complete" in run("stats", "--index", index)
    for company in companies:
        top = json.loads(run("search", f"{company} Halden plant welding arms output", "--index", index,
                             "--json").splitlines()[0])
        assert FACT in top["text"] and company in top["context"]


@pytest.mark.model
def test_llm_contexts_are_committed_document_by_document_and_a_killed_run_writes_only_the_rest(
        small_corpus, tmp_path, monkeypatch):
    """Per-chunk LLM contexts (Gemma 3 270M: any model will do) come a document at a time, each committed."""
    from localcr.execution.local import LocalExecutor

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no context from another test
    for name, lines in (("docs/guide.md", 8), ("src/scheduler.py", 9)):  # three short documents: the commits count
        path = small_corpus / name
        path.write_text("\n".join(path.read_text().splitlines()[:lines]) + "\n")
    index, args = tmp_path / "ix", ("--contexts", "llm", "--llm", "gemma3-270m", "-q")
    write_contexts, calls = LocalExecutor.write_contexts, []

    def killed_at_the_second(self, docs, *rest, **options):
        calls.append(docs[0].doc_id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return write_contexts(self, docs, *rest, **options)

    monkeypatch.setattr(LocalExecutor, "write_contexts", killed_at_the_second)
    run("index", small_corpus, "--index", index, *args, code=130)
    info = json.loads(run("stats", "--index", index, "--json"))
    first = contexts_by_document(index)
    done = int(info["context_sources"].get("llm", 0) + info["context_sources"].get("fallback", 0))
    assert done == len(first[calls[0]]) and len(info["contexts"]["pending"]) == 2
    assert f"LLM contexts in {info['context_sources'].get('llm', 0)} of {info['chunks']} chunks; 2 documents still waiting" \
        in run("stats", "--index", index)

    monkeypatch.setattr(LocalExecutor, "write_contexts", write_contexts)
    out = run("index", small_corpus, "--index", index, *args)
    assert f"from cache 0, generated {info['chunks'] - done}" in out  # the committed document's are not written again
    assert contexts_by_document(index)[calls[0]] == first[calls[0]]
    info = json.loads(run("stats", "--index", index, "--json"))
    assert set(info["context_sources"]) <= {"llm", "fallback"} and info["contexts"]["pending"] == []


@pytest.mark.model
def test_a_milvus_index_writes_its_cards_first_and_says_why_in_one_line(tmp_path, fake_llm, monkeypatch):
    pytest.importorskip("milvus_lite")
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))  # no card from another test
    from test_milvus import _release_lite

    docs, lite = write_reports(tmp_path / "docs", COMPANIES[:1]), tmp_path / "milvus.db"
    try:
        out = run("index", docs, "--index", f"milvus-lite:{lite}/reports", "-q")
        hit = json.loads(run("search", "Halden plant welding arms output", "--index", f"milvus-lite:{lite}/reports",
                             "--json").splitlines()[0])
    finally:
        _release_lite(lite)
    assert out.count("a Milvus collection is published whole") == 1 and "cards: 1 document: 0 from cache, 1 written" in out
    assert f"{COMPANY} Inc., Annual report" in hit["context"]


def test_commits_are_paced_by_what_they_cost(monkeypatch):
    """The first improved document is committed at once; the next when the time since the last commit is
    COMMIT_SPACING times what that commit took (embedding left out: every chunk needs it once anyway)."""
    from types import SimpleNamespace

    import numpy as np

    from localcr import pipeline as P
    from localcr.documents import Chunk, Document

    clock, committed = [0.0], []
    monkeypatch.setattr(P.time, "monotonic", lambda: clock[0])

    class Commits:
        def commit(self, docs, made, vectors, window_rows):
            committed.append([d.doc_id for d in docs])
            clock[0] += 1.0  # a commit costs a second

    class Executor:
        def embed(self, model, texts, progress=None):
            clock[0] += 5.0  # embedding is no cost of committing
            return np.zeros((len(texts), 4), dtype=np.float32), len(texts)

    docs = [Document(f"d{i}", f"d{i}", "text", "x", 1) for i in range(5)]
    model = SimpleNamespace(windows=lambda chunks: [SimpleNamespace(text=c.text, chunk_row=i) for i, c in enumerate(chunks)],
                            dimension=4)
    made = P.Made(model, {d.doc_id: [Chunk(f"{d.doc_id}#0", d.doc_id, 0, 0, 1, "x")] for d in docs}, [], None, None, {}, {},
                  coverage=P.Coverage({d.doc_id for d in docs}, set(), set()))
    for dense in (False, True):  # a card's document committed for the lexical leg; then embedded
        committed.clear()
        batches = P._Batches(made, Executor(), Commits(), P.BuildSummary(directory="ix"), dense=dense)
        for doc, seconds in zip(docs, (0, 2, 4, 4, 1)):  # what each document's card took
            clock[0] += seconds
            batches.add([doc], finished=dense)
        batches.flush()
        # d0 at once; d1 to d3 once 9 s (9 times the 1 s commit) have passed since that commit; d4 when the run ends
        assert committed == [["d0"], ["d1", "d2", "d3"], ["d4"]] if not dense else committed[0] == ["d0"]
        assert made.coverage.pending == (set() if dense else {d.doc_id for d in docs})
        assert made.coverage.unembedded == (set() if dense else {d.doc_id for d in docs})


def test_the_embedding_bar_counts_every_window_before_it_starts(monkeypatch):
    """The embedding bar's total is the windows to embed from its start, not the chunks growing to windows as each
    group is cut (28 filings' bar said 10,927 and then 19,883, its time left half of what remained): the windows are
    counted by the embedder's own windowing (a backend counting words here), which cuts a long chunk into several."""
    from types import SimpleNamespace

    from localcr import pipeline as P
    from localcr.documents import Chunk, Document
    from localcr.embeddings import Embedder
    from localcr.embeddings.backend import Backend

    class Words(Backend):
        dimension, max_length, added_tokens = 4, 40, 2

        def count_tokens(self, texts):
            return [len(t.split()) for t in texts]

        def clip(self, text, n):
            return " ".join(text.split()[:n])

    model = Embedder.__new__(Embedder)
    model.backend, model.spec, model.max_length, model.dimension = Words(), SimpleNamespace(document_prefix=""), 40, 4
    monkeypatch.setattr(model, "recorded_rate", lambda: None)
    monkeypatch.setattr(model, "record_rate", lambda *args: None)
    bars = []

    class Bar:
        def __init__(self, total, **options):
            self.total, self.started_with, self.done = total, total, 0
            bars.append(self)

        def update(self, n):
            self.done += n

        def refresh(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Executor:
        def embed(self, model, texts, progress=None):
            progress(len(texts))
            return np.zeros((len(texts), 4), dtype=np.float32), len(texts)

    class Commits:
        def commit(self, docs, made, vectors, window_rows):
            pass

    monkeypatch.setattr(P, "tqdm", Bar)
    long_text = ". ".join(f"Sentence {n} of a long filing says what its segment earned in the year" for n in range(30))
    docs = [Document(f"d{i}", f"d{i}", "text", "x", 1) for i in range(40)]
    chunks_by_doc = {d.doc_id: [Chunk(f"{d.doc_id}#{n}", d.doc_id, n, 0, 1, long_text if i % 3 == 0 else "A short note.",
                                      context=f"File {d.doc_id}.") for n in range(10)] for i, d in enumerate(docs)}
    made = P.Made(model, chunks_by_doc, [], None, None, {}, {}, coverage=P.Coverage(set(), set(), set()))
    summary = P.BuildSummary(directory="ix")
    P._embed_all(docs, P._Batches(made, Executor(), Commits(), summary), progress=True, log=print)
    chunks = sum(map(len, chunks_by_doc.values()))
    assert len(bars) == 1 and summary.windows > 1.5 * chunks  # a long chunk is several windows
    assert bars[0].started_with == bars[0].total == bars[0].done == summary.windows
    assert model.count_windows([c for d in docs for c in chunks_by_doc[d.doc_id]]) == summary.windows


@pytest.mark.model
def test_the_embedding_estimate_is_this_machine_s_last_pace(tmp_path, monkeypatch):
    """What a build's "embedding ..., about N min" comes from: the windows a second and the windows a chunk of the
    embedder's last long stage here, each the mean of the last two measures; a short stage says nothing."""
    from localcr.embeddings import Embedder
    from localcr.models import load_registry

    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    model = Embedder(load_registry().require("embedder"))
    assert model.recorded_rate() is None
    model.record_rate(100, 1.0, 100, 50)  # too few windows to tell a pace from loading and warming up
    assert model.recorded_rate() is None
    model.record_rate(400, 10.0, 600, 300)
    assert model.recorded_rate() == (40.0, 2.0)
    model.record_rate(400, 20.0, 300, 300)
    assert model.recorded_rate() == (30.0, 1.5)
