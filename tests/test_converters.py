"""The converters in benchmarks/data/ rebuild the shared benchmark sets from their public snapshots: each test writes
a tiny snapshot in the public format (invented rows, the public layout and escapes), runs the converter as a user
would and compares every file it writes byte for byte with the file the benchmarks read. Nothing here reads
../shared; checking a converter against the real sets is `diff -r` (benchmarks/data/README.md)."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"


def convert(script: str, snapshot: Path, out: Path, *options: str) -> None:
    done = subprocess.run([sys.executable, str(DATA / script), str(snapshot), str(out), *options],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def written(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())


def test_wtq_dev_from_a_wikitablequestions_snapshot(tmp_path):
    """The split's TSV (escapes `\\n`, `\\p`, `\\\\`; `|` between answers), its tables byte for byte in the order the
    questions first name them, and each table's page title and section path from the metadata."""
    snap = tmp_path / "WikiTableQuestions"
    put(snap / "data/random-split-1-dev.tsv",
        "id\tutterance\tcontext\ttargetValue\n"
        "nt-0\twhich river is longest?\tcsv/204-csv/7.csv\tLoire\n"
        "nt-1\twho came first and second?\tcsv/200-csv/12.csv\tAnna|Ben\\pBo\n"
        "nt-2\twhat is the total?\tcsv/204-csv/7.csv\t1,012\n"
        "nt-3\twhich path?\tcsv/200-csv/12.csv\ta\\\\b\\nc\n")
    river = 'River,Length (km)\n"Loire",1012\n"Rh\\"one",813\n'
    race = "Rank,Name\n1,Anna\n2,Ben|Bo\n"
    put(snap / "csv/204-csv/7.csv", river)
    put(snap / "csv/200-csv/12.csv", race)
    put(snap / "csv/200-csv/13.csv", "never,asked\n")
    put(snap / "misc/table-metadata.tsv",
        "contextId\tpageId\tpageRev\ttableIndex\ttitle\theaders\tcaption\ttagAbove\ttextAbove\ttagBelow\ttextBelow\n"
        "csv/200-csv/12.csv\t1\t2\t0\tA race – 2009\tResults|Women\\ps race\t\th3\tWomen\th3\tMen\n"
        "csv/204-csv/7.csv\t3\t4\t0\tRivers of France\t\t\tp\tText\tp\tMore\n")
    convert("convert_wtq.py", snap, tmp_path / "data")
    assert written(tmp_path / "data" / "wtq-dev") == {
        "docs/t-200-12.csv": race.encode(),
        "docs/t-204-7.csv": river.encode(),
        "queries.jsonl": (
            '{"id": "nt-0", "question": "which river is longest?", "doc": "docs/t-204-7.csv", "answers": ["Loire"]}\n'
            '{"id": "nt-1", "question": "who came first and second?", "doc": "docs/t-200-12.csv", '
            '"answers": ["Anna", "Ben|Bo"]}\n'
            '{"id": "nt-2", "question": "what is the total?", "doc": "docs/t-204-7.csv", "answers": ["1,012"]}\n'
            '{"id": "nt-3", "question": "which path?", "doc": "docs/t-200-12.csv", "answers": ["a\\\\b\\nc"]}\n'
        ).encode(),
        "tables.jsonl": (
            '{"doc": "docs/t-204-7.csv", "title": "Rivers of France", "section": ""}\n'
            '{"doc": "docs/t-200-12.csv", "title": "A race – 2009", "section": "Results > Women|s race"}\n'
        ).encode(),
    }


