"""`localcr ask` and Index.ask: the bundled Qwen2.5-Coder-1.5B answers from a small corpus the tests write, citing
its sources; refuses what the corpus does not say; answers are cached; citations are checked on the real path.
One model is loaded for the module (an Answerer shared by the in-process tests), and each real generation costs
seconds, so the questions are few and the cache serves the CLI's repeats."""
from __future__ import annotations

import json

import pytest

from conftest import GUIDE, error_line, run

pytestmark = pytest.mark.model

QUESTION = "How often must the Kestrel pump be serviced?"
MANUAL = """# Kestrel pump manual

## Servicing

The Kestrel pump must be serviced every 500 operating hours. Use only grade B oil; grade A oil voids the warranty.

## History

Kestrel Pumps was founded in Bergen in 1921 by Ingrid Solberg.
"""
RIVERBEND = """The Battle of Riverbend

In the spring of 1863 the northern army gathered near Riverbend. General Halloway commanded fifty thousand men, and
the supply trains stretched for miles along the valley road. The campaign lasted eleven weeks.
"""
CALIBRATION = """Calibration notes

The sensor drift rate was 0.003 per hour at the reference host lab.example.org. Dr. Chen repeated the test twice.
"""
NORTHWIND = """Northwind Traders annual report 2022

Net revenue was $4.2 million in 2022, up from $3.9 million in 2021. The company opened two warehouses.
"""
# Two statements of one filing, in two documents (so two chunks): a ratio needs a figure of each.
ACME_INCOME = """Acme Tools Inc. annual report, fiscal 2023: consolidated statements of income

Consolidated Statements of Income
(in millions)
2023 2022
Net sales 1,200 1,000
Cost of sales 800 700
Operating income 150 120
"""
ACME_BALANCE = """Acme Tools Inc. annual report, fiscal 2023: consolidated balance sheets

Consolidated Balance Sheets
(in millions)
2023 2022
Inventories 300 250
Total current assets 900 850
Total current liabilities 600 500
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("ask")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text(GUIDE)
    (root / "docs" / "pump.md").write_text(MANUAL)
    for name, text in (("riverbend.txt", RIVERBEND), ("calibration.txt", CALIBRATION), ("northwind.txt", NORTHWIND),
                       ("acme-income.txt", ACME_INCOME), ("acme-balance.txt", ACME_BALANCE)):
        (root / "docs" / name).write_text(text)
    run("index", root / "docs", "--index", root / "index", "--contexts", "structural", "-q")
    return root


@pytest.fixture(scope="module")
def index(corpus):
    from localcr.search import Index

    return Index(corpus / "index")


def test_an_answer_cites_the_document_that_holds_it(index, answerer):
    answer = index.ask(QUESTION, answerer=answerer)
    assert not answer.refused, answer.text
    assert "500" in answer.text
    cited = answer.cited_sources
    assert cited and all(source.hit.path.endswith("pump.md") for source in cited), answer.to_dict()
    assert any("500 operating hours" in source.support for source in cited)
    assert answer.unsupported == [] and not answer.cached
    timings = answer.timings
    assert timings["estimate_at_s"] <= timings["first_token_s"] <= timings["total_s"] and timings["estimated_s"] > 0
    again = index.ask(QUESTION, answerer=answerer)
    assert again.cached and again.text == answer.text and again.to_dict()["citations"] == answer.to_dict()["citations"]


def test_a_question_the_documents_do_not_answer_is_refused(index, answerer):
    answer = index.ask("Which database does the Kestrel pump store its telemetry in?", answerer=answerer)
    assert answer.refused, answer.text
    assert answer.text == "The indexed documents do not say."
    assert answer.sources  # the nearest ones, shown beside the refusal


def test_a_number_written_in_words_answers_a_question_in_figures(index, answerer):
    answer = index.ask("How many men did General Halloway command?", answerer=answerer)
    assert not answer.refused, answer.to_dict()
    assert any(figure in answer.text for figure in ("50,000", "50000", "50 thousand", "fifty thousand")), answer.text
    assert answer.cited_sources and all(s.hit.path.endswith("riverbend.txt") for s in answer.cited_sources)


def test_a_company_the_corpus_does_not_hold_is_refused_though_another_states_the_figure(index, answerer):
    answer = index.ask("What was Contoso's net revenue in 2022?", answerer=answerer)
    assert answer.refused, answer.to_dict()
    assert any(s.hit.path.endswith("northwind.txt") for s in answer.sources)  # read, and not taken for Contoso's


def test_a_ratio_is_computed_from_two_figures_in_two_chunks_and_cites_both(index, answerer):
    answer = index.ask("What is Acme Tools' FY2023 inventory turnover ratio? Inventory turnover is defined as FY2023 "
                       "cost of sales divided by the average inventories between FY2022 and FY2023.", answerer=answerer)
    assert not answer.refused and answer.text.startswith("2.91"), answer.to_dict()  # 800 / ((250 + 300) / 2)
    assert {s.hit.path.rsplit("/", 1)[-1] for s in answer.cited_sources} == {"acme-income.txt", "acme-balance.txt"}
    assert answer.unsupported == [] and "computed in Python" in answer.note
    for figure, source in (("800", "acme-income.txt"), ("250", "acme-balance.txt"), ("300", "acme-balance.txt")):
        sentence = next(s for s in answer.checked.sentences if s.text.endswith(f": {figure} (in millions)."))
        assert answer.sources[sentence.citations[0] - 1].hit.path.endswith(source)


def test_a_judgement_of_a_figure_is_answered_by_computing_it_for_each_year_asked(index, answerer):
    answer = index.ask("Has Acme Tools' current ratio improved between FY2022 and FY2023?", answerer=answerer)
    assert not answer.refused and "computed in Python" in answer.note, answer.to_dict()
    assert answer.text.startswith("No: current ratio went from 1.70 in FY2022 to 1.50 in FY2023: down 0.20"), answer.text


def test_every_chunk_of_a_document_is_a_hit_in_order(index):
    doc_id = next(hit.doc_id for hit in index.search("Acme consolidated balance sheets inventories", 3)
                  if hit.path.endswith("acme-balance.txt"))
    hits = index.document_hits(doc_id)
    assert hits and {hit.doc_id for hit in hits} == {doc_id} and [h.position for h in hits] == sorted(h.position for h in hits)
    assert "Inventories 300 250" in "".join(hit.text for hit in hits)
    assert index.document_hits("no-such-document") == []


def test_the_supporting_quote_holds_a_decimal_number_whole(index, answerer):
    answer = index.ask("What was the sensor drift rate at the reference host?", answerer=answerer)
    assert not answer.refused, answer.to_dict()
    assert [s.support for s in answer.cited_sources] == [
        "The sensor drift rate was 0.003 per hour at the reference host lab.example.org."]


def test_a_filter_no_document_passes_is_a_refusal_that_says_why(index, answerer):
    answer = index.ask(QUESTION, answerer=answerer, glob=["nowhere/**"])
    assert answer.refused and answer.sources == [] and "passes --glob 'nowhere/**'" in answer.note


def test_citations_of_a_cached_answer_are_checked_on_the_real_path(index, answerer):
    """An answer as a small model may write it (stored where the answer cache keeps it): a citation to a source that
    does not exist is dropped, a figure no cited source holds is unsupported, a wrong citation is corrected."""
    from localcr.cache import open_cache

    question = "When must the Kestrel pump be serviced, and who founded the company?"
    hits = index.search(question, 5)
    sources = answerer._sources(question, hits, [{}] * len(hits))
    pump = next(s.number for s in sources if "500" in s.shown and "Bergen" in s.shown)
    other = next(s.number for s in sources if s.number != pump)
    written = (f"The pump must be serviced every 500 operating hours [{pump}][9]. It was founded in 1881 [{pump}]. "
               f"Kestrel Pumps was founded in Bergen [{other}].")
    with open_cache("answers") as cache:
        cache.set(answerer._key(question, sources), {"text": written, "sources": len(sources), "note": ""}, "test")
    answer = index.ask(question, 5, answerer=answerer)
    checked = answer.checked
    assert answer.cached and checked.dropped == [9]
    assert answer.unsupported == ["It was founded in 1881."]
    assert checked.sentences[1].missing == ["1881"]
    assert checked.sentences[2].citations == [pump] and checked.sentences[2].corrected == [other]
    assert f"[{pump}][9]" not in answer.text and f"hours [{pump}]." in answer.text


@pytest.mark.own_llm
def test_an_answer_that_loads_the_model_says_what_loading_took(index):
    """In a new process the first answer pays for loading the model and its instruction's state, before the time it
    says; the next does not."""
    from localcr.answers.reader import load_answerer

    answerer = load_answerer(index.registry)
    try:
        first = index.ask(QUESTION, answerer=answerer, fresh=True).timings
        assert 0 < first["setup_s"] <= first["estimate_at_s"]
        assert index.ask(QUESTION, answerer=answerer, fresh=True).timings["setup_s"] == 0.0
    finally:
        answerer.close()


def test_ask_on_the_command_line_streams_the_answer_and_lists_its_sources(corpus, index, answerer):
    index.ask(QUESTION, answerer=answerer)  # cached by the first test, or written now: the CLI repeats it
    out = run("ask", QUESTION, "--index", corpus / "index")
    assert "Sources:" in out and "pump.md" in out and "\u201c" in out
    data = json.loads(run("ask", QUESTION, "--index", corpus / "index", "--json"))
    assert data["cached"] and not data["refused"] and data["citations"]
    assert {"answer", "sentences", "unsupported", "sources", "timings"} <= set(data)
    cited = [s for s in data["sources"] if s["number"] in data["citations"]]
    assert all(s["path"].endswith("pump.md") and s["support"] and s["support_start"] is not None for s in cited)


@pytest.mark.parametrize("args, says", [
    (["   "], "the question is empty"),
    (["what?", "--llm", "nope"], "nope"),
    (["what?", "--kind", "movie"], "unknown document kind"),
])
def test_bad_questions_and_options_are_one_line(corpus, args, says):
    assert says in error_line("ask", *args, "--index", corpus / "index")


def test_a_window_too_small_for_one_source_is_one_line(corpus, tmp_path):
    from localcr.models import DEFAULT_REGISTRY

    models = tmp_path / "models.toml"
    models.write_text(DEFAULT_REGISTRY.read_text().replace('n_ctx = 8192', 'n_ctx = 300', 1))  # Gemma 3 270M's entry
    line = error_line("--models", models, "ask", QUESTION, "--index", corpus / "index", "--llm", "gemma3-270m")
    assert "window of" in line and "too small" in line


def test_eval_scores_answers_against_the_reference(corpus, index, answerer, tmp_path):
    index.ask(QUESTION, answerer=answerer)  # cached: the evaluation reads it again
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query": QUESTION, "relevant": ["docs/pump.md"], "answer": "500 operating hours"}) + "\n")
    out = run("eval", "--index", corpus / "index", "--queries", queries, "--k", "3", "--answers", "--json", "-q")
    data = json.loads(out[out.index("{"):])  # after the query file's report on stderr
    [row] = data["answers"]
    assert row["config"] == "hybrid" and row["questions"] == 1 and row["k"] == 3
    assert row["contains"] == 100.0 and row["citation_precision"] == 100.0 and row["refused"] == 0.0
    table = run("eval", "--index", corpus / "index", "--queries", queries, "--k", "3", "--answers", "-q")
    assert "contains gold %" in table and "citation precision %" in table


class ScriptedAnswerRunner:
    """Stands for the LLM in the answer step's plumbing tests: writes the given texts, one per generation, in pieces
    as a model streams them (what the check then makes of them is the real path)."""

    def __init__(self, spec, *texts: str):
        self.spec, self.n_ctx, self.threads, self.parallel, self.texts = spec, 4096, 1, 1, list(texts)
        self.grammars, self.penalties = [], []  # each generation's grammar (None for none) and repeat penalty

    def render(self, prefix_message: str, suffix_message: str, system: str = ""):
        return list((system + prefix_message).encode()), list(suffix_message.encode())

    def keep_prefix(self, tokens, *args, **kwargs) -> str:
        return "kept"

    def reused(self, tokens, prefix=0, logits=True) -> int:
        return 0

    def stream(self, prefix, suffix, *, max_tokens, stops=None, grammar=None, repeat_penalty=None):
        from localcr.llm import Completion

        text = self.texts.pop(0)
        self.grammars.append(grammar)
        self.penalties.append(repeat_penalty)
        yield from (text[i:i + 4] for i in range(0, len(text), 4))
        yield Completion(text=text, tokens=len(text) // 4, finished=True, reused=0, evaluated=len(prefix) + len(suffix),
                         prompt_seconds=0.01, generate_seconds=0.01)

    def close(self) -> None:
        pass


def test_streamed_text_the_check_takes_back_is_withdrawn_on_a_line_of_its_own(index):
    from localcr.answers.reader import Answerer

    spec = index.registry.require("llm", None)
    # written twice: over the question's sentences, then over more of them (the hits hold the question's words)
    answerer = Answerer(spec, runner=ScriptedAnswerRunner(spec, *["The pump is painted bright green [1]."] * 2))
    events = list(answerer.stream("What colour is the Kestrel pump?", index.search("Kestrel pump colour", 2)))
    kinds = [kind for kind, _ in events]
    assert kinds.index("withdrawn") > kinds.index("text") and kinds[-2:] == ["text", "answer"]
    assert [value for kind, value in events if kind == "withdrawn"] == [
        "withdrawn: the text above is not an answer (no sentence of it is in its sources); reading more of the sources",
        "withdrawn: the text above is not an answer (no sentence of it is in its sources)"]
    assert events[-1][1].refused and events[-2][1] == "The indexed documents do not say."
    assert events[-1][1].draft == "The pump is painted bright green [1]."


def test_a_lone_source_number_is_never_shown_and_is_written_again_in_words(index):
    """The 1.5B answered "1 [1]" for a source's year (the number of the source it meant to cite): that is held back
    while it may still be one, and written again with the answer made to start with words."""
    from localcr.answers.reader import ANSWER_REPEAT_PENALTY, Answerer

    spec = index.registry.require("llm", None)
    runner = ScriptedAnswerRunner(spec, "1 [1]", "The Kestrel pump must be serviced every 500 operating hours [1].")
    events = list(Answerer(spec, runner=runner).stream(QUESTION, index.search(QUESTION, 2), fresh=True))
    answer = events[-1][1]
    assert not answer.refused and answer.text == "The Kestrel pump must be serviced every 500 operating hours [1]."
    assert "".join(value for kind, value in events if kind == "text") == answer.text  # the "1" never streamed
    assert runner.grammars[0] is None and runner.grammars[1] is not None and 'wrote only "1"' in answer.note
    assert runner.penalties == [ANSWER_REPEAT_PENALTY] * 2  # answers never take the model's repeat penalty
    from localcr.answers.reader import _LONE_ONE

    assert all(_LONE_ONE.fullmatch(text) for text in ("1 [1]", "1. [2]", "1[2]", "1 [SEP]", "1", "1 ["))
    assert not any(_LONE_ONE.fullmatch(text) for text in ("1931 [1]", "3 [1]", "1.5 [1]", "10 [1]", "1 in 1931 [1]"))


def test_an_answer_in_another_script_that_no_source_holds_is_written_again_in_the_question_s(index):
    """An Arabic question answered "Energyproject AB is located in Sweden [1]" lost a right answer to the check: an
    answer in another script than its question's that no source holds is withdrawn and written again made to start
    in the question's script (the refusal word allowed). A refusal is not written again."""
    from localcr.answers.reader import Answerer

    spec = index.registry.require("llm", None)
    question = "Какого цвета насос Kestrel?"
    runner = ScriptedAnswerRunner(spec, "The pump is painted purple [1].", "NOT FOUND")
    events = list(Answerer(spec, runner=runner).stream(question, index.search("Kestrel pump colour", 2), fresh=True))
    answer = events[-1][1]
    assert runner.grammars[0] is None and runner.grammars[1] is not None and answer.refused
    assert "asked again to write in Russian" in answer.note
    assert any(kind == "withdrawn" and value.endswith("writing it again") for kind, value in events)
    refusing = ScriptedAnswerRunner(spec, "NOT FOUND")
    refused = list(Answerer(spec, runner=refusing).stream(question, index.search("Kestrel pump colour", 2), fresh=True))
    assert refused[-1][1].refused and refusing.grammars == [None]


