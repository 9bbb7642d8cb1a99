import { globToRegExp } from "../indexing/exclusions";
import { hasClozes, readClozes, type Cloze } from "./sr-cloze";
import { DEFAULT_SR_FORMAT, type SrFormat } from "./sr-format";
import { parseSchedules, SR_COMMENT, type CardSchedule } from "./sr-schedule";

/**
 * A reader of the Spaced Repetition plugin's card syntax that draws card boundaries the way the plugin's own
 * parser does (obsidian-spaced-repetition src/parser.ts), line by line, so Krypton sees the cards SR sees:
 * - a line with `front::back` (or `:::`, reversed) is a card wherever it stands, unless the separator's first
 *   occurrence is inside inline code; the next line joins it when it is its `<!--SR:…-->` comment (or SR's
 *   `> [!sr|card-metadata]` callout holding one);
 * - a line that is only `?` (or `??`) makes the lines around it a multi-line card, a line with a cloze
 *   (by SR's clozePatterns, see sr-cloze.ts) a cloze card; a blank line (with an end marker set: the
 *   marker) ends it; fenced code belongs to the card it is in, blank lines and all;
 * - a line starting with `<!--` hides itself and the line after it, or, left open, the rest of the note;
 *   headings are ordinary text;
 * - decks: a line with flashcard tags (anywhere on it, outside code) applies to the cards after it until the
 *   next such line, unless it is part of a card; any tag starting a card's text (a flashcard tag or not,
 *   as SR's question.ts reads it) is that card's deck, in a note with a flashcard tag somewhere;
 *   frontmatter tags apply to the note; a card with none of these takes the note's first flashcard tag;
 * - a note with one of SR's "Tags to ignore" (or a sub-tag of one) in its frontmatter or text, as SR's
 *   core.ts checks the note's tags, has no cards for SR: `ignoredTag` names it; so has a note without a flashcard
 *   tag (`flashcardTag`), unless SR takes folders as decks; and a note in one of SR's "Folders to ignore" (see srSkip).
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
  /** Review cards SR makes from this text (reversed: 2, cloze: one per deletion, or per number when numbered). */
  reviewCards: number;
  /** Cloze only: the deleted parts in order (answers, without number or hint). */
  deletions: string[];
  /** Cloze only: the deletions as matched in `front`. */
  clozes: Cloze[];
  schedules: CardSchedule[];
}

export interface ParsedDeck {
  cards: ParsedCard[];
  /** Decks a card appended at the end of the note would belong to. */
  trailingDecks: string[];
  /** Raw frontmatter lines' key → value (first-level scalars only). */
  frontmatter: Record<string, string>;
  /** The fence (a run of ` or ~) still open at the end: SR reads whatever follows as code. */
  openFence: string | null;
  /** With an end marker set, a card still open at the end: SR adds whatever follows to it. */
  openCard: boolean;
  /** 0-based line of a `<!--` comment never closed on its line: SR reads nothing from there on. */
  hiddenFrom: number | null;
  /**
   * The note's first tag among SR's "Tags to ignore" (SrFormat.tagsToIgnore, sub-tags included), with '#':
   * SR then reads no card of the note. `cards` still holds them, for writes that must not add one twice.
   */
  ignoredTag: string | null;
  /** The note has a flashcard tag (frontmatter or text): SR reads a note's cards only then, unless folders are decks. */
  flashcardTag: boolean;
}

/** Why SR reviews none of a note's cards (data-manager.ts loadVault, core.ts processFile, topic-path.ts getTopicPathOfFile). */
export type SrSkip =
  | { why: "ignored-folder"; folder: string }
  | { why: "ignored-tag"; tag: string }
  | { why: "no-flashcard-tag" }
  | { why: "vault-root" };

/**
 * Why SR reviews none of the cards of the note at `notePath`, or null when it reviews them all: a folder to
 * ignore (SR never loads the note); a tag to ignore; with folders as decks (SrFormat.convertFoldersToDecks) a note
 * at the vault root, which has no folder to be its deck, whatever its tags; otherwise a note without a flashcard tag.
 */
