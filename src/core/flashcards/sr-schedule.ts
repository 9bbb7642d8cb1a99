/**
 * The scheduling comments the Spaced Repetition plugin writes after a card: `<!--SR:!2024-08-16,51,230-->`
 * (SM-2: due date, interval, ease; one `!…` entry per sibling card) or the FSRS form, whose entries carry
 * more fields. Krypton only ever reads them, to count due cards; it never writes or rewrites one.
 */
export interface CardSchedule {
  /** Local calendar date "YYYY-MM-DD". */
  due: string;
  algorithm: "sm2" | "fsrs";
}

export const SR_COMMENT = /<!--SR:([^>]*?)-->/g;

export function isScheduleComment(line: string): boolean {
  return line.includes("<!--SR:") && /^\s*<!--SR:[^>]*-->\s*$/.test(line);
}

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
    for (const entry of body.split("!")) {
      const date = DATE.exec(entry);
      if (date) out.push({ due: date[1], algorithm });
    }
    from = end + 3;
  }
  return out;
}

const DATE = /(\d{4}-\d{2}-\d{2})/;

/** Scheduled cards due on or before `today` ("YYYY-MM-DD"; ISO dates compare as strings). */
export function countDue(schedules: readonly CardSchedule[], today: string): number {
  return schedules.filter((s) => s.due <= today).length;
}
