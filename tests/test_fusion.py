"""Fusion and neighbour windows on hand-made rankings."""
from __future__ import annotations

import pytest

from localcr import search
from localcr.evaluation.configs import SearchConfig
from localcr.search import dynamic_alpha, rrf, standout, weighted, widen


def test_rrf_by_hand():
    fused = rrf({"dense": [1, 2, 3], "lexical": [3, 1]}, k=60)
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert sorted(fused, key=fused.get, reverse=True) == [1, 3, 2]


def test_weighted_min_max_by_hand():
    dense = {1: 0.9, 2: 0.5, 3: 0.1}
    lexical = {3: 12.0, 4: 2.0}
    fused = weighted(dense, lexical, alpha=0.25)
    assert fused[1] == pytest.approx(0.25 * 1.0)
    assert fused[2] == pytest.approx(0.25 * 0.5)
    assert fused[3] == pytest.approx(0.25 * 0.0 + 0.75 * 1.0)
    assert fused[4] == pytest.approx(0.0)
    assert weighted(dense, lexical, 1.0)[1] == 1.0 and weighted(dense, lexical, 0.0)[3] == 1.0


def test_weighted_single_candidate_and_empty_lists():
    assert weighted({5: 0.3}, {}, 0.5) == {5: 0.5}
    assert weighted({}, {}, 0.5) == {}


def test_standout_measures_how_far_the_best_score_stands_from_the_next_ones():
    found = dict(enumerate([10.0, 4.0, 3.0, 3.0, 2.0, 1.0]))
    assert standout(found) == pytest.approx((10 - (4 + 3 + 3 + 2 + 1) / 5) / 9)  # the next nine: here five
    flat = {row: 8.0 - row * 0.001 if row < 30 else 2.0 for row in range(150)}  # the top scores alike: nothing found
    assert standout(flat) < 0.01
    assert standout({}) == 0.0 and standout({1: 2.0, 2: 2.0}) == 0.0
    assert standout({1: 5.0}) == 1.0  # the one chunk holding a rare word: BM25 found it


def test_dynamic_alpha_gives_the_retriever_whose_top_stands_out_more_say():
    sharp = {row: (1.0 if row == 0 else 0.3 - row * 0.001) for row in range(150)}
    flat = {row: 12.0 - row * 0.001 if row < 30 else 3.0 for row in range(150)}
    assert dynamic_alpha(sharp, flat) > 0.9  # dense found it: lexical sees the same words everywhere
    assert dynamic_alpha(flat, sharp) < 0.1  # lexical found it: the embedder cannot read the language
    assert dynamic_alpha({}, {}) == 0.5
    assert dynamic_alpha(sharp, sharp) == pytest.approx(0.5)


def test_the_default_fusion_is_the_measured_one():
    """benchmarks/retrieval/fusion.py (BENCHMARKS.md, "Why the retrieval defaults are what they are"): dynamic held
    on code and prose; long filings are fused by the rule chosen by leave-one-company-out."""
    assert search.DEFAULT_FUSION == "auto" and SearchConfig("x", "hybrid").fusion == "auto"


class Structures:
    """A backend's hit records as fusion_of reads them: each row's document structure."""

    def __init__(self, long_prose_rows: set[int]):
        self.long_prose_rows = long_prose_rows

    def hit_records(self, rows):
        return [{"row": r, "structure": "long-prose" if r in self.long_prose_rows else ""} for r in rows]


def test_auto_fusion_fuses_long_prose_by_its_own_rule_and_the_rest_dynamically():
    dense = list(range(20))  # each retriever's rows, best first
    lexical = list(range(5, 25))
    judged = set(range(10)) | set(range(5, 15))  # each leg's first ten
    rule, alpha = search.LONG_PROSE_FUSION
    expected = (rule, search.DEFAULT_ALPHA if alpha is None else alpha)
    assert search.fusion_of({"dense": dense, "lexical": lexical}, Structures(judged)) == expected
    assert search.fusion_of({"dense": dense, "lexical": lexical}, Structures(set(range(7)))) == ("dynamic", search.DEFAULT_ALPHA)
    assert search.fusion_of({"dense": [], "lexical": []}, Structures(set())) == ("dynamic", search.DEFAULT_ALPHA)


def around(docs: list[str]):
    """rows_around of a backend whose rows are these documents' chunks, in order."""
    def rows_around(row, window):
        return [r for r in range(max(0, row - window), min(len(docs), row + window + 1)) if docs[r] == docs[row]]
    return rows_around


def test_widen_merges_overlapping_windows_without_duplicates():
    docs = ["a", "a", "a", "a", "b", "b"]
    groups = widen([1, 2, 4, 0], around(docs), window=1)
    # hit 2 lies in hit 1's window: merged away; hit 4 is in doc b; hit 0 was covered by hit 1
    assert groups == [(1, [0, 1, 2]), (4, [4, 5])]
    flat = [r for _, span in groups for r in span]
    assert len(flat) == len(set(flat))


def test_widen_stays_inside_the_document():
    docs = ["a", "b", "c"]
    assert widen([1], around(docs), window=2) == [(1, [1])]
