import { wikilinkDisplay } from "../indexing/markdown-inline";
import { tokenizeWords } from "../indexing/text-tokenizer";

/**
 * A short excerpt of a chunk showing why it matched: the window of text holding the most query words
 * (accents and case ignored), cut at word boundaries, markdown noise flattened. Without any matching
 * word (a purely semantic match), the chunk's opening.
 */
export function makeSnippet(text: string, query: string, maxChars = 220): string {
  const flat = flattenMarkdown(text);
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

/**
 * The chunk as a reader sees it rendered, on one line: front matter, heading marks, list bullets and
 * quote marks go; links show their display text; emphasis markers go only where they really are emphasis
 * (a pair around text, at word edges). Code, URLs, link text and `_`/`*`/`~` inside words, paths and
 * identifiers (`ctwa_clid`, `*.sql`, `~24/día`) are kept exactly as written.
 */
export function flattenMarkdown(text: string): string {
  const kept: string[] = [];
  const keep = (literal: string) => `${KEEP_OPEN}${kept.push(literal) - 1}${KEEP_CLOSE}`;
  let out = text
    .replace(/\r\n?/g, "\n")
    .replace(/^---\n[\s\S]*?\n---(?:\n|$)/, "")
    // Fenced code: the fence lines go, the code stays verbatim.
    .replace(/^[ \t]*(```|~~~)[^\n]*\n([\s\S]*?)(?:^[ \t]*\1[ \t]*$|(?![\s\S]))/gm, (_m, _f: string, code: string) => keep(code))
    .replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _t: string, code: string) => keep(code))
    .replace(/!?\[\[([^\]\n]*)\]\]/g, (_m, inner: string) => keep(wikilinkDisplay(inner)))
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
    .replace(/<?\b[a-z][a-z0-9+.-]*:\/\/[^\s<>]+>?/gi, (url) => keep(url))
    .replace(/^[ \t]*(?:#{1,6}[ \t]+|(?:>[ \t]?)+|(?:[-*+]|\d+[.)])[ \t]+(?:\[.\][ \t]+)?)/gm, "");
  // Nested emphasis (***a***, **a _b_**) comes off one layer per pass.
  for (let pass = 0; pass < 3; pass++) {
    const next = out.replace(EMPHASIS, "$1$3");
    if (next === out) break;
    out = next;
  }
  out = out.replace(/\\([\\`*_{}[\]()#+\-.!~=|<>])/g, "$1");
  out = out.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => kept[Number(i)] ?? "");
  return out.replace(/\s+/g, " ").trim();
}

const KEEP_OPEN = "\uE000";
const KEEP_CLOSE = "\uE001";
/**
 * A pair of emphasis markers around text, CommonMark-style: the opener follows a line start, a space or an
 * opening bracket/quote and precedes a non-space; the closer precedes the end, a space or punctuation.
 * `_` inside a word never opens or closes (ctwa_clid), a lone `~` is not a marker (~24/día).
 */
const EMPHASIS = /(^|[\s([{"'«¿¡])(\*\*\*|___|\*\*|__|~~|==|\*|_)(?=[^\s*_~=])([^\n]*?[^\s\\*_~=])\2(?=$|[\s.,;:!?)\]}"'»…-])/gmu;

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
