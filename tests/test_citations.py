"""Citations read from an answer and checked against their sources (localcr.answers.check): no model needed."""
from localcr.answers.reader import content_terms, figures_closed_up, is_refusal
from localcr.answers.check import (abbreviated, check, misspelt, citations_in, figures_in, names_in, phrase_holder,
                               split_sentences, stated_figures)
from localcr.answers.numerals import as_digits

SOURCES = [
    "Orbit retries a failed job three times. The backoff starts at 2 seconds and doubles after every attempt.",
    "Net sales were $1,234 million in fiscal 2022 (in millions of dollars). The plant in Corning, New York opened in 1981.",
]


def test_citation_forms():
    assert citations_in("A [1]. B [2][3]. C [1, 3]; D [2;4]") == [1, 2, 3, 1, 3, 2, 4]


def test_sentences_keep_their_citations_after_the_stop():
    split = split_sentences("The backoff starts at 2 seconds. [1] It doubles [1]. Sales rose.\n\nNew paragraph [2].")
    assert split == [("The backoff starts at 2 seconds.", [1], 0), ("It doubles.", [1], 0), ("Sales rose.", [], 0),
                     ("New paragraph.", [2], 1)]


def test_decimal_points_and_thousands_do_not_end_a_sentence():
    assert [s for s, _, _ in split_sentences("Net sales were $1.234 billion [2]. Jobs retry 3 times [1].")] == [
        "Net sales were $1.234 billion.", "Jobs retry 3 times."]


def test_an_initial_or_an_abbreviation_does_not_end_a_sentence_and_each_line_is_one():
    """A stop before a space had cut "Rajendra K." from the rest, and the name the rest held went unchecked."""
    assert split_sentences("Rajendra K. Pachauri chaired it from 2002 [1]. U.S. troops left, e.g. in 1975 [2].\n"
                           "- Bert Bolin [1]") == [("Rajendra K. Pachauri chaired it from 2002.", [1], 0),
                                                   ("U.S. troops left, e.g. in 1975.", [2], 0), ("- Bert Bolin", [1], 0)]
    source = ["The previous chairs were Rajendra K. Pachauri, elected in May 2002; and Bert Bolin in 1988."]
    assert check("Rajendra K. Pachauri was elected in 2002 [1].", source).sentences[0].supported
    assert not check("Rajendra K. Watson was elected in 2002 [1].", source).sentences[0].supported


def test_a_citation_to_no_source_is_dropped():
    checked = check("A failed job is retried three times [1][7].", SOURCES)
    assert checked.dropped == [7]
    assert checked.sentences[0].citations == [1]
    assert checked.text == "A failed job is retried three times [1]."


def test_a_figure_no_cited_source_holds_is_unsupported():
    checked = check("The Corning plant opened in 1881 [2]. The backoff starts at 2 seconds [1].", SOURCES)
    first, second = checked.sentences
    assert not first.supported and first.missing == ["1881"]
    assert second.supported
    assert [s.text for s in checked.unsupported] == [first.text]


def test_number_words_of_a_source_hold_an_answers_digits():
    assert check("Jobs are retried 3 times [1].", SOURCES).sentences[0].supported


def test_a_citation_to_the_wrong_source_is_corrected_to_the_one_that_holds_it():
    checked = check("The plant opened in 1981 [1].", SOURCES)  # 1981 is in source 2, not 1
    sentence = checked.sentences[0]
    assert sentence.supported and sentence.citations == [2] and sentence.corrected == [1]
    assert checked.text == "The plant opened in 1981 [2]."


def test_a_sentence_joining_two_sources_cites_both_unless_one_is_about_another_subject():
    sources = ["Temujin was rescued with the help of his protector, Toghrul Khan of the Keraite tribe.",
               "Toghrul, as the young khan's patron, was exiled to the Qara Khitai."]
    joined = check("Toghrul Khan of the Keraite tribe was exiled to the Qara Khitai [1].", sources)
    sentence = joined.sentences[0]
    assert sentence.supported and sentence.citations == [1, 2] and sentence.corrected == [1]
    assert not check("Toghrul Khan of the Keraite tribe was exiled to Rome [1].", sources).sentences[0].supported
    about = ["mongols.txt\nThe Keraite tribe and Temujin\n" + sources[0], "rome.txt\nThe Roman empire\n" + sources[1]]
    off = check("Toghrul Khan of the Keraite tribe was exiled to the Qara Khitai [1].", sources,
                question="Where was Temujin's patron exiled?", about=about)
    assert not off.sentences[0].supported and "Qara" in " ".join(off.sentences[0].missing)


