"""The identifier-aware tokenizer and the BM25 index over it."""
from __future__ import annotations

import numpy as np
import pytest

from localcr.language import UNDETERMINED, detect, detect_within, document_language, embedder_warning, settled
from localcr.lexical import EMPTY, LexicalIndex, Postings, stopwords_of, tokenize, top_rows


def test_camel_case_identifier_is_kept_whole_and_split():
    assert tokenize("DiffExecutor") == ["diffexecutor", "diff", "executor"]


def test_snake_case_identifier_is_kept_whole_and_split():
    assert tokenize("run_target") == ["run_target", "run", "target"]


def test_acronyms_digits_and_stemming():
    assert tokenize("HTTPServer") == ["httpserver", "http", "server"]
    assert tokenize("parse_utf8") == ["parse_utf8", "pars", "utf"]  # one-character parts are noise
    assert tokenize("running executors") == ["run", "executor"]


def test_stop_words_dropped_but_not_inside_identifiers():
    assert tokenize("What is the purpose of the struct") == ["purpos", "struct"]
    assert tokenize("is_empty") == ["is_empti", "empti"]


def test_plain_words_find_identifiers_and_identifiers_find_themselves():
    index = LexicalIndex.build(["impl DiffExecutor { fn run_target() }", "a diff of two files", "unrelated text"])
    by_words = index.scores("diff executor run target")
    assert by_words.argmax() == 0
    exact = index.scores("DiffExecutor")
    assert exact[0] > exact[1] > 0
    assert index.scores("zebra").sum() == 0


def test_save_and_load(tmp_path):
    index = LexicalIndex.build(["alpha beta", "Straßen und Häuser"], ["en", "de"])
    index.save(tmp_path / "lex")
    loaded = LexicalIndex.load(tmp_path / "lex")
    assert loaded.languages == ["de", "en"] and loaded.scores("Straße").argmax() == 1


def test_cjk_runs_become_character_bigrams_beside_other_words():
    assert tokenize("黑豹队的防守", "zh") == ["黑豹", "豹队", "队的", "的防", "防守"]
    assert tokenize("東京タワーは2024年に完成", "ja") == ["東京", "京タ", "タワ", "ワー", "ーは", "2024", "年に", "に完", "完成"]
    assert tokenize("猫", "zh") == ["猫"]
    assert tokenize("see 東京 DiffExecutor") == ["see", "東京", "diffexecutor", "diff", "executor"]


def test_a_word_inside_unspaced_text_is_found():
    """Before bigrams, a run of kanji and kana was one token and a query matched only the identical run."""
    index = LexicalIndex.build(["東京タワーは港区にある電波塔です。", "大阪城は豊臣秀吉が築いた城です。"], ["ja", "ja"])
    assert index.scores("東京タワー").argmax() == 0
    assert index.scores("秀吉の城").argmax() == 1


def test_words_are_stemmed_in_their_language():
    assert tokenize("Die Verteidigungen der Häuser", "de") == ["verteid", "haus"]
    assert tokenize("Die Verteidigungen der Häuser", "en") == ["die", "verteidigungen", "der", "häuser"]
    assert tokenize("пельмени и блины", "ru") == ["пельмен", "блин"]
    assert tokenize("Zebra", "xx") == ["zebra"]  # no stemmer for the language: lower-cased only


def test_one_stop_list_for_every_text_of_an_index():
    """A document detected as another language keeps no stop word of the index's main language as a rare
    term that would rank it first for every query holding that word."""
    index = LexicalIndex.build(["El perro de la casa", "El gato de la calle", "La niña de la escuela"], ["es", "es", "en"])
    assert "de" in stopwords_of(["es", "en"]) and "the" in index.stopwords
    assert "de" not in index.parts[0].terms and "la" not in index.parts[0].terms
    assert index.scores("la casa del perro").argmax() == 0


def test_a_query_is_analysed_in_every_language_of_the_index():
    index = LexicalIndex.build(["Die Häuser der Stadt", "The houses of the town"], ["de", "en"])
    assert index.scores("Haus").argmax() == 0 and index.scores("house").argmax() == 1


