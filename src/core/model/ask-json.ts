import { z } from "zod";
import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { AgentError } from "../notes/agent-error";
import { cleanModelText, cutOffAdvice, cutOffReason, modelAnswer, type AnswerCut } from "./ask-model";
import { errorMessage } from "../util/errors";
import { readScalarStrings, zodShapeKinds } from "../util/quoted-scalars";

export interface AskJsonOptions {
  signal?: AbortSignal;
  temperature?: number;
  /** The answer's budget (ANSWER_BUDGET): see AskModelOptions.maxTokens. */
  maxTokens: number;
  /** What the call is for, in "Could not <what>: …" messages ("generate flashcards"). */
  what: string;
  /**
   * Read a near miss as meant where it has one reading (see readNearMiss): a flow's typed output, where
   * small models write {"value": "85"}, a bare 85 or {"score": 85}. Anything else still gets the repair.
   */
  nearMisses?: boolean;
}

/**
 * The one way Krypton asks a model for JSON: the schema goes to the provider as structured output
 * (Ollama `format`, Gemini `responseJsonSchema`), the answer is parsed leniently (reasoning blocks, code
 * fences and prose around the object are dropped) and validated; an invalid answer gets exactly one
 * repair request naming what was wrong (for an answer cut at its cap, see cutOffRepair). Still invalid, or
 * stopped by the provider (Gemini SAFETY, a blocked prompt): AgentError, so callers write nothing. The
 * repair is sent with noThinking.
 */
export async function askJson<T>(
  model: ChatModel,
  messages: ChatMessage[],
  schema: z.ZodType<T>,
  options: AskJsonOptions,
): Promise<T> {
  const jsonSchema = jsonSchemaOf(schema);
  const ask = async (history: ChatMessage[], noThinking = false) => {
    const answer = await modelAnswer(model, history, {
      signal: options.signal,
      temperature: options.temperature ?? 0,
      json: true,
      jsonSchema,
      maxTokens: options.maxTokens,
      what: options.what,
      noThinking,
    });
    // A cut answer is invalid even when what arrived parses: whatever came after the cut is missing.
    const parsed: Parsed<T> = answer.cutOff ? { ok: false, problem: cutOffReason(answer, "it") } : parseAgainst(answer.text, schema, options);
    return { ...answer, parsed };
  };

  const first = await ask(messages);
  if (first.parsed.ok) return first.parsed.value;

  const repair: ChatMessage[] = first.cutOff
    ? cutOffRepair(messages, jsonSchema, first)
    : [
        ...messages,
        { role: "assistant", content: first.text },
        {
          role: "user",
          content: `Your last reply was not valid: ${first.parsed.problem}. Reply again with only the corrected JSON, matching this schema exactly:\n${JSON.stringify(jsonSchema)}`,
        },
      ];
  // Asked with thinking down where the provider can: fixing JSON to a question already asked once is
  // mechanical, and thinking would only make it slow and costly (or, after a cut spent thinking, cut again).
  const second = await ask(repair, true);
  if (second.parsed.ok) return second.parsed.value;
  throw new InvalidJsonAnswerError(options.what, second.parsed.problem, second.cutOff ? cutOffAdvice(second) : undefined);
}

/**
 * The repair for an answer cut at its cap. The cut text is not sent back: it is as long as the cap allows,
 * and a model shown its own loop tends to go on with it. The question is asked again with a note, in the
 * same user message (small models follow one message better than two), so the prompt differs from the
 * first one, which a model at temperature 0 would answer the same way. The note fits the cut: an answer
 * that ran on is asked to be much shorter; a model that spent the cap thinking is asked for the JSON at
 * once, since its JSON was never too long.
 */
function cutOffRepair(messages: ChatMessage[], jsonSchema: Record<string, unknown>, cut: AnswerCut): ChatMessage[] {
  const note = `${cutOffNote(cut, "Your previous reply to this")} Match this schema exactly:\n${JSON.stringify(jsonSchema)}`;
  const last = messages[messages.length - 1];
  if (last?.role === "user") return [...messages.slice(0, -1), { ...last, content: `${last.content}\n\n${note}` }];
  return [...messages, { role: "user", content: note }];
}

