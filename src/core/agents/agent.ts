import type { ChatMessage } from "../ports/chat-model";
import type { AgentResult } from "../notes/note-operations";

export type { AgentResult };

export interface AgentContext {
  activeNotePath?: string;
  /** The conversation the message belongs to; absent for a conversation's first message (and outside chat). */
  conversationId?: string;
  signal?: AbortSignal;
}

/**
 * The agent contract. Agents are tried in order; the first non-null result handles the message.
 * Returning null (or throwing) means "not mine": the message falls through to normal chat.
 */
export interface Agent {
  readonly name: string;
  tryHandle(message: string, history: ChatMessage[], context: AgentContext): Promise<AgentResult | null>;
}
