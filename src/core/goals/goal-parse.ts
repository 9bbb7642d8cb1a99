/**
 * Forgiving readers for what people type into a goal note: durations ("1h 15m", "45 min", "1.5 hours",
 * "90") and dates ("2027-01-15", "Nov 20, 2026", "January 15", "15 Jan 2027"). A date without a year is
 * the next such day on or after `today`.
 */
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

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
  const t = text.trim().toLowerCase().replace(/(\d)(st|nd|rd|th)\b/g, "$1").replace(/,/g, " ").replace(/\s+/g, " ");
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})/.exec(t);
  if (iso) return valid(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const slash = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(t);
  if (slash) return valid(Number(slash[1]), Number(slash[2]), Number(slash[3]));
  const monthFirst = /^([a-z]{3,9})\.? (\d{1,2})(?: (\d{4}))?$/.exec(t);
  const dayFirst = /^(\d{1,2}) ([a-z]{3,9})\.?(?: (\d{4}))?$/.exec(t);
  const parts = monthFirst ? { month: monthFirst[1], day: monthFirst[2], year: monthFirst[3] } : dayFirst ? { month: dayFirst[2], day: dayFirst[1], year: dayFirst[3] } : null;
  if (!parts) return null;
  const month = MONTHS.indexOf(parts.month.slice(0, 3)) + 1;
  if (month === 0) return null;
  const day = Number(parts.day);
  if (parts.year) return valid(Number(parts.year), month, day);
  // The next such day: February 29 can be up to eight years off (1896 → 1904, 2096 → 2104).
  const thisYear = Number(today.slice(0, 4));
  for (let year = thisYear; year <= thisYear + 8; year++) {
    const candidate = valid(year, month, day);
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
