// The result list: title with a type badge, folder path whose parts add a folder filter, dates
// relative and absolute, the chunk's best ~40 words with the query marked, and its context.
import { getJson } from "./api.js";
import { absoluteTime, relativeTime } from "./dates.js";
import { $, el, marked } from "./dom.js";
import { bestExcerpt, markTerms } from "./excerpt.js";
import { colorFor } from "./palette.js";

const CONTEXT_CHARS = 500;

/** "123 documents" / "1 chunk" / "at least 40 chunks" / "newest first". */
export function totalLabel(data) {
  const unit = data.granularity === "document" ? "document" : "chunk";
  const n = data.total_found ?? 0;
  const label = `${n.toLocaleString()} ${unit}${n === 1 ? "" : "s"}`;
  // bm25 counts what the engine returned: a lower bound (see the API's total_found).
  const lowerBound = data.algorithm === "bm25" && data.query && data.results.length > 0;
  return lowerBound ? `at least ${label}` : label;
}

export function renderStatus(data, state) {
  const status = $("status");
  status.textContent = "";
  const pages = Math.max(1, Math.ceil((data.total_found || 0) / state.limit));
  const page = Math.floor(state.offset / state.limit) + 1;
  status.append(el("strong", { text: totalLabel(data) }));
  const parts = [];
  if (!data.query) parts.push("newest first");
  else parts.push(`${data.algorithm}${data.algorithm === "hybrid" ? "/" + data.fusion : ""}`);
  if (pages > 1) parts.push(`page ${page} of ${pages.toLocaleString()}`);
  if (data.timing_ms) parts.push(`${data.timing_ms.total.toFixed(0)} ms`);
  if (data.dropped_document_count) parts.push(`${data.dropped_document_count} hidden by the source system`);
  status.append(" · " + parts.join(" · "));
  renderPager(page, pages, state);
}

function renderPager(page, pages, state) {
  $("pager").hidden = pages <= 1 && state.offset === 0;
  $("prev").disabled = state.offset === 0;
  $("next").disabled = page >= pages || state.offset + state.limit > 10_000;
  $("page-info").textContent = `Page ${page} of ${pages.toLocaleString()}`;
}

/** `actions`: {addFolder(path), select(index), token} */
export function renderResults(data, actions) {
  const list = $("results");
  list.textContent = "";
  if (!data.results.length) {
    list.append(el("li", { class: "empty", text: "Nothing matches. Remove a filter or try other words." }));
    return;
  }
  data.results.forEach((r, i) => list.append(resultItem(r, i, data, actions)));
}

function resultItem(r, i, data, actions) {
  const excerpt = bestExcerpt(r.excerpt || "", data.query || "");
  const li = el(
    "li",
    {
      class: "result",
      "data-index": i,
      "data-doc": `${r.doc_type}:${r.doc_id}`,
      id: `result-${i}`,
      onclick: () => actions.select(i),
    },
    el(
      "h3",
      { class: "r-title" },
      el("span", { class: "badge", style: { background: colorFor(r.doc_type) }, text: r.doc_type }),
      el("span", { class: "title", text: r.title || "(untitled)" })
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

function meta(r, data, actions) {
  const box = el("div", { class: "meta" });
  if (r.file_path) box.append(crumbs(r.file_path, actions.addFolder));
  box.append(
    el("time", { datetime: r.modified_at, title: absoluteTime(r.modified_at) },
      `${relativeTime(r.modified_at)} (${absoluteTime(r.modified_at)})`)
  );
  if (r.owner) box.append(el("span", { text: "by " + r.owner }));
  if (r.tags && r.tags.length) box.append(el("span", { text: r.tags.map((t) => "#" + t).join(" ") }));
  if (data.granularity === "chunk" && r.total_chunks > 1) {
    box.append(el("span", { text: `part ${r.chunk_index + 1} of ${r.total_chunks}` }));
  }
  if (data.query && r.relevance != null) box.append(relevanceBadge(r));
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
    if (shown) {
      shown.remove();
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
          el("span", { class: "around" }, ctx.has_more_before ? "… " : "", ctx.before_context),
          el("span", { class: "chunk" }, marked(markTerms(ctx.chunk_text, query))),
          el("span", { class: "around" }, ctx.after_context, ctx.has_more_after ? " …" : "")
        )
      );
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