def test_a_refusal_word_written_after_an_answer_is_neither_shown_nor_a_refusal(index):
    """One evaluation of a prompt wrote "... every 500 operating hours. NOT FOUND" where another wrote "[1]": the text
    before the word is the answer, checked like any (a citation attached where a source holds it); the word is never
    streamed. Written first, the word is a refusal as before (tried again where a source holds the question)."""
    from localcr.answers.reader import Answerer

    spec = index.registry.require("llm", None)
    runner = ScriptedAnswerRunner(spec, "The Kestrel pump must be serviced every 500 operating hours. NOT FOUND",
                                  "NOT FOUND. The pump must be serviced every 500 operating hours.", *["NOT FOUND"] * 3)
    events = list(Answerer(spec, runner=runner).stream(QUESTION, index.search(QUESTION, 2), fresh=True))
    streamed = "".join(value for kind, value in events if kind == "text")
    answer = events[-1][1]
    assert not answer.refused and answer.text.endswith("every 500 operating hours [1].")
    assert streamed.rstrip() == "The Kestrel pump must be serviced every 500 operating hours.", streamed
    assert "NOT" not in streamed and "withdrawn" not in dict(events) and answer.draft.endswith("NOT FOUND")
    later = list(Answerer(spec, runner=runner).stream(QUESTION, index.search(QUESTION, 2), fresh=True))[-1][1]
    assert later.refused and "asked again with refusing forbidden" in later.note  # a refusal, tried once more
    assert "read more of them" in later.note and runner.texts == []  # and over more of the hits, as many times


