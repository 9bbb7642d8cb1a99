import { DEFAULT_SR_FORMAT, type SrFormat } from "./sr-format";
import { isScheduleComment, parseSchedules, SR_COMMENT, type CardSchedule } from "./sr-schedule";

/**
 * A reader of the Spaced Repetition plugin's card syntax, written to its documented rules:
 * - `front::back` (basic) and `front:::back` (reversed: two cards) on one line;
 * - multi-line cards: front lines, a line that is only `?` (or `??`, reversed), back lines; a blank line
 *   (or the configured end marker) ends the card;
 * - cloze cards: a paragraph with `==deletions==` (and `**bold**` / `{{curly}}` when enabled); one card per
 *   deletion, or per sequence number (`[^1]`) / per overlap column (`[^ahs]`);
 * - decks: a line of tags (`#flashcards/deck`) applies to the cards after it until the next such line; a tag
 *   at the start of a card's first line applies to that card only; frontmatter `tags` apply to the note;
 * - `<!--SR:…-->` scheduling comments belong to the card they follow (next line or same line).
 * Fenced code blocks and headings are never cards.
 */
export type CardKind = "basic" | "reversed" | "multiline" | "multiline-reversed" | "cloze";

export interface ParsedCard {
  kind: CardKind;
  /** Question side (cloze: the full text, deletions marked). */
  front: string;
  /** Answer side (cloze: the deleted parts, joined by ", "). */
  back: string;
  /** Deck tags without '#' ("flashcards/bio"); empty when the card has no deck (SR ignores it). */
  decks: string[];
  /** 0-based line of the card's first line, and its last line (including a scheduling comment). */
  line: number;
  lastLine: number;
  /** Review cards SR makes from this text (reversed: 2, cloze: one per deletion group). */
  reviewCards: number;
  /** Cloze only: the deleted parts in order. */
  deletions: string[];
  schedules: CardSchedule[];
}

export interface ParsedDeck {
  cards: ParsedCard[];
  /** Decks a card appended at the end of the note would belong to. */
  trailingDecks: string[];
  /** Raw frontmatter lines' key → value (first-level scalars only). */
  frontmatter: Record<string, string>;
}

