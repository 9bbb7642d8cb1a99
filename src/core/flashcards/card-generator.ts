import { z } from "zod";
import { askJson } from "../model/ask-json";
import { ANSWER_BUDGET } from "../model/answer-budget";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { throwIfAborted } from "../util/errors";
import { parseCards } from "./card-parser";
import { clozeWriter, formatCard, newCardKeys, type NewCard } from "./card-writer";
import { readClozes } from "./sr-cloze";
import type { SrFormat } from "./sr-format";

/** A numbered piece of source text the model must cite; `source` is the link target "Note#Heading". */
export interface Passage {
  n: number;
  text: string;
  source: string;
}

export const FLASHCARD_LIMITS = {
  defaultCards: 10,
  maxCards: 30,
  /** A passage is at most this long (a paragraph or a few): small enough to cite precisely. */
  passageChars: 900,
  /** Passages per model call, by size: long notes go in parts so small models keep the whole prompt. */
  partChars: 6000,
  /** At most this many parts (model calls) per run. */
  maxParts: 12,
  frontChars: 300,
  backChars: 500,
};

const cardSchema = z.object({
  cards: z.array(
    z.object({
      type: z.enum(["basic", "reversed", "cloze"]),
      front: z.string(),
      back: z.string().optional(),
      passage: z.number().int(),
    }),
  ),
});

export interface GenerationCounts {
  /** Cards whose passage number was not one given in the prompt. */
  ungrounded: number;
  /** Cards already in the deck (or made twice in this run). */
  duplicates: number;
  /** Cards that could not be written as one valid SR card (empty side, separator inside, cloze without ==). */
  unusable: number;
}

/** Splits a note body into numbered passages under their heading, for the link "[[Note#Heading]]". */
export function notePassages(body: string, noteLinkTarget: string, startHeading = ""): Passage[] {
  const firstNumber = 1;
  const out: Passage[] = [];
  let heading = linkHeading(startHeading);
  let buffer: string[] = [];
  const push = (text: string) => {
    const t = text.trim();
    if (t) out.push({ n: firstNumber + out.length, text: t, source: heading ? `${noteLinkTarget}#${heading}` : noteLinkTarget });
  };
  const flush = () => {
    let current = "";
    for (const para of buffer.join("\n").split(/\n\s*\n/)) {
      for (const piece of splitLong(para.trim(), FLASHCARD_LIMITS.passageChars)) {
        if (current && current.length + piece.length + 2 > FLASHCARD_LIMITS.passageChars) {
          push(current);
          current = "";
        }
        current = current ? `${current}\n\n${piece}` : piece;
      }
    }
    push(current);
    buffer = [];
  };
  let fence = false;
  for (const line of body.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const h = fence ? null : /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (h) {
      flush();
      heading = linkHeading(h[1]);
      continue;
    }
    buffer.push(line);
  }
  flush();
  return out;
}

/** Characters Obsidian does not allow in a heading link are dropped from the link only. */
function linkHeading(text: string): string {
  return text.replace(/[#^[\]|]/g, " ").replace(/\s+/g, " ").trim();
}

/** The heading a selection sits under in its note ("" before the first heading or when not found). */
export function headingAbove(body: string, selection: string): string {
  const at = body.indexOf(selection.trim());
  if (at < 0) return "";
  const headings = [...body.slice(0, at).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)];
  return headings.length ? headings[headings.length - 1][1] : "";
}

function splitLong(text: string, max: number): string[] {
  if (text.length <= max) return text ? [text] : [];
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    const cut = Math.max(window.lastIndexOf(". "), window.lastIndexOf("\n"));
    const at = cut > max / 3 ? cut + 1 : max;
    out.push(rest.slice(0, at).trim());
    rest = rest.slice(at);
  }
  if (rest.trim()) out.push(rest.trim());
  return out;
}

/** Groups passages into parts of at most partChars (one model call each). */
export function passageParts(passages: Passage[]): Passage[][] {
  const parts: Passage[][] = [];
  let current: Passage[] = [];
  let size = 0;
  for (const p of passages) {
    if (current.length && size + p.text.length > FLASHCARD_LIMITS.partChars) {
      parts.push(current);
      current = [];
      size = 0;
    }
    current.push(p);
    size += p.text.length + 10;
  }
  if (current.length) parts.push(current);
  return parts;
}

