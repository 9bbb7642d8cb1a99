import { z } from "zod";
import { askJson, InvalidJsonAnswerError, parseAgainst } from "../model/ask-json";
import { ANSWER_BUDGET } from "../model/answer-budget";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { CLASSIFIER_INTENTS, intentClassifierPrompt } from "../notes/note-prompts";
import { cleanArgument, MAX_ARGUMENT_CHARS, type DetectedIntent, type IntentKind } from "./intent-patterns";

/** How many earlier messages the classifier sees, so "summarize it" or "make a note of that" resolve. */
export const CLASSIFIER_HISTORY = 4;

const INTENT_OF: Record<(typeof CLASSIFIER_INTENTS)[number], IntentKind | null> = {
  create_note: "create-note",
  search_notes: "search-notes",
  summarize_current_note: "summarize-note",
  summarize_topic: "summarize-topic",
  chat: null,
};

/** An intent that acts on a topic needs one; the check lives in the schema so the repair request names it. */
function needsArgument(intent: (typeof CLASSIFIER_INTENTS)[number]): boolean {
  const kind = INTENT_OF[intent];
  return kind !== null && kind !== "summarize-note";
}

const classifierAnswer = z
  .object({
    intent: z.enum(CLASSIFIER_INTENTS),
    argument: z.string().max(MAX_ARGUMENT_CHARS * 2).optional().default(""),
  })
  .superRefine((answer, ctx) => {
    if (!needsArgument(answer.intent)) return;
    const argument = cleanArgument(answer.argument.replace(/\s+/g, " "));
    if (!argument) ctx.addIssue({ code: "custom", path: ["argument"], message: `${answer.intent} needs an argument (the topic)` });
    else if (argument.length > MAX_ARGUMENT_CHARS) ctx.addIssue({ code: "custom", path: ["argument"], message: `too long (at most ${MAX_ARGUMENT_CHARS} characters)` });
  });

type ClassifierAnswer = z.infer<typeof classifierAnswer>;

/**
 * The classifier's verdict: an intent, `"chat"` (valid answer: no agent), or `"invalid"` (unusable output:
 * the caller falls back to the patterns).
 */
export type ClassifierVerdict = { kind: "intent"; intent: DetectedIntent } | { kind: "chat" } | { kind: "invalid"; reason: string };

function verdictOf(answer: ClassifierAnswer): ClassifierVerdict {
  const intent = INTENT_OF[answer.intent];
  if (intent === null) return { kind: "chat" };
  if (intent === "summarize-note") return { kind: "intent", intent: { intent, argument: "", source: "classifier" } };
  return { kind: "intent", intent: { intent, argument: cleanArgument(answer.argument.replace(/\s+/g, " ")), source: "classifier" } };
}

/** Parses and validates one classifier answer. Anything that is not exactly one known intent is invalid. */
export function parseClassifierAnswer(raw: string): ClassifierVerdict {
  const parsed = parseAgainst(raw, classifierAnswer);
  return parsed.ok ? verdictOf(parsed.value) : { kind: "invalid", reason: parsed.problem };
}

/**
 * Asks the chat model which intent the message has, given the last few messages (structured output and
 * one repair request, through askJson). An answer that stays invalid is an "invalid" verdict; provider
 * failures and Stop are thrown.
 */
export async function classifyIntent(
  model: ChatModel,
  message: string,
  history: ChatMessage[],
  signal?: AbortSignal,
): Promise<ClassifierVerdict> {
  const recent = history.filter((m) => m.role !== "system").slice(-CLASSIFIER_HISTORY);
  try {
    return verdictOf(await askJson(model, intentClassifierPrompt(message, recent), classifierAnswer, { signal, temperature: 0, maxTokens: ANSWER_BUDGET.label, what: "classify the request" }));
  } catch (err) {
    if (err instanceof InvalidJsonAnswerError) return { kind: "invalid", reason: err.problem };
    throw err;
  }
}
