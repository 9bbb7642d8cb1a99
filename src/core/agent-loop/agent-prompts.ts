import type { ToolSpec } from "../ports/chat-model";
import { countOf } from "../util/text";

export const DEFAULT_PERSONA =
  "You are Krypton, an assistant working inside the user's Obsidian vault. Look things up with the tools instead of guessing, " +
  "never invent what a note says, and mention the notes you used as [[wiki links]].";

/** The system prompt for native tool calling: the tools travel as provider specs. */
export function nativeSystemPrompt(persona: string | undefined, instructions: readonly string[] = []): string {
  return [
    persona?.trim() || DEFAULT_PERSONA,
    "Call tools when you need information or to act; you may call several. When you have enough, answer in plain markdown without calling a tool.",
    ...instructions,
  ].join("\n\n");
}

/** The system prompt for the JSON action protocol: the tools are described in the text. */
export function jsonSystemPrompt(persona: string | undefined, tools: readonly ToolSpec[], instructions: readonly string[] = []): string {
  const list = tools.map((t) => `- ${t.name}: ${t.description}\n  arguments (JSON Schema): ${JSON.stringify(t.parameters)}`).join("\n");
  return [
    persona?.trim() || DEFAULT_PERSONA,
    "You work in steps. Reply with exactly ONE JSON object and nothing else:\n" +
      '- to use a tool: {"action":"call_tool","thought":"<why, briefly>","tool":"<name>","arguments":{...}}\n' +
      '- to answer the user: {"action":"final","response":"<your answer in markdown>"}\n' +
      "After a tool call you get its result, then you reply again. Use only these tools:\n" +
      list,
    ...instructions,
  ].join("\n\n");
}

/** Sent once after an empty reply (no text, no tool call). */
export const EMPTY_REPLY_NUDGE = "Your last reply was empty. Answer the user's message now from what you have, or call a tool if you still need one.";

export function reminderMessage(left: number): string {
  return `Only ${countOf(left, "step")} ${left === 1 ? "is" : "are"} left. Get what you still need now, then give your final answer.`;
}

export function stepLimitMessage(maxSteps: number): string {
  return `You have used all ${countOf(maxSteps, "step")}. Do not call any tool. Write your final answer now from the results above, and say briefly what you could not finish.`;
}

/** Marks an answer written at the step limit (the loop appends it). */
export function stepLimitMarker(maxSteps: number): string {
  return `\n\n*(Stopped at the step limit: ${countOf(maxSteps, "step")}.)*`;
}

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

/** Always the LAST message of every request, after tool results, where small models still see it. */
export function languageInstruction(question: string): string {
  const language = guessLanguage(question);
  const quoted = question.length > 160 ? `${question.slice(0, 159)}…` : question;
  return language
    ? `Write your answer in ${language}, the language of the user's message ("${quoted}"), whatever language the notes or tool results are in.`
    : `Write your answer in the same language as the user's message ("${quoted}"), whatever language the notes or tool results are in.`;
}
