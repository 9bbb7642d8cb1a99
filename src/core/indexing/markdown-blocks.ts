/**
 * Block structure of a note body: headings, paragraphs, fenced code, math blocks, quotes/callouts and
 * tables, each with its line range. One pass over the lines, linear time; blocks are the units the
 * chunker never cuts through unless a single block is larger than a chunk.
 */
import { runSteps, type Steps } from "./work-slicer";

export type BlockKind = "heading" | "paragraph" | "code" | "math" | "quote" | "table";

export interface Block {
  kind: BlockKind;
  /** 0-based, inclusive line indices into the note's lines. */
  start: number;
  end: number;
  /** Headings only: level 1..6 and the heading text as written (without the # marks). */
  level?: number;
  heading?: string;
  /** Code and math: false when the closing delimiter is missing (the block runs to the end). */
  closed?: boolean;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;
const QUOTE = /^ {0,3}>/;
const SETEXT_H1 = /^ {0,3}=+[ \t]*$/;
const SETEXT_H2 = /^ {0,3}-+[ \t]*$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const TABLE_DELIMITER = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
const BLANK = /^[ \t]*$/;

export interface Fence {
  indent: string;
  marker: string;
}

/** The opening fence on a line, if it is one (backtick fences may not carry a backtick in their info). */
export function fenceOpen(line: string): Fence | null {
  const m = FENCE_OPEN.exec(line);
  if (!m) return null;
  if (m[2][0] === "`" && m[3].includes("`")) return null;
  return { indent: m[1], marker: m[2] };
}

export function isFenceClose(line: string, fence: Fence): boolean {
  const m = FENCE_CLOSE.exec(line);
  return m !== null && m[1][0] === fence.marker[0] && m[1].length >= fence.marker.length;
}

export function isListItem(line: string): boolean {
  return LIST_ITEM.test(line);
}

/** Splits lines[from..] into blocks. Blank lines and thematic breaks separate blocks and belong to none. */
export function parseBlocks(lines: readonly string[], from: number): Block[] {
  return runSteps(blockSteps(lines, from));
}

/** Lines looked at between two yields of blockSteps. */
const LINES_PER_STEP = 1024;

/** parseBlocks as steps: yields every LINES_PER_STEP lines looked at (runSliced spreads a huge note). */
export function* blockSteps(lines: readonly string[], from: number): Steps<Block[]> {
  const blocks: Block[] = [];
  let work = 0;
  const n = lines.length;
  // Once a search for a closing "$$" failed from line k, it fails from every later line too: remembering
  // that keeps a note full of stray "$$" linear instead of quadratic.
  let noMathCloseFrom = n;

  const mathEnd = (i: number): number => {
    const t = lines[i].trim();
    if (!t.startsWith("$$")) return -1;
    if (t.length >= 4 && t.endsWith("$$")) return i; // $$ x $$ on one line
    if (i + 1 >= noMathCloseFrom) return -1;
    for (let j = i + 1; j < n; j++) {
      if (lines[j].trimEnd().endsWith("$$")) return j;
    }
    noMathCloseFrom = i + 1;
    return -1;
  };

  const tableStartsAt = (i: number): boolean =>
    i + 1 < n && lines[i].includes("|") && TABLE_DELIMITER.test(lines[i + 1]) && lines[i + 1].includes("-") &&
    (lines[i + 1].includes("|") || lines[i].trim().startsWith("|"));

  let i = from;
  while (i < n) {
    if (++work % LINES_PER_STEP === 0) yield;
    const line = lines[i];
    if (BLANK.test(line) || THEMATIC_BREAK.test(line)) {
      i++;
      continue;
    }

    const fence = fenceOpen(line);
    if (fence) {
      let j = i + 1;
      while (j < n && !isFenceClose(lines[j], fence)) if (++j % LINES_PER_STEP === 0) yield;
      const closed = j < n;
      blocks.push({ kind: "code", start: i, end: closed ? j : n - 1, closed });
      i = (closed ? j : n - 1) + 1;
      continue;
    }

    const heading = ATX_HEADING.exec(line);
    if (heading) {
      blocks.push({ kind: "heading", start: i, end: i, level: heading[1].length, heading: (heading[2] ?? "").trim() });
      i++;
      continue;
    }

    const math = mathEnd(i);
    if (math >= 0) {
      blocks.push({ kind: "math", start: i, end: math, closed: true });
      i = math + 1;
      continue;
    }

    if (QUOTE.test(line)) {
      let j = i + 1;
      while (j < n && QUOTE.test(lines[j])) if (++j % LINES_PER_STEP === 0) yield;
      blocks.push({ kind: "quote", start: i, end: j - 1 });
      i = j;
      continue;
    }

    if (tableStartsAt(i)) {
      let j = i + 2;
      while (j < n && !BLANK.test(lines[j]) && lines[j].includes("|")) if (++j % LINES_PER_STEP === 0) yield;
      blocks.push({ kind: "table", start: i, end: j - 1 });
      i = j;
      continue;
    }

    // A paragraph (lists included) runs until a blank line or the start of another block.
    let j = i + 1;
    let setext = 0;
    while (j < n) {
      if (++work % LINES_PER_STEP === 0) yield;
      const next = lines[j];
      if (BLANK.test(next)) break;
      if (SETEXT_H1.test(next) || (SETEXT_H2.test(next) && !isListItem(lines[i]))) {
        setext = SETEXT_H1.test(next) ? 1 : 2;
        break;
      }
      if (THEMATIC_BREAK.test(next) || fenceOpen(next) || ATX_HEADING.test(next) || QUOTE.test(next)) break;
      if (mathEnd(j) >= 0 || tableStartsAt(j)) break;
      j++;
    }
    if (setext) {
      const text = lines.slice(i, j).map((l) => l.trim()).join(" ");
      blocks.push({ kind: "heading", start: i, end: j, level: setext, heading: text });
      i = j + 1;
    } else {
      blocks.push({ kind: "paragraph", start: i, end: j - 1 });
      i = j;
    }
  }
  return blocks;
}