export function srSkip(deck: ParsedDeck, notePath: string, format: SrFormat): SrSkip | null {
  const folder = srIgnoredFolder(notePath, format);
  if (folder !== null) return { why: "ignored-folder", folder };
  if (deck.ignoredTag !== null) return { why: "ignored-tag", tag: deck.ignoredTag };
  if (format.convertFoldersToDecks) return notePath.includes("/") ? null : { why: "vault-root" };
  return deck.flashcardTag ? null : { why: "no-flashcard-tag" };
}

/**
 * The first of SR's "Folders to ignore" that covers `notePath`, as SR's pathMatchesPattern tests it: the path starts
 * with it (a plain text prefix, case and all: "Arch" covers "Archive/x.md"), or it matches it as a glob. Globs are
 * read by the index's exclude-pattern reader (`*` within a folder, `**` across folders), which lacks minimatch's
 * braces and character classes.
 */
export function srIgnoredFolder(notePath: string, format: SrFormat): string | null {
  return format.foldersToIgnore.find((f) => notePath.startsWith(f) || globToRegExp(f).test(notePath)) ?? null;
}

/**
 * Why SR skips the note at `notePath` for the "Folders to ignore" entry `folder`, in words: a folder entry names
 * the folder; a glob, or a bare prefix such as "Arch" (which SR reads too), is quoted as matched.
 */
export function ignoredFolderText(notePath: string, folder: string): string {
  const where = notePath.startsWith(folder.endsWith("/") ? folder : `${folder}/`) ? `it is in ${folder.replace(/\/$/, "")}` : `its path matches ${folder}`;
  return `${where}, one of the Spaced Repetition plugin's "Folders to ignore"`;
}

/** The note's cards SR reviews: all of them, or none (srSkip says why). */
export function srCards(deck: ParsedDeck, notePath: string, format: SrFormat): ParsedCard[] {
  return srSkip(deck, notePath, format) ? [] : deck.cards;
}

/** SR's sub-tag test (SettingsUtil.isSubTagContainedInTag): the tag itself or one nested under it. */
function tagIn(list: readonly string[], tag: string): boolean {
  return list.some((t) => tag === t || tag.startsWith(`${t}/`));
}

/** SR's callout form of the scheduling comment (its "use callouts for scheduling comments" option). */
const SR_CALLOUT = "> [!sr|card-metadata]";

