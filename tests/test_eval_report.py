"""`localcr eval --report FILE.html` end to end: a real index the test builds, the real command, and the page it
writes opened from disk in headless Chromium (Selenium through the system's chromedriver, as tests/test_page.py
starts it): a chart drawn per metric with every configuration in its legend, the failing queries listed with what
came back instead, and a document's, a query's and a configuration's markup shown as text, never run.

The browser tests are skipped only when no Chromium or chromedriver is installed (`./setup.sh --test` installs the
Debian packages `chromium` and `chromium-driver` where it can)."""
from __future__ import annotations

import json
import re

import pytest
from conftest import headless_chromium, run

from localcr.evaluation import METRICS

pytestmark = pytest.mark.model  # the index is built with the bundled embedder

KS = (1, 2)
LEXICAL, DENSE = "lexical", "dense <em>x</em>"  # the second one's name is markup, which must stay text
KIWI = "kiwi <script>alert(2)</script>"
DOC_SCRIPT = "<script>alert(1)</script>"
COLOURS = ["#1f77b4", "#ff7f0e"]  # matplotlib's first two colours: a bar of each configuration


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The page, written by `localcr eval --report` over four files; the kiwi query fails (its gold is a.md, and the
    words are d.txt's, whose text holds a script element)."""
    root = tmp_path_factory.mktemp("report")
    docs = root / "fruit"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha apples are red. They grow on trees in orchards.\n")
    (docs / "b.md").write_text("# B\n\nbeta bananas are yellow.\n")
    (docs / "c.md").write_text("# C\n\ngamma grapes are green.\n")
    (docs / "d.txt").write_text(f"{DOC_SCRIPT} kiwi kiwi, the furry kiwi.\n")
    run("index", docs, "--index", root / "i", "-q")
    queries = root / "q.jsonl"
    queries.write_text(json.dumps({"id": "bananas", "query": "bananas", "relevant": ["fruit/b.md#0"]}) + "\n"
                       + json.dumps({"id": "kiwi", "query": KIWI, "relevant": ["fruit/a.md"]}) + "\n")
    page = root / "eval.html"
    out = run("eval", "--index", root / "i", "--queries", queries, "--config", LEXICAL,
              "--config", f"dense,name={DENSE}", "-k", ",".join(map(str, KS)), "--report", page)
    assert f"wrote the report to {page}" in out
    return page


def test_report_is_one_page_that_needs_nothing_else(report):
    """Nothing to fetch (no script, stylesheet, image or font file; a policy that allows none), a chart per metric as
    inline SVG, and every piece of outside text escaped in the file itself."""
    page = report.read_text()
    assert not re.search(r"<script|<link|<img|<iframe|@import|\bsrc=", page, re.IGNORECASE)
    assert "default-src 'none'" in page
    assert page.count("<svg") == len(METRICS)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "dense &lt;em&gt;x&lt;/em&gt;" in page and "<em>" not in page
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # the charts' SVG ids are each chart's own


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:  # a page that fetched anything
        yield driver  # would find no host


def _open(browser, report):
    browser.get(report.as_uri())
    assert browser.title.startswith("localcr eval")
    # nothing was fetched to show it: the document itself is the only resource
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0


@pytest.mark.loopback
def test_report_draws_a_chart_per_metric_in_chromium(browser, report):
    _open(browser, report)
    charts = browser.execute_script("""
        const COLOURS = arguments[0];
        return [...document.querySelectorAll('figure.chart')].map(figure => {
            const svg = figure.querySelector('svg'), box = svg.getBoundingClientRect();
            return {metric: figure.dataset.metric, caption: figure.querySelector('figcaption').textContent,
                    width: box.width, height: box.height,
                    texts: [...svg.querySelectorAll('text')].map(text => text.textContent),
                    drawn: COLOURS.map(colour => [...svg.querySelectorAll('path')].filter(path => {
                        const b = path.getBoundingClientRect();
                        return (path.getAttribute('style') || '').includes('fill: ' + colour)
                            && b.width > 0 && b.height > 0;
                    }).length)};
        })""", COLOURS)
    assert [chart["metric"] for chart in charts] == list(METRICS)
    assert charts[0]["caption"] == "Pass@k" and charts[-1]["caption"] == "nDCG@k"
    for chart in charts:
        assert chart["width"] > 200 and chart["height"] > 100, chart
        assert LEXICAL in chart["texts"] and DENSE in chart["texts"], chart["texts"]  # the legend, as text
        assert {str(k) for k in KS} <= set(chart["texts"]), chart["texts"]  # k on the x axis
    # hit rate: the bananas query is found by both configurations at every k, so every bar stands, and so does each
    # configuration's mark in the legend
    hit = charts[list(METRICS).index("hit")]
    assert hit["drawn"] == [len(KS) + 1] * 2, hit


@pytest.mark.loopback
def test_report_lists_the_failing_query_with_what_was_found_instead(browser, report):
    from selenium.webdriver.common.by import By

    _open(browser, report)
    failures = browser.find_elements(By.CSS_SELECTOR, "#failures article.failure")
    assert [f.get_attribute("data-query-id") for f in failures] == ["kiwi"]  # bananas is found under both
    kiwi = failures[0]
    assert kiwi.find_element(By.CSS_SELECTOR, "h3.query").text == KIWI  # the query's markup, as text
    assert kiwi.find_element(By.CSS_SELECTOR, ".gold code.missed").text == "doc:fruit/a.md"  # as --per-query writes it
    lexical = kiwi.find_element(By.CSS_SELECTOR, f'div.config[data-config="{LEXICAL}"]')
    hits = lexical.find_elements(By.CSS_SELECTOR, "ol.hits > li")
    assert hits and hits[0].find_element(By.TAG_NAME, "code").text == "fruit/d.txt#0"
    assert hits[0].find_element(By.CSS_SELECTOR, ".path").text == str(report.parent / "fruit" / "d.txt")  # its file
    assert DOC_SCRIPT in hits[0].find_element(By.CSS_SELECTOR, ".hit-text").text  # the document's text, as text


@pytest.mark.loopback
def test_report_runs_no_script_of_a_document(browser, report):
    """A document's `<script>`, the query's and a configuration name's markup are text on the page: the DOM holds no
    script or em element (the page has no script of its own), and no alert opened."""
    from selenium.common.exceptions import NoAlertPresentException

    _open(browser, report)
    assert browser.execute_script("return document.querySelectorAll('script, em').length") == 0
    assert DOC_SCRIPT in browser.find_element("css selector", "#failures").text
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.accept()
