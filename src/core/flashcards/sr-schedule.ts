/**
 * The scheduling comments the Spaced Repetition plugin writes after a card: `<!--SR:!2024-08-16,51,230-->`
 * (SM-2: due date, interval, ease; one `!…` entry per sibling card) or the FSRS form, whose entries carry
 * more fields. Krypton only ever reads them, to count due cards; it never writes or rewrites one.
 */
export interface CardSchedule {
  /** Local calendar date "YYYY-MM-DD"; null for a sibling SR counts as new (its placeholder date, or unreadable). */
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
    const algorithm = body.includes("fsrs") || body.includes("FSRS") ? "fsrs" : "sm2";
    // One entry per sibling, in order (SR's CommentParser): an entry SR cannot read keeps its place as new.
    for (const entry of body.split("!")) {
      if (entry.trim() === "") continue;
      const due = dueDate(entry);
      out.push({ due: due === NEW_CARD_DATE ? null : due, algorithm });
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
 * Due and new review cards as SR counts them: each card has `reviewCards` siblings, the i-th takes the i-th
 * schedule entry (extra entries are ignored), and one without an entry or with a null date is new.
 * `today` is "YYYY-MM-DD" (ISO dates compare as strings).
 */
export function countCards(cards: readonly { reviewCards: number; schedules: readonly CardSchedule[] }[], today: string): { due: number; new: number } {
  let due = 0;
  let fresh = 0;
  for (const card of cards) {
    for (let i = 0; i < card.reviewCards; i++) {
      const d = card.schedules[i]?.due;
      if (!d) fresh++;
      else if (d <= today) due++;
    }
  }
  return { due, new: fresh };
}
