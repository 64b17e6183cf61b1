// The search page: one search state, kept in the URL; every control edits it and runs it.
import { ApiError, cleanToken, forgetToken, getJson, saveToken, savedToken, whoAmI } from "./api.js";
import { checkDate, quickRange } from "./dates.js";
import { $, el, setFieldError } from "./dom.js";
import { renderChips, renderOptions } from "./filters-ui.js";
import { FolderTree } from "./folder-tree.js";
import { ResultMap } from "./map.js";
import { endsInOperator, parseQuery } from "./query-syntax.js";
import { clearResults, renderLegend, renderResults, renderStatus } from "./results.js";
import { followSyncState, stopSyncState } from "./sync-state.js";
import {
  activeFilterCount, emptyState, folderTreeParams, fromUrlParams, toApiParams, toUrlParams,
} from "./search-state.js";

const page = {
  token: "",
  state: emptyState(),
  data: null,
  facets: null,
  controller: null,
  seq: 0,
  typing: null, // the timer of search as you type
  lastKey: -Infinity, // when the box last changed
  typedEntry: false, // the history entry is the typing's own
  shownFacets: "", // the facets the pickers show, as JSON
  busyTimer: null,
};
// Search as you type: a keystroke after a pause searches at once; keystrokes closer together
// than this (a burst: a paste, a held key, fast typing while a search is in flight) wait until
// this long after the last of them. A search in flight is cancelled by the next one. A plain
// debounce would add its whole wait to every keystroke's time to results (bench.surfaces.page).
const TYPING_DELAY_MS = 40;
// The results dim only for a search slower than this, so fast ones never flicker.
const BUSY_DELAY_MS = 250;
// Other tabs of this page signed in share their token on request: a link copied into a new
// tab opens signed in, and the token still never leaves the browser's memory for the address.
const tabs = "BroadcastChannel" in window ? new BroadcastChannel("astrolabe-search-token") : null;
const TAB_ANSWER_MS = 300;
const DATE_FIELDS = { modified_after: "f-after", modified_before: "f-before" };
// Where the service's 400 for a field is shown.
const ERROR_PLACES = {
  query: ["q", "q-error"],
  modified_after: ["f-after", "f-after-error"],
  modified_before: ["f-before", "f-before-error"],
};

const map = new ResultMap($("map"), $("tooltip"), $("map-empty"), (i, opts) => selectResult(i, opts));
const tree = new FolderTree((folder, on) => toggleValue("path_prefixes", folder, on));

/* ---------- sign-in ---------- */

function showTokenPrompt(message) {
  $("app").hidden = true;
  $("who").hidden = true;
  $("token-box").hidden = false;
  $("token-error").textContent = message || "";
  $("token-input").value = "";
  $("token-input").focus();
}

async function signIn(raw, { fromPrompt }) {
  const token = cleanToken(raw);
  if (!token) { $("token-error").textContent = "Paste a token first."; return; }
  $("token-submit").disabled = true;
  try {
    const me = await whoAmI(token);
    if (!(me.scopes || []).includes("search")) {
      showTokenPrompt(`This token (user ${me.sub}) cannot search: its scopes are "${(me.scopes || []).join(" ") || "none"}".`);
      return;
    }
    page.token = token;
    saveToken(token);
    showApp(me);
    runSearch();
  } catch (err) {
    forgetToken();
    const why = err.status === 401 ? "This token was not accepted: " + err.message : err.message;
    showTokenPrompt(fromPrompt ? why : "Please sign in again. " + why);
  } finally {
    $("token-submit").disabled = false;
  }
}

function shareToken() {
  if (!tabs) return;
  tabs.onmessage = (event) => {
    if (event.data && event.data.ask && page.token) tabs.postMessage({ token: page.token });
  };
}

/** The token of another open tab of this page, or "" after a short wait. */
function tokenFromOtherTabs() {
  if (!tabs) return Promise.resolve("");
  return new Promise((resolve) => {
    const done = (token) => { tabs.removeEventListener("message", listen); resolve(token); };
    const listen = (event) => { if (event.data && event.data.token) done(event.data.token); };
    tabs.addEventListener("message", listen);
    tabs.postMessage({ ask: true });
    setTimeout(() => done(""), TAB_ANSWER_MS);
  });
}