export function parseCards(text: string, format: SrFormat = DEFAULT_SR_FORMAT): ParsedDeck {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const { frontmatter, bodyStart, noteTags } = readFrontmatter(lines, format);
  const cards: ParsedCard[] = [];
  const isDeckTag = (tag: string) => format.tags.some((t) => tag === t || tag.startsWith(`${t}/`));

  // Cards before the note's first deck tag line belong to that tag (SR treats the note as tagged).
  let current: string[] = noteTags.length ? noteTags : firstDeckTags(lines, bodyStart, isDeckTag);

  let block: number[] = [];
  let fence: string | null = null;
  const flush = () => {
    if (block.length) current = readBlock(lines, block, format, isDeckTag, current, cards);
    block = [];
  };
  for (let i = bodyStart; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    const first = trimmed.charCodeAt(0);
    const fenceMatch = first === 96 || first === 126 ? /^(`{3,}|~{3,})/.exec(trimmed) : null;
    if (fence !== null) {
      if (fenceMatch && trimmed.startsWith(fence)) fence = null;
      continue;
    }
    if (fenceMatch) {
      flush();
      fence = fenceMatch[1];
      continue;
    }
    // With an end marker set, SR lets multi-line and cloze cards contain blank lines: only the marker ends them.
    if (format.endMarker ? trimmed === format.endMarker : trimmed === "") {
      flush();
      continue;
    }
    block.push(i);
  }
  flush();
  return { cards, trailingDecks: current, frontmatter };
}

/** One paragraph: tag lines, single-line cards, a multi-line card or a cloze. Returns the decks in effect after it. */
function readBlock(
  lines: string[],
  block: number[],
  format: SrFormat,
  isDeckTag: (tag: string) => boolean,
  decksIn: string[],
  out: ParsedCard[],
): string[] {
  let decks = decksIn;
  /** Lines of the block that may hold card text, with a card-specific deck when the line starts with one. */
  const content: { index: number; text: string; ownDecks: string[] | null }[] = [];
  for (const index of block) {
    const raw = lines[index];
    if (raw.trim() === "") {
      if (content.length) content.push({ index, text: "", ownDecks: null });
      continue;
    }
    const tags = leadingTags(raw);
    if (tags.rest.trim() === "") {
      const deckTags = tags.tags.filter(isDeckTag);
      if (deckTags.length) decks = deckTags.map((t) => t.slice(1));
      continue;
    }
    if (raw.includes("#") && /^\s{0,3}#{1,6}\s/.test(raw)) continue; // heading: context, never a card
    const own = tags.tags.filter(isDeckTag);
    content.push({ index, text: own.length ? tags.rest : raw, ownDecks: own.length ? own.map((t) => t.slice(1)) : null });
  }
  if (!content.length) return decks;

  const separatorAt = content.findIndex((c) => c.text.trim() === format.multiLineReversed || c.text.trim() === format.multiLine);
  if (separatorAt > 0) {
    const reversed = content[separatorAt].text.trim() === format.multiLineReversed;
    const backLines = content.slice(separatorAt + 1);
    const back = backLines.filter((c) => !isScheduleComment(c.text)).map((c) => stripComment(c.text));
    out.push({
      kind: reversed ? "multiline-reversed" : "multiline",
      front: content
        .slice(0, separatorAt)
        .map((c) => c.text)
        .join("\n"),
      back: back.join("\n"),
      decks: content[0].ownDecks ?? decks,
      line: content[0].index,
      lastLine: content[content.length - 1].index,
      reviewCards: reversed ? 2 : 1,
      deletions: [],
      // Comment lines and comments on the back's last line (SR's "same line" option) alike.
      schedules: parseSchedules(backLines.map((c) => c.text).join("\n")),
    });
    return decks;
  }

  let single = false;
  let previous: ParsedCard | null = null;
  const rest: typeof content = [];
  for (const c of content) {
    if (isScheduleComment(c.text)) {
      if (previous && previous.lastLine === c.index - 1) {
        previous.schedules.push(...parseSchedules(c.text));
        previous.lastLine = c.index;
      }
      continue;
    }
    const card = singleLineCard(c.text, format);
    if (card) {
      single = true;
      // Built field by field in ParsedCard's order: one object shape for every card keeps V8 fast.
      previous = {
        kind: card.kind,
        front: card.front,
        back: card.back,
        decks: c.ownDecks ?? decks,
        line: c.index,
        lastLine: c.index,
        reviewCards: card.reviewCards,
        deletions: [],
        schedules: parseSchedules(c.text),
      };
      out.push(previous);
      continue;
    }
    previous = null;
    rest.push(c);
  }
  if (single || !rest.length) return decks;

  const clozeText = rest.map((c) => c.text).join("\n");
  const cloze = clozeDeletions(stripComment(clozeText), format);
  if (cloze.deletions.length) {
    out.push({
      kind: "cloze",
      front: stripComment(clozeText),
      back: cloze.deletions.join(", "),
      decks: rest[0].ownDecks ?? decks,
      line: rest[0].index,
      lastLine: rest[rest.length - 1].index,
      reviewCards: cloze.reviewCards,
      deletions: cloze.deletions,
      schedules: parseSchedules(clozeText),
    });
  }
  return decks;
}

function singleLineCard(text: string, format: SrFormat): { kind: CardKind; front: string; back: string; reviewCards: number } | null {
  const line = stripComment(text);
  const tryIt = (sep: string, kind: CardKind, reviewCards: number) => {
    const at = line.indexOf(sep);
    if (at <= 0) return null;
    return { kind, front: line.slice(0, at).trim(), back: line.slice(at + sep.length).trim(), reviewCards };
  };
  // The longer separator first: with the defaults ":::" also contains "::".
  const order: [string, CardKind, number][] =
    format.singleLineReversed.length >= format.singleLine.length
      ? [
          [format.singleLineReversed, "reversed", 2],
          [format.singleLine, "basic", 1],
        ]
      : [
          [format.singleLine, "basic", 1],
          [format.singleLineReversed, "reversed", 2],
        ];
  for (const [sep, kind, n] of order) {
    const card = tryIt(sep, kind, n);
    if (card && card.back !== "") return card;
  }
  return null;
}

/** The deleted parts of a cloze text and how many review cards SR makes from them. */
export function clozeDeletions(text: string, format: SrFormat = DEFAULT_SR_FORMAT): { deletions: string[]; reviewCards: number } {
  const patterns: RegExp[] = [];
  if (!text.includes("==") && !text.includes("**") && !text.includes("{{")) return { deletions: [], reviewCards: 0 };
  if (format.clozeHighlights) patterns.push(/==([^=\n]+?)==((?:\^\[[^\]]*\])?)((?:\[\^[^\]]+\])?)/g);
  if (format.clozeBold) patterns.push(/\*\*([^*\n]+?)\*\*((?:\^\[[^\]]*\])?)((?:\[\^[^\]]+\])?)/g);
  if (format.clozeCurly) patterns.push(/\{\{([^}\n]+?)\}\}()()/g);
  const found: { at: number; answer: string; sequence: string }[] = [];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) found.push({ at: m.index ?? 0, answer: m[1], sequence: (m[3] ?? "").slice(2, -1) });
  }
  found.sort((a, b) => a.at - b.at);
  const deletions = found.map((f) => f.answer);
  const sequences = found.map((f) => f.sequence).filter((s) => s !== "");
  let reviewCards = deletions.length;
  if (sequences.length && sequences.every((s) => /^[ahs]+$/.test(s))) reviewCards = Math.max(...sequences.map((s) => s.length));
  else if (sequences.length) reviewCards = new Set(found.map((f, i) => f.sequence || `#${i}`)).size;
  return { deletions, reviewCards };
}

function stripComment(text: string): string {
  return text.includes("<!--SR:") ? text.replace(SR_COMMENT, "").trimEnd() : text.trimEnd();
}

const NO_TAGS: string[] = [];

function leadingTags(line: string): { tags: string[]; rest: string } {
  // Fast path: most lines do not start with a tag.
  if (line.trimStart().charCodeAt(0) !== 35) return { tags: NO_TAGS, rest: line };
  const tags: string[] = [];
  let rest = line;
  for (;;) {
    const m = /^\s*(#[^\s#]+)(?=\s|$)/.exec(rest);
    if (!m || /^#{1,6}$/.test(m[1])) break;
    tags.push(m[1]);
    rest = rest.slice(m[0].length);
  }
  return { tags, rest };
}

function firstDeckTags(lines: string[], from: number, isDeckTag: (tag: string) => boolean): string[] {
  for (let i = from; i < lines.length; i++) {
    if (!lines[i].includes("#")) continue;
    const { tags } = leadingTags(lines[i]);
    const deck = tags.filter(isDeckTag);
    if (deck.length) return deck.map((t) => t.slice(1));
  }
  return [];
}

function readFrontmatter(lines: string[], format: SrFormat): { frontmatter: Record<string, string>; bodyStart: number; noteTags: string[] } {
  const frontmatter: Record<string, string> = {};
  if (lines[0]?.trim() !== "---") return { frontmatter, bodyStart: 0, noteTags: [] };
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === "---" || l.trim() === "..."));
  if (end < 0) return { frontmatter, bodyStart: 0, noteTags: [] };
  const tags: string[] = [];
  let inTags = false;
  for (const line of lines.slice(1, end)) {
    const kv = /^([A-Za-z0-9_-]+)\s*:\s*(.*)$/.exec(line);
    if (kv) {
      frontmatter[kv[1]] = kv[2].trim().replace(/^["']|["']$/g, "");
      inTags = kv[1] === "tags" || kv[1] === "tag";
      if (inTags && kv[2].trim()) tags.push(...kv[2].replace(/[[\]]/g, "").split(/[,\s]+/));
      continue;
    }
    const item = /^\s*-\s*(.+)$/.exec(line);
    if (inTags && item) tags.push(item[1]);
  }
  const noteTags = tags
    .map((t) => t.trim().replace(/^["']|["']$/g, ""))
    .filter(Boolean)
    .map((t) => (t.startsWith("#") ? t : `#${t}`))
    .filter((t) => format.tags.some((d) => t === d || t.startsWith(`${d}/`)))
    .map((t) => t.slice(1));
  return { frontmatter, bodyStart: end + 1, noteTags };
}
