import { parseCards, type ParsedCard, type ParsedDeck } from "./card-parser";
import { plainClozeTemplate, readClozes } from "./sr-cloze";
import type { SrFormat } from "./sr-format";
import { cutAt, inLineEndingOf } from "../util/text";

/** A card Krypton is about to write. `source` is a link target: "Folder/Note#Heading". */
export interface NewCard {
  kind: "basic" | "reversed" | "cloze";
  /** Basic/reversed: the question. Cloze: the full sentence with ==deletions==. */
  front: string;
  /** Basic/reversed: the answer. Cloze: unused (""). */
  back: string;
  source: string;
}

/** The frontmatter key that marks a note as a Krypton deck; Krypton appends to no other note. */
export const DECK_MARKER = "krypton-deck";

/**
 * One card as one line in SR's syntax, ending with its source link. Single-line forms only: the text was
 * flattened and checked for separators before (see cleanCard), so the line always parses back to this card.
 */
export function formatCard(card: NewCard, format: SrFormat): string {
  const link = `[[${card.source}]]`;
  if (card.kind === "cloze") {
    // With an end marker set, SR ends a cloze only at the marker: without it the next card joins this one.
    const end = format.endMarker ? `\n${format.endMarker}` : "";
    const write = clozeWriter(format);
    if (write) return `${card.front.replace(/==([^=\n]+?)==/g, (_, answer: string) => write(answer))} ${link}${end}`;
    // No cloze pattern SR can read (clozes turned off): ask the same thing as a basic card.
    const answers = [...card.front.matchAll(/==([^=\n]+?)==/g)].map((m) => m[1]);
    return `${card.front.replace(/==([^=\n]+?)==/g, "…")}${format.singleLine}${answers.join(", ")} ${link}`;
  }
  const sep = card.kind === "reversed" ? format.singleLineReversed : format.singleLine;
  return `${card.front}${sep}${card.back} ${link}`;
}

/**
 * How a deletion is written so the user's SR reads it: the first of their clozePatterns whose plain form
 * ("==answer==", "{{answer}}", no number or hint) reads back as one cloze of that answer. Null when none
 * does, which the caller must say: such a cloze is written as a question and answer.
 */
export function clozeWriter(format: SrFormat): ((answer: string) => string) | null {
  for (const pattern of format.clozePatterns) {
    const template = plainClozeTemplate(pattern);
    if (!template?.includes("answer")) continue;
    const write = (answer: string) => template.replace("answer", () => answer);
    const read = readClozes(`A ${write("probe")} B`, format.clozePatterns);
    if (read.reviewCards === 1 && read.clozes.length === 1 && read.clozes[0].answer === "probe") return write;
  }
  return null;
}

/**
 * The deck tag for a deck name under the user's first SR tag: "#flashcards/aws-saa", "#flashcards/ドイツ語".
 * Lower-cased, with every letter, mark and digit of any script as written (Obsidian's tags take them all, and SR
 * names the deck after the tag), in NFC; runs of anything else a tag cannot hold (spaces, punctuation) become
 * one "-". A mark left with no letter before it goes: it would stand on a "-" or start the tag.
 */
export function deckTag(deckName: string, format: SrFormat): string {
  const slug = cutAt(
    deckName
      .normalize("NFC")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}_-]+/gu, "-")
      .replace(/(^|[^\p{L}\p{M}\p{N}])\p{M}+/gu, "$1")
      .replace(/^-+/, ""),
    60,
  )
    .replace(/-+$/, "")
    .normalize("NFC");
  return `${format.tags[0] ?? "#flashcards"}/${slug || "cards"}`;
}

/**
 * The tags a deck of this name may carry, deckTag first. Krypton once folded marks away like accents, so a
 * deck made then carries "#flashcards/ト-イツ語" for "ドイツ語" (and "#flashcards/cafe" for "Café"): its cards
 * must still go under the tag it has, or SR would split it into two decks.
 */
export function deckTags(deckName: string, format: SrFormat): string[] {
  const folded =
    deckName
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/[^\p{L}\p{N}_-]+/gu, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "cards";
  return [...new Set([deckTag(deckName, format), `${format.tags[0] ?? "#flashcards"}/${folded}`])];
}

/**
 * The one of a deck's possible tags (deckTags) new cards go under: the one its end is in, else one its cards
 * are in (an older form, after a user's tag line at the end), else the first.
 */
export function deckTagOf(deck: Pick<ParsedDeck, "cards" | "trailingDecks">, tags: readonly string[]): string {
  const inDeck = (decks: readonly string[]) => tags.find((t) => decks.includes(t.slice(1)));
  return inDeck(deck.trailingDecks) ?? inDeck(deck.cards.flatMap((c) => c.decks)) ?? tags[0];
}

/** A new deck note: frontmatter marking it as Krypton's, the deck tag in the body, then the cards. */
export function newDeckNote(deckName: string, tag: string, cards: string[], createdIso: string): string {
  const name = JSON.stringify(deckName);
  const head = ["---", `${DECK_MARKER}: true`, `deck: ${name}`, `created: ${createdIso}`, "---", "", tag, ""].join("\n");
  return `${head}\n${cards.map((c) => `${c}\n\n`).join("")}`;
}