function showApp(me) {
  $("token-box").hidden = true;
  $("app").hidden = false;
  $("who").hidden = false;
  $("who-text").textContent = `Signed in as ${me.sub} (${(me.scopes || []).join(", ")})`;
  followSyncState(page.token, me.sub, $("sync-state"));
  fillForm();
  map.resize();
}

function signOut(message) {
  forgetToken();
  stopSyncState();
  $("sync-state").hidden = true;
  page.token = "";
  if (page.controller) page.controller.abort();
  showTokenPrompt(message);
}

/* ---------- state <-> form and URL ---------- */

function fillForm() {
  const s = page.state;
  $("q").value = s.query;
  $("f-after").value = s.modified_after;
  $("f-before").value = s.modified_before;
  $("f-algorithm").value = s.algorithm;
  $("f-fusion").value = s.fusion;
  $("f-limit").value = String(s.limit);
  $("f-sort").value = !s.query && s.sort === "relevance" ? "newest" : s.sort;
  $("f-sort").querySelector('option[value="relevance"]').disabled = !s.query;
  $("g-document").setAttribute("aria-pressed", String(s.granularity === "document"));
  $("g-chunk").setAttribute("aria-pressed", String(s.granularity === "chunk"));
  $("q-error").textContent = "";
  for (const [field, id] of Object.entries(DATE_FIELDS)) setFieldError($(id), $(id + "-error"), "");
  renderFilterControls();
}

function renderFilterControls() {
  const s = page.state;
  shownFilters = folderTreeParams(s).toString() + s.path_prefixes.join("\n");
  renderChips(s, removeChip);
  const f = page.facets || {};
  renderOptions("pick-doc_types", "doc_types", f.doc_type || null, s.doc_types, toggleValue);
  renderOptions("pick-categories", "categories", f.category || null, s.categories, toggleValue);
  renderOptions("pick-tags", "tags", f.tags || null, s.tags, toggleValue, $("filter-tags").value);
  renderOptions("pick-owners", "owners", f.owner || null, s.owners, toggleValue, $("filter-owners").value);
  const n = activeFilterCount(s);
  $("filters-toggle").textContent = n ? `Filters (${n})` : "Filters";
  $("clear-all").hidden = n === 0;
}

const urlOf = (state) => {
  const query = toUrlParams(state).toString();
  return location.pathname + (query ? "?" + query : "");
};

/** Apply an edit of the search: a new history entry (typing replaces its own), then the
 * search itself. */
function commit({ keepPage = false, typing = false } = {}) {
  if (!keepPage) page.state.offset = 0;
  const url = urlOf(page.state);
  // Typing makes one history entry (its first search), then keeps it current: Back goes to
  // the search before the typing, not to each word typed.
  if (url !== location.pathname + location.search) {
    if (typing && page.typedEntry) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
  }
  page.typedEntry = typing;
  if (!typing) fillForm(); // typing: the box is the user's, the rest changes with its chips
  else if (filtersChanged()) renderFilterControls();
  runSearch();
}

/** Whether the filters differ from those the pickers show (a typed operator added one). */
let shownFilters = "";
function filtersChanged() {
  return folderTreeParams(page.state).toString() + page.state.path_prefixes.join("\n") !== shownFilters;
}

/* ---------- editing the search ---------- */

function toggleValue(field, value, on) {
  const list = page.state[field];
  const at = list.indexOf(value);
  if (on && at < 0) list.push(value);
  if (!on && at >= 0) list.splice(at, 1);
  commit();
}

/** The chip's place keeps the focus (see rerender): the next chip, else the search box. */
function removeChip(field, value) {
  if (field in DATE_FIELDS) page.state[field] = "";
  else page.state[field] = page.state[field].filter((v) => v !== value);
  commit();
}

/**
 * The box and the pickers are one state: the operators the box holds become filters (chips, and
 * the date fields), its remaining text the query. Returns false, with the message next to the
 * box, when it holds something it cannot parse. While typing (`final` false), an operator counts
 * once a space follows it.
 */
