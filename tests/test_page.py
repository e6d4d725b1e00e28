"""The search page in a real browser: headless Chromium driven by Selenium through the system's chromedriver,
against the real `localcr serve` (the `served` fixture). One browser for the module.

Skipped only when no Chromium or chromedriver is installed (`./setup.sh --test` installs the Debian packages
`chromium` and `chromium-driver` where it can)."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

import localcr
from conftest import headless_chromium, start_server, stop_server

pytestmark = [pytest.mark.model, pytest.mark.loopback]

PAGE = Path(localcr.__file__).parent / "serve" / "page"
WAIT_S = 30


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile"), "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1") as driver:
        yield driver


def open_page(browser, served):
    browser.get(served.url + "/")
    assert browser.title == "localcr search"
    assert not browser.find_element(By.ID, "token-form").is_displayed()  # no token asked for where none is needed


def search(browser, query: str, k: int = 5) -> list:
    box = browser.find_element(By.ID, "query")
    box.clear()
    browser.find_element(By.ID, "k").clear()
    browser.find_element(By.ID, "k").send_keys(str(k))
    box.send_keys(query, Keys.ENTER)  # the page marks the form busy as it sends, and unmarks it on the answer

    def answered(b):
        return b.find_element(By.ID, "search").get_attribute("aria-busy") is None and (
            b.find_element(By.ID, "summary").text.endswith(" ms") or b.find_element(By.ID, "error").is_displayed())

    WebDriverWait(browser, WAIT_S).until(answered)
    return browser.find_elements(By.CSS_SELECTOR, "#hits > li.hit")


def shown(browser) -> list[str]:
    """The chunk ids of the hits on the page, in order (read in one go: the page may be replacing them)."""
    return browser.execute_script("return [...document.querySelectorAll('#hits > li.hit')].map(hit => hit.dataset.chunkId)")


def address(browser) -> dict:
    parts = urlsplit(browser.current_url)
    return {"path": parts.path, "fragment": parts.fragment, **{k: v[0] for k, v in parse_qs(parts.query).items()}}


def form_state(browser) -> tuple:
    return browser.execute_script(
        "const f = document.getElementById('search'); return [f.query.value, f.mode.value, f.k.value, f.rerank.checked]")


def test_hits_show_context_apart_and_marked_terms(browser, served):
    for name in ("index.html", "page.js", "page.css", "favicon.svg"):  # the page under test is this package's
        status, body = served.request("GET", "/" if name == "index.html" else f"/page/{name}")
        assert status == 200 and body == (PAGE / name).read_text(), name
    browser.get_log("browser")  # drop what earlier pages logged
    open_page(browser, served)
    hits = search(browser, "how long is the retry backoff")
    assert hits, browser.find_element(By.ID, "error").text
    top = hits[0]
    assert top.find_element(By.CSS_SELECTOR, ".path").text.endswith("guide.md")
    context = top.find_element(By.CSS_SELECTOR, ":scope > .context").text
    text = top.find_element(By.CSS_SELECTOR, ":scope > .text").text
    assert "guide.md" in context and "Retries" in context
    assert "backoff" in text and context not in text
    marked = [m.text.lower() for m in top.find_elements(By.CSS_SELECTOR, ":scope > .text mark")]
    assert "backoff" in marked
    assert float(top.find_element(By.CSS_SELECTOR, ".score").text.split()[-1]) > 0
    # everything the page loaded came from the server that served it
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(url.startswith(served.url + "/") for url in loaded), loaded
    # and nothing failed: no script error, no resource refused by the Content-Security-Policy, no 404
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []


def test_document_markup_shows_as_text(browser, served):
    open_page(browser, served)
    hits = search(browser, "quota alerts release", k=10)
    release = [hit for hit in hits if hit.find_element(By.CSS_SELECTOR, ".path").text.endswith("release.md")]
    assert release, [hit.find_element(By.CSS_SELECTOR, ".path").text for hit in hits]
    shown = "\n".join(hit.find_element(By.CSS_SELECTOR, ":scope > .text").text for hit in release)
    assert "<script>document.title = 'owned'</script>" in shown
    assert "<img src=x onerror=\"document.title='owned'\">" in shown
    assert browser.find_elements(By.CSS_SELECTOR, "#hits img, #hits script, #hits [onerror]") == []
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # page.js alone
    assert browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.title == "localcr search"
    assert browser.execute_script("return document.title") != "owned"
    # the server counts code points, JavaScript UTF-16 units: after the emoji they differ by one
    marked = {m.text for hit in release for m in hit.find_elements(By.CSS_SELECTOR, ":scope > .text mark")}
    assert {"quota", "alerts"} <= marked, marked


def test_a_markdown_hit_is_rendered_with_its_terms_marked_and_its_html_as_text(browser, served):
    """Headings, lists and emphasis as Markdown makes them; the document's own tags escaped, as text."""
    open_page(browser, served)
    hits = search(browser, "alerts by mail faster release", k=10)
    release = [hit for hit in hits if hit.find_element(By.CSS_SELECTOR, ".path").text.endswith("release.md")]
    assert release, [hit.find_element(By.CSS_SELECTOR, ".path").text for hit in hits]
    found = lambda css: [e for hit in release for e in hit.find_elements(By.CSS_SELECTOR, f":scope > .text.markdown {css}")]
    assert {"Release notes", "Changes in version 2"} <= {h.text for h in found("h1, h2")}
    assert [li.text for li in found("ul > li")] == ["alerts by mail when a team nears its limit", "a faster release page"]
    assert [e.text for e in found("li em")] == ["faster"] and {"alerts", "mail"} <= {m.text for m in found("li mark")}
    assert any("<script>document.title = 'owned'</script>" in p.text for p in found("p"))
    assert browser.find_elements(By.CSS_SELECTOR, "#hits script, #hits img, #hits [onerror], #hits [style]") == []
    assert browser.execute_script("return document.title") != "owned"


