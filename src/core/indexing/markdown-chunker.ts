/**
 * Markdown → chunks: where a note is cut into the pieces that get indexed and embedded.
 *
 * The note is split by headings (each chunk belongs to one section and carries its heading trail), then
 * by blocks (paragraphs, code, math, callouts, tables), and small blocks are packed together up to
 * maxChars. Blocks are only cut when one alone is larger than a chunk (see markdown-split.ts). The result
 * depends on nothing but the path and the text, so Obsidian and the CLI build identical indexes.
 */
import type { Chunk } from "./chunk";
import { noteMetadata, readFrontmatter } from "./frontmatter";
import { hashText } from "./hash";
import { type Block, blockSteps, fenceOpen, isFenceClose } from "./markdown-blocks";
import { collectInlineTags, plainHeading } from "./markdown-inline";
import { type LineBlock, type Piece, splitLines, splitProseSteps } from "./markdown-split";
import { runSliced, runSteps, type Steps } from "./work-slicer";

/** Bump whenever chunk boundaries, ids or texts can change for the same note: the index then re-chunks. */
export const CHUNKER_VERSION = 1;

/** Smaller limits cannot hold a re-opened code fence or a table header plus a row. */
export const MIN_CHUNK_CHARS = 100;
const DEFAULT_CHUNK_CHARS = 1500;

export interface ChunkOptions {
  /** Upper bound on Chunk.text length (UTF-16 code units); clamped to at least MIN_CHUNK_CHARS. */
  maxChars: number;
  /** Stop after this many chunks (a hostile note must not cost unbounded time and memory). */
  maxChunks?: number;
}

export interface ChunkedNote {
  title: string;
  aliases: string[];
  tags: string[];
  chunks: Chunk[];
  /** Set when maxChunks cut the note short: the last line (1-based) that made it into a chunk. */
  cutAfterLine?: number;
}

const CALLOUT_HEADER = /^[ \t]*>[ \t]*\[![^\]]*\]/;
const QUOTE_PREFIX = /^[ \t]*(?:>[ \t]?)+/;
const EMPTY_QUOTE = /^[ \t]*(?:>[ \t]*)+$/;

export function chunkNote(path: string, markdown: string, options: ChunkOptions): ChunkedNote {
  return runSteps(chunkSteps(path, markdown, options));
}

/**
 * chunkNote in steps that await `tick` (a WorkSlicer's) now and then, so a huge note does not hold the
 * thread: the same code as chunkNote, so the same chunks, boundaries and ids.
 */
export function chunkNoteSliced(path: string, markdown: string, options: ChunkOptions, tick: () => Promise<void>): Promise<ChunkedNote> {
  return runSliced(chunkSteps(path, markdown, options), tick);
}

/** Lines, blocks or pieces handled between two yields of chunkSteps. */
const WORK_PER_STEP = 256;

