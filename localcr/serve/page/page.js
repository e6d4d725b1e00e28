// The localcr search page: calls the JSON API of the server that served it and shows the hits.
// Document text is untrusted: it only ever reaches the page as text nodes (textContent, createTextNode),
// never through innerHTML, so a document holding <script> or <img onerror> shows those tags as text. A Markdown
// hit comes rendered by the server (markdown-it, its raw HTML escaped); that HTML is parsed inertly and rebuilt
// here from the elements Markdown makes alone, with no attribute but a link's web address.
"use strict";

const TOKEN_KEY = "localcr.token";
const $ = (id) => document.getElementById(id);
let latest = 0; // number of the newest search: answers to older ones are dropped

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

async function api(path, body) {
  const headers = { Accept: "application/json" };
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
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    // a few guards answer in plain text (a body over the size cap, a host name that is not loopback)
  }
  if (!response.ok) {
    const message = data && typeof data.error === "string" ? data.error : response.status + " " + response.statusText;
    throw new ApiError(response.status, message);
  }
  return data;
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
  const address = addressOf(body);
  if (address !== location.pathname + location.search) history.pushState(null, "", address);
  run(body);
}

async function run(body) {
  const mine = ++latest;
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
    (result.unmatched ? " (" + result.unmatched + ")" : "") + " in " + Math.round(result.took_ms) + " ms";
  $("hits").replaceChildren(...result.hits.map(hitItem));
}

function ranksTitle(ranks) {
  return Object.entries(ranks || {}).map(([name, rank]) => name + " rank " + rank).join(", ");
}

function hitItem(hit) {
  const head = element("div", "hit-head", element("span", "path", hit.path));
  if (hit.page != null) head.append(element("span", "page", "page " + hit.page));
  const score = element("span", "score", "score " + Number(hit.score).toFixed(3));
  score.title = ranksTitle(hit.ranks);
  head.append(score);

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
  if ($("search").query.value.trim()) $("search").requestSubmit();
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
