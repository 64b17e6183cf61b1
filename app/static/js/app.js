// The search page: one search state, kept in the URL; every control edits it and runs it.
import { ApiError, cleanToken, forgetToken, getJson, saveToken, savedToken, whoAmI } from "./api.js";
import { checkDate, quickRange } from "./dates.js";
import { $, setFieldError } from "./dom.js";
import { renderChips, renderOptions } from "./filters-ui.js";
import { FolderTree } from "./folder-tree.js";
import { ResultMap } from "./map.js";
import { parseQuery } from "./query-syntax.js";
import { clearResults, renderLegend, renderResults, renderStatus } from "./results.js";
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
};
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

function showApp(me) {
  $("token-box").hidden = true;
  $("app").hidden = false;
  $("who").hidden = false;
  $("who-text").textContent = `Signed in as ${me.sub} (${(me.scopes || []).join(", ")})`;
  fillForm();
  map.resize();
}

function signOut(message) {
  forgetToken();
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
  $("g-document").setAttribute("aria-pressed", String(s.granularity === "document"));
  $("g-chunk").setAttribute("aria-pressed", String(s.granularity === "chunk"));
  $("q-error").textContent = "";
  for (const [field, id] of Object.entries(DATE_FIELDS)) setFieldError($(id), $(id + "-error"), "");
  renderFilterControls();
}

function renderFilterControls() {
  const s = page.state;
  renderChips(s, removeChip);
  const f = page.facets || {};
  renderOptions("pick-doc_types", "doc_types", f.doc_type || null, s.doc_types, toggleValue);
  renderOptions("pick-categories", "categories", f.category || null, s.categories, toggleValue);
  renderOptions("pick-tags", "tags", f.tags || null, s.tags, toggleValue, $("filter-tags").value);
  renderOptions("pick-owners", "owners", f.owner || null, s.owners, toggleValue, $("filter-owners").value);
  const n = activeFilterCount(s);
  $("filters-toggle").textContent = n ? `Filters (${n})` : "Filters";
}

const urlOf = (state) => {
  const query = toUrlParams(state).toString();
  return location.pathname + (query ? "?" + query : "");
};

/** Apply an edit of the search: a new history entry, then the search itself. */
function commit({ keepPage = false } = {}) {
  if (!keepPage) page.state.offset = 0;
  const url = urlOf(page.state);
  if (url !== location.pathname + location.search) history.pushState(null, "", url);
  fillForm();
  runSearch();
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

/** Operators typed into the box become filters; returns false if one is wrong. */
function takeOperators(final) {
  const input = $("q");
  const parsed = parseQuery(input.value, { final });
  $("q-error").textContent = parsed.errors.join(" ");
  if (parsed.errors.length) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
  for (const { field, value } of parsed.filters) {
    if (field in DATE_FIELDS) page.state[field] = value;
    else if (!page.state[field].includes(value)) page.state[field].push(value);
  }
  if (parsed.filters.length) input.value = parsed.text;
  return { ok: parsed.errors.length === 0, changed: parsed.filters.length > 0, text: parsed.text };
}

/** Both date fields checked; a bad one shows its error and stops the search. */
function takeDates() {
  let ok = true;
  for (const [field, id] of Object.entries(DATE_FIELDS)) {
    const input = $(id);
    const problem = checkDate(input.value);
    setFieldError(input, $(id + "-error"), problem);
    if (problem) ok = false;
    else page.state[field] = input.value.trim();
  }
  return ok;
}

function submitSearch() {
  const operators = takeOperators(true);
  const dates = takeDates();
  if (!operators.ok || !dates) {
    setBusy(false);
    return; // nothing is sent: the errors stand next to their fields
  }
  page.state.query = operators.text.trim();
  commit();
}

/* ---------- running it ---------- */

function setBusy(busy) {
  $("search-btn").disabled = busy;
  document.querySelector(".results-panel").classList.toggle("busy", busy);
}

async function runSearch() {
  if (!page.token) { showTokenPrompt(); return; }
  if (page.controller) page.controller.abort();
  const controller = new AbortController();
  page.controller = controller;
  const seq = ++page.seq;
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
    }
  }
}

function showResults(data) {
  page.data = data;
  page.facets = data.facets || null;
  renderStatus(data, page.state);
  renderResults(data, { addFolder: (f) => toggleValue("path_prefixes", f, true), select: selectResult, token: page.token });
  renderLegend(data.results);
  map.setData(data);
  renderFilterControls();
}

/** An error replaces the results: nothing of an older search stays on screen. */
function showError(err) {
  page.data = null;
  clearResults();
  map.setData(null);
  if (err instanceof ApiError && err.status === 401) {
    signOut("Your token is no longer accepted: " + err.message);
    return;
  }
  const box = $("search-error");
  box.hidden = false;
  box.textContent = "";
  const place = err instanceof ApiError && ERROR_PLACES[err.field];
  if (place) {
    setFieldError($(place[0]), $(place[1]), err.message);
    box.append("The search was refused: " + err.message);
  } else if (err instanceof ApiError && err.field) {
    $("filters-error").textContent = `${err.field}: ${err.message}`;
    box.append(`The search was refused (${err.field}): ${err.message}`);
  } else {
    box.append(err.status === 403 ? "This token may not search: " + err.message : "The search failed: " + err.message);
  }
  $("status").textContent = "No results: the search did not run.";
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
    const typed = takeOperators(false);
    if (typed.changed) {
      page.state.query = typed.text.trim();
      commit();
      $("q").value = typed.text; // keep the space just typed: the user goes on typing
    }
  });
  for (const [field, id] of Object.entries(DATE_FIELDS)) {
    const input = $(id);
    const apply = () => {
      const problem = checkDate(input.value);
      setFieldError(input, $(id + "-error"), problem);
      if (problem || input.value.trim() === page.state[field]) return;
      page.state[field] = input.value.trim();
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
  for (const [id, field, parse] of [["f-algorithm", "algorithm", String], ["f-fusion", "fusion", String], ["f-limit", "limit", Number]]) {
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
  $("filters-toggle").addEventListener("click", () => {
    const open = $("filters").classList.toggle("open");
    $("filters-toggle").setAttribute("aria-expanded", String(open));
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
  const token = fragmentToken || savedToken();
  if (token) signIn(token, { fromPrompt: false });
  else showTokenPrompt();
}

start();
