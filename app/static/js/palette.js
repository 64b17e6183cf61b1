// One colour per doc type, the same on every load and in the list, legend and map. Every colour
// holds white text at >= 4.5:1 (WCAG AA) and stands out on the light page.

const KNOWN = { file: "#1f4fbf", note: "#067647", deck_card: "#b54708", news_item: "#6941c6" };
const SPARE = ["#b42318", "#0e7090", "#855d00", "#c11574", "#475467", "#2447a8"];

export function colorFor(docType) {
  if (KNOWN[docType]) return KNOWN[docType];
  let hash = 2166136261; // FNV-1a: a stable spread over the spare colours
  for (const ch of String(docType || "")) {
    hash ^= ch.codePointAt(0);
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return SPARE[hash % SPARE.length];
}