def test_scaled_figures_match_a_table_in_millions():
    assert check("Net sales were $1.23 billion in fiscal 2022 [2].", SOURCES).sentences[0].supported
    assert check("Net sales were 1,234 million [2].", SOURCES).sentences[0].supported
    assert not check("Net sales were $1.5 billion [2].", SOURCES).sentences[0].supported
    assert figures_in("$1.2 billion") == {1.2, 1.2e9}


def test_figures_are_read_after_chinese_and_japanese_characters_but_not_inside_words_or_names():
    """Chinese and Japanese run figures into their words ("党歴30年"): read there, a wrong "50年" is caught. The
    numeral of a name is no figure (安倍晋三, not 安倍晋3); "A380" and "v2.1" hold none."""
    assert {value for _, value, _ in stated_figures("党歴30年以上、約60％", "ja")} == {30.0, 60.0}
    assert {value for _, value, _ in stated_figures("德军于1936年重新占领莱茵兰", "zh")} == {1936.0}
    assert stated_figures("安倍晋三首相は述べた", "ja") == []
    assert check("安倍晋三首相は「デマ」と主張した。[1]", ["安倍首相は、チラシを「デマ」であると主張した。"],
                 question="首相は誰ですか", language="ja").sentences[0].supported
    assert figures_in("the A380, release v2.1") == set()


def test_names_and_quotes_must_occur():
    assert names_in("The plant in Corning opened before Orbit.") == ["Corning", "Orbit"]
    assert check("The plant is in Corning, New York [2].", SOURCES).sentences[0].supported
    assert check("The plant is in Ithaca [2].", SOURCES).sentences[0].missing == ["Ithaca"]
    assert check('The guide says "doubles after every attempt" [1].', SOURCES).sentences[0].supported
    assert check('The guide says "halves after every attempt" [1].', SOURCES).sentences[0].missing[0] == "halves after every attempt"


def test_a_sentence_whose_added_words_no_cited_source_holds_is_unsupported():
    question = "What was the first problem the crew met?"
    sources = ["First, the crew noticed a strange odor in their spacesuits, which delayed the sealing of the hatch."]
    assert check("The first problem was a strange odor in their spacesuits [1].", sources, question=question).sentences[0].supported
    made_up = check("The first problem was the failure of the oxygen system [1].", sources, question=question).sentences[0]
    assert not made_up.supported and made_up.missing == ["failure", "oxygen", "system"]
    explained = check("It sums the values of a list [1].", ["def total(xs):\n    return sum(xs)"], code=[True])
    assert explained.sentences[0].supported  # code is explained in other words than its own


def test_german_nouns_are_not_names():
    sources = ["Der Auftrag wird dreimal wiederholt."]
    assert check("Ein Auftrag wird dreimal wiederholt [1].", sources, names=False).sentences[0].supported


def test_an_uncited_sentence_takes_its_paragraphs_next_citation_or_is_unsupported():
    checked = check("A job is retried three times. The backoff doubles [1].\n\nIt is very reliable.", SOURCES)
    first, second, third = checked.sentences
    assert first.citations == [1] and first.supported and first.inherited
    assert second.supported
    assert not third.supported and third.citations == []
    assert checked.text == "A job is retried three times. The backoff doubles [1]. It is very reliable."


def test_refusals_are_recognised():
    assert is_refusal("NOT FOUND")
    assert is_refusal("  not found.") and is_refusal("[1]") and is_refusal(" [2]. ")  # nothing said
    assert is_refusal("Not_FOUND") and is_refusal("Not  found") and is_refusal("NOTFOUND")  # the word run together
    assert not is_refusal("Not until 1990 [1].") and not is_refusal("Nothing was found there [1].")
    assert not is_refusal("The gene is not found in bacteria [1].")  # words of an answer, not the refusal word
    assert not is_refusal("1921 [1]")
    assert is_refusal("NotHING [1]") and is_refusal("None.") and is_refusal("Nichts [2]")  # nothing named
    assert is_refusal("The sources do not mention the plant's size.")
    assert not is_refusal("The plant opened in 1981 [2].")
    for words in ("Die Quellen enthalten dazu keine Angaben.", "Les sources ne mentionnent pas la taille.",
                  "Las fuentes no dicen nada de eso.", "В источниках нет информации об этом.", "لا تذكر المصادر ذلك.",
                  "资料中没有提到工厂的面积。", "文書には工場の広さは記載されていません。", "Nicht gefunden.", "No encontrado",
                  "Не найдено.", "غير موجود", "未找到", "見つかりません"):
        assert is_refusal(words), words
    assert not is_refusal("Die Anlage wurde 1981 eröffnet [2].") and not is_refusal("工厂于1981年开业[2]。")



