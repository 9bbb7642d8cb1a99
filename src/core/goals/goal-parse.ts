import { foldAccents } from "../indexing/text-tokenizer";

/**
 * Forgiving readers for what people type into a goal note or a request: durations ("1h 15m", "45 min", "1.5
 * hours", "90") and dates ("2027-01-15", "Nov 20, 2026", "January 15", "15 de diciembre", "15. Dezember",
 * "15 декабря", "12月15日まで"). A date without a year is the next such day on or after `today`. A date that
 * reads two ways ("01/02/2027") is no date: it is never guessed.
 */

/** The languages whose month names a date may use: the languages requests are recognised in. */
const MONTH_LOCALES = ["en", "es", "fr", "de", "pt", "it", "ru"];

/**
 * Month names (lower case, accents and abbreviation dots away) → month 1-12, from the runtime's own locale
 * data (Node and Electron both ship full ICU): long and short, standalone and as written after a day, which is
 * where Russian's genitive comes from ("декабрь", "15 декабря"). A name two months share is dropped. Built on
 * first use: most runs read no date.
 */
let monthNames: ReadonlyMap<string, number> | undefined;

function monthNamesTable(): ReadonlyMap<string, number> {
  if (monthNames) return monthNames;
  const names = new Map<string, number>();
  const shared = new Set<string>();
  for (const locale of MONTH_LOCALES) {
    const formats = (["long", "short"] as const).flatMap((month) => [
      new Intl.DateTimeFormat(locale, { month, timeZone: "UTC" }),
      new Intl.DateTimeFormat(locale, { day: "numeric", month, timeZone: "UTC" }),
    ]);
    for (let month = 1; month <= 12; month++) {
      const date = new Date(Date.UTC(2000, month - 1, 15));
      for (const format of formats) {
        const part = format.formatToParts(date).find((p) => p.type === "month");
        if (!part) continue;
        const name = foldedLower(part.value).replace(/\.$/, "");
        if (names.has(name) && names.get(name) !== month) shared.add(name);
        names.set(name, month);
      }
    }
  }
  for (const name of shared) names.delete(name);
  monthNames = names;
  return names;
}

/** Lower case without accents; NFC again after folding, or Hangul would stay split into its letters ("월" is not 월). */
function foldedLower(text: string): string {
  return foldAccents(text.toLowerCase()).normalize("NFC");
}

/** A month name, or its unambiguous start of at least three letters ("sept", "decem"), as 1-12; 0 when none. */
function monthOf(token: string): number {
  const table = monthNamesTable();
  const exact = table.get(token);
  if (exact) return exact;
  if (token.length < 3) return 0;
  const months = new Set<number>();
  for (const [name, month] of table) if (name.startsWith(token)) months.add(month);
  return months.size === 1 ? [...months][0] : 0;
}

/** Minutes in a duration text, or null when there is none. */
export function parseMinutes(text: string): number | null {
  const t = text
    .toLowerCase()
    .replace(/,/g, ".")
    // The units of the languages goals are asked in: "30 minutos", "1 Stunde", "30 минут", "1時間30分", "30분".
    .replace(/(\d)\s*(?:minutos|minuten|minuti|minute|минут[аы]?|мин\.?|分钟|分鐘|分|분)/gu, "$1 min ")
    .replace(/(\d)\s*(?:horas?|heures?|stunden?|ore|ora|час(?:а|ов)?|時間|小时|小時|시간)/gu, "$1 h ")
    .trim();
  let total = 0;
  let found = false;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)\s*(h(?:ours?|rs?)?|m(?:in(?:ute)?s?)?)\b/g)) {
    const n = Number(m[1]);
    total += m[2].startsWith("h") ? n * 60 : n;
    found = true;
  }
  if (!found) {
    const bare = /^(\d+(?:\.\d+)?)$/.exec(t);
    if (!bare) return null;
    total = Number(bare[1]);
  }
  return Math.round(total);
}

/** "1h 15m", "45 min". */
export function formatMinutes(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h && m ? `${h}h ${m}m` : h ? `${h}h` : `${m} min`;
}

/** An ISO date "YYYY-MM-DD" from a forgiving date text, or null. `today` is "YYYY-MM-DD". */
export function parseDate(text: string, today: string): string | null {
  const read = readDate(text, today);
  return "date" in read ? read.date : null;
}

