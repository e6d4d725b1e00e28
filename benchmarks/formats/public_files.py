"""Real public files of every kind localcr reads, as a new user meets them: indexed, asked about, problems counted.

    .venv/bin/python benchmarks/formats/public_files.py --mirrors /work/.mirror [--checkout DIR] [--label NAME]

The corpus is rebuilt from snapshots of public repositories (bare git directories under --mirrors, one per
repository, `owner+name/repo`, as the fetch tool leaves them), each pinned by the commit named in SOURCES: a
snapshot at another commit is refused, so every run reads the same bytes. The files are not committed here. They are
test data of the libraries that write and read these formats: spreadsheets (calamine, xlrd, odfpy), mail (the
`mail` gem, git), Office and OpenDocument files (python-docx, python-pptx, odfpy), RTF (striprtf), PDFs (pypdf) and
images with text (python-pptx's and python-docx's documentation). The corpus is indexed by `localcr index
--contexts structural` of the checkout given (--checkout: another worktree, to measure the code before a change the
same way), and each question of QUESTIONS searched (hybrid, the default) in a `localcr search` process: Pass@1 and
Pass@3 by the file (or mailbox message) that holds the answer. Then the files indexed, skipped and indexed with a
warning, by reason, from the index's own output. Tables go to stdout and benchmarks/results/public_files[-LABEL].md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine, table  # noqa: E402

# repository: (commit, [paths])
SOURCES = {
    "eea/odfpy": ("f1cb77cb74e996b181925268f37e1aeff902ef33", [
        "tests/examples/cols.odp", "tests/examples/ol.odp", "tests/examples/simpletable.odt",
        "tests/examples/serious_poem.odt", "tests/examples/pythagoras.ods", "tests/examples/chinese_spreadsheet.ods",
        "tests/examples/empty.ods", "examples/countrystatistics.ods", "tests/examples/twolevellist.odt"]),
    "tafia/calamine": ("263762c8e98ef25da8511d9c5ea1783493e3bf6d", [
        "tests/any_sheets.ods", "tests/date.xlsx", "tests/errors.xlsx", "tests/header-row.xlsx",
        "tests/inventory-table.xlsx", "tests/empty_sheet.xlsx", "tests/issue127.ods", "tests/covered.ods"]),
    "python-excel/xlrd": ("3a19d22014d7b3f3041b7188d21a653c18c709bf", ["tests/samples/sample.ods", "tests/samples/sample.xlsx"]),
    "mikel/mail": ("d645d7b5b7d03218b0bc8971ef041c991a63f5f7", [
        "spec/fixtures/emails/plain_emails/raw_email_reply.eml", "spec/fixtures/emails/plain_emails/basic_email.eml",
        "spec/fixtures/emails/plain_emails/raw_email10.eml", "spec/fixtures/emails/attachment_emails/attachment_pdf.eml",
        "spec/fixtures/emails/mime_emails/raw_email_with_nested_attachment.eml",
        "spec/fixtures/emails/multi_charset/japanese_shift_jis.eml", "spec/fixtures/emails/rfc2822/example01.eml",
        "spec/fixtures/emails/multipart_report_emails/report_530.eml", "spec/fixtures/emails/error_emails/missing_body.eml",
        "spec/fixtures/emails/error_emails/bad_encoded_subject.eml"]),
    "git/git": ("1a3e64c6c4a623626ff0687008732a8e007e2a1c", [
        "t/t5100/sample.mbox", "t/t5100/rfc2047-samples.mbox", "t/t5100/quoted-cr.mbox", "t/t3900/ISO8859-1.txt",
        "t/t3900/eucJP.txt", "t/t3900/UTF-16.txt", "t/t3900/2-UTF-8.txt"]),
    "py-pdf/pypdf": ("f6853ccd3ff492309c84060186aabc88ed472ffd", [
        "resources/crazyones.pdf", "resources/Seige_of_Vicksburg_Sample_OCR.pdf", "resources/git.pdf",
        "resources/commented.pdf", "resources/encrypted-file.pdf", "resources/attachment.pdf", "resources/example.pdf",
        "resources/multilang.pdf", "resources/pdflatex-outline.pdf", "resources/toy.pdf", "resources/metadata.pdf",
        "resources/imagemagick-CCITTFaxDecode.pdf"]),
    "python-openxml/python-docx": ("e45454602b53e8e572b179ccf1c91093ec9f4ed7", [
        "features/steps/test_files/blk-paras-and-tables.docx", "features/steps/test_files/doc-coreprops.docx",
        "features/steps/test_files/par-hlink-frags.docx", "features/steps/test_files/comments-rich-para.docx",
        "features/steps/test_files/hdr-header-footer.docx", "features/steps/test_files/doc-word-default-blank.docx",
        "features/steps/test_files/monty-truth.png"]),
    "scanny/python-pptx": ("278b47b1dedd5b46ee84c286e77cdfb0bf4594be", [
        "features/steps/test_files/test.pptx", "features/steps/test_files/sld-notes.pptx",
        "features/steps/test_files/tbl-cell.pptx", "features/steps/test_files/shp-groupshape.pptx",
        "docs/_static/img/hello-world.png", "docs/_static/img/bullet-slide.png"]),
    "joshy/striprtf": ("f95578faf624b935f67078fe137a1f32ee79aea4", [
        "tests/rtf/Example_text.rtf", "tests/rtf/ansicpg1250.rtf", "tests/rtf/Speiseplan_KW_32-33_Eybl.rtf",
        "tests/rtf/bytes.rtf", "tests/rtf/TX_RTF32_18.0.541.501.rtf"]),
}


def build_corpus(mirrors: Path, corpus: Path) -> int:
    """Write each source file under corpus/<owner>/<name>/<path> from its repository's snapshot at the pinned commit."""
    written = 0
    for repo, (commit, paths) in SOURCES.items():
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode != 0:
            sys.exit(f"{git_dir}: no snapshot of {repo} (fetch github:{repo} first)")
        if head.stdout.strip() != commit and subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", commit],
                                                            capture_output=True).returncode != 0:
            sys.exit(f"{repo}: the snapshot is at {head.stdout.strip()}, not the pinned {commit}")
        for path in paths:
            data = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=True).stdout
            target = corpus / repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += 1
    return written


