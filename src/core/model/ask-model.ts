import type { ChatMessage, ChatModel } from "../ports/chat-model";
import { isAbortError } from "../providers/provider-error";
import { AgentError } from "../notes/agent-error";

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
    const reason = err instanceof Error ? err.message : String(err);
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

/** Removes `<think>…</think>` reasoning blocks (and an unterminated trailing one). The one rule for whole texts. */
export function stripThinkBlocks(text: string): string {
  return text.replace(/<think>[\s\S]*?(<\/think>|$)/gi, "");
}
