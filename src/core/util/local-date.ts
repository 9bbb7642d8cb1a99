/**
 * The user's calendar date ("YYYY-MM-DD") at a moment, in a time zone (default: the host's own). Study
 * logs and due cards count by the user's day, not UTC's: at 23:30 in Los Angeles it is already tomorrow in UTC.
 */
export function localDate(epochMs: number, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(new Date(epochMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}