function* chunkSteps(path: string, markdown: string, options: ChunkOptions): Steps<ChunkedNote> {
  let work = 0;
  const max = Number.isFinite(options.maxChars) ? Math.max(MIN_CHUNK_CHARS, Math.floor(options.maxChars)) : DEFAULT_CHUNK_CHARS;
  const text = markdown.charCodeAt(0) === 0xfeff ? markdown.slice(1) : markdown;
  const lines = text.split(/\r\n|\r|\n/);

  const frontmatter = readFrontmatter(lines);
  const meta = noteMetadata(frontmatter?.fields ?? null);
  const blocks = yield* blockSteps(lines, frontmatter ? frontmatter.endLine + 1 : 0);

  const tagSet = new Set(meta.tags);
  for (const block of blocks) {
    if (block.kind === "code" || block.kind === "math") continue;
    for (let i = block.start; i <= block.end; i++) {
      collectInlineTags(lines[i], tagSet);
      if (++work % WORK_PER_STEP === 0) yield;
    }
  }
  const tags = [...tagSet];

  const firstH1 = blocks.find((b) => b.kind === "heading" && b.level === 1);
  const title = meta.title ?? (firstH1 ? plainHeading(firstH1.heading ?? "") : "");
  const note = { path, title: title || fileTitle(path), aliases: meta.aliases, tags };

  const chunks: Chunk[] = [];
  const maxChunks = options.maxChunks !== undefined && options.maxChunks > 0 ? Math.floor(options.maxChunks) : Infinity;
  const trail: { level: number; text: string }[] = [];
  let packed: Piece[] = [];
  let packedLength = 0;
  /** Set once maxChunks is reached and something is left over. */
  let cut = false;

  const flush = () => {
    if (packed.length === 0) return;
    if (chunks.length >= maxChunks) cut = true;
    else chunks.push(makeChunk(note, chunks.length, trail.map((h) => h.text), packed));
    packed = [];
    packedLength = 0;
  };

  for (const block of blocks) {
    if (cut) break;
    if (++work % WORK_PER_STEP === 0) yield;
    if (block.kind === "heading") {
      flush();
      const level = block.level ?? 1;
      while (trail.length > 0 && trail[trail.length - 1].level >= level) trail.pop();
      const text = plainHeading(block.heading ?? "");
      if (text) trail.push({ level, text }); // an empty "#" line still ends the section above
      continue;
    }
    for (const piece of yield* piecesOf(block, lines, max)) {
      if (cut) break;
      if (++work % WORK_PER_STEP === 0) yield;
      const last = packed[packed.length - 1];
      const added = last ? separator(last, piece).length + piece.text.length : piece.text.length;
      if (last && packedLength + added > max) {
        flush();
        packed.push(piece);
        packedLength = piece.text.length;
      } else {
        packed.push(piece);
        packedLength += added;
      }
    }
  }
  flush();

  // A note made only of headings still deserves to be found: index the headings themselves.
  if (chunks.length === 0) {
    const headings = blocks.filter((b) => b.kind === "heading");
    if (headings.length > 0) {
      const from = headings[0].start;
      const source = lines.slice(from, headings[headings.length - 1].end + 1).join("\n");
      for (const piece of yield* splitProseSteps(source, from, max)) {
        if (chunks.length >= maxChunks) {
          cut = true;
          break;
        }
        chunks.push(makeChunk(note, chunks.length, [], [piece]));
        if (++work % WORK_PER_STEP === 0) yield;
      }
    }
  }

  const result: ChunkedNote = { title: note.title, aliases: note.aliases, tags, chunks };
  if (cut && chunks.length > 0) result.cutAfterLine = chunks[chunks.length - 1].endLine;
  return result;
}

/**
 * What gets embedded for a chunk: its text under a line of context (note title and heading trail), so a
 * paragraph that never names its subject still lands near it. Chunk.textHash is the hash of this string.
 */
export function embeddingText(chunk: Pick<Chunk, "title" | "headings" | "text">): string {
  const context = chunk.headings[0] === chunk.title ? chunk.headings : [chunk.title, ...chunk.headings];
  const line = context.filter((s) => s !== "").join(" > ");
  return line ? `${line}\n\n${chunk.text}` : chunk.text;
}

function makeChunk(
  note: { path: string; title: string; aliases: string[]; tags: string[] },
  ordinal: number,
  headings: string[],
  pieces: Piece[],
): Chunk {
  let text = pieces[0].text;
  for (let k = 1; k < pieces.length; k++) text += separator(pieces[k - 1], pieces[k]) + pieces[k].text;
  const chunk: Chunk = {
    id: `${note.path}#${ordinal}`,
    path: note.path,
    title: note.title,
    aliases: note.aliases,
    tags: note.tags,
    headings,
    startLine: pieces[0].start + 1,
    endLine: pieces[pieces.length - 1].end + 1,
    text,
    textHash: "",
  };
  chunk.textHash = hashText(embeddingText(chunk));
  return chunk;
}

/** Blocks that were apart in the note stay apart (a blank line); touching blocks stay on adjacent lines. */
function separator(before: Piece, after: Piece): string {
  return after.start > before.end + 1 ? "\n\n" : "\n";
}

function fileTitle(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  return name.replace(/\.md$/i, "");
}