# (question, where the answer is: a piece of the document id, any of several separated by "|")
QUESTIONS = [
    ("what became too conspicuous and dangerous for use at the siege", "Seige_of_Vicksburg_Sample_OCR.pdf"),
    ("rumour that Johnston is coming with fifty thousand men to raise the siege", "Seige_of_Vicksburg_Sample_OCR.pdf"),
    ("population density of Malta", "countrystatistics.ods"),
    ("Suspendisse tempor urna dolor in the third column", "cols.odp"),
    ("counting Eins Tsvey Dray in Yiddish", "ol.odp"),
    ("the boy stood on the burning deck", "serious_poem.odt"),
    ("Subitem B.2 in bold", "twolevellist.odt"),
    ("git-cvsimport-script bugs with removed files and multi-digit revision numbers", "sample.mbox#5"),
    ("try all addresses for a remote name until it succeeds, IPv6", "sample.mbox#4"),
    ("why does git-am not like the scissors mark", "sample.mbox#14"),
    ("texlive packages needed to build navy, docutils replaced by python-docutils", "sample.mbox#12"),
    ("pytest is suffixed with different patterns on different distros", "quoted-cr.mbox"),
    ("Time for ISO 10646", "rfc2047-samples.mbox#2"),
    ("addresses with permanent fatal errors: unknown e-mail address", "report_530.eml"),
    ("John Doe writes to Mary Smith just to say hello", "example01.eml"),
    ("sent via Bell Mobility text messaging service", "raw_email10.eml"),
    ("how many bananas are in the inventory", "inventory-table.xlsx"),
    ("workbook with a visible, a hidden, a very hidden and a chart sheet", "any_sheets.ods"),
    ("spreadsheet error values DIV/0 and NAME", "errors.xlsx"),
    ("here's to the crazy ones, the misfits, the rebels", "crazyones.pdf|attachment.pdf|commented.pdf"),
    ("beautiful is better than ugly, explicit is better than implicit", "example.pdf"),
    ("Hello World in Arabic, Russian, Thai and Japanese", "multilang.pdf"),
    ("blind text Huardest gefburn", "pdflatex-outline.pdf"),
    ("Speiseplan Gemüserostbraten mit Semmelknödel", "Speiseplan_KW_32-33_Eybl.rtf"),
    ("klauzula informacyjna o ochronie danych osobowych", "ansicpg1250.rtf"),
    ("ухвала Верховного Суду касаційна скарга", "bytes.rtf"),
    ("symbol codes for micro, beta and less-than-or-equal", "TX_RTF32_18.0.541.501.rtf"),
    ("paragraph with a link to a bookmark", "par-hlink-frags.docx"),
    ("python-pptx was here", "hello-world.png"),
    ("unladen swallows in a table cell", "tbl-cell.pptx"),
    ("some text worthy of note", "comments-rich-para.docx"),
    ("test mail from docomo in Japanese", "japanese_shift_jis.eml"),
]


