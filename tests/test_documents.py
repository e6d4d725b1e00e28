"""Reading files: kinds by extension, HTML as text, binary and non-UTF-8 files, stable ids."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from localcr.documents import load_paths
from localcr.readers.plain import decode


def test_html_becomes_text_with_headings(tmp_path):
    (tmp_path / "page.html").write_text("<html><head><style>p{}</style><script>var x=1;</script></head><body>"
                                        "<h1>Title</h1><p>First &amp; only <b>paragraph</b>.</p><h2>Part</h2><p>More</p></body></html>")
    (doc,) = load_paths([tmp_path / "page.html"]).documents
    assert doc.kind == "html"
    assert doc.text == "# Title\n\nFirst & only paragraph.\n\n## Part\n\nMore\n"


def test_ids_are_relative_to_the_named_folder_and_skips_are_reported(corpus):
    report = load_paths([corpus])
    ids = sorted(d.doc_id for d in report.documents)
    assert ids == ["orbit/docs/guide.md", "orbit/docs/notes.txt", "orbit/src/journal.rs", "orbit/src/scheduler.py"]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("dump.txt", "binary file"), ("logo.gif", "unsupported file type")]  # .git is not walked
    notes = next(d for d in report.documents if d.doc_id.endswith("notes.txt"))
    assert notes.text.startswith("Café menu") and notes.kind == "text" and notes.encoding == "cp1252"
    assert {d.kind for d in report.documents} >= {"markdown", "code:py", "code:rs"}


def test_prechunked_import_gives_its_chunks_the_documents_kind(tmp_path):
    code = "fn main() {\n    let x = 1;\n    println!(\"{}\", x);\n}\n" * 4
    corpus = [{"doc_id": "d", "original_uuid": "u", "content": code,
               "chunks": [{"chunk_id": "d_0", "original_index": 0, "content": code[:40]}]},
              {"doc_id": "p", "original_uuid": "v", "content": "Plain prose about gardens.",
               "chunks": [{"chunk_id": "p_0", "original_index": 0, "content": "Plain prose about gardens."}]}]
    path = tmp_path / "chunks.json"
    path.write_text(json.dumps(corpus))
    docs = load_paths([path]).documents
    assert [(d.kind, [c.kind for c in d.given_chunks]) for d in docs] == [("code", ["code"]), ("text", ["text"])]


LEGACY = [  # (text, how a Windows or older tool writes it)
    ("Recette : crème brûlée, café au lait et pâte feuilletée.\n", "cp1252"),
    ("Größe, Übermaß und süße Straße.\n", "cp1252"),
    ("日本語のメニュー：寿司、天ぷら、ラーメン。\n", "shift_jis"),
    ("中文菜单：北京烤鸭，宫保鸡丁，麻婆豆腐。\n", "gbk"),
    ("Меню: борщ, пельмени, блины.\n", "cp1251"),
    ("한국어 메뉴: 김치찌개, 불고기.\n", "euc_kr"),
]


@pytest.mark.parametrize("text, encoding", LEGACY, ids=[e for _, e in LEGACY])
def test_legacy_encodings_are_read_exactly_and_recorded(tmp_path, text, encoding):
    (tmp_path / "menu.txt").write_bytes(text.encode(encoding))
    report = load_paths([tmp_path / "menu.txt"])
    (doc,) = report.documents
    assert doc.text == text and not report.warnings
    assert doc.encoding not in ("utf-8", "")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_byte_order_marks_are_honoured(tmp_path, encoding):
    text = "crème brûlée, 寿司\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data  # Python writes no BOM for an explicit byte order
    (tmp_path / "bom.txt").write_bytes(data)
    (doc,) = load_paths([tmp_path / "bom.txt"]).documents  # UTF-16's NUL bytes do not make it "binary"
    assert doc.text == text


def test_bytes_no_encoding_fits_are_replaced_with_a_warning_naming_the_file(tmp_path):
    odd = b"\x81" * 20  # a byte Windows-1252, the detector's last resort, leaves undefined, and no other encoding fits
    assert decode(odd).lossy
    (tmp_path / "odd.txt").write_bytes(odd)
    report = load_paths([tmp_path / "odd.txt"])
    assert report.documents[0].text == "\ufffd" * 20
    assert report.warnings == [f"{tmp_path / 'odd.txt'}: no text encoding fits its bytes; undecodable bytes replaced with U+FFFD"]


def test_utf_8_with_stray_bytes_is_read_as_utf_8_with_them_replaced_and_said(tmp_path):
    (tmp_path / "mostly.txt").write_bytes("Notes \u2014 the caf\u00e9 opens at nine.\n".encode() + b"A stray \xe9 byte.\n")
    # No valid UTF-8 character at all: a Latin-1 e-acute, a broken pair, a UTF-16 BOM's bytes and C1 bytes, in English,
    # which chardet took for Windows-1251 (`cafй`, `rГ(sumй`).
    (tmp_path / "stray.txt").write_bytes(b"Notes for the caf\xe9 project.\nThe r\xc3(sum\xe9 is attached. \xff\xfe Budget "
                                         b"\x80\x81\x82 approved.\n")
    report = load_paths([tmp_path])
    docs = {Path(d.path).name: d for d in report.documents}
    assert docs["mostly.txt"].text == "Notes \u2014 the caf\u00e9 opens at nine.\nA stray \ufffd byte.\n"
    assert docs["stray.txt"].text.startswith("Notes for the caf\ufffd project.\nThe r\ufffd(sum\ufffd is attached.")
    assert {d.encoding for d in docs.values()} == {"utf-8"}
    assert report.warnings == [f"{tmp_path / 'mostly.txt'}: not valid UTF-8: 1 stray byte replaced with U+FFFD",
                               f"{tmp_path / 'stray.txt'}: not valid UTF-8: 8 stray bytes replaced with U+FFFD"]


def test_a_legacy_encoding_its_words_do_not_fit_is_kept_with_a_warning_naming_it(tmp_path):
    # Russian typed with Latin look-alike letters in most words (`cтoимocть`): Windows-1251, which they do not fit
    text = "Отчёт o пpoдажах: cтoимocть пocтaвoк выpoсла, a cклaд пepeпoлнeн.\n"
    (tmp_path / "look-alike.txt").write_bytes(text.encode("cp1251"))
    report = load_paths([tmp_path])
    assert (report.documents[0].text, report.documents[0].encoding) == (text, "cp1251")
    assert report.warnings == [f"{tmp_path / 'look-alike.txt'}: not UTF-8, and its encoding is a guess (cp1251) that "
                               "some of its words do not fit"]


def test_a_guess_that_does_not_fit_gives_way_to_windows_1252_and_utf_16_needs_no_bom(tmp_path):
    (tmp_path / "latin.txt").write_bytes("Notes: Déjà vu, à bientôt.\n".encode("latin-1"))  # chardet: cp1251, `Dйjа vu`
    (tmp_path / "wide.txt").write_bytes("Commit summary.\n\nThis file is UTF-16.\n".encode("utf-16-be"))  # git's t3900/UTF-16.txt
    report = load_paths([tmp_path])
    docs = {Path(d.path).name: d for d in report.documents}
    assert (docs["latin.txt"].text, docs["latin.txt"].encoding) == ("Notes: Déjà vu, à bientôt.\n", "cp1252")
    assert (docs["wide.txt"].text, docs["wide.txt"].encoding) == ("Commit summary.\n\nThis file is UTF-16.\n", "utf-16-be")
    assert report.warnings == [f"{tmp_path / 'latin.txt'}: not UTF-8, and its encoding is a guess (cp1252)"]


def test_a_reader_that_crashes_hangs_or_fails_costs_its_file_only(tmp_path):
    """Each file is read in a worker process: a segfault, a hang, a memory hog or a reader's exception
    skips that file with the reason, and the other files are read."""
    for name in ("good.txt", "a.crash", "b.hang", "c.hog", "d.broken"):
        (tmp_path / name).write_text("Some text about orchards.\n")
    readers = {".crash": "hostile_readers:segfault", ".hang": "hostile_readers:hang",
               ".hog": "hostile_readers:hog", ".broken": "hostile_readers:broken"}
    report = load_paths([tmp_path], readers=readers, timeout=3)
    assert [d.doc_id for d in report.documents] == [f"{tmp_path.name}/good.txt"]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("a.crash", "its reader crashed the worker process (exit code -11)"),
        ("b.hang", "reading took longer than 3 s (stopped)"),
        ("c.hog", "its reader ran out of memory (the worker's limit)"),
        ("d.broken", "its reader failed (ValueError: xref table is damaged)"),
    ]


def test_links_to_files_elsewhere_are_indexed_where_the_link_is_and_dangling_ones_skipped(tmp_path):
    outside = tmp_path / "elsewhere" / "shared.md"
    outside.parent.mkdir()
    outside.write_text("# Shared\n\nThe shared notes on quotas.\n")
    root = tmp_path / "notes"
    root.mkdir()
    (root / "own.md").write_text("# Own\n\nOur notes.\n")
    (root / "shared.md").symlink_to(outside)
    (root / "gone.md").symlink_to(tmp_path / "nowhere.md")
    report = load_paths([root])
    assert sorted(d.doc_id for d in report.documents) == ["notes/own.md", "notes/shared.md"]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [("gone.md", "unreadable: no such file or directory")]