def test_a_refusal_is_tried_again_where_a_source_sentence_holds_the_question(index, corpus):
    """The model refuses though a source sentence (with the next) holds most of the question's words, or is close to
    it in the index's embedding: it is asked once more with refusing forbidden, and what it then writes stands where
    the check finds it in a source."""
    from localcr.answers.reader import Answerer

    spec = index.registry.require("llm", None)
    runner = ScriptedAnswerRunner(spec, "NOT FOUND", "Every 500 operating hours [1].")
    answer = index.ask(QUESTION, answerer=Answerer(spec, runner=runner), fresh=True)
    assert not answer.refused and "500" in answer.text and "asked again with refusing forbidden" in answer.note
    runner.texts = ["NOT FOUND"]
    refused = index.ask("Which database stores the Kestrel pump's telemetry?", answerer=Answerer(spec, runner=runner), fresh=True)
    assert refused.refused and "asked again" not in refused.note  # no sentence holds the question's words
    runner.texts = ["NOT FOUND", "Fifty thousand men [1]."]  # the army in one sentence, its general in the next
    split = index.ask("How many men did General Halloway's northern army have in 1863?",
                      answerer=Answerer(spec, runner=runner), fresh=True)
    assert not split.refused and "asked again with refusing forbidden" in split.note
    runner.texts = ["NOT FOUND", "Every 500 operating hours [1]."]  # few of its words, but close to it in meaning
    close = index.ask("How often does the pump need maintenance?", answerer=Answerer(spec, runner=runner), fresh=True)
    assert not close.refused and "close to the question (cosine" in close.note, close.note
    from localcr.search import Index
    from localcr.serve.batching import QueryBatcher

    served = Index(corpus / "index", index.registry, embedder=QueryBatcher(index.embedder))  # as `localcr serve` opens it
    runner.texts = ["NOT FOUND", "Every 500 operating hours [1]."]
    close = served.ask("How often does the pump need maintenance?", answerer=Answerer(spec, runner=runner), fresh=True)
    assert not close.refused and "close to the question (cosine" in close.note, close.note