/** One block as pieces no longer than max (usually exactly one piece: the block's own lines). */
function* piecesOf(block: Block, lines: readonly string[], max: number): Steps<Piece[]> {
  const { start, end } = block;
  if (block.kind === "code") return codePieces(block, lines, max);

  const source = lines.slice(start, end + 1).join("\n");
  if (source.length <= max) return [{ text: source, start, end }];

  switch (block.kind) {
    case "math":
      if (end - start < 1) return yield* splitProseSteps(source, start, max);
      return splitLines(
        {
          lines: lines.slice(start + 1, end),
          firstLine: start + 1,
          head: (_from, first) => [first ? lines[start] : "$$"],
          tail: (_cut, last) => [last ? lines[end] : "$$"],
          outerStart: start,
          outerEnd: end,
        },
        max,
      );
    case "table": {
      // Each piece repeats the header row so it reads as a table, unless the header leaves no room for a row.
      const header = [lines[start], lines[start + 1]];
      let widest = 0;
      for (let i = start + 2; i <= end; i++) widest = Math.max(widest, lines[i].length);
      if (header[0].length + header[1].length + widest + 2 > max) return splitLines(plainLines(lines, start, end), max);
      return splitLines(
        {
          lines: lines.slice(start + 2, end + 1),
          firstLine: start + 2,
          head: () => header,
          tail: () => [],
          outerStart: start,
          outerEnd: end,
        },
        max,
      );
    }
    case "quote":
      return quotePieces(block, lines, max);
    default:
      return yield* splitProseSteps(source, start, max);
  }
}

/** Lines cut only between lines (or, for a line longer than a chunk, inside it as prose). */
function plainLines(lines: readonly string[], start: number, end: number): LineBlock {
  return { lines: lines.slice(start, end + 1), firstLine: start, head: () => [], tail: () => [], outerStart: start, outerEnd: end };
}

/** Fenced code: cut between lines, every piece closed and re-opened with the original fence. */
function codePieces(block: Block, lines: readonly string[], max: number): Piece[] {
  const { start, end } = block;
  const open = lines[start];
  const fence = fenceOpen(open) ?? { indent: "", marker: "```" };
  const reclose = fence.indent + fence.marker;
  const closeLine = block.closed ? lines[end] : reclose;
  const contentEnd = block.closed ? end - 1 : end;
  const content = lines.slice(start + 1, contentEnd + 1);

  const whole = [open, ...content, closeLine].join("\n");
  if (whole.length <= max) return [{ text: whole, start, end }];
  return splitLines(
    {
      lines: content,
      firstLine: start + 1,
      head: () => [open],
      tail: (_cut, last) => [last ? closeLine : reclose],
      outerStart: start,
      outerEnd: end,
    },
    max,
  );
}

/**
 * Quotes and callouts: cut between lines, preferably at an empty "> " line. A continuation repeats the
 * callout's "> [!type]" line, and a fence open inside the quote is closed and re-opened across the cut.
 */
function quotePieces(block: Block, lines: readonly string[], max: number): Piece[] {
  const quoteLines = lines.slice(block.start, block.end + 1);
  const header = CALLOUT_HEADER.test(quoteLines[0]) ? [quoteLines[0]] : [];

  // reopen[k]: the fence line to re-open before quote line k when a fence is open there, else null.
  const reopen: (string | null)[] = new Array<string | null>(quoteLines.length + 1).fill(null);
  let fence: { line: string; prefix: string; f: ReturnType<typeof fenceOpen> } | null = null;
  quoteLines.forEach((line, k) => {
    reopen[k] = fence ? fence.line : null;
    const prefix = QUOTE_PREFIX.exec(line)?.[0] ?? "";
    const inner = line.slice(prefix.length);
    if (fence?.f) {
      if (isFenceClose(inner, fence.f)) fence = null;
    } else {
      const f = fenceOpen(inner);
      if (f) fence = { line, prefix, f };
    }
  });
  reopen[quoteLines.length] = null;
  const closeFor = (k: number): string[] => {
    const open = reopen[k];
    if (!open) return [];
    const prefix = QUOTE_PREFIX.exec(open)?.[0] ?? "> ";
    const f = fenceOpen(open.slice(prefix.length));
    return f ? [prefix + f.indent + f.marker] : [];
  };

  return splitLines(
    {
      lines: quoteLines,
      firstLine: block.start,
      head: (from, first) => {
        const open = reopen[from];
        return first ? [] : [...(from > 0 ? header : []), ...(open ? [open] : [])];
      },
      tail: (cut, last) => (last ? [] : closeFor(cut)),
      goodCut: (k) => !reopen[k] && (EMPTY_QUOTE.test(quoteLines[k - 1] ?? "") || CALLOUT_HEADER.test(quoteLines[k])),
      outerStart: block.start,
      outerEnd: block.end,
    },
    max,
  );
}
