/** Cuts text to at most `max` characters, ending with "…" when cut. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${cutAt(text, max - 1)}…` : text;
}

/**
 * The first `max` UTF-16 code units of text, one fewer when the cut would split a surrogate pair: half a
 * pair shows as garbage, and a file system stores it as U+FFFD, a name other than the one asked for.
 */
export function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max);
}

/** The line ending a text uses, by its first line break: "\r\n" (Windows editors) or "\n" (also when it has none). */
export function lineEndingOf(text: string): "\r\n" | "\n" {
  const at = text.indexOf("\n");
  return at > 0 && text.charCodeAt(at - 1) === 13 ? "\r\n" : "\n";
}

/** Text to append to `text`, with every line break in `text`'s own line ending: a CRLF note gets no LF-only lines. */
export function inLineEndingOf(text: string, addition: string): string {
  return addition.replace(/\r?\n/g, lineEndingOf(text));
}

/** The length of a string in UTF-8, as TextEncoder writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
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

/** `text` as a regular expression that matches it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
