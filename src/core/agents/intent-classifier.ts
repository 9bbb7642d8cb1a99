import { z } from "zod";
import { askJson, InvalidJsonAnswerError, parseAgainst } from "../model/ask-json";
import { ANSWER_BUDGET } from "../model/answer-budget";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { CLASSIFIER_INTENTS, intentClassifierPrompt } from "../notes/note-prompts";
import { parseMinutes } from "../goals/goal-parse";
import { cleanArgument, MAX_ARGUMENT_CHARS, type IntentKind, type RoutedIntent } from "./intent-patterns";

/** How many earlier messages the classifier sees, so "summarize it" or "make a note of that" resolve. */
export const CLASSIFIER_HISTORY = 4;

type ClassifierIntent = (typeof CLASSIFIER_INTENTS)[number];

/** What each intent's argument is, named in the repair request; an intent not here may leave it "" (the open note, all goals, chat). */
const ARGUMENT_OF: Partial<Record<ClassifierIntent, string>> = {
  create_note: "the topic",
  search_notes: "the topic",
  summarize_topic: "the topic",
  quiz: "the topic",
  set_study_goal: "the goal",
  log_study_time: "the goal",
  study_goal_progress: "the goal",
  plan_study_week: "the goal",
};
const MAX_FIELD_CHARS = 60;

/** Checks live in the schema, so the repair request names what was wrong. Small models write null for "none". */
const classifierAnswer = z
  .object({
    intent: z.enum(CLASSIFIER_INTENTS),
    argument: z.string().max(MAX_ARGUMENT_CHARS * 2).nullish().transform((v) => v ?? ""),
    // More than the flashcard service makes in one run is cut to its limit there, as for the patterns' count.
    count: z.number().int().min(1).nullish(),
    target_date: z.string().max(MAX_FIELD_CHARS).nullish(),
    duration: z.string().max(MAX_FIELD_CHARS).nullish(),
  })
  .superRefine((answer, ctx) => {
    const argument = topicOf(answer.argument);
    const needed = ARGUMENT_OF[answer.intent];
    if (!argument && needed) ctx.addIssue({ code: "custom", path: ["argument"], message: `${answer.intent} needs an argument (${needed})` });
    // The other intents drop their argument, except flashcards, whose topic is optional.
    else if ((needed || answer.intent === "make_flashcards") && argument.length > MAX_ARGUMENT_CHARS) ctx.addIssue({ code: "custom", path: ["argument"], message: `too long (at most ${MAX_ARGUMENT_CHARS} characters)` });
    // The duration is read as the goal agent reads it: "30 minutes" but not "a while".
    if (answer.intent === "log_study_time" && !(answer.duration && /\d/.test(answer.duration) && parseMinutes(answer.duration) !== null)) {
      ctx.addIssue({ code: "custom", path: ["duration"], message: 'log_study_time needs a duration with a number ("30 minutes")' });
    }
  });

type ClassifierAnswer = z.infer<typeof classifierAnswer>;

/**
 * The classifier's verdict: an intent, `"chat"` (valid answer: no agent), or `"invalid"` (unusable output:
 * the caller falls back to the patterns).
 */
export type ClassifierVerdict = { kind: "intent"; intent: RoutedIntent } | { kind: "chat" } | { kind: "invalid"; reason: string };

const NOTE_INTENT: Partial<Record<ClassifierIntent, IntentKind>> = {
  create_note: "create-note",
  search_notes: "search-notes",
  summarize_current_note: "summarize-note",
  summarize_topic: "summarize-topic",
};

function topicOf(argument: string): string {
  return cleanArgument(argument.replace(/\s+/g, " "));
}

function verdictOf(answer: ClassifierAnswer): ClassifierVerdict {
  const source = "classifier" as const;
  const argument = topicOf(answer.argument);
  const intent = (value: RoutedIntent): ClassifierVerdict => ({ kind: "intent", intent: value });
  const note = NOTE_INTENT[answer.intent];
  if (note) return intent({ intent: note, argument: note === "summarize-note" ? "" : argument, source });
  switch (answer.intent) {
    case "make_flashcards":
      return intent({ intent: "flashcards", request: { topic: argument || null, ...(answer.count ? { max: answer.count } : {}) }, source });
    case "quiz":
      return intent({ intent: "quiz", topic: argument, source });
    case "set_study_goal": {
      const target = answer.target_date?.trim();
      return intent({ intent: "study-goal", request: { type: "create", goal: argument, ...(target ? { target } : {}) }, source });
    }
    case "log_study_time":
      return intent({ intent: "study-goal", request: { type: "log", amount: (answer.duration ?? "").trim(), goal: argument }, source });
    case "list_study_goals":
      return intent({ intent: "study-goal", request: { type: "list" }, source });
    case "study_goal_progress":
      return intent({ intent: "study-goal", request: { type: "progress", goal: argument }, source });
    case "plan_study_week":
      return intent({ intent: "study-goal", request: { type: "plan", goal: argument }, source });
    default:
      return { kind: "chat" };
  }
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