/**
 * Old text plus new cards, never touching a byte of the old text: only a separating newline or two is
 * added so the old last card keeps its blank line, and the deck tag is repeated when the note's last tag
 * line points elsewhere (a user's edit), so the new cards still land in their deck. What the old text
 * leaves open is closed first, or SR would read the new cards into it: a code fence (as code) and, with an
 * end marker set, a card (as its continuation). The added lines end as the old text's do (CRLF or LF).
 */
export function appendCards(
  current: string,
  cards: string[],
  tag: string,
  deck: Pick<ParsedDeck, "trailingDecks" | "openFence" | "openCard">,
  endMarker = "",
): string {
  if (!cards.length) return current;
  const closers = [deck.openFence ?? "", deck.openCard ? endMarker : ""].filter(Boolean);
  const closed = closers.length ? `${current === "" || current.endsWith("\n") ? "" : "\n"}${closers.map((c) => `${c}\n`).join("")}` : "";
  // Built with "\n", written in the text's own line ending; its end is looked at the same way ("\r\n\r\n" is a blank line).
  const end = `${current.slice(-4)}${closed}`.replace(/\r\n/g, "\n");
  const lead = end === "" || end.endsWith("\n\n") ? "" : end.endsWith("\n") ? "\n" : "\n\n";
  const needTag = !deck.trailingDecks.includes(tag.slice(1));
  const block = `${needTag ? `${tag}\n\n` : ""}${cards.map((c) => `${c}\n\n`).join("")}`;
  const next = current + inLineEndingOf(current, closed + lead + block);
  // The promise this module makes; cheap to check, fatal to break.
  if (!next.startsWith(current)) throw new Error("appendCards would change existing text");
  return next;
}

/**
 * Markdown's line-start markers, on every line: quote (`>`, nested), then a heading's `#`s or a list item's
 * `-`, `+` or `*`. SR keeps them in a card's text and renders it as Markdown, where they show as a quote, a
 * heading or a bullet, never as characters.
 */
const LINE_MARKERS = /^[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]+|[-+*][ \t]+)?/gm;

/** A card's text without its line-start markers (LINE_MARKERS): as SR's rendering of it reads, for the quiz. */
export function withoutLineMarkers(text: string): string {
  return text.replace(LINE_MARKERS, "");
}

/**
 * The key two cards share when they ask the same thing: the question (cloze: the sentence) lower-cased, without
 * links, scheduling comments, markup, line-start markers (heading, list item, quote) and punctuation, in one
 * spacing. Signs stay, as they change the meaning: "-5+3" is not "5+3", "C++" and "C#" are not "C"; a hyphen
 * joining a word ("X-ray", "COVID-19") is none. Rewording the source changes the key; a second run over the same
 * text does not. The quiz compares answers by it too (gradeLocally): one notion of "the same text".
 */
export function cardKey(front: string): string {
  const text = front
    .replace(/<!--SR:[^>]*-->/g, "")
    .replace(/\[\[[^\]]*\]\]/g, "")
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[=*_`~{}]/g, "")
    .replace(LINE_MARKERS, "")
    .replace(/\u2212/g, "-")
    .replace(/([\p{L}\p{M}])-(?=[\p{L}\p{N}])|(\p{N})-(?=\p{L})|[\u2010\u2011]/gu, (_, a?: string, b?: string) => `${a ?? b ?? ""} `);
  // Words (letters with their marks, digits) and single signs; all else, spacing included, is left out.
  return (text.match(/[\p{L}\p{M}\p{N}]+|[#\-\p{Sm}]/gu) ?? []).join(" ");
}

/**
 * The keys a new card has once written in `format`: those of the card its line reads back as, as existing cards'
 * keys are made (questionKeys). A cloze written as question and answer (no cloze pattern) asks "…", not its
 * deletions, so a second run must compare that question or it adds the card again.
 */
export function newCardKeys(card: NewCard, format: SrFormat): string[] {
  const read = parseCards(formatCard(card, format), format).cards[0];
  return read ? questionKeys(read) : [cardKey(card.front)];
}

/** The key of a new card's question (newCardKeys' first): a card whose key a deck has already is not added. */
export function newCardKey(card: NewCard, format: SrFormat): string {
  return newCardKeys(card, format)[0];
}

/** Keys of a deck's existing cards (SR comments, user edits and all). */
export function existingKeys(cards: readonly ParsedCard[]): Set<string> {
  return new Set(cards.flatMap(questionKeys));
}

/**
 * Keys of the questions SR asks from a card: its front's, and a reversed card's back's too, which SR asks back to
 * front, so "B::A" repeats "A:::B".
 */
function questionKeys(card: ParsedCard): string[] {
  const front = cardKey(card.front);
  return card.kind === "reversed" || card.kind === "multiline-reversed" ? [front, cardKey(card.back)] : [front];
}
