/** Inline markdown the index cares about: #tags in the body and plain heading text. */

// A tag starts after a line start or a separator; Obsidian requires one non-digit character in it.
// (No lookbehind: older mobile WebViews lack it.)
const INLINE_TAG = /(^|[\s([,;])#([\p{L}\p{N}_/-]+)/gu;
// Places where a # is not a tag: inline code, wikilinks ([[#Heading]], [[Note#Heading]]), link targets ((#anchor)).
const NOT_TAG_CONTEXT = /`[^`\n]*`|\[\[[^\]\n]*\]\]|\]\([^)\n]*\)/g;
const ONLY_DIGITS = /^[\d/_-]*$/;

/** Adds the #tags found in one line of body text (outside code) to tags, in order of appearance. */
export function collectInlineTags(line: string, tags: Set<string>): void {
  if (!line.includes("#")) return;
  const text = line.includes("`") || line.includes("[") ? line.replace(NOT_TAG_CONTEXT, " ") : line;
  INLINE_TAG.lastIndex = 0;
  for (let m = INLINE_TAG.exec(text); m !== null; m = INLINE_TAG.exec(text)) {
    const tag = m[2].replace(/\/+$/, "");
    if (tag && !ONLY_DIGITS.test(tag)) tags.add(tag);
  }
}

/** "About [[Deep learning|DL]] `code`" → "About DL code": what a heading reads as, for display and boosts. */
export function plainHeading(raw: string): string {
  return raw
    .replace(/!?\[\[([^\]\n]*)\]\]/g, (_m, inner: string) => wikilinkDisplay(inner))
    .replace(/\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
    .replace(/`([^`\n]*)`/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * How Obsidian shows a wikilink in reading view: the alias, else "Note > Heading", "Heading" for a link
 * inside the same note ([[#Heading]]), else the note name. Block ids (#^abc) are not shown.
 */
export function wikilinkDisplay(inner: string): string {
  const bar = inner.indexOf("|");
  if (bar >= 0) {
    const alias = inner.slice(bar + 1).trim();
    if (alias) return alias;
  }
  const target = (bar >= 0 ? inner.slice(0, bar) : inner).trim();
  const hash = target.indexOf("#");
  const note = (hash >= 0 ? target.slice(0, hash) : target).trim();
  const subpath = hash >= 0 ? target.slice(hash + 1).split("#").map((s) => s.trim()).filter((s) => s && !s.startsWith("^")) : [];
  return [note, ...subpath].filter((s) => s.length > 0).join(" > ");
}
