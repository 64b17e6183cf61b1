// Search-box operators: `type:file in:"/My Files" tag:finance after:2025-01-01 ...`.
// One parser for the whole page: it turns finished operator tokens into filters and leaves the
// rest as query text.
import { checkDate } from "./dates.js";

export const OPERATORS = {
  type: "doc_types",
  in: "path_prefixes",
  tag: "tags",
  owner: "owners",
  category: "categories",
  after: "modified_after",
  before: "modified_before",
};

const KNOWN = Object.keys(OPERATORS).map((k) => k + ":").join(" ");
// A word that starts with letters and a colon, then a value (quoted or not). "re: x" (no value)
// and "10:30" (digits) are text.
const TOKEN = /(^|\s)([A-Za-z_]+):("([^"]*)("|$)|[^\s"]+)/g;

/**
 * Parse `text`. With `final` false (typing), the last token counts only when whitespace follows
 * it, so `type:fi` is not taken while the user is still typing `type:file`.
 * Returns {text, filters: [{field, value, operator}], errors: [message]}.
 */
export function parseQuery(text, { final = true } = {}) {
  const filters = [];
  const errors = [];
  let rest = "";
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const [whole, lead, name, rawValue, quoted, closing] = match;
    const start = match.index + lead.length;
    const end = match.index + whole.length;
    const finished = final || end < text.length;
    const operator = name.toLowerCase();
    if (rawValue.startsWith("//")) continue; // a URL such as http://example.org is text
    if (!finished || (quoted !== undefined && closing !== '"' && !final)) continue;
    const value = (quoted !== undefined ? quoted : rawValue).trim();
    const outcome = filterFor(operator, value);
    if (outcome.error) {
      errors.push(outcome.error);
      continue;
    }
    filters.push({ field: outcome.field, value: outcome.value, operator });
    rest += text.slice(last, start);
    last = end;
  }
  rest += text.slice(last);
  const remaining = collapse(rest);
  return { text: final ? remaining.trim() : remaining, filters, errors };
}

// The box's last word is an operator still being typed: `type:`, `type:fi`, `in:"/My Fi`.
const TYPING_OPERATOR = /(^|\s)[A-Za-z_]+:("[^"]*"?|[^\s"]*)$/;

/** Whether `text` ends in an operator token not yet closed by a space (search as you type waits
 * for it rather than send half an operator as words or as a filter). */
export function endsInOperator(text) {
  const match = TYPING_OPERATOR.exec(text);
  return Boolean(match) && !match[2].startsWith("//");
}

function filterFor(operator, value) {
  const field = OPERATORS[operator];
  if (!field) {
    return { error: `Unknown operator "${operator}:". Known operators: ${KNOWN}` };
  }
  if (!value) return { error: `"${operator}:" needs a value, e.g. ${example(operator)}` };
  if (field === "modified_after" || field === "modified_before") {
    const problem = checkDate(value);
    if (problem) return { error: `${operator}:${value}: ${problem}` };
  }
  if (field === "doc_types") return { field, value: value.toLowerCase() };
  if (field === "path_prefixes") return { field, value: normalizeFolder(value) };
  return { field, value };
}

function example(operator) {
  const examples = {
    type: "type:file", in: 'in:"/My Files"', tag: "tag:finance", owner: "owner:alice",
    category: "category:Work", after: "after:2025-01-01", before: "before:2025-06-30",
  };
  return examples[operator];
}

/** The same normalization as the service: leading `/`, no trailing `/`, no doubled `/`. */
export function normalizeFolder(raw) {
  const text = raw.trim();
  if (!text) return "";
  return ("/" + text).replace(/\/{2,}/g, "/").replace(/\/+$/, "") || "/";
}

/** A filter as an operator token again (for the "how to type it" hints and round trips). */
export function formatOperator(operator, value) {
  return operator + ":" + (/[\s"]/.test(value) || value === "" ? `"${value.replace(/"/g, "")}"` : value);
}

function collapse(text) {
  return text.replace(/\s{2,}/g, " ").replace(/^\s+/, "");
}
