"""Figures said once: a measured figure lives in BENCHMARKS.md, in a row with its command, commit, CPU (model and
the bundled 1.5B's prompt rate there) and date, and every other page quotes it exactly, next to a link to the
BENCHMARKS section that holds it.

A "figure" is a decimal number (86.9, 0.64; not a model's size such as 1.5B or a version) or a number with a unit
of measure (ms, s, min, h, ×, %, tok/s, req/s, windows/s, GB ...; not a count such as 100 K chunks). Numbers in `code`, in "quotes" (how a document
writes a number) and in link targets are not figures. A page's block (a paragraph, a list item, a table row) that
holds a figure links to BENCHMARKS.md, and each of its figures is written in a section it links to (the heading's
section with its subsections; the whole page for a link without an anchor). docs/commands.md is the options'
reference, its numbers are defaults that test_docs checks against the command line, so it is not read here.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "tests" / "README.md",
         *sorted(path for path in (ROOT / "docs").glob("*.md") if path.name != "commands.md")]

UNIT = (r"(?:\s(?:ms|s|min|h)|\s?(?:%|tok/s|tokens/s|req/s|windows/s|chunks/s|pages/s|contexts/s|MB|GB|KB|MiB|GiB)"
        r"|×)(?![\w/])")
FIGURE = re.compile(r"(?<![\w.,/^])(?:\d[\d,]*\.\d+(?![\w.]|,\d)(?:" + UNIT + r")?|\d[\d,]*" + UNIT + r")")
VERSION = re.compile(r"(?:Python|Milvus|pymilvus|llama-cpp-python|llama\.cpp|Tesseract|nvcc|driver|version|v|==|>=)"
                     r"\s?\d[\d.]*(?:(?:,| or| and|/)\s?\d[\d.]*)*")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]*)\)")

# Numbers with a unit that are settings or limits, not measurements (page, figure): what each is.
NOT_MEASURED = {
    ("docs/serving.md", "16 KB"): "the largest request body the service reads",
    ("docs/indexing-and-contexts.md", "1.6 s"): "the watcher's longest wait, a setting",
    ("docs/on-disk-layout.md", "30%"): "the share of dead chunks that triggers a compaction",
    ("tests/README.md", "1%"): "the tolerance a test allows a computed figure",
    ("docs/asking.md", "2%"): "the rare-term rule: terms at most 2% of the chunks hold",
    ("docs/asking.md", "100%"): "the check's plausible size of a share",
    ("docs/asking.md", "4 s"): "the time from which ask says how long it will take",
    ("docs/installation.md", "1.6 GB"): "the size of the bundled models' slices",
    ("docs/files-and-languages.md", "1 GiB"): "the most a zip-based file may unpack to",
    ("docs/files-and-languages.md", "60%"): "the OCR confidence under which a page is named",
    ("docs/milvus-and-ray.md", "200 ms"): "Milvus's default time tick",
    ("docs/models.md", "0.9999"): "the cosine an ONNX copy must keep to be kept",
}
# Sections that are arithmetic, said so on the page, not measurements.
ON_PAPER = {("docs/milvus-and-ray.md", "## 100 M chunks, on paper")}


def sections(page: Path) -> dict[str, str]:
    """Each heading's anchor (as GitHub makes it) and its section's text, subsections included."""
    lines = page.read_text().splitlines()
    heads = [(n, len(m.group(1)), m.group(2)) for n, line in enumerate(lines) if (m := re.match(r"(#{1,6}) (.+)", line))]
    found = {}
    for i, (n, level, title) in enumerate(heads):
        end = next((m for m, other, _ in heads[i + 1:] if other <= level), len(lines))
        found[re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")] = "\n".join(lines[n:end])
    return found


def blocks(text: str):
    """A page's paragraphs, list items and table rows, with the line each starts on; fenced code left out."""
    current, start, fenced = [], 0, False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        opens = not line.strip() or line.startswith(("|", "#", "```")) or re.match(r"\s*(?:[-*]|\d+\.) ", line)
        if (opens or fenced) and current:
            yield start, "\n".join(current)
            current = []
        if fenced or line.startswith("```") or not line.strip():
            continue
        if not current:
            start = number
        current.append(line)
        if line.startswith(("|", "#")):
            yield start, "\n".join(current)
            current = []
    if current:
        yield start, "\n".join(current)


def figures(block: str) -> list[str]:
    prose = LINK.sub(lambda m: m.group(0).split("](")[0] + "]", block)
    prose = re.sub(r"`[^`]*`", " ", prose)
    prose = re.sub(r'"[^"]{0,300}"', " ", prose)
    prose = VERSION.sub(" ", prose)
    return [" ".join(f.split()) for f in FIGURE.findall(prose)]


