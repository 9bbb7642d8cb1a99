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
  return /^\s*<!--SR:[^>]*-->\s*$/.test(line);
}

/** Every schedule entry in a text (one per sibling card), in order. */
export function parseSchedules(text: string): CardSchedule[] {
  const out: CardSchedule[] = [];
  for (const match of text.matchAll(SR_COMMENT)) {
    const body = match[1];
    const fsrs = /fsrs/i.test(body);
    for (const entry of body.split("!")) {
      const date = /(\d{4}-\d{2}-\d{2})/.exec(entry);
      if (date) out.push({ due: date[1], algorithm: fsrs ? "fsrs" : "sm2" });
    }
  }
  return out;
}

/** Scheduled cards due on or before `today` ("YYYY-MM-DD"; ISO dates compare as strings). */
export function countDue(schedules: readonly CardSchedule[], today: string): number {
  return schedules.filter((s) => s.due <= today).length;
}
