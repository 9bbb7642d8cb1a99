import type { ChatEvent } from "../ports/chat-model";

/**
 * A model turn made of text only: every delta as a text event, then the end event. The baseline for a
 * provider path without tool calls or usage data.
 */
export async function* textOnlyTurn(deltas: AsyncIterable<string>): AsyncIterable<ChatEvent> {
  for await (const text of deltas) if (text) yield { type: "text", text };
  yield { type: "end", finishReason: "stop" };
}
