// The result list: title with a type badge, folder path whose parts add a folder filter, dates
// relative and absolute, the chunk's best ~40 words with the query marked, and its context.
import { getJson } from "./api.js";
import { absoluteTime, relativeTime } from "./dates.js";
import { $, el, marked } from "./dom.js";
import { activeFilterCount } from "./search-state.js";
import { bestExcerpt, markTerms } from "./excerpt.js";
import { colorFor } from "./palette.js";

// The text around a chunk: enough to read it in its place (the excerpt is hidden meanwhile,
// the context holds it).
const CONTEXT_CHARS = 1500;

const plural = (n, unit) => `${n.toLocaleString()} ${unit}${n === 1 ? "" : "s"}`;
const strongLabel = (n) => `${n.toLocaleString()} strong match${n === 1 ? "" : "es"}`;

/** How many documents the filters allow: every document has one type, and the type facet
 * counts them under every other filter (so only the chosen types add up). */
export function allowedCount(data) {
  const byType = data.facets && data.facets.doc_type;
  if (!byType) return null;
  const chosen = data.filters && data.filters.doc_types && data.filters.doc_types.length ? data.filters.doc_types : null;
  return Object.entries(byType)
    .filter(([type]) => !chosen || chosen.includes(type))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** "123 documents" / "1 chunk" / "at least 40 chunks". */
export function totalLabel(data) {
  const unit = data.granularity === "document" ? "document" : "chunk";
  const label = plural(data.total_found ?? 0, unit);
  // bm25 counts what the engine returned: a lower bound (see the API's total_found).
  const lowerBound = data.algorithm === "bm25" && data.query && data.results.length > 0;
  return lowerBound ? `at least ${label}` : label;
}

const SORTS = { newest: "newest first", oldest: "oldest first" };

/**
 * What the numbers mean: browsing counts what the filters allow; a query counts its strong
 * matches (by default only they are listed) against what the filters allow.
 * `actions.setMatches("all" | "strong")` switches between the two.
 */
export function renderStatus(data, state, actions) {
  const status = $("status");
  status.textContent = "";
  const pages = Math.max(1, Math.ceil((data.total_found || 0) / state.limit));
  const page = Math.floor(state.offset / state.limit) + 1;
  const parts = [];
  if (!data.query) {
    status.append(el("strong", { text: totalLabel(data) }));
    parts.push(SORTS[data.sort] || "newest first");
  } else {
    const strong = data.strong_found ?? 0;
    const allowed = allowedCount(data);
    const ofAllowed = allowed === null ? "" : ` of ${plural(allowed, "document")} the filters allow`;
    if (state.matches === "strong") {
      status.append(el("strong", { text: strongLabel(strong) }), ofAllowed);
      if (allowed) parts.push(switchButton(`Show all ${allowed.toLocaleString()}`, () => actions.setMatches("all")));
    } else {
      status.append(el("strong", { text: totalLabel(data) }), " the filters allow, ranked");
      parts.push(strongLabel(strong));
      parts.push(switchButton("Show only the strong matches", () => actions.setMatches("strong")));
    }
    parts.push(SORTS[data.sort] || `${data.algorithm}${data.algorithm === "hybrid" ? "/" + data.fusion : ""}`);
  }
  if (pages > 1) parts.push(`page ${page} of ${pages.toLocaleString()}`);
  if (data.timing_ms) parts.push(`${data.timing_ms.total.toFixed(0)} ms`);
  if (data.dropped_document_count) parts.push(`${data.dropped_document_count} hidden by the source system`);
  for (const part of parts) status.append(" · ", part);
  renderPager(page, pages, state);
}

function renderPager(page, pages, state) {
  $("pager").hidden = pages <= 1 && state.offset === 0;
  $("prev").disabled = state.offset === 0;
  $("next").disabled = page >= pages || state.offset + state.limit > 10_000;
  $("page-info").textContent = `Page ${page} of ${pages.toLocaleString()}`;
}

const switchButton = (text, onclick) => el("button", { type: "button", class: "link-button", text, onclick });

/** `actions`: {addFolder(path), select(index), token, dropFilters(), wordsOnly(), setMatches(m)} */
export function renderResults(data, state, actions) {
  const list = $("results");
  list.textContent = "";
  if (!data.results.length) {
    list.append(emptyState(data, state, actions));
    return;
  }
  data.results.forEach((r, i) => list.append(resultItem(r, i, data, actions)));
}

/** Nothing (or nothing strong) found: say which, and offer the ways out that apply. */
function emptyState(data, state, actions) {
  const filtered = activeFilterCount(state) > 0;
  const offers = [];
  if (filtered) offers.push(offer("Drop the filters", actions.dropFilters));
  if (data.query && data.algorithm !== "bm25") offers.push(offer("Search the words only", actions.wordsOnly));
  const allowed = allowedCount(data);
  if (data.query && state.matches === "strong" && allowed) {
    offers.push(offer(`Show the ${plural(allowed, "closest document")} anyway`, () => actions.setMatches("all")));
  }
  const said = data.query
    ? [`Nothing matched `, el("q", { text: data.query }), " well", filtered ? " under these filters." : "."]
    : ["No document matches these filters."];
  return el("li", { class: "empty" }, el("p", {}, ...said), offers.length ? el("p", { class: "offers" }, ...offers) : null);
}

const offer = (text, onclick) => el("button", { type: "button", class: "secondary small", text, onclick });

function resultItem(r, i, data, actions) {
  const excerpt = bestExcerpt(r.excerpt || "", data.query || "");
  const li = el(
    "li",
    {
      class: "result" + (r.strong === false ? " weak" : ""),
      "data-index": i,
      "data-doc": `${r.doc_type}:${r.doc_id}`,
      id: `result-${i}`,
      onclick: () => actions.select(i),
    },
    el(
      "h3",
      { class: "r-title" },
      el("span", { class: "badge", style: { background: colorFor(r.doc_type) }, text: r.doc_type }),
      titleOf(r, data.query || "")
    ),
    meta(r, data, actions),
    r.excerpt
      ? el("p", { class: "excerpt" }, excerpt.cutBefore ? "… " : "", marked(excerpt.parts), excerpt.cutAfter ? " …" : "")
      : null
  );
  if (Number.isInteger(r.chunk_start_offset) && Number.isInteger(r.chunk_end_offset)) {
    li.append(contextControl(r, data.query || "", actions.token));
  }
  return li;
}

/** The title, a link to the document (new tab) when it has an http(s) URL: never another scheme. */
function titleOf(r, query) {
  const text = marked(markTerms(r.title || "(untitled)", query));
  if (!isWebLink(r.url)) return el("span", { class: "title" }, text);
  return el(
    "a",
    {
      class: "title",
      href: r.url,
      target: "_blank",
      rel: "noopener noreferrer",
      onclick: (event) => event.stopPropagation(), // opens the document, not the result's detail
    },
    text
  );
}

export function isWebLink(url) {
  if (typeof url !== "string") return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:";
  } catch {
    return false;
  }
}