def test_a_questions_content_terms_leave_out_the_words_that_ask():
    """What a source sentence must hold for a refusal to be tried again: not "¿Cuántas", "wann", "ما" or a
    Japanese question's kana of grammar (XQuAD's and JSQuAD's refused questions whose source held the answer)."""
    from localcr.lexical import tokenize

    question = "What is the retry backoff of the Kestrel pump?"
    assert content_terms(question, "en") == set(tokenize(question, "en"))  # English's stop words ask already
    assert content_terms("¿Cuántas especies de ctenóforos no han sido descritas?", "es") == \
        content_terms("especies de ctenóforos descritas sido", "es")
    assert content_terms("Wann wurde das Gebiet von Brookhaven bekannt?", "de") == {"gebiet", "brookhav", "bekannt"}
    assert content_terms("ما هي التوجيهية التي تم أحداثها سنة 1994؟", "ar") == {"1994", "احداث", "توجيه", "سنة"}
    assert content_terms("メコン川から得られる物は何か", "ja") == {"メコ", "コン", "ン川"}
    assert "哪块" not in content_terms("胡格诺派被许诺授予哪块英国殖民地的土地?", "zh")

def test_numbers_written_in_words_hold_the_same_figure_in_digits():
    source = ["In 1863 General Halloway commanded fifty thousand men along the valley road."]
    for answer in ("Halloway commanded 50,000 men [1].", "Halloway commanded 50 thousand men [1].",
                   "Halloway commanded fifty thousand men [1]."):
        assert check(answer, source).sentences[0].supported, answer
    assert not check("Halloway commanded 60,000 men [1].", source).sentences[0].supported
    assert check("Halloway befehligte 50.000 Männer [1].", ["Halloway befehligte fünfzigtausend Männer."], names=False,
                 language="de").sentences[0].supported is False  # "50.000" is German for fifty thousand: not read so
    assert check("哈洛韦指挥了50000人[1]。", ["哈洛韦将军指挥了五万人。"], language="zh").sentences[0].supported
    assert check("Халлоуэй командовал 50000 солдат [1].", ["Халлоуэй командовал пятьюдесятью тысячами солдат."],
                 language="ru").sentences[0].supported
    burgess = ["عثر على ثلاثة أنواع في صخور بورجس الصلصالية."]  # XQuAD-ar: the 1.5B answered "3 [1]"
    assert check("3 [1]", burgess, language="ar", question="كم نوعا عثِر عليه في صخور بورجس؟").sentences[0].supported
    assert not check("4 [1]", burgess, language="ar").sentences[0].supported


def test_arabic_number_words_are_read_as_digits():
    assert as_digits("خمسة وعشرون نوعا", "ar") == "25 نوعا"  # a unit, then "and" twenty
    assert as_digits("خمسون ألف رجل", "ar") == "50000 رجل"  # a scale word multiplies what came before it
    assert as_digits("ثلاثة آلاف", "ar") == "3000" and as_digits("ثلاثة عشر", "ar") == "13"
    assert as_digits("مائة وخمسون ألف", "ar") == "150000" and as_digits("ثلاثمائة وستون يوما", "ar") == "360 يوما"
    assert as_digits("ألفان", "ar") == "2000"
    for words in ("أحد الأسباب", "ألف كتابا", "ثلاثة وزراء"):  # "one of", "he wrote a book", "three ministers"
        assert as_digits(words, "ar") == words.replace("ثلاثة", "3"), words