def localcr(checkout: Path, cache: Path, *args) -> subprocess.CompletedProcess:
    """The `localcr` command of a checkout, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "LOCALCR_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "localcr", *map(str, args)], capture_output=True, text=True, env=env,
                          cwd=checkout)


def reason(line: str) -> str:
    """A problem's reason without what varies from file to file: its path, page, names and numbers."""
    line = line.split(": ", 1)[1] if line.startswith(("/", "corpus")) else line
    line = re.sub(r"^page \d+: ", "", line)
    line = re.sub(r"^(?:message \d+: )?attachment [^:]+: ", "attachment: ", line)
    return re.sub(r"\d+(?:\.\d+)?", "N", line).removesuffix(", skipped")


# Searches every question in one process of the checkout measured (its models loaded once): doc ids of the top 3.
_SEARCH = """import json, sys, localcr
index = localcr.open_index(sys.argv[1])
print(json.dumps([[hit.doc_id for hit in index.search(q, k=3)] for q in json.load(sys.stdin)]))"""


def measure(checkout: Path, corpus: Path, work: Path) -> tuple:
    """Index the corpus with the checkout; the rank (1-3, or None) of each question's answer, the skipped files and the
    warnings by reason, the warning lines of a re-index with nothing changed, the documents, languages and encodings."""
    index, cache = work / "index", work.parent / "cache"
    built = localcr(checkout, cache, "index", corpus, "--index", index, "--contexts", "structural", "-q", "--rebuild")
    if built.returncode != 0:
        sys.exit(f"localcr index failed: {built.stdout[-2000:]}{built.stderr[-2000:]}")
    output = built.stdout + built.stderr
    warned = Counter(reason(line.removeprefix("warning: ").replace(str(corpus) + "/", "corpus/"))
                     for line in output.splitlines() if line.startswith("warning: ") and ", skipped" not in line
                     and "not trained for" not in line)
    stats = json.loads(localcr(checkout, cache, "stats", "--index", index, "--json").stdout)
    skipped = Counter(reason(s["reason"]) for s in stats["skipped"])
    again = localcr(checkout, cache, "index", "--index", index, "-q")
    repeated = sum(1 for line in (again.stdout + again.stderr).splitlines() if line.startswith("warning: "))
    env = {**os.environ, "PYTHONPATH": str(checkout), "LOCALCR_CACHE_DIR": str(cache)}
    searched = subprocess.run([sys.executable, "-c", _SEARCH, str(index)], input=json.dumps([q for q, _ in QUESTIONS]),
                              capture_output=True, text=True, env=env, check=True)
    found = []
    for (_, where), ids in zip(QUESTIONS, json.loads(searched.stdout)):
        ranks = [n for n, doc_id in enumerate(ids, 1) if any(w in doc_id for w in where.split("|"))]
        found.append(ranks[0] if ranks else None)
    documents = stats["documents"]
    return found, skipped, warned, repeated, documents, stats["languages"], stats["encodings"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, default=Path("/tmp/localcr-bench"), help="scratch directory for the corpus and indexes")
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="where the repositories' snapshots are")
    p.add_argument("--checkout", type=Path, default=ROOT, help="the localcr checkout to measure (default: this one)")
    p.add_argument("--label", default="", help="a name for the checkout in the results' file name (e.g. before)")
    args = p.parse_args()
    corpus = args.work / "public-files" / "corpus"
    n_files = build_corpus(args.mirrors, corpus)
    work = args.work / "public-files" / (args.label or "current")
    found, skipped, warned, repeated, documents, languages, encodings = measure(args.checkout.resolve(), corpus, work)
    commit = subprocess.run(["git", "-C", str(args.checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or str(args.checkout)
    n = len(QUESTIONS)
    head = ["checkout", "files", "documents", "skipped", "indexed with a warning", "warnings on a re-index",
            "hybrid Pass@1", "hybrid Pass@3"]
    row = [f"{args.label or 'current'} ({commit})", n_files, documents, sum(skipped.values()), sum(warned.values()),
           repeated, f"{100 * sum(r == 1 for r in found) / n:.1f}", f"{100 * sum(r is not None for r in found) / n:.1f}"]
    missed = [f"{q} -> {w}" for (q, w), r in zip(QUESTIONS, found) if r != 1]
    text = "\n\n".join([
        f"machine: {machine()}; {n} questions; localcr index --contexts structural, localcr search (hybrid, k 3)",
        table(head, [row]),
        table(["skipped because", "files"], sorted(skipped.items(), key=lambda x: (-x[1], x[0]))),
        table(["warned of", "times"], sorted(warned.items(), key=lambda x: (-x[1], x[0]))),
        "languages: " + ", ".join(f"{k} {v}" for k, v in sorted(languages.items())) + "; encodings: "
        + ", ".join(f"{k or 'binary'} {v}" for k, v in sorted(encodings.items())),
        "not first: " + ("; ".join(missed) or "none"),
    ])
    out = ROOT / "benchmarks" / "results" / f"public_files{'-' + args.label if args.label else ''}.md"
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
