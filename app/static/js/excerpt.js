// The chunk's best ~40 words for the query, with the query's terms marked.

const STOPWORDS = new Set(
  "a an and are as at be by for from has have in is it of on or that the this to was were will with"
    .split(" ")
);
const WORD = /[\p{L}\p{N}]+/gu;

export function queryTerms(query) {
  const terms = (query.toLowerCase().match(WORD) || []).filter(
    (t) => t.length > 1 && !STOPWORDS.has(t)
  );
  return [...new Set(terms)];
}

/** A word matches a term when equal, or when they share a stem of 4+ letters (budget/budgets). */
function matches(word, terms) {
  const w = word.toLowerCase();
  return terms.some((t) => w === t || (t.length >= 4 && w.startsWith(t)) || (w.length >= 4 && t.startsWith(w)));
}

/**
 * Pick the window of `size` words holding the most query terms (the first one if none match).
 * Returns {parts: [{text, mark}], cutBefore, cutAfter}.
 */
export function bestExcerpt(text, query, size = 40) {
  const words = text.split(/\s+/).filter(Boolean);
  const terms = queryTerms(query);
  const hit = words.map((w) => terms.length > 0 && matches(w.replace(/^\W+|\W+$/gu, ""), terms));
  let best = 0;
  let bestScore = -1;
  let score = 0;
  for (let i = 0; i < words.length; i++) {
    score += hit[i] ? 1 : 0;
    if (i >= size) score -= hit[i - size] ? 1 : 0;
    const start = Math.max(0, i - size + 1);
    if (score > bestScore) { bestScore = score; best = start; }
  }
  const end = Math.min(words.length, best + size);
  const parts = [];
  for (let i = best; i < end; i++) {
    parts.push(...splitMarks(words[i], terms));
    if (i < end - 1) parts.push({ text: " ", mark: false });
  }
  return { parts: merge(parts), cutBefore: best > 0, cutAfter: end < words.length };
}

/** Mark the letters of a word that match, keep its punctuation unmarked. */
function splitMarks(word, terms) {
  const core = /^(\W*)(.*?)(\W*)$/su.exec(word);
  const [, lead, body, tail] = core;
  if (!terms.length || !body || !matches(body, terms)) return [{ text: word, mark: false }];
  return [
    { text: lead, mark: false },
    { text: body, mark: true },
    { text: tail, mark: false },
  ].filter((p) => p.text);
}

function merge(parts) {
  const out = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (prev && prev.mark === part.mark) prev.text += part.text;
    else out.push({ ...part });
  }
  return out;
}

/** The same marks in any text (the context view). */
export function markTerms(text, query) {
  const terms = queryTerms(query);
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(WORD)) {
    if (!matches(match[0], terms)) continue;
    if (match.index > last) parts.push({ text: text.slice(last, match.index), mark: false });
    parts.push({ text: match[0], mark: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), mark: false });
  return parts;
}
