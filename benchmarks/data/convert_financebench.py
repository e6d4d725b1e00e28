"""Builds `financebench-dev` (long SEC filings, read by the retrieval and answer benchmarks on filings) from a
snapshot of FinanceBench's open-source sample.

    .venv/bin/python benchmarks/data/convert_financebench.py SNAPSHOT OUT

SNAPSHOT is a checkout (or unpacked archive) of github.com/patronus-ai/financebench, commit
cc39aeb4afdf33909ee1412188bf89035950c2eb, with its PDFs (`pdfs/`, about 350 MB); the script reads
`data/financebench_open_source.jsonl`, `data/financebench_document_information.jsonl` and the 45 PDFs its questions
name, and downloads nothing. It writes OUT/financebench-dev/:

- `docs/doc-NNN.txt`: a filing's text layer as localcr's PDF reader (localcr.readers.pdf, pypdfium2) extracts it,
  pages joined by a blank line, without OCR (a scanned page stays empty); the opaque names are the set's own;
- `queries.jsonl`: `{"id", "query", "answer", "question_type", "spans"}`, FinanceBench's question, reference answer
  and type, and the evidence as character spans `[["docs/doc-NNN.txt", start, end], ...]`;
- `documents.json`: source, commit, licence, each filing's company, type, period, pages and words, and each
  question's company, filing and type (for analysis, never for indexing).

Which 74 questions, which file each filing becomes, and where each evidence passage lies in the extracted text are
in benchmarks/data/financebench_spans.json: ids and offsets only, no text of the data. The spans were found once by
aligning FinanceBench's `evidence_text` with its annotated page (at least 80% of its characters matched, most near
100%); the script checks each again (the span's characters against the evidence's, white space aside) and names any that no longer holds,
as it would when a newer PDF reader extracts a page otherwise. From that commit, with this repository's PDF reader,
the output is byte for byte the `financebench-dev` of ../shared/data, less its README.md. Licence: CC-BY-NC-4.0,
evaluation only: never copy the output into a repository.
"""
from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from unittest import mock

from _snapshot import snapshot_parser

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SPANS = Path(__file__).resolve().parent / "financebench_spans.json"
QUESTIONS = "data/financebench_open_source.jsonl"
DOCUMENTS = "data/financebench_document_information.jsonl"
NAME = "financebench-dev"
SOURCE = "https://github.com/patronus-ai/financebench"
COMMIT = "cc39aeb4afdf33909ee1412188bf89035950c2eb"
LICENCE = "CC-BY-NC-4.0 (FinanceBench, per its Hugging Face dataset card); filings are public SEC documents"
AGREEMENT = 0.8  # the share of the evidence's characters a span must hold in order


def records(path: Path, key: str) -> dict[str, dict]:
    return {row[key]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if row}


def characters(text: str) -> str:
    """A text's characters without its white space (FinanceBench's evidence often runs words together)."""
    return re.sub(r"\s+", "", text.lower())


def agreement(span: str, evidence: str) -> float:
    """The share of the evidence's characters (white space aside) that the span holds in the same order."""
    wanted = characters(evidence)
    if not wanted:
        return 1.0
    matcher = difflib.SequenceMatcher(None, characters(span), wanted, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(wanted)


def extracted(pdf: Path) -> tuple[str, int]:
    """A PDF's text layer as localcr reads it, and its number of pages. No OCR, installed or not: a scanned page
    (an exhibit's signed letter) stays empty, as it was when the set was made."""
    from localcr.readers import ocr, pdf as reader

    with mock.patch.object(ocr, "installed_packs", return_value=[]):
        read = reader.read(pdf.read_bytes())
    return read.text, len(read.pages)


def convert(snapshot: Path, out: Path, spans_file: Path = SPANS) -> tuple[Path, list[str]]:
    """The set written to OUT/financebench-dev, and the spans whose text no longer matches their evidence."""
    chosen = json.loads(spans_file.read_text(encoding="utf-8"))
    questions = records(snapshot / QUESTIONS, "financebench_id")
    information = records(snapshot / DOCUMENTS, "doc_name")
    files = {}  # doc-NNN -> FinanceBench's doc_name
    for qid, spans in chosen.items():
        for doc, _, _ in spans:
            files.setdefault(doc, questions[qid]["doc_name"])
    target = out / NAME
    (target / "docs").mkdir(parents=True, exist_ok=True)
    texts, documents = {}, []
    for doc in sorted(files):
        text, pages = extracted(snapshot / "pdfs" / f"{files[doc]}.pdf")
        (target / "docs" / f"{doc}.txt").write_text(text, encoding="utf-8", newline="")
        texts[doc] = text
        about = information[files[doc]]
        documents.append({"id": f"docs/{doc}.txt", "company": about["company"], "doc_type": about["doc_type"],
                          "period": about["doc_period"], "pages": pages, "words": len(text.split())})
    lines, asked, drifted = [], [], []
    for qid, spans in chosen.items():
        question = questions[qid]
        lines.append(json.dumps({"id": qid, "query": question["question"], "answer": question["answer"],
                                 "question_type": question["question_type"],
                                 "spans": [[f"docs/{doc}.txt", start, end] for doc, start, end in spans]}) + "\n")
        asked.append({"id": qid, "company": question["company"], "doc_name": question["doc_name"],
                      "question_type": question["question_type"]})
        evidence = " ".join(item["evidence_text"] for item in question["evidence"])
        found = " ".join(texts[doc][start:end] for doc, start, end in spans)
        if agreement(found, evidence) < AGREEMENT:
            drifted.append(qid)
    (target / "queries.jsonl").write_text("".join(lines), encoding="utf-8", newline="")
    (target / "documents.json").write_text(json.dumps({"source": SOURCE, "commit": COMMIT, "licence": LICENCE,
                                                      "documents": documents, "queries": asked}, indent=1),
                                           encoding="utf-8", newline="")
    return target, drifted


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "patronus-ai/financebench with its pdfs/", "the set is written to OUT/financebench-dev")
    parser.add_argument("--spans", type=Path, default=SPANS, help="the questions, files and evidence offsets "
                        "(default: benchmarks/data/financebench_spans.json)")
    args = parser.parse_args(argv)
    if not (args.snapshot / QUESTIONS).is_file() or not (args.snapshot / "pdfs").is_dir():
        sys.exit(f"{args.snapshot}: no {QUESTIONS} or pdfs/; give a checkout of {SOURCE} with its PDFs")
    target, drifted = convert(args.snapshot, args.out, args.spans)
    print(target)
    if drifted:
        sys.exit(f"{len(drifted)} evidence spans no longer hold their evidence's characters (a different PDF reader?): "
                 + ", ".join(drifted))


if __name__ == "__main__":
    main()