def test_arabic_scripts_separators_between_digits_are_read():
    """XQuAD's Arabic writes 22,338,618 as "22،338،618" (the Arabic comma between groups): the 1.5B's right
    "22,338,618 [1]" had been withdrawn. The Arabic thousands and decimal signs are read too; a list stays one."""
    assert as_digits("22،338،618 رقما", "ar") == "22,338,618 رقما"
    assert as_digits("٣٫٥ و ١٬٢٠٠", "ar") == "3.5 و 1,200" and as_digits("الآيات 1،2،3", "ar") == "الآيات 1،2،3"
    source = ["يتكون أكبر عدد أولي معروف من 22،338،618 رقما."]
    assert check("22,338,618 [1]", source, language="ar").sentences[0].supported
    assert not check("22,338,619 [1]", source, language="ar").sentences[0].supported


def test_a_source_about_another_subject_does_not_support_the_answer():
    northwind = "Net revenue was $4.2 million in 2022, up from $3.9 million."
    about = ["reports/northwind.txt\nNorthwind Traders, annual report 2022\n" + northwind]
    asked = check("Revenue was $4.2 million in 2022 [1].", [northwind], question="What was Contoso's revenue in 2022?",
                  about=about)
    assert not asked.sentences[0].supported and asked.sentences[0].missing[0].startswith("Contoso")
    right = check("Revenue was $4.2 million in 2022 [1].", [northwind], question="What was Northwind's revenue in 2022?",
                  about=about)
    assert right.sentences[0].supported
    other_year = check("Revenue was $4.2 million [1].", [northwind], question="What was Northwind's revenue in 2019?",
                       about=about)
    assert not other_year.sentences[0].supported


def test_a_fiscal_year_the_answer_names_is_held_by_a_source_that_writes_the_year():
    """Filings write "2022" or "fiscal 2022"; the question and the 1.5B's answer write "FY2022" or "FY22"."""
    source = ["In 2022, MGM Resorts paid dividends of $0.01 per share to holders of common stock."]
    question = "How much did MGM Resorts pay in dividends per share in FY2022?"
    for year in ("FY2022", "FY22"):
        assert check(f"MGM Resorts paid $0.01 per share in {year} [1].", source, question=question).sentences[0].supported
    assert not check("MGM Resorts paid $0.01 per share in FY2021 [1].", source, question=question).sentences[0].supported


def test_a_source_about_one_of_the_years_a_question_names_may_answer_it():
    """"Compared to 1995 to 2000" is "the previous five years" in the source: one of the question's years named is
    enough; a source naming none of them is about another time."""
    source = ["From 2000 to 2005 the rate of deforestation was almost 18% higher than in the previous five years."]
    question = "How much higher was the rate of deforestation in 2000, to 2005 compared to 1995 to 2000?"
    assert check("18% higher [1]", source, question=question, about=source).sentences[0].supported
    other_time = ["In the 1980s the rate of deforestation was almost 18% higher than in the previous decade."]
    assert not check("18% higher [1]", other_time, question=question, about=other_time).sentences[0].supported


def test_a_subject_is_named_by_its_abbreviation_or_the_other_name_the_question_gives_it():
    proceeds = "The Company generated $13.2 billion in cash proceeds from the Kenvue debt offering."
    about = ["reports/doc-072.txt\nJohnson & Johnson, current report, August 2023\n" + proceeds]
    asked = "What cash proceeds did JnJ realise from Kenvue (formerly Consumer Health business segment) in 2023?"
    assert check("$13.2 billion [1].", [proceeds], question=asked, about=about).sentences[0].supported
    other = ["reports/doc-001.txt\nJohnson Controls, annual report 2023\n" + proceeds]
    assert not check("$13.2 billion [1].", [proceeds], question=asked, about=other).sentences[0].supported
    square = "Total current assets 1,001,425 and total current liabilities 577,464 in 2016."
    about = ["reports/square-2016.txt\nSquare, Inc., annual report 2016\n" + square]
    assert check("Current assets were 1,001,425 [1].", [square], about=about,
                 question="What were Block's (formerly known as Square) current assets in FY2016?").sentences[0].supported


