import { tokenizeWords } from "../indexing/text-tokenizer";

/**
 * A short excerpt of a chunk showing why it matched: the window of text holding the most query words
 * (accents and case ignored), cut at word boundaries, markdown noise flattened. Without any matching
 * word (a purely semantic match), the chunk's opening.
 */
export function makeSnippet(text: string, query: string, maxChars = 220): string {
  const flat = flatten(text);
  if (flat.length <= maxChars) return flat;
  const terms = new Set(tokenizeWords(query, true).filter((t) => t.length > 1));
  const positions: number[] = [];
  if (terms.size > 0) {
    const re = /[\p{L}\p{N}_]+/gu;
    for (let m = re.exec(flat); m; m = re.exec(flat)) {
      const word = fold(m[0]);
      if (terms.has(word) || prefixMatch(word, terms)) positions.push(m.index);
    }
  }
  if (positions.length === 0) return cut(flat, 0, maxChars);
  // The window (starting a little before a match) that covers the most matches.
  let best = positions[0];
  let bestCount = 0;
  let j = 0;
  for (let i = 0; i < positions.length; i++) {
    while (j < positions.length && positions[j] < positions[i] + maxChars * 0.8) j++;
    if (j - i > bestCount) {
      bestCount = j - i;
      best = positions[i];
    }
  }
  return cut(flat, Math.max(0, best - Math.floor(maxChars * 0.2)), maxChars);
}

/** The tokenizer's normalization for one word: lower case, accents folded. */
function fold(word: string): string {
  const lower = word.toLowerCase();
  // eslint-disable-next-line no-control-regex -- the range means "any character outside ASCII"
  return /[^\u0000-\u007f]/.test(lower) ? lower.normalize("NFD").replace(/[\u0300-\u036f]/g, "") : lower;
}

function prefixMatch(word: string, terms: Set<string>): boolean {
  if (word.length < 4) return false;
  for (const t of terms) if (t.length >= 4 && (word.startsWith(t) || t.startsWith(word))) return true;
  return false;
}

/** Drops markdown syntax a reader does not need in a one-line excerpt. */
function flatten(text: string): string {
  return text
    .replace(/^---\n[\s\S]*?\n---\n?/, "")
    .replace(/!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]/g, (_m, target: string, alias?: string) => alias ?? target)
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+(?:\[.\][ \t]+)?)/gm, "")
    .replace(/[*_`~]{1,3}|==/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function cut(text: string, start: number, maxChars: number): string {
  let from = start;
  if (from > 0) {
    const space = text.indexOf(" ", from);
    if (space >= 0 && space - from < 30) from = space + 1;
  }
  let to = Math.min(text.length, from + maxChars);
  if (to < text.length) {
    const space = text.lastIndexOf(" ", to);
    if (space > from + maxChars / 2) to = space;
  }
  return (from > 0 ? "…" : "") + text.slice(from, to).trim() + (to < text.length ? "…" : "");
}
