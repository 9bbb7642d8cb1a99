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
    .replace(/!?\[\[([^\]|\n]*)\|([^\]\n]*)\]\]/g, "$2")
    .replace(/!?\[\[([^\]\n]*)\]\]/g, "$1")
    .replace(/\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
    .replace(/`([^`\n]*)`/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}