export function parseCards(text: string, format: SrFormat = DEFAULT_SR_FORMAT): ParsedDeck {
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  const isDeckTag = (tag: string) => tagIn(format.tags, tag);
  const isIgnored = (tag: string) => tagIn(format.tagsToIgnore, tag);
  const { frontmatter, bodyStart, tags: fmTags } = readFrontmatter(lines);
  const noteTags = fmTags.filter(isDeckTag).map((t) => t.slice(1));
  let ignoredTag = fmTags.find(isIgnored) ?? null;
  // Longer separator first: with the defaults ":::" also contains "::".
  const inline: [string, CardKind][] = [
    [format.singleLine, "basic" as const],
    [format.singleLineReversed, "reversed" as const],
  ].sort((a, b) => b[0].length - a[0].length) as [string, CardKind][];

  const raws: { kind: CardKind; lines: number[] }[] = [];
  const tagLines: { line: number; decks: string[] }[] = [];
  let kind: CardKind | null = null;
  let pending: number[] = [];
  let openFence: string | null = null;
  let hiddenFrom: number | null = null;
  for (let i = bodyStart; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (line.startsWith("<!--") && !line.startsWith("<!--SR:")) {
      // SR skips a comment line and the line after it; one left open hides the rest of the note.
      if (!line.includes("-->")) {
        hiddenFrom = i;
        break;
      }
      i++;
      continue;
    }
    const empty = trimmed === "";
    if ((empty && (!format.endMarker || kind === null)) || (format.endMarker !== "" && trimmed === format.endMarker)) {
      if (kind) raws.push({ kind, lines: pending });
      kind = null;
      pending = [];
      continue;
    }
    pending.push(i);
    if (line.includes("#")) {
      const tags = lineTags(line);
      const decks = tags.filter(isDeckTag).map((t) => t.slice(1));
      if (decks.length) tagLines.push({ line: i, decks });
      ignoredTag ??= tags.find(isIgnored) ?? null;
    }
    const single = inline.find(([sep]) => hasInlineMarker(line, sep));
    if (single) {
      // A separator line is a card on its own, whatever the lines before it in the paragraph were.
      const own = [i];
      if (lines[i + 1]?.startsWith("<!--SR:")) own.push(++i);
      else if (lines[i + 1]?.startsWith(SR_CALLOUT)) {
        while (i + 1 < lines.length) {
          own.push(++i);
          if (lines[i].includes("<!--SR:")) break;
        }
      }
      raws.push({ kind: single[1], lines: own });
      kind = null;
      pending = [];
    } else if (trimmed === format.multiLine || trimmed === format.multiLineReversed) {
      // SR wants a front: the text so far (this line included) longer than one character.
      if (pending.map((p) => lines[p].trimEnd()).join("\n").length > 1) kind = trimmed === format.multiLine ? "multiline" : "multiline-reversed";
    } else if (line.startsWith("```") || line.startsWith("~~~")) {
      // Code belongs to the card it is in, blank lines and all, up to a line starting with the same run.
      const run = /^(`+|~+)/.exec(line)![1];
      while (i + 1 < lines.length && !lines[i + 1].startsWith(run)) pending.push(++i);
      if (i + 1 < lines.length) pending.push(++i);
      else openFence = run;
    } else if (kind === null && hasClozes(line, format.clozePatterns)) {
      kind = "cloze";
    }
  }
  if (kind && pending.length) raws.push({ kind, lines: pending });
  const openCard = format.endMarker !== "" && kind !== null && hiddenFrom === null;

  // A tag line inside a card's lines is that card's business (its own deck, or just text), not the note's.
  const noteLevel: typeof tagLines = [];
  let c = 0;
  for (const tl of tagLines) {
    while (c < raws.length && raws[c].lines[raws[c].lines.length - 1] < tl.line) c++;
    if (c >= raws.length || raws[c].lines[0] > tl.line) noteLevel.push(tl);
  }
  const fallback = noteTags.length ? noteTags : tagLines.length ? [tagLines[0].decks[0]] : [];
  // SR reads a note only when it has a flashcard tag (or folders are decks); then any tag starting a card's text
  // is its own (its deck; with folders as decks only taken off the text, question.ts splitText).
  const ownDeck = fallback.length || format.convertFoldersToDecks ? () => true : isDeckTag;

  const cards: ParsedCard[] = [];
  let t = -1;
  for (const r of raws) {
    const first = r.lines[0];
    while (t + 1 < noteLevel.length && noteLevel[t + 1].line < first) t++;
    const card = buildCard(r.kind, r.lines.map((l) => lines[l]), format, ownDeck);
    if (!card) continue;
    card.decks = card.decks.length ? card.decks : t >= 0 ? noteLevel[t].decks : fallback;
    card.line = first;
    card.lastLine = r.lines[r.lines.length - 1];
    cards.push(card);
  }
  const trailingDecks = noteLevel.length ? noteLevel[noteLevel.length - 1].decks : fallback;
  return { cards, trailingDecks, frontmatter, openFence, openCard, hiddenFrom, ignoredTag, flashcardTag: fallback.length > 0 };
}

/** One card from its lines; `decks` holds only a tag starting its text (the card's own deck, when `ownDeck` takes it). */
function buildCard(kind: CardKind, raw: string[], format: SrFormat, ownDeck: (tag: string) => boolean): ParsedCard | null {
  const full = raw.map((l) => l.trimEnd()).join("\n");
  let body = full.trimStart();
  let decks: string[] = [];
  const lead = /^#[^\s#]+/.exec(body);
  // SR's topic path: the tag's parts between slashes, empty ones dropped ("#a//b/" is "a/b"; "#/" none).
  const path = lead ? lead[0].slice(1).split("/").filter(Boolean).join("/") : "";
  if (lead && path && ownDeck(lead[0])) {
    decks = [path];
    body = body.slice(lead[0].length).trimStart();
  }
  const schedules = parseSchedules(full);
  // Built field by field in ParsedCard's order: one object shape for every card keeps V8 fast.
  const card: ParsedCard = { kind, front: "", back: "", decks, line: 0, lastLine: 0, reviewCards: 1, deletions: [], clozes: [], schedules };
  if (kind === "basic" || kind === "reversed") {
    const text = stripComment(body.split("\n")[0]);
    const sep = kind === "basic" ? format.singleLine : format.singleLineReversed;
    const at = text.indexOf(sep);
    card.front = text.slice(0, at).trim();
    card.back = text.slice(at + sep.length).trim();
    card.reviewCards = kind === "reversed" ? 2 : 1;
    return card;
  }
  const textLines = stripComment(body).split("\n");
  if (kind === "cloze") {
    card.front = textLines.join("\n");
    const cloze = readClozes(card.front, format.clozePatterns);
    if (!cloze.clozes.length) return null;
    card.clozes = cloze.clozes;
    card.deletions = cloze.clozes.map((c) => c.answer);
    card.back = card.deletions.join(", ");
    card.reviewCards = cloze.reviewCards;
    return card;
  }
  const sep = kind === "multiline" ? format.multiLine : format.multiLineReversed;
  const at = textLines.findIndex((l) => l.trim() === sep);
  card.front = textLines.slice(0, at).join("\n");
  card.back = textLines.slice(at + 1).join("\n");
  card.reviewCards = kind === "multiline-reversed" ? 2 : 1;
  return card;
}

/** SR's test: the separator's first occurrence, unless an odd number of backticks lies on each side of it. */
function hasInlineMarker(line: string, marker: string): boolean {
  if (!marker) return false;
  const at = line.indexOf(marker);
  if (at < 0) return false;
  if (!line.includes("`")) return true;
  let before = 0;
  let after = 0;
  for (let k = 0; k < at; k++) if (line.charCodeAt(k) === 96) before++;
  for (let k = at + marker.length; k < line.length; k++) if (line.charCodeAt(k) === 96) after++;
  return !(before % 2 === 1 && after % 2 === 1);
}

/**
 * Tags anywhere on a line (with '#'), as Obsidian finds tags: after a space or at the start, not in inline code;
 * marks count as letters (Devanagari "हिन्दी" has vowel signs and a virama no composed form holds).
 */
function lineTags(line: string): string[] {
  const text = line.includes("`") ? line.replace(/`[^`]*`/g, " ") : line;
  return [...text.matchAll(/(?:^|\s)(#[\p{L}\p{M}\p{N}_/-]*[\p{L}_/-][\p{L}\p{M}\p{N}_/-]*)/gu)].map((m) => m[1]);
}
function stripComment(text: string): string {
  return text.includes("<!--SR:") ? text.replace(SR_COMMENT, "").trimEnd() : text.trimEnd();
}

/**
 * The frontmatter's first-level scalars, where the body starts, and its tags (with '#'). Found as SR's
 * splitNoteIntoFrontmatterAndContent finds it: a first line that is exactly `---`, up to the next such line;
 * YAML's `...` ends none, and without a closing `---` the whole note is text.
 */
function readFrontmatter(lines: string[]): { frontmatter: Record<string, string>; bodyStart: number; tags: string[] } {
  const frontmatter: Record<string, string> = {};
  if (lines[0] !== "---") return { frontmatter, bodyStart: 0, tags: [] };
  const end = lines.indexOf("---", 1);
  if (end < 0) return { frontmatter, bodyStart: 0, tags: [] };
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
    .map((t) => (t.startsWith("#") ? t : `#${t}`));
  return { frontmatter, bodyStart: end + 1, tags: noteTags };
}
