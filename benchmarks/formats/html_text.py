"""HTML main text: localcr's reader against trafilatura and the reader before it, on real pages.

    .venv/bin/python benchmarks/formats/html_text.py [--pages /usr/share/doc/python3-doc/html/library] [--n 100]

The pages are the Python manual as Debian ships it (`apt-get install python3-doc`; `setup.sh --test` installs
it). Each Sphinx page marks its article (`div role="main"`), which is the gold: words recalled (share of the
article's words, counted with repeats, that the extraction has), precision (share of the extraction's words
that are the article's: what boilerplate costs), the article's headings kept as Markdown headings, and pages
per second. trafilatura (`pip install trafilatura lxml_html_clean`) is measured when it is installed; the
reader before this one (html.parser, all visible text) is read from git at commit BEFORE.
"""
from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import machine, table  # noqa: E402

BEFORE = "5b7d2a1"  # the last commit with the html.parser reader
WORD = re.compile(r"\w+")
HEADING = re.compile(r"#{1,6} (.*)")


def words(text: str) -> collections.Counter:
    return collections.Counter(w.lower() for w in WORD.findall(text))


def gold(markup: str) -> tuple[collections.Counter, list[str]]:
    from selectolax.lexbor import LexborHTMLParser

    article = LexborHTMLParser(markup).css_first("div[role=main]")
    for link in article.css("a.headerlink"):  # the pilcrow links Sphinx puts after every heading
        link.decompose()
    return words(article.text(separator=" ")), [" ".join(h.text().split()) for h in article.css("h1, h2, h3, h4, h5, h6")]


def extractors() -> list[tuple[str, object]]:
    from localcr.readers.html import html_to_text

    found = [("localcr: selectolax (lexbor) + boilerplate rules", html_to_text)]
    try:
        import trafilatura

        found.append(("trafilatura 2 (markdown output)", lambda m: trafilatura.extract(
            m, output_format="markdown", include_formatting=True, include_tables=True, include_comments=False) or ""))
    except ImportError:
        print("trafilatura is not installed: measuring localcr's reader and the one before it only", file=sys.stderr)
    source = subprocess.run(["git", "show", f"{BEFORE}:localcr/readers/html.py"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], check=True).stdout
    before: dict = {}
    exec(compile(source.replace("from localcr.readers import Read, plain", ""), "html-before", "exec"), before)
    found.append((f"html.parser, all visible text (localcr at {BEFORE})", before["html_to_text"]))
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=Path, default=Path("/usr/share/doc/python3-doc/html/library"))
    p.add_argument("--n", type=int, default=100, help="pages, every third one of the directory in name order")
    args = p.parse_args()
    pages = sorted(args.pages.glob("*.html"))[::3][: args.n]
    if not pages:
        raise SystemExit(f"{args.pages}: no HTML pages (apt-get install python3-doc)")
    markups = [page.read_text(encoding="utf-8") for page in pages]
    golds = [gold(m) for m in markups]
    rows = []
    for name, extract in extractors():
        started = time.perf_counter()
        outputs = [extract(m) for m in markups]
        seconds = time.perf_counter() - started
        recall = precision = kept = total_headings = 0.0
        for output, (article, headings) in zip(outputs, golds):
            found = words(output)
            common = sum((found & article).values())
            recall += common / max(1, sum(article.values()))
            precision += common / max(1, sum(found.values()))
            titles = {" ".join(m.group(1).replace("¶", "").split()) for line in output.split("\n") if (m := HEADING.fullmatch(line))}
            kept += sum(h.replace("¶", "").strip() in titles for h in headings)
            total_headings += len(headings)
        n = len(outputs)
        rows.append([name, f"{n / seconds:.1f}", 100 * recall / n, 100 * precision / n, 100 * kept / max(1, total_headings)])
    size = sum(len(m.encode()) for m in markups) / 1e6
    text = (f"pages: {len(pages)} of {args.pages} ({size:.1f} MB); machine: {machine()}\n\n"
            + table(["extractor", "pages/s", "words recalled %", "precision %", "headings kept %"], rows) + "\n")
    print(text)
    (Path(__file__).resolve().parents[1] / "results" / "html_text.md").write_text(text)


if __name__ == "__main__":
    main()
