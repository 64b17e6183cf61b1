// The page's search as one plain object, and its two encodings: the page URL (what Back, reload
// and a shared link restore) and the /viz/search query string. Both use the API's parameter names
// and separators, so a page URL reads like the API call it makes.

export const LIST_FIELDS = ["doc_types", "categories", "tags", "tags_all", "owners", "path_prefixes"];
// doc types and categories are comma-separated; the others may hold commas (a folder, a tag), so
// they are newline-separated, as /viz/search takes them.
const COMMA_FIELDS = new Set(["doc_types", "categories"]);
export const CHOICES = {
  algorithm: ["hybrid", "semantic", "bm25"],
  fusion: ["rrf", "dbsf"],
  granularity: ["document", "chunk"],
  // "relevance" with a query, newest when browsing (the API's own defaults).
  sort: ["relevance", "newest", "oldest"],
  // strong: only what matches the query well (the API's strong_only); all: everything the
  // filters allow, ranked.
  matches: ["strong", "all"],
};
export const PAGE_SIZES = [10, 20, 50];
const DEFAULTS = {
  algorithm: "hybrid", fusion: "rrf", granularity: "document", sort: "relevance", matches: "strong",
  limit: 20, offset: 0,
};

export function emptyState() {
  const state = { query: "", modified_after: "", modified_before: "", ...DEFAULTS };
  for (const field of LIST_FIELDS) state[field] = [];
  return state;
}

const separator = (field) => (COMMA_FIELDS.has(field) ? "," : "\n");

function splitList(field, raw) {
  const seen = [];
  for (const part of raw.split(separator(field))) {
    const value = part.trim();
    if (value && !seen.includes(value)) seen.push(value);
  }
  return seen;
}

/** Every parameter, for /viz/search (granularity always: the API's default differs). */
export function toApiParams(state) {
  const params = new URLSearchParams();
  writeCommon(params, state, true);
  params.delete("matches");
  if (state.query && state.matches === "strong") params.set("strong_only", "true");
  endOfDay(params);
  params.set("include_facets", "true");
  return params;
}

/** The filters the folder tree counts under: all but the folders themselves. */
export function folderTreeParams(state) {
  const params = new URLSearchParams();
  for (const field of LIST_FIELDS) {
    if (field !== "path_prefixes" && state[field].length) {
      params.set(field, state[field].join(separator(field)));
    }
  }
  if (state.modified_after) params.set("modified_after", state.modified_after);
  if (state.modified_before) params.set("modified_before", state.modified_before);
  endOfDay(params);
  return params;
}

// "before 2025-06-30" means up to the end of that day (a date alone is midnight UTC to the API).
function endOfDay(params) {
  const before = params.get("modified_before");
  if (before && /^\d{4}-\d{2}-\d{2}$/.test(before)) params.set("modified_before", before + "T23:59:59Z");
}

/** Only what differs from the page's defaults, for the address bar. */
export function toUrlParams(state) {
  const params = new URLSearchParams();
  writeCommon(params, state, false);
  return params;
}

function writeCommon(params, state, everything) {
  if (state.query) params.set("query", state.query);
  for (const field of LIST_FIELDS) {
    if (state[field].length) params.set(field, state[field].join(separator(field)));
  }
  for (const field of ["modified_after", "modified_before"]) {
    if (state[field]) params.set(field, state[field]);
  }
  for (const field of ["algorithm", "fusion", "granularity", "sort", "matches", "limit", "offset"]) {
    if (everything || state[field] !== DEFAULTS[field]) params.set(field, String(state[field]));
  }
}

/** The search a URL describes; unknown or malformed values fall back to the defaults. */
export function fromUrlParams(params) {
  const state = emptyState();
  state.query = params.get("query") || "";
  for (const field of LIST_FIELDS) {
    const raw = params.get(field);
    if (raw) state[field] = splitList(field, raw);
  }
  // Legacy single folder, as the API folds it in.
  const single = params.get("path_prefix");
  if (single && !state.path_prefixes.includes(single)) state.path_prefixes.unshift(single);
  state.modified_after = params.get("modified_after") || "";
  state.modified_before = params.get("modified_before") || "";
  for (const [field, options] of Object.entries(CHOICES)) {
    const value = params.get(field);
    if (value && options.includes(value)) state[field] = value;
  }
  const limit = Number(params.get("limit"));
  if (Number.isInteger(limit) && limit >= 1 && limit <= 50) state.limit = limit;
  const offset = Number(params.get("offset"));
  if (Number.isInteger(offset) && offset >= 0 && offset <= 10_000) state.offset = offset;
  return state;
}

export function activeFilterCount(state) {
  const lists = LIST_FIELDS.reduce((n, field) => n + state[field].length, 0);
  return lists + (state.modified_after ? 1 : 0) + (state.modified_before ? 1 : 0);
}