def test_language_detection():
    assert detect("Die Verteidigung der Panthers gab nur 308 Punkte ab und belegte den sechsten Platz.") == "de"
    assert detect("黑豹队的防守丢了多少分？") == "zh" and detect("東京タワーはどこですか") == "ja"
    assert detect("12345 -- 678") == "en"  # nothing to go on: the default
    assert document_language("def main():\n    return 0  # Hauptprogramm", is_code=True) == "en"


def test_a_question_is_named_in_a_language_answers_speak_rather_than_a_close_relative():
    assert detect("伯吉斯页岩中发现了多少物种？") == "wuu"  # py3langid alone: Wu Chinese
    assert detect_within("伯吉斯页岩中发现了多少物种？") == "zh"
    assert detect_within("Quale partito è il più forte nei quartieri ricchi di Melbourne?") == "it"  # no relative
    assert detect_within("Welche Partei ist in Melbournes wohlhabenden Stadtteilen am stärksten?") == "de"
    assert detect_within("12 345") == "en"


def test_a_document_with_too_few_words_takes_its_folder_s_language_or_none():
    sheet = "# Sheet1\n\nKPI | 2021 | 2022 | 2023\n" + "".join(f"K{i} | {i} | {i + 1} | {i + 2}\n" for i in range(40))
    assert detect(sheet) not in ("en", UNDETERMINED)  # py3langid's best guess on a sheet of numbers: "om"
    assert document_language(sheet, False) == UNDETERMINED
    assert document_language("# Re: Lunch\n\nFrom: Ana\n\nFriday at noon?\n", False) == UNDETERMINED
    assert document_language("他们在北京的大学学习中文和历史。", False) == "zh"
    assert document_language("The tenant pays for the copper gutter repairs.", False) == "en"  # a sentence is enough
    languages = {"a/notes.md": "en", "a/report.md": "en", "a/memo.md": "de", "a/sheet.xlsx": UNDETERMINED,
                 "a/box.mbox#3": UNDETERMINED, "b/sheet.csv": UNDETERMINED, "c/x.md": "de", "c/y.csv": UNDETERMINED}
    assert settled(languages) == languages | {"a/sheet.xlsx": "en", "a/box.mbox#3": "en", "c/y.csv": "de"}



def test_a_warning_when_most_documents_are_in_languages_the_embedder_does_not_know():
    assert embedder_warning({"en": 2, "de": 1}, "minilm", "en") is None  # a minority
    assert embedder_warning({"ja": 2, "en": 1}, "minilm", "en").startswith(
        "2 of 3 documents are in languages the embedder minilm was not trained for (ja 2)")
    assert embedder_warning({"ja": 3}, "e5", "") is None  # languages not known: no warning
    assert embedder_warning({"ja": 3, "zh": 1}, "e5", "en, ja, zh") is None
    assert embedder_warning({"und": 5, "en": 1}, "minilm", "en") is None  # undetermined documents do not count


def marked(index, query: str, text: str) -> list[str]:
    return [text[a:b] for a, b in index.highlighter(query)(text)]


def test_highlighter_marks_the_words_that_match_the_query_terms():
    index = LexicalIndex.build(["retries use exponential backoff", "the DiffExecutor runs run_target"])
    text = "A failed job is retried with backoff; see DiffExecutor and run_target."
    assert marked(index, "retry backoff", text) == ["retried", "backoff"]  # stems: retry ~ retried
    assert marked(index, "diff executor", text) == ["DiffExecutor"]  # a part of an identifier marks the identifier
    assert marked(index, "the and with", text) == []  # stop words mark nothing
    assert marked(index, "unknown words", text) == []


def test_highlighter_marks_cjk_bigrams_inside_unspaced_text_with_exact_offsets():
    index = LexicalIndex.build(["東京都の天気は晴れです", "Die Häuser sind groß"], ["ja", "de"])
    text = "今日の東京都の天気\u3002Die Häuser"
    assert marked(index, "天気", text) == ["天気"]
    assert marked(index, "東京都", text) == ["東京都"]  # two overlapping bigrams merged into one span
    assert marked(index, "Haus", text) == ["Häuser"]  # German stemming on both sides


