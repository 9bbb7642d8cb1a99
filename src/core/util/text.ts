/** Cuts text to at most `max` characters, ending with "…" when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Text on one line (whitespace runs folded), cut to at most `max` characters: for messages and logs. */
export function oneLine(text: string, max = 200): string {
  return clip(text.replace(/\s+/g, " ").trim(), max);
}

/** A count in words a reader expects: "1 note", "2,048 notes" (en-US grouping, as every figure Krypton shows). */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(n)} ${n === 1 ? singular : plural}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}