def test_a_name_the_question_misspelt_is_the_sources_one_edit_away():
    source = "Galor and Zeira showed in 1993 that inequality in the presence of credit market imperfections persists."
    about = ["economics.txt\nEconomic inequality\n" + source]
    asked = "When did Galor and Zeria show new information about inequality?"
    assert check("Galor and Zeira showed it in 1993 [1].", [source], question=asked, about=about).sentences[0].supported
    assert misspelt("Beriods", "Beroids have huge mouths") and misspelt("Sheeshanks", "John Sheepshanks gave")
    assert not misspelt("Austria", "Australia's exports") and not misspelt("Pfizer", "Pfister Inc")
    assert misspelt("Beriods", "the coastal beroids") and not misspelt("Apple", "apply the rule")
    source = "The El Centro and San Diego-Carlsbad-San Marcos metropolitan areas form the Southern Border Region."
    asked = "What does the El Centro area and San Diego-Carslbad-San Marcos area form?"  # one part of a joined name
    assert check("They form the Southern Border Region [1].", [source], question=asked, about=[source]).sentences[0].supported


def test_a_name_the_answer_takes_from_the_question_in_another_form_is_no_new_fact():
    """'Kenyans' is the question's word where the source writes 'Kenyan'; 'SNAP' the short form of the program the
    source names; a name neither asked nor written out stays a fact the source must hold."""
    source = ["Kenya is active in several sports, among them cricket and boxing. Kenyan athletes win marathons."]
    asked = "What sports are Kenyans active in?"
    assert check("Cricket and boxing are what Kenyans are active in [1].", source, question=asked).sentences[0].supported
    assert check("Cricket and boxing, say the Ugandans [1].", source, question=asked).sentences[0].missing == ["Ugandans"]
    source = ["The Supplemental Nutrition Assistance Program could purchase only \"essentials\"."]
    asked = "What could the Supplemental Nutrition Assistance Program purchase?"
    assert check("The Supplemental Nutrition Assistance Program (SNAP) could purchase essentials [1].", source,
                 question=asked).sentences[0].supported
    assert check("The WIC program could purchase essentials [1].", source, question=asked).sentences[0].missing == ["WIC"]


def test_a_possessive_name_and_a_quote_ending_in_its_sentences_stop_are_found():
    source = "In his sermon The Use of Money, John Wesley warned against the dangers of drinking."
    checked = check('Wesley\'s sermon was titled "The Use of Money." [1]', [source])
    assert checked.sentences[0].supported, checked.sentences[0].missing


def test_a_sentence_citing_only_a_source_that_is_not_there_is_checked_against_those_that_are():
    checked = check("The plant opened in 1981 [3].", SOURCES)  # two sources: the model miscounted
    sentence = checked.sentences[0]
    assert sentence.supported and sentence.citations == [2] and checked.dropped == [3]
    assert not check("The plant opened in 1881 [3].", SOURCES).sentences[0].supported


def test_short_names_that_abbreviate_a_run_of_capitalised_words():
    assert abbreviated("JnJ", "Johnson & Johnson, Current report") and abbreviated("P&G", "Procter & Gamble")
    assert abbreviated("AmEx", "American Express Company") and abbreviated("BofA", "at Bank of America we")
    assert not abbreviated("JnJ", "Johnson Controls") and not abbreviated("Kenvue", "Kenvue Inc")
    assert not abbreviated("GE", "General Electric")  # two letters would abbreviate too many runs of two words


def test_where_a_question_names_nothing_its_rare_terms_say_what_it_is_about():
    """German names are not read (every noun is capitalised), Japanese has no capitals: the question's terms few
    passages of the index hold stand for its subject, and a source holding none of them answers for another."""
    congo = "コンゴ川から得られる物は水運である。"
    about = ["wiki/congo.txt\n\n" + congo]
    other = check("水運です [1]。", [congo], question="メコン川から得られる物は何か", language="ja", about=about,
                  topic=["メコ"])
    assert not other.sentences[0].supported and "メコ" in other.sentences[0].missing[0]
    assert check("水運です [1]。", [congo], question="コンゴ川から得られる物は何か", language="ja", about=about,
                 topic=["コン", "ンゴ"]).sentences[0].supported  # one rare term held is enough
    kenya = "Die PNU ist die stärkste Partei in Nairobi."
    german = check("Die stärkste Partei ist die PNU [1].", [kenya], names=False, language="de",
                   question="Welche Partei ist in Melbournes wohlhabenden Stadtteilen am stärksten?",
                   about=["kenya.txt\n\n" + kenya], topic=["melbourn", "wohlhab"])
    assert not german.sentences[0].supported
    # where names can be read the name rule stands alone: a rare term may be a word the source rephrases
    assert check("Revenue was $4.2 million [1].", ["Northwind revenue was $4.2 million."], question="What was "
                 "Northwind's revenue?", about=["Northwind revenue was $4.2 million."], topic=["takings"]).sentences[0].supported


