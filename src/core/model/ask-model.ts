import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { AgentError } from "../notes/agent-error";
import { stripThinkBlocks } from "../util/think-blocks";
import { errorMessage, isAbortError } from "../util/errors";
import { IncompleteAnswerError } from "../providers/provider-error";
import { formatCount } from "../util/text";

export interface AskModelOptions {
  signal?: AbortSignal;
  temperature?: number;
  json?: boolean;
  jsonSchema?: Record<string, unknown>;
  /**
   * The most tokens the answer may take (ANSWER_BUDGET, by purpose): it caps the answer and is the room the
   * context window keeps for it. An answer that reaches it is cut, so it fails.
   */
  maxTokens: number;
  /** What the call is for, in "Could not <what>: …" messages ("generate the note"). */
  what: string;
}

/**
 * One non-streaming call to the chat model for an agent. Provider failures become an AgentError with
 * the provider's plain message (it never contains keys), so every host shows the same explanation;
 * a stop by the user stays an abort. An answer cut at the length limit or stopped by the provider is a
 * failure too: callers write what they get, and half a note is not a note.
 */
export async function askModel(model: ChatModel, messages: ChatMessage[], options: AskModelOptions): Promise<string> {
  const answer = await modelAnswer(model, messages, options);
  if (answer.cutOff) throw new AgentError(`Could not ${options.what}: the answer ${cutOffAt(answer.limit)}, so it was not used.`, "failed");
  return answer.text;
}

/** A cut answer's `limit` is the cap it had as sent (options.maxTokens when the provider does not say): a small window lowers it, reasoning room raises it. */
export type ModelAnswer = { text: string; cutOff: false } | { text: string; cutOff: true; limit: number };

/**
 * askModel's call, with an answer cut at the length limit handed back marked instead of thrown: askJson
 * sends its one repair request for it, as for any other invalid JSON.
 */
export async function modelAnswer(model: ChatModel, messages: ChatMessage[], options: AskModelOptions): Promise<ModelAnswer> {
  try {
    const raw = await model.complete({
      messages,
      signal: options.signal,
      temperature: options.temperature,
      json: options.json,
      jsonSchema: options.jsonSchema,
      maxTokens: options.maxTokens,
    });
    return { text: cleanModelText(raw), cutOff: false };
  } catch (err) {
    if (isAbortError(err) || options.signal?.aborted) throw err;
    if (err instanceof IncompleteAnswerError && err.cut === "length") return { text: cleanModelText(err.partial), cutOff: true, limit: err.limit ?? options.maxTokens };
    throw new AgentError(`Could not ${options.what}: ${errorMessage(err)}`, "failed");
  }
}

/** Why a cut answer was cut: "was cut off at the length limit Krypton sets for it (3,072 tokens) …". */
export function cutOffAt(maxTokens: number): string {
  return `was cut off at the length limit Krypton sets for it (${formatCount(maxTokens)} tokens), often a sign of a model repeating itself`;
}

/** Drops reasoning blocks some local models print and a code fence wrapped around the whole answer. */
export function cleanModelText(raw: string): string {
  let text = stripThinkBlocks(raw).trim();
  const fenced = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text);
  if (fenced) text = fenced[1].trim();
  return text;
}