function readBox(final) {
  const input = $("q");
  const parsed = parseQuery(input.value, { final });
  setFieldError(input, $("q-error"), parsed.errors.join(" "));
  if (parsed.errors.length) return false;
  for (const { field, value } of parsed.filters) {
    if (field in DATE_FIELDS) {
      page.state[field] = value;
      $(DATE_FIELDS[field]).value = value;
    } else if (!page.state[field].includes(value)) {
      page.state[field].push(value);
    }
  }
  if (parsed.filters.length) input.value = parsed.text;
  page.state.query = parsed.text.trim();
  return true;
}

/** The date fields into the search; false (each error beside its field) if one is wrong. */
function readDates() {
  let ok = true;
  for (const [field, id] of Object.entries(DATE_FIELDS)) {
    const input = $(id);
    const problem = checkDate(input.value);
    setFieldError(input, $(id + "-error"), problem);
    if (problem) ok = false;
    else page.state[field] = input.value.trim();
  }
  return ok && checkRange();
}

/** The dates of the search (from the URL too) are days the page can send. */
function datesOfStateOk() {
  let ok = true;
  for (const [field, id] of Object.entries(DATE_FIELDS)) {
    const problem = checkDate(page.state[field]);
    if (problem) { setFieldError($(id), $(id + "-error"), problem); ok = false; }
  }
  return ok;
}

/** After later than Before: said beside Before, in the page's words. */
function checkRange() {
  const { modified_after: after, modified_before: before } = page.state;
  const reversed = after && before && after > before;
  const message = reversed
    ? `"Before" (${before}) is earlier than "After" (${after}): swap them or clear one.`
    : "";
  setFieldError($("f-before"), $("f-before-error"), message);
  return !reversed;
}

/** What cannot be searched stops here: nothing is sent, and older results are cleared (they
 * would answer a different search). */
function refuse() {
  page.seq += 1;
  if (page.controller) page.controller.abort();
  page.controller = null;
  setBusy(false);
  page.data = null;
  clearResults();
  map.setData(null);
  $("search-error").hidden = true;
  $("status").textContent = "Nothing was searched: correct the highlighted field.";
  $("app").dataset.refused = String(page.seq); // tests wait on this
}

function submitSearch() {
  clearTimeout(page.typing);
  const boxOk = readBox(true);
  const datesOk = readDates();
  if (!boxOk || !datesOk) {
    refuse();
    return;
  }
  commit();
}

/** Search as you type: the debounced keystrokes run the search, unless an operator is still
 * being typed (`type:fi`) or the box cannot be parsed. */
function searchAsTyped() {
  const input = $("q");
  if (endsInOperator(input.value)) return;
  if (!readBox(false)) {
    refuse();
    return;
  }
  if (!checkRange()) return;
  commit({ typing: true });
}

/* ---------- running it ---------- */

function setBusy(busy) {
  clearTimeout(page.busyTimer);
  const panel = document.querySelector(".results-panel");
  if (!busy) panel.classList.remove("busy");
  else page.busyTimer = setTimeout(() => panel.classList.add("busy"), BUSY_DELAY_MS);
}

async function runSearch() {
  if (!page.token) { showTokenPrompt(); return; }
  if (!checkRange() || !datesOfStateOk()) { refuse(); return; }
  if (page.controller) page.controller.abort();
  const controller = new AbortController();
  page.controller = controller;
  const seq = ++page.seq;
  $("app").dataset.idle = "false";
  setBusy(true);
  $("search-error").hidden = true;
  $("filters-error").textContent = "";
  for (const [, [input, box]] of Object.entries(ERROR_PLACES)) {
    if (input !== "q") setFieldError($(input), $(box), "");
  }
  tree.refresh(page.token, folderTreeParams(page.state).toString(), page.state.path_prefixes);
  try {
    const data = await getJson("/viz/search?" + toApiParams(page.state), page.token, controller.signal);
    if (seq !== page.seq) return;
    showResults(data);
  } catch (err) {
    if (err.name === "AbortError" || seq !== page.seq) return;
    showError(err);
  } finally {
    if (seq === page.seq) {
      page.controller = null;
      setBusy(false);
      $("app").dataset.rendered = String(seq); // tests and the timing wait on this
      $("app").dataset.idle = "true";
    }
  }
}

