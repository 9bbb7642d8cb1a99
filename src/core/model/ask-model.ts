import type { ChatMessage, ChatModel, LengthCut } from "../ports/chat-model";
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
  /** Ask the model not to think first, where the provider can (ChatRequest.noThinking). */
  noThinking?: boolean;
}

/**
 * One non-streaming call to the chat model for an agent. Provider failures become an AgentError with
 * the provider's plain message (it never contains keys), so every host shows the same explanation;
 * a stop by the user stays an abort. An answer cut at the length limit or stopped by the provider is a
 * failure too: callers write what they get, and half a note is not a note.
 */
export async function askModel(model: ChatModel, messages: ChatMessage[], options: AskModelOptions): Promise<string> {
  const answer = await modelAnswer(model, messages, options);
  if (answer.cutOff) {
    const advice = cutOffAdvice(answer);
    const unused = answer.whileThinking ? "its answer was not used" : "it was not used";
    throw new AgentError(`Could not ${options.what}: ${cutOffReason(answer)}, so ${unused}.${advice ? ` ${advice}` : ""}`, "failed");
  }
  return answer.text;
}

/**
 * How an answer was cut at its cap (LengthCut, with whileThinking always said). `limit` is the cap as sent
 * (options.maxTokens when the provider does not say): a small window lowers it, reasoning room raises it;
 * absent when none was sent (an agent-mode turn, cut at the model's own limit).
 */
export interface AnswerCut extends LengthCut {
  whileThinking: boolean;
}

export type ModelAnswer = { text: string; cutOff: false } | ({ text: string; cutOff: true } & AnswerCut);

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
      ...(options.noThinking ? { noThinking: true } : {}),
    });
    return { text: cleanModelText(raw), cutOff: false };
  } catch (err) {
    if (isAbortError(err) || options.signal?.aborted) throw err;
    if (err instanceof IncompleteAnswerError && err.cut === "length") {
      return { text: cleanModelText(err.partial), cutOff: true, limit: err.limit ?? options.maxTokens, whileThinking: err.whileThinking, moreRoom: err.moreRoom };
    }
    throw new AgentError(`Could not ${options.what}: ${errorMessage(err)}`, "failed");
  }
}

/**
 * Why a cut answer was cut, as a clause: "the answer was cut off at the length limit Krypton sets for it
 * (3,072 tokens) …". Only an answer that used the tokens is blamed on a loop; a model that spent them
 * thinking did not repeat itself, and a shorter answer would not help it.
 */
export function cutOffReason(cut: AnswerCut, subject = "the answer"): string {
  const limit =
    cut.limit === undefined
      ? cut.whileThinking ? "its whole length limit" : "the model's length limit"
      : `the length limit Krypton sets for ${cut.whileThinking ? "the answer" : "it"} (${formatCount(cut.limit)} tokens)`;
  return cut.whileThinking
    ? `the model spent ${limit} thinking and was cut off before it finished answering`
    : `${subject} was cut off at ${limit}, often a sign of a model repeating itself`;
}

/** What to do about a cut spent thinking, as sentences; undefined for the others (the caller's own advice stands). */
export function cutOffAdvice(cut: AnswerCut): string | undefined {
  if (!cut.whileThinking) return undefined;
  return `Try again, or use a model that thinks less or not at all${cut.moreRoom ? `; to leave it more room to think, ${cut.moreRoom}` : ""}.`;
}

/** Drops reasoning blocks some local models print and a code fence wrapped around the whole answer. */
export function cleanModelText(raw: string): string {
  let text = stripThinkBlocks(raw).trim();
  const fenced = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text);
  if (fenced) text = fenced[1].trim();
  return text;
}