/**
 * A date text read as parseDate does, or why it cannot be: unreadable, or ambiguous ("01/02/2027" is the 1st of
 * February or January 2nd), which is refused rather than guessed. `today` is "YYYY-MM-DD".
 */
export function readDate(text: string, today: string): { date: string } | { problem: string } {
  const unreadable = { problem: `Could not read the date "${text.trim()}" (try 2027-01-15, "January 15" or "15 de enero").` };
  const t = foldedLower(text.trim()).replace(/[\s,]+/g, " ").trim();
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})/.exec(t) ?? /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(t);
  if (iso) return found(valid(Number(iso[1]), Number(iso[2]), Number(iso[3])), unreadable);
  // 2027年12月15日, 12月15日まで, 12月15号之前, 12월 15일까지: the month is a number.
  const cjk = /^(?:(\d{4})\s*[年년]\s*)?(\d{1,2})\s*[月월]\s*(\d{1,2})\s*(?:日|号|號|일)?\s*(?:までに|まで|之前|以前|前|까지)?$/u.exec(t);
  if (cjk) return found(dayOf(cjk[1], Number(cjk[2]), Number(cjk[3]), today), unreadable);
  // 15/12/2027, 15.12., 12/15: day or month first, whichever is a date; both are, and differ: ambiguous.
  const numeric = /^(\d{1,2})[./](\d{1,2})(?:[./](\d{4}))?\.?$/.exec(t);
  if (numeric) {
    const [a, b] = [Number(numeric[1]), Number(numeric[2])];
    const dayFirst = dayOf(numeric[3], b, a, today);
    const monthFirst = dayOf(numeric[3], a, b, today);
    if (dayFirst && monthFirst && dayFirst !== monthFirst) {
      return { problem: `The date "${text.trim()}" is ambiguous (${dayFirst} or ${monthFirst}?): write it as YYYY-MM-DD or with the month's name.` };
    }
    return found(dayFirst ?? monthFirst, unreadable);
  }
  // Words: "15 de diciembre de 2027", "15. Dezember", "1er décembre", "15 декабря 2027 г.", "December 15th, 2027".
  const words = t
    .replace(/(\d)(?:st|nd|rd|th|er|º|ª|\.)(?=\s|$)/g, "$1")
    .split(" ")
    .map((w) => w.replace(/\.$/, ""))
    .filter((w) => w && !DATE_FILLERS.has(w));
  if (words.length < 2 || words.length > 3) return unreadable;
  const year = words.length === 3 && /^\d{4}$/.test(words[2]) ? words[2] : undefined;
  if (words.length === 3 && !year) return unreadable;
  const [first, second] = words;
  const [dayText, monthText] = /^\d{1,2}$/.test(first) ? [first, second] : [second, first];
  if (!/^\d{1,2}$/.test(dayText)) return unreadable;
  const month = monthOf(monthText);
  return month ? found(dayOf(year, month, Number(dayText), today), unreadable) : unreadable;
}

/** Words around a date's parts that carry nothing: "15 de diciembre del 2027", "the 15th of December", "2027 года". */
const DATE_FILLERS = new Set(["de", "del", "of", "the", "le", "il", "el", "am", "den", "г", "года"]);

function found(date: string | null, otherwise: { problem: string }): { date: string } | { problem: string } {
  return date ? { date } : otherwise;
}

/** The date of that day and month in `year`, or without a year the next one on or after `today`. */
function dayOf(year: string | undefined, month: number, day: number, today: string): string | null {
  if (year) return valid(Number(year), month, day);
  // The next such day: February 29 can be up to eight years off (1896 → 1904, 2096 → 2104).
  const thisYear = Number(today.slice(0, 4));
  for (let y = thisYear; y <= thisYear + 8; y++) {
    const candidate = valid(y, month, day);
    if (candidate && candidate >= today) return candidate;
  }
  return null;
}

function valid(y: number, m: number, d: number): string | null {
  if (m < 1 || m > 12 || d < 1 || d > 31) return null;
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCMonth() !== m - 1) return null;
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/** Whole days from a to b (ISO dates). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}