def test_a_refusal_over_the_evidence_is_asked_again_over_more_of_it(index):
    """The model read only the question's sentences (here a budget of 30 characters: one sentence) and wrote what no
    source holds, so the check withdrew it; the hits hold the question's words, so it is asked again over three
    times as much of their evidence, and what it then writes stands. Where the evidence was each hit whole already,
    nothing is asked again."""
    from localcr.answers.reader import Answerer

    spec = index.registry.require("llm", None)
    runner = ScriptedAnswerRunner(spec, "The pump is serviced weekly by robots [1].", "Every 500 operating hours [1].")
    events = list(Answerer(spec, runner=runner, evidence_chars=30).stream(QUESTION, index.search(QUESTION, 2), fresh=True))
    kinds, answer = [kind for kind, _ in events], events[-1][1]
    assert kinds.count("sources") == 2 and kinds.index("withdrawn") < len(kinds) - kinds[::-1].index("sources")
    assert dict(events)["withdrawn"].endswith("reading more of the sources")
    assert not answer.refused and answer.text == "Every 500 operating hours [1].", answer.to_dict()
    first, again = ([s.shown for s in value] for kind, value in events if kind == "sources")
    assert "read more of them" in answer.note and len("".join(again)) > len("".join(first)) >= 30
    runner.texts = ["The pump is serviced weekly by robots [1]."]
    hits = index.search(QUESTION, 2)
    whole = Answerer(spec, runner=runner, evidence_chars=0).stream(QUESTION, hits, fresh=True)
    assert list(whole)[-1][1].refused and runner.texts == []  # asked once: there was no more to read