def written(figure: str, text: str) -> bool:
    """The figure as BENCHMARKS writes it: the same digits, and the same unit after them (space or not)."""
    number, unit = re.match(r"([\d,.]+)\s?(.*)", figure).groups()
    unit = re.escape(unit).replace("tokens/s", "tok(?:en)?s?/s").replace("tok/s", "tok(?:en)?s?/s")
    pattern = rf"(?<![\w.,]){re.escape(number)}(?!\d|[.,]\d)" + (rf"\s?{unit}" if unit else "")
    return re.search(pattern, text) is not None


def quoted_figures():
    """(page, line, figures, the BENCHMARKS text its links name or None) for every block that holds a figure."""
    benchmarks, parts = BENCHMARKS.read_text(), sections(BENCHMARKS)
    for page in PAGES:
        name, heading = str(page.relative_to(ROOT)), ""
        for line, block in blocks(page.read_text()):
            if block.startswith("#"):
                heading = block if block.startswith("## ") else heading
                continue
            found = [f for f in figures(block) if (name, f) not in NOT_MEASURED]
            if not found or (name, heading) in ON_PAPER:
                continue
            targets = [t for t in LINK.findall(block) if t.split("#")[0].endswith("BENCHMARKS.md")]
            linked = [parts.get(t.split("#", 1)[1], "") if "#" in t else benchmarks for t in targets]
            yield name, line, found, "\n".join(linked) if targets else None


def test_every_figure_a_page_quotes_links_to_benchmarks():
    unlinked = [f"{page}:{line}: {found}" for page, line, found, linked in quoted_figures() if linked is None]
    assert not unlinked, "figures with no link to the BENCHMARKS section that holds them:\n" + "\n".join(unlinked)


def test_every_quoted_figure_is_written_so_in_the_section_it_links():
    wrong = [f"{page}:{line}: {[f for f in found if not written(f, linked)]}" for page, line, found, linked
             in quoted_figures() if linked is not None and not all(written(f, linked) for f in found)]
    assert not wrong, "figures their linked BENCHMARKS section does not write so:\n" + "\n".join(wrong)


def figure_rows():
    """BENCHMARKS' figure tables, row by row: (what, figure, machine, date, commit, command)."""
    for line in BENCHMARKS.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] != "what" and not cells[0].startswith("---"):
            yield cells


def test_each_benchmarks_row_names_its_cpu_its_prompt_rate_its_commit_and_its_command():
    """A row measured on a core pair names the CPU model and the bundled 1.5B's prompt rate there ("AVX-512 pair"
    alone was two machines 2.4 times apart); every row has a date, a commit and a command."""
    rows = list(figure_rows())
    assert len(rows) > 40
    bad = []
    for what, _, machine, date, commit, command in rows:
        if "pair" in machine and not (re.search(r"AMD EPYC|Intel Xeon", machine) and re.search(r"\d tok/s", machine)):
            bad.append(f"{what[:60]}: machine {machine!r} names no CPU model or prompt rate")
        if not re.fullmatch(r"\d{4}-\d\d-\d\d", date):
            bad.append(f"{what[:60]}: date {date!r}")
        if not re.match(r"[0-9a-f]{7,40}\b", commit):
            bad.append(f"{what[:60]}: commit {commit!r}")
        if "`" not in command and command not in ("the same command", "(arithmetic over the rows above)"):
            bad.append(f"{what[:60]}: command {command!r}")
    assert not bad, "\n".join(bad)


# How the pages once spoke of the machines the figures came from, instead of naming them.
LOCATIONS = {
    "the lent machine": r"(?i)\blent (?:GPU )?machine|\ba lent\b",
    "main of that day": r"(?i)\bmain of that day\b",
    "here or there, for a machine": r"(?i)\b(?:took|takes|ran|runs|run|measured|rate|rates|speed|tokens/s|tok/s|"
                                    r"defaults|s|h|min)\b[^.|;\n]{0,12}\b(?:here|there)\b",
}
# On the results page a figure's machine is named: not "this machine", and a command, not "by hand". (Elsewhere
# "this machine" is the user's, the one localcr runs on.)
ON_THE_RESULTS_PAGE = {
    "this machine": r"(?i)\bthis machine(?:'s)?\b",
    "by hand": r"(?i)\bby hand\b",
}


def test_no_page_says_here_or_there_for_a_machine():
    found = []
    for page in [BENCHMARKS, *PAGES]:
        patterns = {**LOCATIONS, **(ON_THE_RESULTS_PAGE if page == BENCHMARKS else {})}
        for what, pattern in patterns.items():
            found += [f"{page.relative_to(ROOT)}: {what}: {m.group(0)!r}" for m in re.finditer(pattern, page.read_text())]
    assert not found, "\n".join(found)


def test_tests_readme_keeps_its_table_cells_short():
    """The groups' table says what a group is and how to run it; what each test file checks is prose below it."""
    long = [f"{len(cell)} characters: {cell[:60]}..." for line in (ROOT / "tests" / "README.md").read_text().splitlines()
            if line.startswith("|") for cell in line.strip("|").split(" | ") if len(cell) > 400]
    assert not long, "\n".join(long)