def test_what_a_question_is_about():
    from localcr.answers.check import subjects_of

    assert subjects_of("What is Amazon's FY2019 net income attributable to shareholders?") == ["Amazon", "2019"]
    assert subjects_of("Does 3M pay a dividend in FY2022?") == ["3M", "2022"]
    assert subjects_of("How many points did the Panthers defense surrender?") == ["Panthers"]
    assert subjects_of("Who resigned in February 2015?") == ["2015"]
    assert subjects_of("Wie viele Männer befehligte General Halloway 1863?", names=False) == []
    # a Spanish question opens with "¿": its first word asks, it names nothing (every Spanish answer was unsupported)
    assert subjects_of("¿Cuál fue el primer problema del Apollo 1?") == ["Apollo"]


def test_a_sentence_that_only_restates_the_question_is_no_answer():
    from localcr.answers.check import adds_nothing

    question = "Which database does the Kestrel pump store its telemetry in?"
    assert adds_nothing("The Kestrel pump stores its telemetry in a database.", question)
    assert not adds_nothing("The Kestrel pump stores its telemetry in PostgreSQL.", question)
    assert not adds_nothing("It stores it in the cloud archive.", question)
    assert not adds_nothing("Yes.", "Does the pump store telemetry?")
    assert not adds_nothing("4", "How many balls did Josh Norman intercept?")
    assert not adds_nothing("four", "How many balls did Josh Norman intercept?")
    checked = check("The Kestrel pump stores its telemetry in a database [1].", ["The Kestrel pump database."],
                    question=question)
    assert not checked.sentences[0].supported
    assert not adds_nothing("NFL", "The Los Angeles Rams are an example of what kind of sports team?")
    assert not adds_nothing("High", "Is the focus on spiritual mentorship in Hinduism high or low?")
    question = "To what may general global fields be transferred to or from?"  # asked back: no answer
    assert adds_nothing("To what may general global fields be transferred to or from [1]?", question)
    high_or_low = "هل التركيز على التعليم الروحي في الهندوسية عال أم قليل؟"  # Arabic asks "high or low?" with أم
    assert not adds_nothing("التركيز على التعليم الروحي في الهندوسية عال", high_or_low, "ar")


def test_chinese_claims_are_checked_by_character_bigrams_across_xquads_spaces():
    """A Chinese sentence is one run of characters: checked as a whole it is in no source; by its bigrams a
    faithful answer holds and an invented one does not. XQuAD's Chinese sets words apart with spaces."""
    source = ["然后，在大约5.05亿年前的 中寒武纪，在伯吉斯页岩中又发现了另外 三种 假想的物种。"]
    question = "伯吉斯页岩中发现了多少物种？"
    assert check("在中寒武纪，在伯吉斯页岩中发现了另外三种物种 [1]。", source, question=question, language="zh").sentences[0].supported
    invented = check("在中寒武纪，在伯吉斯页岩中发现了三种恐龙，它们都很大 [1]。", source, question=question, language="zh")
    assert not invented.sentences[0].supported and "恐龙" in invented.sentences[0].missing


def test_a_short_answer_citing_no_source_that_exists_cites_the_one_holding_it_word_for_word():
    sources = ["Second, inflammation may occur during sleep times due to the presence of melatonin."]
    question = "Inflammation occurs during sleep times because of the presence of what molecule?"
    assert check("Melatonin [2]", sources, question=question).text == "Melatonin [1]"
    assert not check("Serotonin [2]", sources, question=question).sentences[0].supported
    assert not check("Yes [2]", sources).sentences[0].supported  # nothing in it to find
    assert phrase_holder("50,000", ["It was founded in 1925.", "Halloway commanded fifty thousand men."]) == 2
    assert phrase_holder("25", ["It was founded in 1925."]) is None  # whole words
    assert phrase_holder("五万人", ["哈洛威将军指挥了五万人。"], "zh") == 1


