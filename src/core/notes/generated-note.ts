import { isCjk } from "../indexing/text-tokenizer";
import { cutAt } from "../util/text";

/**
 * Whether a model's answer to "write a note about X" is a note. Small models sometimes answer with a
 * refusal ("I'm sorry, I can't…") or a chat reply instead, and saving that as a note is worse than
 * saving nothing. The prompt asks for markdown headings, so an answer with a heading is a note. One
 * without is kept when it is long (a model that ignored the format still wrote one), laid out as verse (a
 * haiku asked for; see isVerse), or short but not the model speaking to the user: "Buy milk." is the note
 * asked for, while an apology, a refusal or a question back is a reply (see isReply).
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
    if (weightedLength(text) >= SHORTEST_NOTE_WITHOUT_HEADINGS || isVerse(text) || !isReply(text)) return { ok: true, markdown: text };
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

/**
 * What only a model talking to the user writes, in the ten languages requests are recognised in: an
 * apology, "as an AI / a language model", or "I can't help/write…". A note the user dictated ("Buy milk.",
 * "Call the dentist on Friday") has none of these, so it is kept rather than taken for a refusal.
 */
const REPLY_PHRASES = [
  /\b(i'?m|i am) (so |very |really )?sorry\b|\bi apologi[sz]e\b|^sorry\b|\bas an ai\b|\blanguage model\b/,
  /\bi('m| am)? (can'?t|cannot|can not|won'?t|will not|unable to|not able to) (help|assist|write|create|provide|comply|fulfil|do that|make)/,
  /\blo siento\b|\blo lamento\b|\bno puedo (ayudar|escribir|crear|hacer|proporcionar|cumplir)|\bcomo (una? )?(ia|modelo de lenguaje)\b/,
  /\bdésolée?(?![a-z])|\bje ne (peux|suis pas en mesure)\b|\ben tant qu'(ia|assistant|intelligence artificielle)|\bmodèle de langage\b/,
  /\b(es )?tut mir leid\b|\bich kann (dir |ihnen |dabei |leider )*nicht (helfen|schreiben|erstellen)|\bals (eine )?ki\b|\bsprachmodell\b/,
  /\bdesculpe?\b|\bsinto muito\b|\bnão posso\b|\bcomo (uma )?ia\b|\bmodelo de linguagem\b/,
  /\bmi dispiace\b|\bnon posso (aiutar|scriver|crear|fornir)|\bcome (un'?)?ia\b|\bmodello linguistico\b/,
  /(^|[^а-яё])(извините|простите|к сожалению|я не могу|как ии|языковая модель)/,
  /申し訳|すみません|お手伝いできません|お応えできません|お答えできません|aiとして|言語モデル/,
  /抱歉|对不起|對不起|我不能|我无法|我無法|作为ai|作為ai|语言模型|語言模型/,
  /죄송|미안합니다|도와드릴 수 없|도와 드릴 수 없|할 수 없습니다|ai로서|언어 모델/,
];
/** A question back to the user ("What should the note cover?") is a reply, not a note. */
const ASKS_BACK = /[?？؟]["'”’»)]*$/;

function isReply(text: string): boolean {
  const plain = text.toLowerCase().replace(/[’‘]/g, "'");
  return ASKS_BACK.test(plain) || REPLY_PHRASES.some((phrase) => phrase.test(plain));
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