TEXTS = [
    "A failed job is retried three times with exponential backoff.",
    "The backoff starts at two seconds and doubles after every attempt.",
    "Each team has a CPU quota measured in core-hours per day.",
    "Quotas reset at midnight UTC; jobs wait in the pending queue.",
    "The DiffExecutor runs run_target for every changed file.",
    "Install the orbit package with pip and start the daemon.",
    "",
    "retry retry retry: the word repeated saturates the term frequency",
]
QUERIES = ["retry backoff", "quota reset midnight", "diff executor target", "daemon install pip", "the word"]


def test_scores_are_bm25s_scores():
    """The reference: bm25s itself, on the same terms (a chunk without terms holds the one placeholder term)."""
    import bm25s

    index = LexicalIndex.build(TEXTS)
    reference = bm25s.BM25(k1=1.2, b=0.75)
    reference.index([tokenize(t, "en", index.stopwords) or [EMPTY] for t in TEXTS], show_progress=False)
    for query in QUERIES:
        terms = index.query_terms(query)
        np.testing.assert_allclose(index.scores(query), reference.get_scores(terms), rtol=1e-6, atol=1e-7)


def test_scores_over_segments_and_tombstones_equal_one_index_of_the_live_chunks():
    """Collection statistics come from the live chunks of all parts: chunk count, mean length, document
    frequency. Three parts, two dead chunks, against one index of the six live ones."""
    stopwords = stopwords_of(["en"])
    parts = [Postings.build(TEXTS[:3], ["en"] * 3, stopwords), Postings.build(TEXTS[3:6], ["en"] * 3, stopwords),
             Postings.build(TEXTS[6:], ["en"] * 2, stopwords)]
    live = [np.array([True, False, True]), None, np.array([True, True])]
    segmented = LexicalIndex(parts, live)
    alive = [t for t, keep in zip(TEXTS, [True, False, True, True, True, True, True, True]) if keep]
    whole = LexicalIndex.build(alive)
    for query in QUERIES:
        scores = segmented.scores(query)
        assert scores[1] == 0  # the dead chunk
        np.testing.assert_allclose(np.delete(scores, 1), whole.scores(query), rtol=1e-6, atol=1e-7)


def test_document_frequencies_with_a_few_dead_rows_in_long_posting_lists():
    """Few dead rows against long posting lists are counted by binary search, many by the live mask: both
    give the scores of an index of the live chunks alone."""
    texts = [f"common word{i % 7} rare{i}" for i in range(400)]
    part = Postings.build(texts, ["en"] * 400, stopwords_of(["en"]))
    for dead in ([3, 250], list(range(0, 400, 3))):
        live = np.ones(400, dtype=bool)
        live[dead] = False
        whole = LexicalIndex.build([t for t, keep in zip(texts, live) if keep])
        for query in ("common", "word3 common", "rare250 rare251"):
            scores = LexicalIndex([part], [live]).scores(query)
            assert not scores[dead].any()
            np.testing.assert_allclose(scores[live], whole.scores(query), rtol=1e-6, atol=1e-7)

def test_postings_round_trip_memory_mapped(tmp_path):
    index = LexicalIndex.build(TEXTS)
    index.save(tmp_path / "lex")
    loaded = LexicalIndex.load(tmp_path / "lex")
    assert isinstance(loaded.parts[0].rows.base, np.memmap)  # a view of the map, not a copy
    for query in QUERIES:
        np.testing.assert_array_equal(loaded.scores(query), index.scores(query))


# Two segments' texts in three languages (Japanese written without spaces), each with a language of its own.
SEGMENT_TEXTS = [
    (TEXTS[:5] + ["東京タワーは港区にある電波塔です。", "Die Häuser der Stadt sind alt."], ["en"] * 5 + ["ja", "de"]),
    (TEXTS[5:] + ["大阪城は豊臣秀吉が築いた城です。", "Der Hafen der Stadt ist tief.", "The houses of the town"],
     ["en"] * 3 + ["ja", "de", "en"]),
]
MERGE_QUERIES = QUERIES + ["東京タワー", "大阪城", "Häuser Stadt", "Hafen", "the houses"]


