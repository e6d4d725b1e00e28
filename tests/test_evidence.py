"""Evidence before the LLM (localcr.answers.evidence): whole sentences, the ones that bear on the question, in order."""
from localcr.answers.evidence import GAP, render, select, sentence_spans


def test_sentences_are_whole_across_decimals_abbreviations_and_host_names():
    text = ("The sensor drift rate was 0.003 per hour at lab.example.org. Dr. Chen of Acme Inc. repeated it.\n"
            "Year | 2021 | 2022\nRevenue | 10.5 | 12.25")
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "The sensor drift rate was 0.003 per hour at lab.example.org.", "Dr. Chen of Acme Inc. repeated it.",
        "Year | 2021 | 2022", "Revenue | 10.5 | 12.25"]
    chinese = "他在1990年去了北京。然后他离开了！"
    assert [chinese[a:b] for a, b in sentence_spans(chinese, "zh")] == ["他在1990年去了北京。", "然后他离开了！"]


def test_the_sentences_that_bear_on_the_question_are_kept_with_the_one_before():
    first = ("The northern army gathered near Riverbend in the spring. It was led by General Halloway. "
             "He commanded fifty thousand men. The harvest that year was poor. Mills burned in the town. "
             "Trade on the river stopped for a season.")
    second = "Riverbend lies on a bend of the Ouse. Its bridge dates from 1702."
    kept = select("How many men did General Halloway command?", [first, second], budget=100)
    shown = render(first, kept[0])
    assert shown.endswith("It was led by General Halloway. He commanded fifty thousand men.")
    assert "harvest" not in shown
    assert kept[1] == []  # a hit none of whose sentences is kept is not read
    wider = render(first, select("How many men did Halloway command, and how was the harvest?", [first], budget=200)[0])
    assert "fifty thousand men" in wider and "harvest that year was poor" in wider


def test_a_table_row_keeps_its_column_heads_and_gaps_are_marked():
    table = "Consolidated statement\nLine item | 2021 | 2022\nNet sales | 100 | 120\nOther income | 3 | 4\nCapital expenditure | 7 | 9"
    shown = render(table, select("What was the capital expenditure?", [table], budget=30)[0])
    assert shown.startswith("Line item | 2021 | 2022") and shown.endswith("Capital expenditure | 7 | 9")
    assert "Net sales" not in shown
    prose = "One. Two is here. Three. Four about the pump. Five."
    shown = render(prose, select("pump", [prose], budget=5)[0])
    assert shown == "Three. Four about the pump." or GAP in shown