function showResults(data) {
  page.data = data;
  page.facets = data.facets || null;
  const n = data.total_found ?? 0;
  $("filters-show").textContent = `Show ${n.toLocaleString()} result${n === 1 ? "" : "s"}`;
  // Facets count what the filters allow, whatever the query: unchanged while typing.
  const facets = JSON.stringify(data.facets || null);
  const samePickers = facets === page.shownFacets && !filtersChanged();
  page.shownFacets = facets;
  renderStatus(data, page.state, { setMatches });
  renderResults(data, page.state, {
    addFolder: (f) => toggleValue("path_prefixes", f, true),
    select: selectResult,
    token: page.token,
    dropFilters,
    wordsOnly: () => { page.state.algorithm = "bm25"; commit(); },
    setMatches,
  });
  renderLegend(data.results);
  map.setData(data);
  if (!samePickers) renderFilterControls();
}

function setMatches(matches) {
  page.state.matches = matches;
  commit();
}

function dropFilters() {
  const query = page.state.query;
  const kept = { algorithm: page.state.algorithm, fusion: page.state.fusion, granularity: page.state.granularity,
    sort: page.state.sort, limit: page.state.limit };
  page.state = { ...emptyState(), ...kept, query };
  commit();
}

/** The page's names for the API's fields, in a message of the service. */
const inPageWords = (message) =>
  message.replace(/modified_after/g, '"After"').replace(/modified_before/g, '"Before"');

/** An error replaces the results: nothing of an older search stays on screen, and what the
 * page showed from the service (counts, folders) is marked as not current. */
function showError(err) {
  page.data = null;
  clearResults();
  map.setData(null);
  const unreachable = !(err instanceof ApiError) || err.status === 0 || err.status >= 500;
  if (unreachable) {
    page.facets = null;
    page.shownFacets = "";
    renderFilterControls();
    tree.unavailable();
  }
  if (err instanceof ApiError && err.status === 401) {
    signOut("Your token is no longer accepted: " + err.message);
    return;
  }
  const box = $("search-error");
  box.hidden = false;
  box.textContent = "";
  const message = inPageWords(err.message);
  const place = err instanceof ApiError && ERROR_PLACES[err.field];
  if (place) {
    setFieldError($(place[0]), $(place[1]), message);
    box.append("The search was refused: " + message);
  } else if (err instanceof ApiError && err.field) {
    $("filters-error").textContent = `${err.field}: ${message}`;
    box.append(`The search was refused (${err.field}): ${message}`);
  } else {
    box.append(err.status === 403 ? "This token may not search: " + message : "The search failed: " + message);
  }
  if (unreachable) {
    box.append(" ", el("button", { type: "button", id: "retry", class: "secondary small", text: "Retry", onclick: retry }));
  }
  $("status").textContent = "No results: the search did not run.";
}

function retry() {
  tree.forget();
  runSearch();
}

function selectResult(index, { focus = true } = {}) {
  document.querySelectorAll("#results .result.selected").forEach((n) => n.classList.remove("selected"));
  const item = $(`result-${index}`);
  if (!item) return;
  item.classList.add("selected");
  map.select(index);
  item.scrollIntoView({ block: "nearest", behavior: "smooth" });
  if (focus) {
    item.tabIndex = -1;
    item.focus({ preventScroll: true });
  }
}

/* ---------- wiring ---------- */

