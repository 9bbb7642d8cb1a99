/**
 * Cutting one oversized block into pieces that fit a chunk, without breaking markdown tokens:
 * prose is cut at list items, sentence ends, line ends, then spaces (never inside a wikilink, embed,
 * link, inline code or inline math); line-based blocks (code, math, tables, callouts) are cut between
 * lines and re-opened so each piece stays valid markdown. All functions are linear in their input.
 */
import { runSteps, type Steps } from "./work-slicer";

export interface Piece {
  text: string;
  /** 0-based, inclusive line indices into the note. */
  start: number;
  end: number;
}

// Spans a cut must not fall into: embeds/wikilinks, markdown links, inline code, inline math.
const PROTECTED = /!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\([^)\n]*\)|`[^`\n]+`|\$[^$\n]+\$/g;
const SENTENCE_END = /[.!?…]["'”’)\]]*$/;
const CJK_SENTENCE_END = /[。！？]/;
const LIST_MARKER = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]/;

/**
 * Splits text (lines joined by "\n", the first being note line firstLine) into trimmed pieces of at most
 * max characters. Prefers, in order: a new list item, a sentence end, a line end, any space; a word is cut
 * only when it alone is longer than max.
 */
export function splitProse(text: string, firstLine: number, max: number): Piece[] {
  return runSteps(splitProseSteps(text, firstLine, max));
}

/** Pieces cut between two yields of splitProseSteps. */
const PIECES_PER_STEP = 8;

/** splitProse as steps: yields every PIECES_PER_STEP pieces (a 5 MB line is thousands of them). */
export function* splitProseSteps(text: string, firstLine: number, max: number): Steps<Piece[]> {
  const n = text.length;
  const inside = protectedMask(text);
  const lineOf = lineLocator(text, firstLine);
  const pieces: Piece[] = [];
  const minGood = Math.max(1, Math.floor(max / 3));

  let p = skipSpace(text, 0);
  let cuts = 0;
  while (p < n) {
    if (++cuts % PIECES_PER_STEP === 0) yield;
    let cut: number;
    if (n - p <= max) {
      cut = n;
    } else {
      cut = bestCut(text, inside, p, p + max, p + minGood);
    }
    const pieceText = text.slice(p, cut).trimEnd();
    if (pieceText.length > 0) {
      pieces.push({ text: pieceText, start: lineOf(p), end: lineOf(p + pieceText.length - 1) });
    }
    p = skipSpace(text, cut);
  }
  return pieces;
}

/** Where to end a piece that starts at p and may reach limit (exclusive end offset). */
function bestCut(text: string, inside: Uint8Array, p: number, limit: number, minGood: number): number {
  let sentence = -1;
  let newline = -1;
  let space = -1;
  // One backward scan records the last position of each kind of boundary; a list item wins at once.
  for (let c = limit; c > p; c--) {
    const ch = text.charCodeAt(c);
    if (inside[c]) continue;
    if (ch === 10 /* \n */) {
      if (c >= minGood && LIST_MARKER.test(text.slice(c + 1, c + 16))) return c;
      if (newline < 0 && c >= minGood) newline = c;
    }
    if (ch === 32 || ch === 9 || ch === 10 || ch === 0x3000) {
      if (space < 0) space = c;
      if (sentence < 0 && c >= minGood && SENTENCE_END.test(text.slice(Math.max(p, c - 4), c))) sentence = c;
    } else if (sentence < 0 && c >= minGood && CJK_SENTENCE_END.test(text[c - 1])) {
      sentence = c;
    }
  }
  if (sentence > 0) return sentence;
  if (newline > 0) return newline;
  if (space > 0) return space;
  // No space at all: a cut mid-word cannot be avoided; still keep protected spans and surrogate pairs whole.
  let cut = limit;
  while (cut > p + 1 && inside[cut]) cut--;
  if (cut <= p + 1) cut = limit;
  if (isLowSurrogate(text.charCodeAt(cut)) && cut - 1 > p) cut--;
  return cut;
}

/** mask[i] = 1 when offset i lies strictly inside a protected span (a cut there would break it). */
function protectedMask(text: string): Uint8Array {
  const mask = new Uint8Array(text.length + 1);
  PROTECTED.lastIndex = 0;
  for (let m = PROTECTED.exec(text); m !== null; m = PROTECTED.exec(text)) {
    mask.fill(1, m.index + 1, m.index + m[0].length);
  }
  return mask;
}

/** Maps non-decreasing offsets to note line indices in amortized O(1). */
function lineLocator(text: string, firstLine: number): (offset: number) => number {
  let line = firstLine;
  let scanned = 0;
  return (offset) => {
    for (; scanned < offset; scanned++) if (text.charCodeAt(scanned) === 10) line++;
    return line;
  };
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export interface LineBlock {
  /** The lines to pack, with their 0-based note line indices. */
  lines: string[];
  firstLine: number;
  /** Lines written before a piece's own lines; first is true for the block's first piece. */
  head(from: number, first: boolean): string[];
  /** Lines written after a piece's own lines (cut is the index of the first line not included). */
  tail(cut: number, last: boolean): string[];
  /** True when cutting before line i is a natural place (an empty quote line, a new row...). */
  goodCut?(i: number): boolean;
  /** Note line range of the first and last piece including their head/tail lines. */
  outerStart: number;
  outerEnd: number;
}

/**
 * Packs a line-based block into pieces of at most max characters, each wrapped in its head and tail
 * lines (re-opened fences, repeated table headers). A single line longer than a piece can hold is cut
 * as prose.
 */
export function splitLines(block: LineBlock, max: number): Piece[] {
  const { lines } = block;
  const n = lines.length;
  const pieces: Piece[] = [];
  let s = 0;
  if (n === 0) {
    const text = [...block.head(0, true), ...block.tail(0, true)].join("\n");
    return [{ text, start: block.outerStart, end: block.outerEnd }];
  }
  while (s < n) {
    const first = s === 0;
    const head = block.head(s, first);
    const headChars = charsOf(head);
    // Extend greedily while head + lines[s..e) + tail, joined by newlines, fits.
    let e = s;
    let bodyChars = 0;
    let fitEnd = s;
    while (e < n) {
      bodyChars += lines[e].length;
      e++;
      const tail = block.tail(e, e === n);
      const size = headChars + bodyChars + charsOf(tail) + head.length + (e - s) + tail.length - 1;
      if (size <= max) fitEnd = e;
      else break;
    }

    if (fitEnd === s) {
      // Line s alone does not fit: cut it as prose into pieces that fit between head and tail.
      const tail = block.tail(s + 1, s + 1 === n);
      const later = block.head(s, false);
      const headRoom = Math.max(charsOf(head) + head.length, charsOf(later) + later.length);
      const room = Math.max(1, max - headRoom - charsOf(tail) - tail.length);
      const parts = splitProse(lines[s], block.firstLine + s, room);
      parts.forEach((part, k) => {
        const text = [...(k === 0 ? head : later), part.text, ...tail].join("\n");
        const start = k === 0 && first ? block.outerStart : part.start;
        const end = k === parts.length - 1 && s === n - 1 ? block.outerEnd : part.end;
        pieces.push({ text, start, end });
      });
      s++;
      continue;
    }

    let cut = fitEnd;
    if (cut < n && block.goodCut) {
      const floor = s + Math.max(1, Math.floor((fitEnd - s) / 3));
      for (let c = fitEnd; c >= floor; c--) {
        if (block.goodCut(c)) {
          cut = c;
          break;
        }
      }
    }
    const last = cut === n;
    const text = [...head, ...lines.slice(s, cut), ...block.tail(cut, last)].join("\n");
    pieces.push({
      text,
      start: first ? block.outerStart : block.firstLine + s,
      end: last ? block.outerEnd : block.firstLine + cut - 1,
    });
    s = cut;
  }
  return pieces;
}

function charsOf(lines: string[]): number {
  let chars = 0;
  for (const l of lines) chars += l.length;
  return chars;
}