def test_neighbours_link_shows_the_chunks_around_a_hit(browser, served):
    open_page(browser, served)
    top = search(browser, "how long is the retry backoff")[0]
    chunk_id = browser.execute_script("return arguments[0].dataset.chunkId", top)
    status, expected = served.request("GET", f"/api/chunks/{quote(chunk_id, safe='')}?window=1")
    assert status == 200, expected
    wanted = [c["text"] for c in expected["before"] + expected["after"]]
    assert wanted, "the guide's retry chunk has neighbours"

    link = top.find_element(By.CSS_SELECTOR, ".neighbours-link")
    link.click()
    WebDriverWait(browser, WAIT_S).until(lambda b: top.find_elements(By.CSS_SELECTOR, ".neighbour .text"))
    assert link.get_attribute("aria-expanded") == "true"
    shown = [n.get_attribute("textContent") for n in top.find_elements(By.CSS_SELECTOR, ".neighbour .text")]
    assert shown == wanted
    link.click()
    assert not top.find_element(By.CSS_SELECTOR, ".neighbours").is_displayed()


def test_the_only_field_filters_and_goes_into_the_address(browser, served):
    open_page(browser, served)
    browser.find_element(By.ID, "glob").send_keys("docs/** !release.md")
    hits = search(browser, "quota alerts release", k=10)
    assert hits and {hit.find_element(By.CSS_SELECTOR, ".path").text.rsplit("/", 1)[-1] for hit in hits} == {"guide.md"}
    assert address(browser)["glob"] == "docs/** !release.md"
    browser.find_element(By.ID, "glob").clear()
    browser.find_element(By.ID, "glob").send_keys("nowhere")
    assert search(browser, "quota") == []
    assert "passes --glob 'nowhere'" in browser.find_element(By.ID, "summary").text
    browser.find_element(By.ID, "glob").clear()


def test_an_api_error_shows_as_one_line(browser, served):
    open_page(browser, served)
    browser.find_element(By.ID, "rerank").click()
    status, body = served.request("POST", "/api/search", {"query": "backoff", "rerank": True})
    hits = search(browser, "backoff")
    if status == 200:  # a reranker is configured and loads here: the page shows its hits
        assert hits
        return
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed() and error.text == body["error"].splitlines()[0]
    assert hits == []



@pytest.fixture
def guarded(served):
    """A second real server over the same index, started with a token."""
    server = start_server(served.index, served.cache, token="page-test-token")
    yield server.url
    stop_server(server)