function wire() {
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    signIn($("token-input").value, { fromPrompt: true });
  });
  // A pasted token is checked at once (Enter or the button work too).
  $("token-input").addEventListener("paste", () =>
    setTimeout(() => signIn($("token-input").value, { fromPrompt: true }), 0)
  );
  $("sign-out").addEventListener("click", () => signOut());
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest("input, select, textarea");
    if (e.key === "/" && !typing && !$("app").hidden) { e.preventDefault(); $("q").focus(); }
  });
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); submitSearch(); });
  $("q").addEventListener("input", () => {
    clearTimeout(page.typing);
    const now = performance.now();
    const paused = !page.controller && now - page.lastKey > TYPING_DELAY_MS;
    page.lastKey = now;
    if (paused) searchAsTyped();
    else page.typing = setTimeout(searchAsTyped, TYPING_DELAY_MS);
  });
  for (const [field, id] of Object.entries(DATE_FIELDS)) {
    const input = $(id);
    const apply = () => {
      const problem = checkDate(input.value);
      setFieldError(input, $(id + "-error"), problem);
      if (problem) { refuse(); return; }
      if (input.value.trim() === page.state[field]) return;
      page.state[field] = input.value.trim();
      if (!checkRange()) { refuse(); return; }
      commit();
    };
    input.addEventListener("change", apply);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); apply(); } });
  }
  document.querySelectorAll("[data-range]").forEach((button) =>
    button.addEventListener("click", () => {
      [page.state.modified_after] = quickRange(button.dataset.range);
      page.state.modified_before = "";
      commit();
    })
  );
  for (const [id, field, parse] of [["f-algorithm", "algorithm", String], ["f-fusion", "fusion", String], ["f-limit", "limit", Number], ["f-sort", "sort", String]]) {
    $(id).addEventListener("change", (e) => { page.state[field] = parse(e.target.value); commit(); });
  }
  for (const g of ["document", "chunk"]) {
    $("g-" + g).addEventListener("click", () => {
      if (page.state.granularity === g) return;
      page.state.granularity = g;
      commit();
    });
  }
  $("prev").addEventListener("click", () => turnPage(-1));
  $("next").addEventListener("click", () => turnPage(1));
  $("clear-all").addEventListener("click", () => {
    page.state = emptyState();
    page.data = null;
    clearResults();
    map.setData(null);
    commit();
    $("q").focus();
  });
  $("filter-tags").addEventListener("input", renderFilterControls);
  $("filter-owners").addEventListener("input", renderFilterControls);
  $("filters-toggle").addEventListener("click", () => openFilters(!$("filters").classList.contains("open")));
  $("filters-close").addEventListener("click", () => openFilters(false));
  $("filters-show").addEventListener("click", () => {
    openFilters(false);
    $("results-title").scrollIntoView({ block: "start" });
  });
  $("sheet-backdrop").addEventListener("click", () => openFilters(false));
  $("filters").addEventListener("keydown", (e) => { if (e.key === "Escape") openFilters(false); });
  window.addEventListener("hashchange", () => {
    const token = tokenFromFragment();
    if (token) signIn(token, { fromPrompt: true });
  });
  $("view-2d").addEventListener("click", () => setMapMode("2d"));
  $("view-3d").addEventListener("click", () => setMapMode("3d"));
  window.addEventListener("resize", () => map.resize());
  window.addEventListener("popstate", () => {
    page.state = fromUrlParams(new URLSearchParams(location.search));
    fillForm();
    runSearch();
  });
}

/** The filters: a column beside the results, on a phone a sheet over them. */
function openFilters(open) {
  $("filters").classList.toggle("open", open);
  $("sheet-backdrop").hidden = !open;
  document.body.classList.toggle("sheet-open", open);
  $("filters-toggle").setAttribute("aria-expanded", String(open));
  if (open) $("filters-close").focus();
  else if ($("filters").contains(document.activeElement)) $("filters-toggle").focus();
}

function turnPage(step) {
  const s = page.state;
  s.offset = Math.max(0, s.offset + step * s.limit);
  commit({ keepPage: true });
  $("results-title").scrollIntoView({ block: "start" });
}

function setMapMode(mode) {
  $("view-2d").setAttribute("aria-pressed", String(mode === "2d"));
  $("view-3d").setAttribute("aria-pressed", String(mode === "3d"));
  map.setMode(mode);
}

/** A token in the fragment (`serve --dev` prints such a link) is taken and wiped at once. */
function tokenFromFragment() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (!match) return "";
  history.replaceState(null, "", location.pathname + location.search);
  return decodeURIComponent(match[1]);
}

function start() {
  const fragmentToken = tokenFromFragment();
  page.state = fromUrlParams(new URLSearchParams(location.search));
  history.replaceState(null, "", urlOf(page.state));
  wire();
  shareToken();
  const token = fragmentToken || savedToken();
  if (token) signIn(token, { fromPrompt: false });
  else tokenFromOtherTabs().then((shared) => (shared ? signIn(shared, { fromPrompt: false }) : showTokenPrompt()));
}

start();
