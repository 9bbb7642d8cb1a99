/** Cuts text to at most `max` characters, ending with "…" when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Text on one line (whitespace runs folded), cut to at most `max` characters: for messages and logs. */
export function oneLine(text: string, max = 200): string {
  return clip(text.replace(/\s+/g, " ").trim(), max);
}
