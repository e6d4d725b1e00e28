"""What OCR costs: scanned pages against the text layer of the same filings, in seconds and in retrieval.

    .venv/bin/python benchmarks/formats/ocr.py --data ../shared/data [--docs doc-028,doc-016,...]

The six shortest financebench-dev filings that hold gold questions are laid out as pages (100 characters a line, 66
lines a page, DejaVu Sans at 300 dpi, as a clean office scan looks) and saved as PDFs of images: no text layer.
localcr's PDF reader recognises them with Tesseract (the pages per second of this CPU are measured on that read,
the OCR cache emptied first), and two indexes are built with structural contexts: one of the text layer those pages
would have (the filings' text as the set ships it, laid out in the same lines and pages: a blank line between
pages, as localcr's PDF reader writes them) and one of the scans. Both are scored on the questions whose
evidence lies in those filings, by the same measure (span offsets do not carry over to recognised text): a
hit covers a question's evidence when it holds at least half of the evidence's distinct words (at most 20 needed);
Pass@k is the share of questions covered by a hit of their filing in the top k (hybrid search), and token recall
@10 the share of the evidence's words held by the top 10 hits of their filing. The table goes to stdout and
benchmarks/results/ocr.md.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, parser, set_directory, table  # noqa: E402

DOCS = ("doc-028", "doc-016", "doc-060", "doc-014", "doc-059", "doc-072")  # the shortest with gold questions
LINE_CHARS, PAGE_LINES, DPI = 100, 66, 300
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
KS = (5, 10)


def pages_of(text: str) -> list[list[str]]:
    lines = [wrapped for line in text.splitlines() for wrapped in (textwrap.wrap(line, LINE_CHARS) or [""])]
    return [lines[i:i + PAGE_LINES] for i in range(0, len(lines), PAGE_LINES)]


def scanned_pdf(text: str, out: Path) -> int:
    """The text as a PDF of page images (US Letter at DPI); the number of pages."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(FONT, size=DPI * 9 // 72)  # 9 pt
    images = []
    for lines in pages_of(text):
        page = Image.new("L", (DPI * 17 // 2, DPI * 11), 255)
        draw = ImageDraw.Draw(page)
        for n, line in enumerate(lines):
            draw.text((DPI * 3 // 4, DPI * 3 // 4 + n * font.size * 6 // 5), line, font=font, fill=0)
        images.append(page)
    images[0].save(out, "PDF", resolution=DPI, save_all=True, append_images=images[1:])
    return len(images)


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def score(index, questions: list[dict], doc_of: dict[str, str]) -> list[float]:
    """Pass@5, Pass@10 and token recall@10 (percent) of the questions on an index."""
    passes, recall = {k: 0 for k in KS}, 0.0
    for q in questions:
        hits = index.search(q["query"], k=max(KS))
        gold = words(q["evidence"])
        needed = min(len(gold) / 2, 20)
        own = [h for h in hits if h.doc_id == doc_of[q["doc"]]]
        for k in KS:
            passes[k] += any(len(gold & words(h.text)) >= needed for h in own if hits.index(h) < k)
        recall += len(gold & set().union(*(words(h.text) for h in own))) / len(gold) if own else 0.0
    return [100 * passes[k] / len(questions) for k in KS] + [100 * recall / len(questions)]


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--docs", default=",".join(DOCS))
    args = p.parse_args()
    shutil.rmtree(args.work / "ocr-cache", ignore_errors=True)
    os.environ["LOCALCR_CACHE_DIR"] = str(args.work / "ocr-cache")  # a fresh OCR cache: every page recognised
    from localcr.documents import load_paths
    from localcr.index import build_index
    from localcr.models import load_registry
    from localcr.readers import ocr
    from localcr.search import open_index

    set_dir = set_directory(args.data, "financebench-dev")
    chosen = args.docs.split(",")
    work = args.work / "ocr"
    text_dir, scan_dir = work / "text", work / "scans"
    for folder in (text_dir, scan_dir):
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
    pages = 0
    for name in chosen:
        text = (set_dir / "docs" / f"{name}.txt").read_text()
        (text_dir / f"{name}.txt").write_text("\n\n".join("\n".join(lines) for lines in pages_of(text)) + "\n")
        pages += scanned_pdf(text, scan_dir / f"{name}.pdf")
    started = time.monotonic()
    read = load_paths([scan_dir])
    ocr_seconds = time.monotonic() - started
    low = [w for w in read.warnings if "OCR confidence" in w]

    questions = []
    for line in (set_dir / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        for doc, start, end in q.get("spans", [])[:1]:
            name = Path(doc).stem
            if name in chosen:
                evidence = (set_dir / doc).read_text()[start:end]
                questions.append({"query": q["query"], "doc": name, "evidence": evidence})
    registry = load_registry()
    rows = []
    for label, folder, suffix in (("text layer", text_dir, ".txt"), ("OCR of the scans", scan_dir, ".pdf")):
        directory = work / f"index-{folder.name}"
        build_index([str(folder)], directory, registry, contexts="structural", progress=False, rebuild=True, log=lambda m: None)
        index = open_index(directory)
        doc_of = {name: f"{folder.name}/{name}{suffix}" for name in chosen}
        rows.append([label, *score(index, questions, doc_of)])
    cpu = machine()
    tesseract = ocr.describe()
    head = ["documents", "hybrid Pass@5", "hybrid Pass@10", "token recall@10"]
    out = (f"# OCR against the text layer ({len(chosen)} financebench-dev filings: {', '.join(chosen)}; "
           f"{len(questions)} questions)\n\n{cpu}; {tesseract}\n\n"
           f"OCR: {pages} pages in {ocr_seconds:.0f} s of wall time ({pages / ocr_seconds:.2f} pages/s, "
           f"{ocr_seconds / pages:.2f} s a page, read by localcr's PDF reader in its worker processes, cache off); "
           f"{len(low)} pages under the confidence threshold\n\n" + table(head, rows) + "\n")
    print(out)
    (ROOT / "benchmarks" / "results" / "ocr.md").write_text(out)


if __name__ == "__main__":
    main()
