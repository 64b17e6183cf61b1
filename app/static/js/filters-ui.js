// Chips for every active filter, and the pickers (checkbox lists with counts, folder tree).
import { $, el, rerender } from "./dom.js";
import { formatOperator } from "./query-syntax.js";

// field -> how a chip names it, and the operator that types it.
export const FILTER_LABELS = {
  doc_types: { label: "type", operator: "type" },
  path_prefixes: { label: "in", operator: "in" },
  tags: { label: "tag", operator: "tag" },
  tags_all: { label: "all tags", operator: null },
  categories: { label: "category", operator: "category" },
  owners: { label: "owner", operator: "owner" },
  modified_after: { label: "after", operator: "after" },
  modified_before: { label: "before", operator: "before" },
};

/** Every active filter as {field, value}, in a stable order. */
export function activeFilters(state) {
  const chips = [];
  for (const field of ["doc_types", "path_prefixes", "tags", "tags_all", "categories", "owners"]) {
    for (const value of state[field]) chips.push({ field, value });
  }
  for (const field of ["modified_after", "modified_before"]) {
    if (state[field]) chips.push({ field, value: state[field] });
  }
  return chips;
}

/** Render the chips; `onRemove(field, value)` is called by a chip's × button. */
export function renderChips(state, onRemove) {
  const list = $("chips");
  rerender(list, () => fillChips(list, state, onRemove), $("q"));
}

function fillChips(list, state, onRemove) {
  list.textContent = "";
  activeFilters(state).forEach(({ field, value }) => {
    const { label, operator } = FILTER_LABELS[field];
    const text = `${label}: ${value}`;
    list.append(
      el(
        "li",
        { class: "chip", "data-field": field, title: operator ? formatOperator(operator, value) : null },
        el("b", { text: label + ":" }),
        el("span", { text: value }),
        el("button", {
          type: "button",
          "aria-label": `Remove filter ${text}`,
          text: "×",
          onclick: () => onRemove(field, value),
        })
      )
    );
  });
}

/**
 * A checkbox list with counts. `facet` maps value -> count (null while unknown); selected values
 * missing from it still show (count 0), so a chip can always be unticked where it was ticked.
 */
export function renderOptions(listId, field, facet, selected, onToggle, filterText = "") {
  const list = $(listId);
  rerender(list, () => fillOptions(list, field, facet, selected, onToggle, filterText));
}

function fillOptions(list, field, facet, selected, onToggle, filterText) {
  list.textContent = "";
  const counts = { ...(facet || {}) };
  for (const value of selected) if (!(value in counts)) counts[value] = facet ? 0 : null;
  const needle = filterText.trim().toLowerCase();
  const values = Object.keys(counts)
    .filter((v) => !needle || v.toLowerCase().includes(needle))
    .sort((a, b) => (counts[b] ?? 0) - (counts[a] ?? 0) || a.localeCompare(b));
  if (!values.length) {
    list.append(el("li", { class: "empty-note", text: needle ? "No match." : "None in these results." }));
    return;
  }
  values.forEach((value, i) => {
    const id = `opt-${field}-${i}`;
    const checked = selected.includes(value);
    const count = counts[value];
    list.append(
      el(
        "li",
        { class: "option" + (count === 0 && !checked ? " zero" : "") },
        el("input", {
          type: "checkbox",
          id,
          checked,
          "data-value": value,
          "data-focus-key": value,
          onchange: (e) => onToggle(field, value, e.target.checked),
        }),
        el(
          "label",
          { for: id },
          el("span", { text: value }),
          count === null ? null : el("span", { class: "count", text: count.toLocaleString() })
        )
      )
    );
  });
}