def test_a_token_from_the_address_or_the_token_field(browser, guarded):
    """#token= in the address is kept for the tab and taken out of the address; without it the server answers
    401 and the page asks for the token."""
    browser.get(guarded + "/#token=page-test-token")
    assert browser.execute_script("return location.hash") == ""
    assert browser.execute_script("return sessionStorage.getItem('localcr.token')") == "page-test-token"
    assert search(browser, "retry backoff"), browser.find_element(By.ID, "error").text
    assert not browser.find_element(By.ID, "token-form").is_displayed()

    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    WebDriverWait(browser, WAIT_S).until(lambda b: b.find_element(By.ID, "token-form").is_displayed())
    assert "token" in browser.find_element(By.ID, "error").text
    assert search(browser, "retry backoff") == []  # refused: 401, the error line stays
    browser.find_element(By.ID, "token").send_keys("page-test-token", Keys.ENTER)
    WebDriverWait(browser, WAIT_S).until(lambda b: b.find_elements(By.CSS_SELECTOR, "#hits > li.hit"))
    assert not browser.find_element(By.ID, "token-form").is_displayed()
    assert not browser.find_element(By.ID, "error").is_displayed()
    assert "backoff" in [m.text.lower() for m in browser.find_elements(By.CSS_SELECTOR, "#hits mark")]


def test_a_search_is_in_the_address_reopened_from_it_and_walked_with_back_and_forward(browser, served):
    open_page(browser, served)
    browser.find_element(By.CSS_SELECTOR, "input[name=mode][value=lexical]").click()
    search(browser, "retry backoff", k=3)
    first = shown(browser)
    assert first and address(browser) == {"path": "/", "fragment": "", "q": "retry backoff", "mode": "lexical", "k": "3"}
    browser.find_element(By.CSS_SELECTOR, "input[name=mode][value=hybrid]").click()
    search(browser, "team quota midnight", k=2)
    second = shown(browser)
    assert second and second != first and address(browser)["q"] == "team quota midnight"

    browser.back()  # the form and the hits of the first search, run again
    WebDriverWait(browser, WAIT_S).until(lambda b: shown(b) == first)
    assert form_state(browser) == ["retry backoff", "lexical", "3", False]
    browser.forward()
    WebDriverWait(browser, WAIT_S).until(lambda b: shown(b) == second)
    assert form_state(browser) == ["team quota midnight", "hybrid", "2", False]
    browser.refresh()  # reopened: the search runs again on load
    WebDriverWait(browser, WAIT_S).until(lambda b: shown(b) == second)

    browser.get(served.url + "/?" + "q=" + quote("fair scheduler heap") + "&mode=lexical&k=1")  # a shared link
    WebDriverWait(browser, WAIT_S).until(lambda b: len(shown(b)) == 1)
    assert "scheduler.py" in shown(browser)[0]
    assert form_state(browser) == ["fair scheduler heap", "lexical", "1", False]
    browser.back()  # from the link back to the search before it
    WebDriverWait(browser, WAIT_S).until(lambda b: shown(b) == second)


def test_the_token_never_reaches_the_address(browser, guarded):
    """A shared link of a guarded server carries the search, not the token: #token= is taken out on load, the
    search in the address runs with it, and later searches put only themselves in the address."""
    browser.get(guarded + "/?q=retry+backoff&mode=lexical&k=2#token=page-test-token")
    WebDriverWait(browser, WAIT_S).until(lambda b: len(shown(b)) == 2)
    assert address(browser) == {"path": "/", "fragment": "", "q": "retry backoff", "mode": "lexical", "k": "2"}
    search(browser, "quota", k=1)
    assert "page-test-token" not in browser.current_url and address(browser)["q"] == "quota"
    browser.back()
    WebDriverWait(browser, WAIT_S).until(lambda b: len(shown(b)) == 2)
    assert "page-test-token" not in browser.current_url


ASK_WAIT_S = 600  # the bundled 1.5B LLM on two shared cores: loaded, then reading the sources and writing (11-27 s
#                   on an AVX-512 pair, 4 times that on an AVX2 one): a guard against a hang, not a time to meet


