/** Which language an answer should be in: a guess from the user's message, and the instruction saying so. */

const LANGUAGE_HINTS: { name: string; words: RegExp }[] = [
  { name: "German", words: /\b(und|der|die|das|ist|nicht|ich|wie|was|meine[nmr]?|bitte|über|für|mit|notizen?)\b/gi },
  { name: "Spanish", words: /\b(el|la|los|las|que|de|es|por|para|mis|cómo|qué|notas?|sobre|una?|con)\b/gi },
  { name: "French", words: /\b(le|la|les|des|est|et|que|pour|mes|comment|quoi|sur|une?|avec|dans|notes?)\b/gi },
  { name: "Italian", words: /\b(il|lo|gli|che|di|è|per|mie|come|cosa|sulle|una?|con|note)\b/gi },
  { name: "Portuguese", words: /\b(o|os|as|que|de|é|para|minhas|como|sobre|uma?|com|notas?|não)\b/gi },
  { name: "English", words: /\b(the|and|is|are|what|how|my|notes?|about|please|with|for|of)\b/gi },
];

/** A best guess at the language of a short message, by common words; null when unsure. */
export function guessLanguage(text: string): string | null {
  if (/[\u3040-\u30ff]/.test(text)) return "Japanese";
  if (/[\u4e00-\u9fff]/.test(text)) return "Chinese";
  if (/[\uac00-\ud7af]/.test(text)) return "Korean";
  if (/[\u0400-\u04ff]/.test(text)) return "Russian";
  let best: { name: string; score: number } | null = null;
  let second = 0;
  for (const hint of LANGUAGE_HINTS) {
    const score = text.match(hint.words)?.length ?? 0;
    if (!best || score > best.score) {
      second = best?.score ?? 0;
      best = { name: hint.name, score };
    } else if (score > second) second = score;
  }
  if (/[äöüß]/i.test(text) && best?.name !== "German") return "German";
  if (/[ñ¿¡]/.test(text)) return "Spanish";
  return best && best.score >= 2 && best.score > second ? best.name : null;
}

/**
 * The answer-language instruction, sent as the LAST message of every request (after the context blocks, the
 * history and tool results), where small models still follow it: at the top of a long prompt they drift into
 * the language of the notes. Used by chat and agent mode alike.
 */
export function languageInstruction(question: string): string {
  const language = guessLanguage(question);
  const quoted = question.length > 160 ? `${question.slice(0, 159)}…` : question;
  return language
    ? `Write your answer in ${language}, the language of the user's message ("${quoted}"), whatever language the notes or tool results are in.`
    : `Write your answer in the same language as the user's message ("${quoted}"), whatever language the notes or tool results are in.`;
}
