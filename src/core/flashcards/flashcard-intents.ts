import { cleanArgument, normalizeMessage } from "../agents/intent-patterns";

/** "make flashcards about photosynthesis", "generate 5 flashcards from this note", "flashcards for this note". */
export interface FlashcardIntent {
  /** Null: the active note. */
  topic: string | null;
  max?: number;
}

const LEAD = String.raw`^(?:(?:please|pls|kindly|ok|okay|hey\s+krypton)[,]?\s+|(?:can|could|would|will)\s+you\s+|krypton[,:]\s*)*`;
const VERB = String.raw`(?:make|create|generate|write|build|give)\s+(?:me\s+)?`;
const COUNT = String.raw`(?:(?:some|a\s+few|a\s+set\s+of|(\d{1,2}))\s+)?`;
const CARDS = String.raw`(?:flash\s?cards?|anki\s+cards|cards)`;
const THIS_NOTE = /^(?:this|the\s+current|the\s+open|the\s+active|my\s+current|current)\s+(?:note|page|document|file)$/i;
const WITH_TOPIC = new RegExp(`${LEAD}${VERB}${COUNT}${CARDS}\\s+(?:about|on|for|from|covering|of)\\s+(.+)$`, "iu");
const BARE = new RegExp(`${LEAD}${VERB}${COUNT}${CARDS}$`, "iu");

export function detectFlashcardIntent(message: string): FlashcardIntent | null {
  if (message.length > 400) return null;
  const text = normalizeMessage(message);
  const bare = BARE.exec(text);
  if (bare) return { topic: null, ...(bare[1] ? { max: Number(bare[1]) } : {}) };
  const m = WITH_TOPIC.exec(text);
  if (!m) return null;
  const argument = cleanArgument(m[2] ?? "");
  if (!argument || argument.length > 200) return null;
  const max = m[1] ? { max: Number(m[1]) } : {};
  if (THIS_NOTE.test(argument)) return { topic: null, ...max };
  return { topic: argument, ...max };
}
