import { z } from "zod";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { CLASSIFIER_INTENTS, intentClassifierPrompt } from "../notes/note-prompts";
import { cleanArgument, MAX_ARGUMENT_CHARS, type DetectedIntent, type IntentKind } from "./intent-patterns";

/** How many earlier messages the classifier sees, so "summarize it" or "make a note of that" resolve. */
export const CLASSIFIER_HISTORY = 4;

const classifierAnswer = z.object({
  intent: z.enum(CLASSIFIER_INTENTS),
  argument: z.string().max(MAX_ARGUMENT_CHARS * 2).optional().default(""),
});

const INTENT_OF: Record<(typeof CLASSIFIER_INTENTS)[number], IntentKind | null> = {
  create_note: "create-note",
  search_notes: "search-notes",
  summarize_current_note: "summarize-note",
  summarize_topic: "summarize-topic",
  chat: null,
};

/**
 * The classifier's verdict: an intent, `"chat"` (valid answer: no agent), or `"invalid"` (unusable output:
 * the caller falls back to the patterns).
 */
export type ClassifierVerdict = { kind: "intent"; intent: DetectedIntent } | { kind: "chat" } | { kind: "invalid"; reason: string };

/** Parses and validates a classifier answer. Anything that is not exactly one known intent is invalid. */
export function parseClassifierAnswer(raw: string): ClassifierVerdict {
  const text = raw.replace(/<think>[\s\S]*?<\/think>/gi, "");
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return { kind: "invalid", reason: "no JSON object" };
  let json: unknown;
  try {
    json = JSON.parse(text.slice(start, end + 1));
  } catch {
    return { kind: "invalid", reason: "malformed JSON" };
  }
  const parsed = classifierAnswer.safeParse(json);
  if (!parsed.success) return { kind: "invalid", reason: "unexpected shape" };
  const intent = INTENT_OF[parsed.data.intent];
  if (intent === null) return { kind: "chat" };
  if (intent === "summarize-note") return { kind: "intent", intent: { intent, argument: "", source: "classifier" } };
  const argument = cleanArgument(parsed.data.argument.replace(/\s+/g, " "));
  if (!argument) return { kind: "invalid", reason: `${parsed.data.intent} without an argument` };
  if (argument.length > MAX_ARGUMENT_CHARS) return { kind: "invalid", reason: "argument too long" };
  return { kind: "intent", intent: { intent, argument, source: "classifier" } };
}

/** Asks the chat model which intent the message has, given the last few messages. Throws provider errors. */
export async function classifyIntent(
  model: ChatModel,
  message: string,
  history: ChatMessage[],
  signal?: AbortSignal,
): Promise<ClassifierVerdict> {
  const recent = history.filter((m) => m.role !== "system").slice(-CLASSIFIER_HISTORY);
  const raw = await model.complete({ messages: intentClassifierPrompt(message, recent), json: true, temperature: 0, signal });
  return parseClassifierAnswer(raw);
}