/**
 * What a model whose JSON reply was cut at its cap is told before it is asked again (askJson's repair, the
 * agent loop's correction), after `reply` ("Your previous reply"): one that ran on is asked for a much
 * shorter reply; one that spent the cap thinking, for the JSON at once, since its JSON was never too long.
 */
export function cutOffNote(cut: Pick<AnswerCut, "whileThinking">, reply: string): string {
  return cut.whileThinking
    ? `${reply} ran out of room while you were still thinking, before your JSON was complete. Do not think it through this time: reply at once with only the JSON, brief strings.`
    : `${reply} was cut off at the length limit before its JSON was complete, probably because it repeated itself. Reply with only the JSON, much shorter: no repeated items or sentences, brief strings.`;
}

/**
 * The model answered, but not with valid JSON, even after the repair request. An AgentError (safe to
 * show); its own class so callers with a fallback (the intent classifier) can tell it from a provider failure.
 */
export class InvalidJsonAnswerError extends AgentError {
  constructor(
    what: string,
    readonly problem: string,
    /** What to do instead of the usual "Try again or use a larger model." (a cut spent thinking). */
    advice = "Try again or use a larger model.",
  ) {
    super(`Could not ${what}: the model did not return valid JSON (${problem}), even after one correction. ${advice}`, "failed");
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Parses a model's reply against the schema; exported for callers that stream or recover JSON themselves. */
export function parseAgainst<T>(raw: string, schema: z.ZodType<T>, options: { nearMisses?: boolean } = {}): Parsed<T> {
  const cleaned = cleanModelText(raw);
  // A bare scalar ("85", "true", "\"85\"") has no object to find; with nearMisses it is read whole.
  const found = extractJsonText(cleaned);
  const text = found ?? (options.nearMisses && cleaned ? cleaned : null);
  if (text === null) return { ok: false, problem: "it contained no JSON object" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: found === null ? "it contained no JSON object" : `it was not parseable JSON (${errorMessage(err)})` };
  }
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  if (options.nearMisses) {
    const read = readNearMiss(value, schema);
    const again = read === undefined ? null : schema.safeParse(read);
    if (again?.success) return { ok: true, value: again.data };
  }
  const issues = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`)
    .join("; ");
  return { ok: false, problem: issues };
}

/**
 * The one reading of a near miss for an object schema, or undefined: quoted scalars of its fields (the tool
 * registry's reading), and, only when the schema has exactly one field, a bare value or an object with one
 * key under another name taken as that field. An object with two or more other keys could mean either: no
 * reading. The caller still validates the reading, so a value that does not fit is refused as written.
 */
function readNearMiss(value: unknown, schema: z.ZodType): Record<string, unknown> | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined;
  const shape = schema.shape as Record<string, z.core.$ZodType>;
  const fields = Object.keys(shape);
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  let candidate: Record<string, unknown> | undefined;
  if (isObject) {
    const keys = Object.keys(value);
    const single = fields.length === 1 && keys.length === 1 && keys[0] !== fields[0];
    candidate = single ? { [fields[0]]: (value as Record<string, unknown>)[keys[0]] } : (value as Record<string, unknown>);
  } else if (fields.length === 1) {
    candidate = { [fields[0]]: value };
  }
  return candidate && readScalarStrings(candidate, zodShapeKinds(shape));
}

/**
 * The first balanced JSON object or array in the text (models wrap JSON in prose). Strings are respected,
 * so braces inside them do not end the value early.
 */
export function extractJsonText(text: string): string | null {
  const start = text.search(/[[{]/);
  if (start < 0) return null;
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") stack.push(ch === "{" ? "}" : "]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return null;
      if (stack.length === 0) return text.slice(start, i + 1);
    }
  }
  return null;
}

const schemaCache = new WeakMap<object, Record<string, unknown>>();

/** JSON Schema for a zod schema (draft 2020-12 without $schema, which some providers reject). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const cached = schemaCache.get(schema);
  if (cached) return cached;
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  schemaCache.set(schema, rest);
  return rest;
}