def test_tatqa_dev_from_a_tatqa_snapshot(tmp_path):
    """A passage's paragraphs in their order with its table after the paragraph ending in ":" (else last), as a
    pipe table (cells stripped) and as a text layer (empty cells and rows dropped); questions in their order."""
    snap = tmp_path / "TAT-QA"
    passages = [
        {"table": {"uid": "t0", "table": [["", "2019", "2018"], ["Sales ", "$ 1,200.5", " 900"], ["", "", ""],
                                          ["Costs", "(300)", "250"]]},
         "paragraphs": [{"uid": "p1", "order": 2, "text": "The table below shows sales (in millions):"},
                        {"uid": "p0", "order": 1, "text": "Sales rose in 2019."},
                        {"uid": "p2", "order": 3, "text": "Costs fell."}],
         "questions": [{"uid": "q1", "order": 2, "question": "What were sales in 2019?", "answer": ["$ 1,200.5"],
                        "derivation": "", "answer_type": "span", "answer_from": "table", "rel_paragraphs": [],
                        "req_comparison": False, "scale": "million"},
                       {"uid": "q0", "order": 1, "question": "What is the change in sales?", "answer": 300.5,
                        "derivation": "1,200.5-900", "answer_type": "arithmetic", "answer_from": "table",
                        "rel_paragraphs": [], "req_comparison": False, "scale": "million"}]},
        {"table": {"uid": "t1", "table": [["Item", "Value"], ["Staff’s count", "12"]]},
         "paragraphs": [{"uid": "p3", "order": 1, "text": "No colon here."}],
         "questions": [{"uid": "q2", "order": 1, "question": "How many staff?", "answer": ["12"],
                        "derivation": "", "answer_type": "count", "answer_from": "table", "rel_paragraphs": [],
                        "req_comparison": False, "scale": ""}]},
    ]
    put(snap / "dataset_raw/tatqa_dataset_dev.json", json.dumps(passages, indent=2))
    convert("convert_tatqa.py", snap, tmp_path / "data")

    def queries(kind: str) -> bytes:
        return (
            f'{{"id": "q0", "query": "What is the change in sales?", "doc": "docs/report-000.{kind}", '
            f'"answer": 300.5, "answer_type": "arithmetic", "answer_from": "table", "scale": "million", '
            f'"derivation": "1,200.5-900"}}\n'
            f'{{"id": "q1", "query": "What were sales in 2019?", "doc": "docs/report-000.{kind}", '
            f'"answer": ["$ 1,200.5"], "answer_type": "span", "answer_from": "table", "scale": "million", '
            f'"derivation": ""}}\n'
            f'{{"id": "q2", "query": "How many staff?", "doc": "docs/report-001.{kind}", "answer": ["12"], '
            f'"answer_type": "count", "answer_from": "table", "scale": "", "derivation": ""}}\n'
        ).encode()

    lead = "Sales rose in 2019.\n\nThe table below shows sales (in millions):\n\n"
    assert written(tmp_path / "data" / "tatqa-dev") == {
        "md/docs/report-000.md": (lead + "|  | 2019 | 2018 |\n|---|---|---|\n| Sales | $ 1,200.5 | 900 |\n"
                                  "|  |  |  |\n| Costs | (300) | 250 |\n\nCosts fell.\n").encode(),
        "md/docs/report-001.md": "No colon here.\n\n| Item | Value |\n|---|---|\n| Staff’s count | 12 |\n".encode(),
        "md/queries.jsonl": queries("md"),
        "txt/docs/report-000.txt": (lead + "2019 2018\nSales $ 1,200.5 900\nCosts (300) 250\n\nCosts fell.\n").encode(),
        "txt/docs/report-001.txt": "No colon here.\n\nItem Value\nStaff’s count 12\n".encode(),
        "txt/queries.jsonl": queries("txt"),
    }


def squad(title: str, paragraphs: list[tuple[str, list[tuple[str, str]]]]) -> dict:
    return {"title": title, "paragraphs": [
        {"context": context, "qas": [{"id": f"{title}-{n}", "question": question,
                                      "answers": [{"answer_start": 0, "text": answer}, {"answer_start": 0, "text": "x"}]}
                                     for n, (question, answer) in enumerate(qas)]}
        for context, qas in paragraphs]}