def _segments(stopwords):
    return [Postings.build(texts, languages, stopwords) for texts, languages in SEGMENT_TEXTS]


def _assert_scores_as_built(merged: Postings, texts: list[str], languages: list[str], stopwords):
    """The merged postings score every query exactly as postings built from the same texts, hold the same terms,
    each with postings in row order, and no term without any."""
    built = Postings.build(texts, languages, stopwords)
    assert merged.terms.keys() == built.terms.keys() and merged.languages == built.languages
    np.testing.assert_array_equal(merged.lengths, built.lengths)
    for term in built.terms:
        rows, tfs = merged.postings(term)
        assert len(rows) and np.all(np.diff(rows) > 0), term
        np.testing.assert_array_equal(tfs[np.argsort(rows)], built.postings(term)[1][np.argsort(built.postings(term)[0])])
    merged_index, built_index = LexicalIndex([merged]), LexicalIndex([built])
    for query in MERGE_QUERIES:
        assert merged_index.query_terms(query) == built_index.query_terms(query)
        np.testing.assert_array_equal(merged_index.scores(query), built_index.scores(query))


def test_merged_postings_of_the_live_rows_score_as_a_build_of_their_texts():
    """What compaction writes: the live rows of each segment, segment after segment, without tokenizing again.
    The dead rows take every posting of a few terms with them (their terms are dropped and the rest renumbered)."""
    stopwords = stopwords_of(["en", "ja", "de"])
    parts = _segments(stopwords)
    live = [np.array([True, False, True, True, True, False, True]), np.array([False, True, True, True, True, True])]
    merged = Postings.merged([(part, np.flatnonzero(mask)) for part, mask in zip(parts, live)], ["en", "ja", "de"], stopwords)
    alive = [(text, language) for (texts, languages), mask in zip(SEGMENT_TEXTS, live)
             for text, language, keep in zip(texts, languages, mask) if keep]
    assert "東京" not in merged.terms and "daemon" not in merged.terms  # their only rows are dead
    _assert_scores_as_built(merged, [t for t, _ in alive], [lang for _, lang in alive], stopwords)
    assert sorted(merged.terms.values()) == list(range(len(merged.terms)))  # renumbered without gaps


def test_merged_postings_follow_the_picks_order_across_parts():
    """What a commit writes: documents it committed before, taken from their segments, between texts analysed
    now, in the commit's order (rows of one part picked apart and out of order)."""
    stopwords = stopwords_of(["en", "ja", "de"])
    (first, second), fresh = _segments(stopwords), Postings.build(["new text about harbour tides"], ["en"], stopwords)
    picks = [(second, np.array([3, 4])), (fresh, np.array([0])), (first, np.array([5, 6])), (second, np.array([0]))]
    order = [(1, 3), (1, 4), (None, 0), (0, 5), (0, 6), (1, 0)]
    texts = [SEGMENT_TEXTS[i][0][r] if i is not None else "new text about harbour tides" for i, r in order]
    languages = [SEGMENT_TEXTS[i][1][r] if i is not None else "en" for i, r in order]
    _assert_scores_as_built(Postings.merged(picks, languages, stopwords), texts, languages, stopwords)


def test_merging_nothing_or_only_dead_rows_gives_empty_postings():
    stopwords = stopwords_of(["en"])
    part = Postings.build(TEXTS, ["en"] * len(TEXTS), stopwords)
    for picks in ([], [(part, np.zeros(0, dtype=np.int64))]):
        merged = Postings.merged(picks, [], stopwords)
        assert merged.terms == {} and len(merged.lengths) == 0 and merged.indptr.tolist() == [0]
        assert not LexicalIndex([merged]).scores("retry").any()