def test_a_japanese_answer_is_checked_on_its_words_not_its_grammar():
    """Read as character bigrams, "品は木材です" adds "は木", "材で" and "です" beside 木材: no source holds those, and
    a right answer was withdrawn. Without grammar one word is checked: 石油 where the source says 木材 is not held."""
    source = ["コンゴ共和国の輸出の約60％は木材が占める。"]
    question = "コンゴ共和国の輸出の約60％を占める品は？"
    assert check("コンゴ共和国の輸出の約60％を占める品は木材です。[1]", source, question=question,
                 language="ja").sentences[0].supported
    wrong = check("コンゴ共和国の輸出の約60％を占める品は石油です。[1]", source, question=question, language="ja")
    assert not wrong.sentences[0].supported and wrong.sentences[0].missing == ["石油"]


def test_an_answer_joining_the_question_s_words_adds_no_word_to_check():
    """"永年党員の必要党歴は30年以上です" joins the question's "必要" and "党歴" into the bigram "要党", which no source
    writes: the right answer (JSQuAD) was withdrawn for it, as was XQuAD-zh's "1936年重新占领" for "年重". A word of
    its own is still checked."""
    source = ["党籍長期継続者には「永年党員」（党歴30年以上）という表彰制度がある。"]
    question = "日本共産党の永年党員に必要な党歴は何年以上でしょうか。"
    assert check("永年党員の必要党歴は30年以上です。[1]", source, question=question, language="ja").sentences[0].supported
    assert not check("永年党員の必要党歴は50年以上です。[1]", source, question=question, language="ja").sentences[0].supported
    wrong = check("永年党員には党費の完納が必要です。[1]", source, question=question, language="ja")
    assert not wrong.sentences[0].supported
    rhineland = ["协约国于1930年撤离莱茵兰。 1936年，德军重新占领莱茵兰，成为德国的重大喜讯。"]
    assert check("德军于1936年重新占领莱茵兰。 [1]", rhineland, question="德军于何时重新占领莱茵兰？",
                 language="zh").sentences[0].supported  # "年重": a figure's unit joined to the question's 重新


def test_a_one_word_japanese_answer_citing_a_missing_source_cites_the_one_holding_it():
    """One CJK word is a claim to check (_least_claim), so it is also enough to move a citation of a source that is
    not there ("[3]" of two) to the source that holds it: the word alone was checked, yet such an answer was dropped."""
    sources = ["コンゴの隣国の輸出は石油が占める。", "コンゴ共和国の輸出の約60％は木材が占める。"]
    checked = check("木材です。[3]", sources, question="コンゴ共和国の輸出の約60％を占める品は？", language="ja")
    assert checked.sentences[0].supported and checked.sentences[0].citations == [2]


def test_a_question_s_grammar_is_no_subject_a_source_must_hold():
    """The rare terms of "グスタフ・マーラーはどのような人物か" include "はど" and "物か": a source about Mahler holds
    neither, yet is about him."""
    source = ["グスタフ・マーラーはオーストリアの作曲家、指揮者である。"]
    checked = check("グスタフ・マーラーは作曲家、指揮者です。[1]", source, question="グスタフ・マーラーはどのような人物か。",
                    language="ja", about=source, topic=("はど", "物か", "マー"))
    assert checked.sentences[0].supported
    elsewhere = check("グスタフ・マーラーは作曲家です。[1]", ["作曲家の一覧。"], question="グスタフ・マーラーはどのような人物か。",
                      language="ja", about=["作曲家の一覧。"], topic=("はど", "物か", "マー"))
    assert not elsewhere.sentences[0].supported and elsewhere.sentences[0].missing == ["マー (the question's subject)"]


def test_a_figure_written_with_spaces_after_its_commas_is_closed_up_where_a_source_writes_it():
    """The 1.5B wrote "17, 786, 419 [1]" from "the Greater Los Angeles Area at 17,786,419", and the check read three
    numbers no source holds; a list of numbers no source writes as one figure stays a list."""
    source = "These are the Greater Los Angeles Area at 17,786,419, and San Diego–Tijuana at 5,105,768."
    assert figures_closed_up("17, 786, 419 [1]", [source]) == "17,786,419 [1]"
    assert figures_closed_up("About 5, 105, 768 people [1].", ["x", source]) == "About 5,105,768 people [1]."
    assert figures_closed_up("Scores of 100, 200, 300 [1].", [source]) == "Scores of 100, 200, 300 [1]."
    assert figures_closed_up("17, 786, 41 [1]", [source]) == "17, 786, 41 [1]"  # not groups of three
    assert figures_closed_up("7, 786, 419 [1]", [source]) == "7, 786, 419 [1]"  # the source's figure is another