/** "page 3 of 12", "pages 3–4 of 12", "slide 2 of 9": where a chunk of a paged file lies. */
function pageLabel(r) {
  if (!Number.isInteger(r.page_number)) return null;
  const end = Number.isInteger(r.page_end) && r.page_end > r.page_number ? `–${r.page_end}` : "";
  const unit = end ? "pages" : "page";
  const of = Number.isInteger(r.page_count) ? ` of ${r.page_count}` : "";
  return `${unit} ${r.page_number}${end}${of}`;
}

function meta(r, data, actions) {
  const box = el("div", { class: "meta" });
  if (r.file_path) box.append(crumbs(r.file_path, actions.addFolder));
  box.append(
    el("time", { datetime: r.modified_at, title: absoluteTime(r.modified_at) },
      `${relativeTime(r.modified_at)} (${absoluteTime(r.modified_at)})`)
  );
  if (r.owner) box.append(el("span", { text: "by " + r.owner }));
  const page = pageLabel(r);
  if (page) box.append(el("span", { class: "page", text: page }));
  if (r.tags && r.tags.length) box.append(el("span", { text: r.tags.map((t) => "#" + t).join(" ") }));
  if (data.granularity === "chunk" && r.total_chunks > 1) {
    box.append(el("span", { text: `part ${r.chunk_index + 1} of ${r.total_chunks}` }));
  }
  if (data.query && r.relevance != null) box.append(relevanceBadge(r));
  if (r.strong === false) box.append(el("span", { class: "weak-note", text: "weak match" }));
  return box;
}