def test_long_filings_are_not_read_again(index):
    """A filing's evidence keeps most of each hit already (2,400 characters): read again whole, a refusal there
    became a wrong answer, so only shorter prose is read again."""
    from dataclasses import replace

    from localcr.answers.reader import Answerer
    from localcr.documents import LONG_PROSE

    answerer = Answerer(index.registry.require("llm", None), evidence_chars=30)
    hits = index.search(QUESTION, 2)
    matches = [{}] * len(hits)
    assert answerer.worth_reading_more(QUESTION, hits, matches, answerer._sources(QUESTION, hits, matches))
    filings = [replace(hit, structure=LONG_PROSE) for hit in hits]
    assert answerer.worth_reading_more(QUESTION, filings, matches, answerer._sources(QUESTION, filings, matches)) is None


def test_the_second_try_cannot_write_the_refusal_word_in_any_case(answerer):
    """The grammar of the try with refusing forbidden: the bundled 1.5B, told to write the refusal word, starts with
    something else (it once wrote "Not FOUND", once "Not_FOUND", which the grammar allowed and which are refusals).
    Told so, it may still write the word later ("Not NotFound"): that stays a refusal (is_refusal)."""
    from localcr.answers.reader import _NO_REFUSAL, _REFUSAL_WORD, is_refusal
    from localcr.llm import Completion, load_grammar

    runner = answerer.runner
    for word in ("Not FOUND", "not found", "NOT FOUND", "Not_FOUND", "Not-found", "Not: found"):
        prefix, suffix = runner.render("Reply with exactly these words and nothing else: ", word)
        written = [piece for piece in runner.stream(prefix, suffix, max_tokens=8, grammar=load_grammar(_NO_REFUSAL))
                   if isinstance(piece, Completion)][0].text
        assert written.strip() and not _REFUSAL_WORD.match(written) and not written.startswith(("[", " ")), written
        assert is_refusal(written) == bool(_REFUSAL_WORD.search(written)), written


