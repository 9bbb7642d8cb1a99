import type { ChatEvent } from "../ports/chat-model";

/**
 * stream() and complete() are views over a provider's turn(), so each provider has one code path for a
 * model call: same request mapping, timeouts, retries and think-block rule. Thinking, tool calls and
 * the end event are dropped here; callers that need them use turn().
 */
export async function* textDeltas(events: AsyncIterable<ChatEvent>): AsyncGenerator<string> {
  for await (const event of events) if (event.type === "text" && event.text) yield event.text;
}

export async function collectTurnText(events: AsyncIterable<ChatEvent>): Promise<string> {
  let text = "";
  for await (const piece of textDeltas(events)) text += piece;
  return text;
}

let callSeq = 0;

/** An id for a tool call whose provider gives none (Ollama; Gemini parts without `id`). Unique in this process. */
export function newToolCallId(): string {
  callSeq += 1;
  return `call_${callSeq.toString(36)}_${Date.now().toString(36)}`;
}
