// Dates typed into the page: a full calendar day (YYYY-MM-DD) or nothing. Anything else is
// refused here, before a request is sent, so a half-typed date never silently widens a search.

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** null when `text` is a real calendar day (or blank), else what is wrong with it. */
export function checkDate(text) {
  const value = text.trim();
  if (!value) return null;
  const match = DAY.exec(value);
  if (!match) {
    if (/^\d{4}(-\d{1,2})?$/.test(value)) return "give a full date: YYYY-MM-DD";
    return "not a date: use YYYY-MM-DD, e.g. 2025-06-30";
  }
  const [, year, month, day] = match.map(Number);
  if (month < 1 || month > 12) return `month ${match[2]} does not exist`;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > last) return `${value} does not exist (that month has ${last} days)`;
  if (year < 1970) return "dates before 1970 are not supported";
  return null;
}

const isoDay = (date) => date.toISOString().slice(0, 10);

/** Quick ranges: [after, before] as YYYY-MM-DD, relative to `now`. */
export function quickRange(name, now = new Date()) {
  const today = isoDay(now);
  const daysAgo = (n) => isoDay(new Date(now.getTime() - n * 86_400_000));
  if (name === "7d") return [daysAgo(7), today];
  if (name === "30d") return [daysAgo(30), today];
  if (name === "year") return [`${now.getUTCFullYear()}-01-01`, today];
  throw new Error("unknown quick range " + name);
}

const UNITS = [
  ["year", 365 * 86_400],
  ["month", 30 * 86_400],
  ["week", 7 * 86_400],
  ["day", 86_400],
  ["hour", 3_600],
  ["minute", 60],
];

/** "3 days ago" / "in 2 hours" / "just now". */
export function relativeTime(iso, now = new Date()) {
  const seconds = (new Date(iso).getTime() - now.getTime()) / 1000;
  const size = Math.abs(seconds);
  for (const [unit, length] of UNITS) {
    if (size >= length) {
      const n = Math.floor(size / length);
      const label = `${n} ${unit}${n === 1 ? "" : "s"}`;
      return seconds < 0 ? `${label} ago` : `in ${label}`;
    }
  }
  return "just now";
}

// One formatter for every date shown: building one per call cost more than the rest of a
// result's rendering (Date.toLocaleString with options builds a new Intl.DateTimeFormat).
const READABLE = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** The date as people read it, in their locale, with the time. */
export function absoluteTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return READABLE.format(date);
}
