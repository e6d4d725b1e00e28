// The localcr search page: calls the JSON API of the server that served it and shows the hits, or (Ask) the
// local LLM's answer as it is written, with its citations linked to the sources it read.
// Document text is untrusted: it only ever reaches the page as text nodes (textContent, createTextNode),
// never through innerHTML, so a document holding <script> or <img onerror> shows those tags as text. A Markdown
// hit comes rendered by the server (markdown-it, its raw HTML escaped); that HTML is parsed inertly and rebuilt
// here from the elements Markdown makes alone, with no attribute but a link's web address.
"use strict";

const TOKEN_KEY = "localcr.token";
const $ = (id) => document.getElementById(id);
let latest = 0; // number of the newest search or question: answers to older ones are dropped
let lastAsked = false; // whether a token given after a 401 should ask again rather than search

// -- the token: #token=... in the address, kept for this tab only -----------------------------------------
function takeTokenFromAddress() {
  const match = /^#token=(.+)$/.exec(location.hash);
  if (!match) return false;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
  history.replaceState(null, "", location.pathname + location.search); // out of the address bar and history
  $("token-form").hidden = true;
  return true;
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The response to one call of the API, once it is known to be no error; an error as an ApiError with its line.
async function call(path, body, accept = "application/json") {
  const headers = { Accept: accept };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, "the server did not answer (" + err.message + ")");
  }
  if (!response.ok) {
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      // a few guards answer in plain text (a body over the size cap, a host name that is not loopback)
    }
    const message = data && typeof data.error === "string" ? data.error : response.status + " " + response.statusText;
    throw new ApiError(response.status, message);
  }
  return response;
}

async function api(path, body) {
  const response = await call(path, body);
  try {
    return await response.json();
  } catch (err) {
    throw new ApiError(response.status, "the server's answer is not JSON (" + err.message + ")");
  }
}

function showError(err) {
  const line = String(err.message || err).split("\n")[0];
  $("error").textContent = line;
  $("error").hidden = false;
  if (err.status === 401) {
    $("token-form").hidden = false;
    $("token").focus();
  }
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

// -- highlighting -------------------------------------------------------------------------------------------
// The server's spans count characters as Python does (code points); JavaScript strings count UTF-16 units,
// which differ after any character outside the Basic Multilingual Plane (emoji, rare CJK).
function utf16Offsets(text) {
  if (!/[\uD800-\uDFFF]/.test(text)) return null;
  const offsets = [];
  let unit = 0;
  for (const ch of text) {
    offsets.push(unit);
    unit += ch.length;
  }
  offsets.push(unit);
  return offsets;
}

// The text as a fragment of text nodes, with each span in a <mark>.
function highlighted(text, spans) {
  const fragment = document.createDocumentFragment();
  const offsets = utf16Offsets(text);
  const at = (i) => (offsets ? offsets[Math.min(i, offsets.length - 1)] : i);
  let done = 0;
  for (const [start, end] of spans || []) {
    const a = Math.max(at(start), done);
    const b = Math.min(at(end), text.length);
    if (b <= a) continue;
    if (a > done) fragment.append(document.createTextNode(text.slice(done, a)));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(a, b);
    fragment.append(mark);
    done = b;
  }
  if (done < text.length) fragment.append(document.createTextNode(text.slice(done)));
  return fragment;
}

// -- Markdown the server rendered ---------------------------------------------------------------------------
const MARKDOWN_ELEMENTS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "em",
  "strong", "a", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "mark"]);

function markdown(html) {
  const parsed = new DOMParser().parseFromString(html, "text/html"); // inert: nothing in it runs or loads
  const fragment = document.createDocumentFragment();
  fragment.append(...[...parsed.body.childNodes].map(rebuilt));
  return fragment;
}