def test_postings_analysed_with_other_stop_words_are_never_merged(tmp_path):
    """A stop word of one list is a term in postings analysed with another: those are analysed again instead.
    Postings record which list analysed them; those written before the record say none."""
    english, both = stopwords_of(["en"]), stopwords_of(["en", "de"])
    part = Postings.build(["die Stadt stirbt nie", "the daemon may die"], ["de", "en"], english)
    assert "die" in part.terms and part.analysed_with(english) and not part.analysed_with(both)
    with pytest.raises(ValueError, match="other stop words"):
        Postings.merged([(part, np.arange(2))], ["de", "en"], both)
    part.save(tmp_path / "lex")
    assert Postings.load(tmp_path / "lex").analysed_with(english)
    (tmp_path / "lex" / Postings.STOPWORDS).unlink()
    assert not Postings.load(tmp_path / "lex").analysed_with(english)


@pytest.mark.parametrize("n, depth", [(0, 5), (7, 5), (7, 10), (5000, 150), (1_000_000, 150), (3 * 1024, 3)])
def test_top_rows_are_the_best_positive_scores(n, depth):
    """The block-maxima shortcut selects what a full sort would: the depth highest scores, none of them zero."""
    rng = np.random.default_rng(n)
    scores = np.zeros(n, dtype=np.float32)
    hit = rng.choice(n, n // 3, replace=False)
    scores[hit] = rng.random(len(hit), dtype=np.float32) * 10
    best = np.sort(scores)[::-1][:depth]
    found = top_rows(scores, depth)
    assert len(set(found.tolist())) == len(found)
    np.testing.assert_array_equal(np.sort(scores[found])[::-1], best[best > 0])


def test_top_rows_with_ties_and_a_few_high_scores_in_one_block():
    scores = np.zeros(10_000, dtype=np.float32)
    scores[5:9] = 3.0  # four equal scores, all in the first block
    scores[9_000] = 1.0
    assert sorted(top_rows(scores, 3).tolist()) in ([5, 6, 7], [5, 6, 8], [5, 7, 8], [6, 7, 8])
    assert sorted(top_rows(scores, 6).tolist()) == [5, 6, 7, 8, 9_000]


def test_a_term_s_share_of_the_live_chunks_counts_what_holds_it_now():
    """Index.rare_terms reads a question's subject from these where no name gives one (localcr.answers.check)."""
    texts = ["Der Mekong fließt durch Laos.", "Der Kongo fließt durch Kinshasa.", "Der Rhein fließt durch Basel.",
             "Der Kongo ist tief."]
    index = LexicalIndex.build(texts, ["de"] * 4)
    shares = index.term_shares("Was bringt der Mekong, und wohin fließt der Kongo?")
    assert shares["mekong"] == 0.25 and shares["kongo"] == 0.5 and shares["fliesst"] == 0.75 and "bringt" not in shares
    tombstoned = LexicalIndex(index.parts, [np.array([True, True, True, False])])  # the fourth chunk is dead
    assert tombstoned.term_shares("Kongo")["kongo"] == pytest.approx(1 / 3)


def test_a_sheet_s_language_is_told_from_its_header_and_sentences_not_its_names_and_figures():
    from localcr.language import UNDETERMINED, document_language, sheet_words

    names = "Rank | Cyclist | Team | Points\n" + "".join(
        f"{n} | {name} | {team} | {1000 - n * 37:,}\n" for n, (name, team) in enumerate(
            [("Miguel Indurain (ESP)", "Banesto"), ("Tony Rominger (SUI)", "Mapei"), ("Eddy Ngozi (NGR)", "Lagos CC"),
             ("Bjarne Riis (DEN)", "Telekom"), ("Lasse Virén (FIN)", "Kuopio")] * 6, start=1))
    assert sheet_words(names) == "Rank Cyclist Team Points"
    assert document_language(names, False, "csv") in ("en", UNDETERMINED)
    german = "# Filialen\nFiliale | Region | Bemerkung\n" + "".join(
        f"Filiale {n} | Nord | die Filiale wurde im letzten Jahr umgebaut und neu eröffnet\n" for n in range(12))
    assert document_language(german, False, "xlsx") == "de"