def test_xquad_from_an_xquad_snapshot(tmp_path):
    """Articles are documents and paragraphs chunks (contexts and questions stripped); a set's articles take the ids
    benchmarks/data/squad_ids.json keeps for it, and an article it holds none for gets sha256("SET:N")[:16]."""
    snap = tmp_path / "xquad"
    data = {"data": [squad("Loire", [(" La Loire est longue. ", [("Quelle longueur ? ", "longue")]),
                                     ("Elle coule vers l’ouest.", [("Où ?", "l’ouest"), ("Vers où ?", "ouest")])]),
                     squad("Mont_Blanc", [("Le mont Blanc culmine à 4 806 m.", [("Quelle altitude ?", "4 806 m")])])],
            "version": "1.1"}
    for language in ("en", "el"):
        put(snap / f"xquad.{language}.json", json.dumps(data, ensure_ascii=language == "en"))
    convert("convert_xquad.py", snap, tmp_path / "data", "--languages", "en,el")
    known = json.loads((DATA / "squad_ids.json").read_text())["xquad-en"]
    for language, (first, second) in (("en", known[:2]),
                                      ("el", [hashlib.sha256(f"xquad-el:{n}".encode()).hexdigest()[:16] for n in (0, 1)])):
        corpus = (
            f'[{{"doc_id": "doc_0", "original_uuid": "{first}", "title": "Loire", '
            f'"content": "La Loire est longue.\\n\\nElle coule vers l’ouest.", "chunks": ['
            f'{{"chunk_id": "doc_0_chunk_0", "original_index": 0, "content": "La Loire est longue."}}, '
            f'{{"chunk_id": "doc_0_chunk_1", "original_index": 1, "content": "Elle coule vers l’ouest."}}]}}, '
            f'{{"doc_id": "doc_1", "original_uuid": "{second}", "title": "Mont_Blanc", '
            f'"content": "Le mont Blanc culmine à 4 806 m.", "chunks": ['
            f'{{"chunk_id": "doc_1_chunk_0", "original_index": 0, "content": "Le mont Blanc culmine à 4 806 m."}}]}}]')
        queries = "".join(
            f'{{"query": "{query}", "answer": "{answer}", "golden_doc_uuids": ["{uuid}"], '
            f'"golden_chunk_uuids": [["{uuid}", {index}]]}}\n'
            for query, answer, uuid, index in (("Quelle longueur ?", "longue", first, 0), ("Où ?", "l’ouest", first, 1),
                                               ("Vers où ?", "ouest", first, 1),
                                               ("Quelle altitude ?", "4 806 m", second, 0)))
        assert written(tmp_path / "data" / f"xquad-{language}") == {"corpus.json": corpus.encode(),
                                                                   "queries.jsonl": queries.encode()}


def test_jsquad_keeps_the_first_eight_articles(tmp_path):
    snap = tmp_path / "JGLUE"
    articles = [squad(f"記事{n}", [(f"記事{n} [SEP] 本文{n}。", [(f"質問{n}？", f"本文{n}")])]) for n in range(10)]
    put(snap / "datasets/jsquad-v1.3/valid-v1.3.json", json.dumps({"data": articles}, ensure_ascii=False))
    convert("convert_jsquad.py", snap, tmp_path / "data")
    corpus = json.loads((tmp_path / "data" / "jsquad-ja" / "corpus.json").read_text())
    assert [doc["title"] for doc in corpus] == [f"記事{n}" for n in range(8)]
    assert [doc["original_uuid"] for doc in corpus] == json.loads((DATA / "squad_ids.json").read_text())["jsquad-ja"]
    assert len((tmp_path / "data" / "jsquad-ja" / "queries.jsonl").read_text().splitlines()) == 8