// A node of the parsed HTML as a new node of this page: text as text, an element Markdown makes as that element
// with its children, anything else as its text alone.
function rebuilt(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return document.createTextNode(node.nodeType === Node.TEXT_NODE ? node.data : "");
  const children = [...node.childNodes].map(rebuilt);
  const tag = node.tagName.toLowerCase();
  if (!MARKDOWN_ELEMENTS.has(tag)) return element("span", null, ...children);
  const copy = element(tag, null, ...children);
  const href = tag === "a" ? node.getAttribute("href") || "" : "";
  if (/^(https?:|mailto:|#)/i.test(href)) {
    copy.href = href;
    copy.rel = "noopener noreferrer";
  }
  if (tag === "ol" && /^\d+$/.test(node.getAttribute("start") || "")) copy.start = Number(node.getAttribute("start"));
  return copy;
}

function element(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.append(...children); // strings become text nodes
  return node;
}

// -- the address: a search is in it (?q=...&mode=...&k=...&rerank=1), so it can be bookmarked, shared and
// reopened, and Back and Forward walk the searches made; the token never is (it stays in sessionStorage) -------
const MODES = ["hybrid", "dense", "lexical"];

function addressOf(body) {
  const params = new URLSearchParams({ q: body.query, mode: body.mode, k: String(body.k) });
  if (body.rerank) params.set("rerank", "1");
  if (body.glob.length) params.set("glob", body.glob.join(" "));
  return location.pathname + "?" + params.toString();
}

// Fill the form from the address and run its search (on load, and when Back or Forward reach another search).
function restoreFromAddress() {
  const params = new URLSearchParams(location.search);
  const form = $("search");
  form.query.value = params.get("q") || "";
  form.mode.value = MODES.includes(params.get("mode")) ? params.get("mode") : "hybrid";
  form.k.value = params.get("k") || "5";
  form.rerank.checked = params.get("rerank") === "1";
  form.glob.value = params.get("glob") || "";
  const body = request();
  if (body.query) {
    run(body);
  } else {
    latest++; // an answer still on its way is for another address
    $("answer").hidden = true;
    $("summary").textContent = "";
    $("hits").replaceChildren();
    clearError();
  }
}

// -- searching ------------------------------------------------------------------------------------------------
function request() {
  const form = $("search");
  return {
    query: form.query.value.trim(),
    k: Number(form.k.value) || 5,
    mode: form.mode.value,
    rerank: form.rerank.checked,
    glob: form.glob.value.split(/\s+/).filter(Boolean),  // patterns, space-separated, as the field's hint shows
    highlight: true,
  };
}

function search(event) {
  event.preventDefault();
  const body = request();
  if (!body.query) return;
  lastAsked = false;
  const address = addressOf(body);
  if (address !== location.pathname + location.search) history.pushState(null, "", address);
  run(body);
}

async function run(body) {
  const mine = ++latest;
  $("answer").hidden = true; // its citations point at sources these hits replace
  $("search").setAttribute("aria-busy", "true");
  $("summary").textContent = "Searching…";
  try {
    const result = await api("api/search", body);
    if (mine !== latest) return;
    clearError();
    showHits(result);
  } catch (err) {
    if (mine !== latest) return;
    $("summary").textContent = "";
    $("hits").replaceChildren();
    showError(err);
  } finally {
    if (mine === latest) $("search").removeAttribute("aria-busy");
  }
}

function showHits(result) {
  const count = result.hits.length;
  $("summary").textContent = (count === 0 ? "No hits" : count === 1 ? "1 hit" : count + " hits") +
    (result.unmatched ? " (" + result.unmatched + ")" : "") + " in " + Math.round(result.took_ms) + " ms" +
    (result.note ? "; " + result.note : "");
  $("hits").replaceChildren(...result.hits.map(hitItem));
}

function ranksTitle(ranks) {
  return Object.entries(ranks || {}).map(([name, rank]) => name + " rank " + rank).join(", ");
}

function hitItem(hit) {
  const head = element("div", "hit-head", element("span", "path", hit.path));
  if (hit.page != null) head.append(element("span", "page", "page " + hit.page));
  if (hit.score != null) { // an answer's source has none
    const score = element("span", "score", "score " + Number(hit.score).toFixed(3));
    score.title = ranksTitle(hit.ranks);
    head.append(score);
  }

  const item = element("li", "hit", head);
  item.dataset.chunkId = hit.chunk_id;
  if (hit.context) {
    const context = element("div", "context", highlighted(hit.context, hit.matches && hit.matches.context));
    context.setAttribute("aria-label", "context");
    item.append(context);
  }
  item.append(hit.text_html != null ? element("div", "text markdown", markdown(hit.text_html))
    : element("div", "text", highlighted(hit.text, hit.matches && hit.matches.text)));

  const toggle = element("button", "neighbours-link", "neighbours");
  toggle.type = "button";
  toggle.setAttribute("aria-expanded", "false");
  const around = element("div", "neighbours");
  around.hidden = true;
  toggle.addEventListener("click", () => showNeighbours(hit.chunk_id, toggle, around));
  item.append(toggle, around);
  return item;
}

async function showNeighbours(chunkId, toggle, around) {
  const open = toggle.getAttribute("aria-expanded") === "true";
  toggle.setAttribute("aria-expanded", String(!open));
  around.hidden = open;
  if (open || around.dataset.loaded) return;
  around.replaceChildren(element("p", "muted", "Loading…"));
  try {
    const data = await api("api/chunks/" + encodeURIComponent(chunkId) + "?window=1");
    const chunk = (c, where) => {
      const label = where + (c.page != null ? ", page " + c.page : "");
      return element("div", "neighbour", element("div", "neighbour-label muted", label), element("div", "text", c.text));
    };
    const parts = data.before.map((c) => chunk(c, "before"));
    parts.push(element("div", "neighbour-here muted", "this hit"));
    parts.push(...data.after.map((c) => chunk(c, "after")));
    around.replaceChildren(...(parts.length > 1 ? parts : [element("p", "muted", "This chunk is the whole document.")]));
    around.dataset.loaded = "1";
  } catch (err) {
    around.replaceChildren(element("p", "error-line", String(err.message).split("\n")[0]));
    if (err.status === 401) showError(err);
  }
}

// -- asking: the answer as JSON lines (its sources, the text as the LLM writes it, then the checked answer) ----
const MAX_SOURCES = 20; // the most sources the server lets an answer read

// An older answer is dropped from the page but still read to its end, not cancelled: the server answers one
// question at a time either way (a cancelled one stops at its next token), and one read out is cached for next time.
async function ask() {
  const form = $("search");
  const options = request(); // the search's options, but for highlighting
  const body = { question: options.query, k: Math.min(options.k, MAX_SOURCES), mode: options.mode,
    rerank: options.rerank, glob: options.glob };
  if (!body.question) {
    form.reportValidity(); // the empty field's own message, as Search shows it
    return;
  }
  lastAsked = true;
  const mine = ++latest;
  form.setAttribute("aria-busy", "true");
  startAnswer();
  $("summary").textContent = "Finding sources…";
  $("hits").replaceChildren();
  let started = false;
  try {
    const response = await call("api/ask", body, "application/x-ndjson");
    started = mine === latest;
    if (started) clearError();
    let answered = false, failure = null;
    for await (const event of jsonLines(response)) {
      if (mine !== latest || failure) continue; // read on, as said above
      if (event.event === "sources") showSources(event.sources || []);
      else if (event.event === "estimate") $("summary").textContent = String(event.text) + "…";
      else if (event.event === "note") $("summary").textContent = String(event.text);
      else if (event.event === "text") $("answer-text").append(String(event.text)); // a text node, never markup
      else if (event.event === "withdrawn") $("answer-text").replaceChildren(); // taken back: the refusal follows
      else if (event.event === "answer") answered = showAnswer(event);
      else if (event.event === "error") failure = new ApiError(0, String(event.error));
    }
    if (mine !== latest) return;
    if (failure) throw failure;
    if (!answered) throw new ApiError(0, "the answer stopped before it was complete");
  } catch (err) {
    if (mine !== latest) return; // a newer search or question owns the page
    if (started) { // what was written so far stays, marked as cut short and unchecked; the sources stay too
      $("answer").dataset.state = "stopped";
      $("answer").removeAttribute("aria-busy");
      $("answer-label").textContent = "Answer (stopped, unchecked)";
    } else {
      $("answer").hidden = true;
      $("summary").textContent = "";
      $("hits").replaceChildren();
    }
    showError(err);
  } finally {
    if (mine === latest) form.removeAttribute("aria-busy");
  }
}

// The JSON objects of a JSON-lines body, each as soon as its line is complete; a line that is no JSON object as
// an error event (the body is still read to its end).
async function* jsonLines(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder(); // keeps a character split across two reads for the next one
  let pending = "";
  for (;;) {
    const { value, done } = await reader.read();
    pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
    const lines = pending.split("\n");
    pending = done ? "" : lines.pop();
    for (const line of lines) {
      if (!line.trim()) continue;
      let event = null;
      try {
        event = JSON.parse(line);
      } catch (err) {
        // shown below as the answer's error
      }
      yield event && typeof event === "object" ? event
        : { event: "error", error: "the server sent a line that is no JSON object: " + line.slice(0, 80) };
    }
    if (done) return;
  }
}

function startAnswer() {
  const panel = $("answer");
  panel.hidden = false;
  panel.dataset.state = "streaming";
  panel.setAttribute("aria-busy", "true"); // screen readers wait for the checked answer, not every word
  $("answer-label").textContent = "Answer";
  $("answer-text").replaceChildren();
  $("answer-note").hidden = true;
  $("answer-note").textContent = "";
  $("answer-facts").textContent = "";
}

function showSources(sources) {
  const count = sources.length;
  $("summary").textContent = count === 0 ? "No sources"
    : (count === 1 ? "1 source" : count + " sources") + "; writing the answer…";
  $("hits").replaceChildren(...sources.map(sourceItem));
}

// A source as a hit is shown (path, page, context, text, neighbours), numbered as the answer cites it.
function sourceItem(source) {
  const item = hitItem(source);
  item.id = "source-" + source.number;
  item.classList.add("source");
  item.tabIndex = -1; // a citation focuses it
  item.querySelector(".hit-head").prepend(element("span", "source-number", "[" + source.number + "]"));
  if (source.support) addSupport(item, source);
  return item;
}

// The passage of a cited source that supports the answer: above its text, and marked in it.
function addSupport(item, source) {
  item.classList.add("cited");
  const support = element("div", "support", element("span", "support-label", "supports the answer"),
    element("q", null, source.support));
  item.querySelector(":scope > .support")?.remove();
  item.querySelector(".hit-head").after(support);
  const text = item.querySelector(":scope > .text");
  if (text && source.support_start != null && source.start >= 0) { // document offsets, in code points
    const at = source.support_start - source.start;
    text.replaceChildren(highlighted(source.text, [[at, at + source.support_end - source.support_start]]));
  }
}

// The checked answer in place of the text as written: true, so the caller knows the stream was complete.
function showAnswer(answer) {
  const panel = $("answer");
  panel.dataset.state = answer.refused ? "refused" : "done";
  panel.removeAttribute("aria-busy");
  $("answer-label").textContent = answer.refused ? "No answer in the documents" : "Answer";
  const sentences = answer.refused ? [] : answer.sentences || [];
  const parts = [];
  sentences.forEach((sentence, i) => parts.push(...(i ? [" "] : []), sentenceSpan(sentence)));
  $("answer-text").replaceChildren(...(parts.length ? parts : [String(answer.answer)]));
  $("answer-note").textContent = answer.note || "";
  $("answer-note").hidden = !answer.note;
  $("answer-facts").textContent = answerFacts(answer);

  const sources = answer.sources || [];
  const same = sources.length === $("hits").children.length &&
    sources.every((s) => $("source-" + s.number)?.dataset.chunkId === s.chunk_id);
  if (same) { // the list as it is (a neighbours view opened meanwhile stays open), now with its support
    for (const source of sources) if (source.support) addSupport($("source-" + source.number), source);
  } else {
    $("hits").replaceChildren(...sources.map(sourceItem));
  }
  const cited = (answer.citations || []).length;
  $("summary").textContent = answer.refused ? "Nearest sources" : sources.length === 0 ? "No sources"
    : "Sources (" + cited + " of " + sources.length + " cited)";
  return true;
}

// A sentence with its citations before its final stop, as the CLI writes it: "It is retried three times [1]."
function sentenceSpan(sentence) {
  const text = String(sentence.text);
  const body = text.replace(/[.!?。！？]+$/, "");
  const citations = sentence.citations || [];
  const span = element("span", "sentence", body);
  if (citations.length) span.append(" ", ...citations.map(citationLink));
  span.append(text.slice(body.length));
  if (!sentence.supported) {
    span.classList.add("unsupported");
    const missing = sentence.missing || [];
    span.title = !citations.length ? "cites no source"
      : missing.length ? "no cited source has: " + missing.join(", ") : "its cited sources do not support it";
  }
  return span;
}

function citationLink(number) {
  const link = element("a", "citation", "[" + number + "]");
  link.href = "#source-" + number;
  link.addEventListener("click", (event) => {
    event.preventDefault(); // kept out of the address: Back would reach #source-N and run the search again
    showSource(number);
  });
  return link;
}

function showSource(number) {
  const target = $("source-" + number);
  if (!target) return;
  const still = matchMedia("(prefers-reduced-motion: reduce)").matches;
  target.scrollIntoView({ behavior: still ? "auto" : "smooth", block: "center" });
  target.focus({ preventScroll: true });
  target.classList.remove("flash");
  void target.offsetWidth; // a second click on the same citation flashes it again
  target.classList.add("flash");
}

// "qwen2.5-coder-1.5b, first token 2.1 s, 7.9 s in all" (or "cached"), and citations dropped for naming no source.
function answerFacts(answer) {
  const timings = answer.timings || {};
  const seconds = (s) => Number(s).toFixed(1) + " s";
  const parts = answer.model ? [answer.model] : [];
  if (answer.cached) parts.push("cached");
  else if (timings.first_token_s > 0 && timings.total_s != null) {
    parts.push("first token " + seconds(timings.first_token_s) + ", " + seconds(timings.total_s) + " in all");
  } else if (timings.total_s != null) parts.push(seconds(timings.total_s) + " in all");
  const dropped = answer.dropped_citations || [];
  if (dropped.length) parts.push("dropped " + dropped.map((n) => "[" + n + "]").join("") + ": no such source");
  return parts.join(", ");
}

// -- the token field and the index line ---------------------------------------------------------------------
function useToken(event) {
  event.preventDefault();
  const token = $("token").value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  $("token-form").hidden = true;
  clearError();
  describeIndex();
  if (!$("search").query.value.trim()) return;
  if (lastAsked) ask();
  else $("search").requestSubmit();
}

async function describeIndex() {
  try {
    const health = await api("api/health");
    $("index-info").textContent = health.chunks + " chunks, embedder " + health.embedder
      + (health.contexts ? "; " + health.contexts : "");
  } catch (err) {
    if (err.status === 401) showError(err);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  takeTokenFromAddress();
  $("search").addEventListener("submit", search);
  $("ask").addEventListener("click", ask);
  $("token-form").addEventListener("submit", useToken);
  window.addEventListener("popstate", restoreFromAddress);
  window.addEventListener("hashchange", () => { // a #token= link opened in a tab already showing the page
    if (takeTokenFromAddress()) {
      clearError();
      describeIndex();
    }
  });
  describeIndex();
  restoreFromAddress();
});