const RELEVANCE_SOURCES = {
  cosine: "cosine similarity to the query",
  bm25_normalised: "keyword score over the best one of this search",
  fusion_normalised: "fused rank or score over the best possible (1: first in every ranking)",
  rerank: "the reranker's score",
};

/** The result's relevance as a percentage, its meaning and the raw score in the tooltip. */
function relevanceBadge(r) {
  const how = RELEVANCE_SOURCES[r.relevance_source] || r.relevance_source;
  return el("span", {
    class: "relevance",
    title: `relevance ${r.relevance.toFixed(3)}: ${how} (score ${r.score.toFixed(4)})`,
    text: `relevance ${Math.round(r.relevance * 100)} %`,
  });
}

/** `/Projects/Reports/q3.md` -> "Projects › Reports › q3.md", each folder a button adding it. */
function crumbs(path, addFolder) {
  const parts = path.split("/").filter(Boolean);
  const box = el("span", { class: "crumbs", "aria-label": "Folder" });
  parts.forEach((name, i) => {
    if (i > 0) box.append(el("span", { class: "sep", "aria-hidden": "true", text: "›" }));
    if (i === parts.length - 1) {
      box.append(el("span", { class: "file", text: name }));
      return;
    }
    const folder = "/" + parts.slice(0, i + 1).join("/");
    box.append(
      el("button", {
        type: "button",
        "data-folder": folder,
        title: `Only results in ${folder}`,
        text: name,
        onclick: (e) => { e.stopPropagation(); addFolder(folder); },
      })
    );
  });
  return box;
}

function contextControl(r, query, token) {
  const box = el("div", { class: "more" });
  const button = el("button", {
    type: "button",
    class: "secondary small",
    "aria-expanded": "false",
    text: "Show context",
  });
  button.addEventListener("click", async (e) => {
    e.stopPropagation();
    const shown = box.querySelector(".context, .field-error");
    const excerpt = box.parentElement && box.parentElement.querySelector(".excerpt");
    if (shown) {
      shown.remove();
      if (excerpt) excerpt.hidden = false;
      button.textContent = "Show context";
      button.setAttribute("aria-expanded", "false");
      return;
    }
    button.disabled = true;
    try {
      const params = new URLSearchParams({
        doc_type: r.doc_type, doc_id: r.doc_id, start: r.chunk_start_offset,
        end: r.chunk_end_offset, context: CONTEXT_CHARS,
      });
      const ctx = await getJson("/api/v1/chunk-context?" + params, token);
      box.append(
        el(
          "div",
          { class: "context", tabindex: "-1" },
          el("span", { class: "around" }, ctx.has_more_before ? "… " : "", marked(markTerms(ctx.before_context, query))),
          el("span", { class: "chunk" }, marked(markTerms(ctx.chunk_text, query))),
          el("span", { class: "around" }, marked(markTerms(ctx.after_context, query)), ctx.has_more_after ? " …" : "")
        )
      );
      if (excerpt) excerpt.hidden = true;
      button.textContent = "Hide context";
      button.setAttribute("aria-expanded", "true");
    } catch (err) {
      box.append(el("p", { class: "field-error", text: "Context could not be loaded: " + err.message }));
    } finally {
      button.disabled = false;
    }
  });
  box.prepend(button);
  return box;
}

export function renderLegend(results) {
  const legend = $("legend");
  legend.textContent = "";
  const types = [...new Set(results.map((r) => r.doc_type))];
  for (const t of types) legend.append(el("li", { style: { "--c": colorFor(t) }, text: t }));
  if (types.length) legend.append(el("li", { class: "query", text: "query" }));
}

export function clearResults() {
  $("results").textContent = "";
  $("status").textContent = "";
  $("legend").textContent = "";
  $("pager").hidden = true;
}