def test_the_codebase_set_is_the_cookbooks_files_unchanged(tmp_path):
    source = tmp_path / "cookbook" / "skills/contextual-embeddings/data"
    chunks = '[\n  {"doc_id": "doc_1", "original_uuid": "u1", "content": "fn a() {}",\n' \
             '   "chunks": [{"chunk_id": "doc_1_chunk_0", "original_index": 0, "content": "fn a() {}"}]}\n]'
    queries = '{"query": "where is a?", "golden_chunk_uuids": [["u1", 0]], "answer": "a"}\n'
    put(source / "codebase_chunks.json", chunks)
    put(source / "evaluation_set.jsonl", queries)
    convert("convert_codebase.py", tmp_path / "cookbook", tmp_path / "data")
    assert written(tmp_path / "data" / "anthropic-codebase") == {"codebase_chunks.json": chunks.encode(),
                                                                  "evaluation_set.jsonl": queries.encode()}
    put(source / "evaluation_set.jsonl", '{"query": "q", "golden_chunk_uuids": [["u2", 0]]}\n')
    done = subprocess.run([sys.executable, str(DATA / "convert_codebase.py"), str(tmp_path / "cookbook"),
                           str(tmp_path / "again")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "u2" in done.stderr


def test_a_converter_without_its_snapshot_says_what_to_give(tmp_path):
    for script, repository in (("convert_wtq.py", "ppasupat/WikiTableQuestions"),
                               ("convert_tatqa.py", "NExTplusplus/TAT-QA"),
                               ("convert_xquad.py", "google-deepmind/xquad"), ("convert_jsquad.py", "yahoojapan/JGLUE"),
                               ("convert_codebase.py", "anthropics/anthropic-cookbook"),
                               ("convert_financebench.py", "patronus-ai/financebench")):
        done = subprocess.run([sys.executable, str(DATA / script), str(tmp_path), str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and repository in done.stderr, (script, done.stderr)
        assert not (tmp_path / "out").exists()


def test_financebench_dev_from_a_financebench_snapshot(tmp_path):
    """The filings' text layers as localcr's PDF reader gives them (a scanned page stays empty, Tesseract or not),
    the questions and evidence offsets the spans file names, documents.json; a span whose text no longer holds its
    evidence is named and fails the run."""
    from tests.conftest import make_pdf

    snap = tmp_path / "financebench"
    (snap / "pdfs").mkdir(parents=True)
    (snap / "pdfs" / "ACME_2022_10K.pdf").write_bytes(
        make_pdf([["Form 10-K", "Acme Corp annual report"], [], ["Net sales 1,200 900", "Total 2,100"]]))
    (snap / "pdfs" / "ACME_2023Q2_10Q.pdf").write_bytes(make_pdf([["Form 10-Q", "Net sales 640"]]))
    (snap / "pdfs" / "OTHER_2022_10K.pdf").write_bytes(make_pdf([["never asked"]]))
    questions = [
        {"financebench_id": "financebench_id_00002", "company": "Acme", "doc_name": "ACME_2022_10K",
         "question_type": "metrics-generated", "question": "What were Acme's FY2022 net sales?", "answer": "$1,200",
         "evidence": [{"evidence_text": "Net sales\n1,200 \n900", "evidence_page_num": 2}]},
        {"financebench_id": "financebench_id_00001", "company": "Acme", "doc_name": "ACME_2023Q2_10Q",
         "question_type": "novel-generated", "question": "Acme's Q2 net sales?", "answer": "640",
         "evidence": [{"evidence_text": "Netsales640", "evidence_page_num": 0}]},
        {"financebench_id": "financebench_id_00003", "company": "Other", "doc_name": "OTHER_2022_10K",
         "question_type": "metrics-generated", "question": "not chosen", "answer": "", "evidence": []},
    ]
    put(snap / "data/financebench_open_source.jsonl", "".join(json.dumps(q) + "\n" for q in questions))
    put(snap / "data/financebench_document_information.jsonl", "".join(
        json.dumps({"doc_name": name, "company": company, "doc_type": kind, "doc_period": period}) + "\n"
        for name, company, kind, period in (("ACME_2022_10K", "Acme", "10k", 2022),
                                            ("ACME_2023Q2_10Q", "Acme", "10q", 2023),
                                            ("OTHER_2022_10K", "Other", "10k", 2022))))
    spans = tmp_path / "spans.json"
    spans.write_text('{"financebench_id_00002": [["doc-007", 37, 56]], "financebench_id_00001": [["doc-002", 10, 23]]}')
    convert("convert_financebench.py", snap, tmp_path / "data", "--spans", str(spans))
    documents = {
        "source": "https://github.com/patronus-ai/financebench", "commit": "cc39aeb4afdf33909ee1412188bf89035950c2eb",
        "licence": "CC-BY-NC-4.0 (FinanceBench, per its Hugging Face dataset card); filings are public SEC documents",
        "documents": [
            {"id": "docs/doc-002.txt", "company": "Acme", "doc_type": "10q", "period": 2023, "pages": 1, "words": 5},
            {"id": "docs/doc-007.txt", "company": "Acme", "doc_type": "10k", "period": 2022, "pages": 3, "words": 12}],
        "queries": [
            {"id": "financebench_id_00002", "company": "Acme", "doc_name": "ACME_2022_10K",
             "question_type": "metrics-generated"},
            {"id": "financebench_id_00001", "company": "Acme", "doc_name": "ACME_2023Q2_10Q",
             "question_type": "novel-generated"}]}
    assert written(tmp_path / "data" / "financebench-dev") == {
        "docs/doc-002.txt": b"Form 10-Q\nNet sales 640\n",
        "docs/doc-007.txt": b"Form 10-K\nAcme Corp annual report\n\n\n\nNet sales 1,200 900\nTotal 2,100\n",
        "documents.json": json.dumps(documents, indent=1).encode(),
        "queries.jsonl": (
            '{"id": "financebench_id_00002", "query": "What were Acme\'s FY2022 net sales?", "answer": "$1,200", '
            '"question_type": "metrics-generated", "spans": [["docs/doc-007.txt", 37, 56]]}\n'
            '{"id": "financebench_id_00001", "query": "Acme\'s Q2 net sales?", "answer": "640", '
            '"question_type": "novel-generated", "spans": [["docs/doc-002.txt", 10, 23]]}\n').encode(),
    }
    spans.write_text('{"financebench_id_00002": [["doc-007", 0, 9]]}')
    done = subprocess.run([sys.executable, str(DATA / "convert_financebench.py"), str(snap), str(tmp_path / "again"),
                           "--spans", str(spans)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "financebench_id_00002" in done.stderr
