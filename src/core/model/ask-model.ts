import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { AgentError } from "../notes/agent-error";
import { stripThinkBlocks } from "../util/think-blocks";
import { errorMessage, isAbortError } from "../util/errors";

/**
 * One non-streaming call to the chat model for an agent. Provider failures become an AgentError with
 * the provider's plain message (it never contains keys), so every host shows the same explanation;
 * a stop by the user stays an abort.
 */
export async function askModel(
  model: ChatModel,
  messages: ChatMessage[],
  options: { signal?: AbortSignal; temperature?: number; json?: boolean; jsonSchema?: Record<string, unknown>; what: string },
): Promise<string> {
  let raw: string;
  try {
    raw = await model.complete({
      messages,
      signal: options.signal,
      temperature: options.temperature,
      json: options.json,
      jsonSchema: options.jsonSchema,
    });
  } catch (err) {
    if (isAbortError(err) || options.signal?.aborted) throw err;
    const reason = errorMessage(err);
    throw new AgentError(`Could not ${options.what}: ${reason}`, "failed");
  }
  return cleanModelText(raw);
}

/** Drops reasoning blocks some local models print and a code fence wrapped around the whole answer. */
export function cleanModelText(raw: string): string {
  let text = stripThinkBlocks(raw).trim();
  const fenced = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text);
  if (fenced) text = fenced[1].trim();
  return text;
}