def test_a_sentence_is_checked_against_the_whole_passage_it_cites(tmp_path):
    """The model reads only the sentences of a passage that bear on the question; a sentence whose facts the rest of
    that passage holds is grounded in it all the same."""
    from localcr.answers.reader import Answerer
    from localcr.search import Index

    (tmp_path / "docs").mkdir()
    filler = " ".join(f"The market hall on street {n} sold cloth, salt and timber." for n in range(7))
    (tmp_path / "docs" / "luther.txt").write_text(
        "Reformation notes\n\n" + filler + " Students thronged to Wittenberg. This early part of Luther's career was "
        "one of his most productive. Three of his best-known works were printed in 1520.\n")
    run("index", tmp_path / "docs", "--index", tmp_path / "index", "--contexts", "structural", "-q")
    index = Index(tmp_path / "index")
    spec = index.registry.require("llm", None)
    runner = ScriptedAnswerRunner(spec, *["The early part, from 1519 to 1520 [1]."] * 2)
    question = "What part of Luther's career was one of his most productive?"
    events = list(index.ask_stream(question, answerer=Answerer(spec, runner=runner), fresh=True))
    read = [value for kind, value in events if kind == "sources"]
    assert "1520" not in read[0][0].shown  # the evidence the model read leaves it out
    assert events[-1][1].refused and "1520" in read[1][0].shown  # 1519 is in no part of the passage, read whole
    runner.texts = ["The early part, in 1520 [1]."]
    answer = index.ask(question, answerer=Answerer(spec, runner=runner), fresh=True)
    assert not answer.refused and answer.cited_sources, answer.to_dict()


def test_a_computed_figure_keeps_to_the_documents_the_filter_passes(index, answerer):
    answer = index.ask("What is Acme Tools' FY2023 inventory turnover ratio? Inventory turnover is defined as FY2023 "
                       "cost of sales divided by the average inventories between FY2022 and FY2023.", answerer=answerer,
                       glob=["!*acme-balance.txt"])
    assert not any(s.hit.path.endswith("acme-balance.txt") for s in answer.sources), answer.to_dict()
    assert "computed in Python" not in answer.note
