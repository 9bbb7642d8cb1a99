import { isCjk } from "../indexing/text-tokenizer";
import { cutAt } from "../util/text";

/**
 * Whether a model's answer to "write a note about X" is a note. Small models sometimes answer with a
 * refusal ("I'm sorry, I can't…") or a chat reply instead, and saving that as a note is worse than
 * saving nothing. The check is on shape, not on phrases, so it works in every language: the prompt asks
 * for markdown headings, and an answer with no heading that is also short is not a note. A long answer
 * without headings is kept (a model that ignored the format still wrote one), and so is a short poem (a
 * haiku asked for): verse is laid out in lines, which a refusal or a chat reply is not (see isVerse).
 * Only a short chat line before the "# " title is dropped: frontmatter and an intro above a "## " section
 * are kept.
 */
const SHORTEST_NOTE_WITHOUT_HEADINGS = 400;
/**
 * A Chinese, Japanese or Korean character says about as much as three Latin letters: counted as one, a
 * 150-character Japanese paragraph would be taken for a one-line reply.
 */
const CJK_CHARACTER_WEIGHT = 3;
/** Chat lead-ins before the title ("Sure! Here is a short note:") longer than this are kept as text. */
const LONGEST_LEAD_IN = 200;

export type GeneratedNote = { ok: true; markdown: string } | { ok: false; problem: string };

/** A markdown heading line of any level, and the "# " title line the prompt asks for. */
const HEADING = /^#{1,6}[ \t]+\S/m;
const TITLE = /^#[ \t]+\S/m;

export function checkGeneratedNote(answer: string): GeneratedNote {
  const text = answer.trim();
  if (!HEADING.test(text)) {
    if (weightedLength(text) >= SHORTEST_NOTE_WITHOUT_HEADINGS || isVerse(text)) return { ok: true, markdown: text };
    return { ok: false, problem: `the model answered “${quoted(text)}” instead of writing a note` };
  }
  // A lead-in before the "# " title line the prompt asks for is the model talking to the user, not part of
  // the note. Text before a section heading ("## …") is the note's own intro, and frontmatter is the note's.
  const title = TITLE.exec(text);
  if (!title || title.index === 0) return { ok: true, markdown: text };
  const leadIn = text.slice(0, title.index).trim();
  const chat = leadIn.length <= LONGEST_LEAD_IN && !leadIn.includes("\n\n") && !HEADING.test(leadIn) && !leadIn.startsWith("---");
  return { ok: true, markdown: chat ? text.slice(title.index) : text };
}

/** The one repair request: what was wrong, and the format again. */
export function generatedNoteRepair(problem: string): string {
  return `That was not a note (${problem}). Write the note itself: start with a "# " title line, then a few "## " sections.`;
}

/** Verse lines are short; a chat reply broken into lines has sentences this long or longer. */
const LONGEST_VERSE_LINE = 60;
const SENTENCE_END = /[.!?…。！？؟]["'”’»)]*$/;
const LIST_ITEM = /^([-*+]|\d+[.)])\s/;

/**
 * Three or more short lines, none a list item, and not every one a finished sentence: a poem's shape. A
 * reply to the user broken into lines ("I'm sorry.\nI can't write that.\nAnything else?") ends each line
 * with a sentence; verse runs its sentences across lines.
 */
function isVerse(text: string): boolean {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (lines.length < 3) return false;
  if (lines.some((l) => weightedLength(l) > LONGEST_VERSE_LINE || LIST_ITEM.test(l))) return false;
  return lines.some((l) => !SENTENCE_END.test(l));
}

/** The text's length in Latin-letter terms (see CJK_CHARACTER_WEIGHT). */
function weightedLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length; i++) if (isCjk(text.charCodeAt(i))) length += CJK_CHARACTER_WEIGHT - 1;
  return length;
}

function quoted(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 160 ? `${cutAt(line, 160)}…` : line;
}
