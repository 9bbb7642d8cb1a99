import { localDate } from "../util/local-date";

/**
 * The scheduling comments the Spaced Repetition plugin writes after a card: `<!--SR:!2024-08-16,51,230-->`
 * (SM-2: due date, interval, ease; one `!…` entry per sibling card) or the FSRS form, whose entries carry
 * more fields. Krypton only ever reads them, to count due cards; it never writes or rewrites one.
 */
export interface CardSchedule {
  /**
   * When SR shows the sibling again; null for one it counts as new (its placeholder date, FSRS's "-", or
   * unreadable). A date "YYYY-MM-DD" (SM-2) is due from the start of that day in the user's time zone; an
   * FSRS timestamp as SR writes it ("2026-11-25T05:00:00.000Z", toISOString) from that instant.
   */
  due: string | null;
  algorithm: "sm2" | "fsrs";
}

export const SR_COMMENT = /<!--SR:([^>]*?)-->/g;

/** Every schedule entry in a text (one per sibling card), in order. */
export function parseSchedules(text: string): CardSchedule[] {
  const out: CardSchedule[] = [];
  // indexOf rather than a global regex: this runs once per card of decks with tens of thousands of cards.
  let from = 0;
  for (;;) {
    const at = text.indexOf("<!--SR:", from);
    if (at < 0) break;
    const end = text.indexOf("-->", at + 7);
    if (end < 0) break;
    const body = text.slice(at + 7, end);
    // One entry per sibling, in order, each in its own form (SR's CommentParser.parseScheduleSegment): an
    // entry SR cannot read keeps its place as new.
    for (const entry of body.split("!")) {
      const trimmed = entry.trim();
      if (trimmed === "") continue;
      if (trimmed.startsWith("fsrs,")) {
        out.push({ due: fsrsDue(trimmed.split(",")[1]), algorithm: "fsrs" });
        continue;
      }
      const due = dueDate(entry);
      out.push({ due: due === NEW_CARD_DATE ? null : due, algorithm: "sm2" });
    }
    from = end + 3;
  }
  return out;
}

/** SR writes this date for a sibling never reviewed when another one was (RepItemScheduleInfoOsr.dummyDueDateForNewCard). */
const NEW_CARD_DATE = "2000-01-01";
const DATE = /(\d{4}-\d{2}-\d{2})/;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** An entry's due date as "YYYY-MM-DD"; SR also reads (and older versions wrote) DD-MM-YYYY and "Fri Aug 16 2024". */
function dueDate(entry: string): string | null {
  const iso = DATE.exec(entry);
  if (iso) return iso[1];
  const dmy = /^\s*(\d{2})-(\d{2})-(\d{4}),/.exec(entry);
  if (dmy) return `${dmy[3]}-${dmy[2]}-${dmy[1]}`;
  const long = /^\s*[A-Z][a-z]{2} ([A-Z][a-z]{2}) (\d{2}) (\d{4}),/.exec(entry);
  const month = long ? MONTHS.indexOf(long[1]) + 1 : 0;
  return long && month ? `${long[3]}-${String(month).padStart(2, "0")}-${long[2]}` : null;
}

/**
 * An FSRS entry's due field: SR writes an ISO timestamp (or "-" for none) and reads it with moment(), which
 * takes a plain date as local midnight, so a date alone stays a day. Null: none, or not a date.
 */
function fsrsDue(field: string | undefined): string | null {
  const text = field?.trim() ?? "";
  if (!/^\d{4}-\d{2}-\d{2}(?:$|T)/.test(text)) return null;
  return text.length === 10 || !Number.isNaN(Date.parse(text)) ? text : null;
}

/**
 * Due and new review cards as SR counts them: each card has `reviewCards` siblings, the i-th takes the i-th
 * schedule entry (extra entries are ignored), and one without an entry or with a null date is new. SR shows a
 * card once its due moment has passed (RepItemScheduleInfo.isDue): a date's is the start of that day in
 * `timeZone` (default: the host's), a timestamp's is its instant.
 */
export function countCards(
  cards: readonly { reviewCards: number; schedules: readonly CardSchedule[] }[],
  now: number,
  timeZone?: string,
): { due: number; new: number } {
  const today = localDate(now, timeZone);
  let due = 0;
  let fresh = 0;
  for (const card of cards) {
    for (let i = 0; i < card.reviewCards; i++) {
      const d = card.schedules[i]?.due;
      if (!d) fresh++;
      else if (isDueBy(d, now, today)) due++;
    }
  }
  return { due, new: fresh };
}

function isDueBy(due: string, now: number, today: string): boolean {
  // ISO dates compare as strings. A timestamp without a zone, which SR never writes, is read by its day.
  if (due.length === 10 || !/(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(due)) return due.slice(0, 10) <= today;
  return Date.parse(due) <= now;
}