export function flashcardPrompt(title: string, passages: Passage[], wanted: number): ChatMessage[] {
  const numbered = passages.map((p) => `[${p.n}] ${p.text}`).join("\n\n");
  return [
    {
      role: "system",
      content:
        "You write flashcards for spaced repetition from the numbered passages the user gives, and nothing else. " +
        "Each card tests one fact stated in one passage and gives that passage's number in `passage`. " +
        'Types: "basic" (front: a question, back: a short answer), "reversed" (a term and its definition, both ways), ' +
        '"cloze" (front: one sentence from the passage with the key words wrapped in ==double equals==, back: ""). ' +
        "Keep each side on one line, short and unambiguous. Do not invent facts. Reply with JSON only.",
    },
    {
      role: "user",
      content: `Source: ${title}\n\nPassages:\n${numbered}\n\nWrite at most ${wanted} flashcards as {"cards":[{"type","front","back","passage"}]}.`,
    },
  ];
}

/**
 * Asks the model for cards part by part and keeps those that cite a passage of their part, make one valid
 * SR card and are not yet in the deck. Throws (AgentError) when the model's JSON stays invalid after the
 * one repair askJson makes: the caller writes nothing.
 */
export async function generateCards(options: {
  model: ChatModel;
  title: string;
  passages: Passage[];
  max: number;
  format: SrFormat;
  existing: Set<string>;
  signal?: AbortSignal;
}): Promise<{ cards: NewCard[]; counts: GenerationCounts; partsUsed: number; partsTotal: number }> {
  const counts: GenerationCounts = { ungrounded: 0, duplicates: 0, unusable: 0 };
  const cards: NewCard[] = [];
  const seen = new Set(options.existing);
  const allParts = passageParts(options.passages);
  const parts = allParts.slice(0, FLASHCARD_LIMITS.maxParts);
  let partsUsed = 0;
  for (const part of parts) {
    if (cards.length >= options.max) break;
    throwIfAborted(options.signal);
    partsUsed++;
    // Spread the cap over the parts left, at least 3 per call so each part can contribute.
    const left = options.max - cards.length;
    const wanted = Math.max(Math.min(3, left), Math.ceil(left / (parts.length - partsUsed + 1)));
    const answer = await askJson(options.model, flashcardPrompt(options.title, part, wanted), cardSchema, {
      what: "generate flashcards",
      maxTokens: ANSWER_BUDGET.long,
      signal: options.signal,
      temperature: 0.2,
    });
    const byNumber = new Map(part.map((p) => [p.n, p]));
    for (const raw of answer.cards) {
      const passage = byNumber.get(raw.passage);
      if (!passage) {
        counts.ungrounded++;
        continue;
      }
      const card = cleanCard({ kind: raw.type, front: raw.front, back: raw.back ?? "", source: passage.source }, options.format);
      if (!card) {
        counts.unusable++;
        continue;
      }
      const keys = newCardKeys(card, options.format);
      const key = keys[0];
      // A question of markup alone ("==  ==") asks nothing.
      if (!key) {
        counts.unusable++;
        continue;
      }
      if (seen.has(key)) {
        counts.duplicates++;
        continue;
      }
      if (cards.length >= options.max) break;
      // A reversed card's back is a question too: a later "back::front" would repeat it.
      for (const k of keys) seen.add(k);
      cards.push(card);
    }
  }
  return { cards, counts, partsUsed, partsTotal: allParts.length };
}

/** One line per side, no separator or scheduling comment inside; null when the card cannot be a valid SR card. */
export function cleanCard(card: NewCard, format: SrFormat): NewCard | null {
  const flat = (s: string) => s.replace(/<!--[^]*?-->/g, "").replace(/\s+/g, " ").trim();
  const front = flat(card.front);
  const back = card.kind === "cloze" ? "" : flat(card.back);
  const separators = [format.singleLine, format.singleLineReversed].filter(Boolean);
  const hasSeparator = (s: string) => separators.some((sep) => s.includes(sep));
  if (!front || front.length > FLASHCARD_LIMITS.frontChars || hasSeparator(front)) return null;
  if (card.kind === "cloze") {
    if (!/==[^=\n]+?==/.test(front)) return null;
  } else if (!back || back.length > FLASHCARD_LIMITS.backChars || hasSeparator(back) || /==[^=]+==/.test(front)) {
    return null;
  }
  // A side that is only the multi-line separator, or starts with '#' (a tag or heading to SR), would read differently.
  if (front.startsWith("#") || [format.multiLine, format.multiLineReversed].includes(back)) return null;
  // The last word is SR's reading: the written line must parse back as this one card (a separator between
  // stray backticks, for one, reads as inline code).
  const clean = { ...card, front, back };
  const read = parseCards(formatCard(clean, format), format).cards;
  if (read.length !== 1 || (card.kind !== "cloze" && (read[0].kind !== card.kind || read[0].front !== front))) return null;
  // A cloze written in the user's pattern must read back with the deletions the model marked ("}}" inside "{{…}}" would not).
  const deletions = (text: string) => readClozes(text).clozes.map((c) => c.answer).join("\n");
  if (card.kind === "cloze" && clozeWriter(format) && read[0].deletions.join("\n") !== deletions(front)) return null;
  return clean;
}