def test_ask_streams_an_answer_whose_citations_link_to_its_sources(browser, served):
    """Ask: the answer shows as the LLM writes it, then checked, its citations links to the numbered sources
    below it, a cited one with the passage that supports the answer; a document's tags in a source stay text."""
    open_page(browser, served)
    browser.get_log("browser")  # drop what earlier pages logged
    browser.find_element(By.ID, "glob").send_keys("docs/**")  # the guide, and the release notes with their <script>
    browser.find_element(By.ID, "k").clear()
    browser.find_element(By.ID, "k").send_keys("50")  # the page asks for at most 20 sources (the server refuses more)
    # the answer reads the sentences that bear on the question: this one draws on the guide and the release notes
    browser.find_element(By.ID, "query").send_keys("How many times is a failed job retried, and what must show as text?")
    browser.execute_script("""  // what the answer panel showed before the checked answer replaced it
        window.streamed = "";
        const panel = document.getElementById("answer");
        new MutationObserver(() => {
          if (panel.dataset.state === "streaming") window.streamed = document.getElementById("answer-text").textContent;
        }).observe(panel, {subtree: true, childList: true, characterData: true});""")
    browser.find_element(By.ID, "ask").click()

    def finished(b):
        state = b.find_element(By.ID, "answer").get_attribute("data-state")
        return state in ("done", "refused", "stopped") or b.find_element(By.ID, "error").is_displayed()

    WebDriverWait(browser, ASK_WAIT_S).until(finished)
    panel, error = browser.find_element(By.ID, "answer"), browser.find_element(By.ID, "error")
    assert not error.is_displayed(), error.text
    text = browser.find_element(By.ID, "answer-text").text
    assert panel.get_attribute("data-state") == "done", f"the model refused (the guide says it): {text!r}"
    assert text and browser.execute_script("return window.streamed"), "the answer streamed in before it was checked"
    assert re.search(r"\b(3|three|thrice)\b", re.sub(r"\[\d+\]", "", text), re.IGNORECASE), text
    assert browser.find_element(By.ID, "summary").text.startswith("Sources (")
    assert re.search(r"first token \d+\.\d s, \d+\.\d s in all", browser.find_element(By.ID, "answer-facts").text)

    links = browser.find_elements(By.CSS_SELECTOR, "#answer-text a.citation")
    assert links, text
    cited = {}
    for link in links:
        href = link.get_attribute("href").split("#", 1)[1]
        assert re.fullmatch(r"source-\d+", href) and link.text == f"[{href.split('-')[1]}]", (href, link.text)
        target = browser.find_element(By.ID, href)
        cited[href] = target.find_element(By.CSS_SELECTOR, ".path").text
        assert cited[href] in target.text and target.find_element(By.CSS_SELECTOR, ".support q").text
    guide = [href for href, path in cited.items() if path.endswith("docs/guide.md")]
    assert guide, cited
    target = browser.find_element(By.ID, guide[0])
    quotes = [q.text for q in target.find_elements(By.CSS_SELECTOR, ".support q")]
    assert any("retried three times" in q for q in quotes), (text, quotes)
    assert "retried three times" in target.find_element(By.CSS_SELECTOR, ":scope > .text mark").text
    for span in browser.find_elements(By.CSS_SELECTOR, "#answer-text .unsupported"):
        title = span.get_attribute("title")
        assert title == "cites no source" or title.startswith("no cited source has: "), title

    link = next(link for link in links if link.get_attribute("href").endswith("#" + guide[0]))
    link.click()  # the source is scrolled to, focused and flashed; the address keeps the search page's
    assert browser.execute_script("return document.activeElement.id") == guide[0]
    assert "flash" in target.get_attribute("class").split()
    assert address(browser)["fragment"] == ""

    # the release notes are a source: their tags show as text, nothing of them as markup
    sources = browser.find_elements(By.CSS_SELECTOR, "#hits > li.source")
    assert [s.get_attribute("id") for s in sources] == [f"source-{n}" for n in range(1, len(sources) + 1)]
    release = "\n".join(s.find_element(By.CSS_SELECTOR, ":scope > .text").text for s in sources
                        if s.find_element(By.CSS_SELECTOR, ".path").text.endswith("release.md"))
    assert "<script>document.title = 'owned'</script>" in release
    assert browser.find_elements(By.CSS_SELECTOR, "#answer script, #answer img, #hits script, #hits img, [onerror]") == []
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # page.js alone
    assert browser.execute_script("return document.title") != "owned"
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
