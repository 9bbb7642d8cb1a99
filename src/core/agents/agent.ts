import type { ChatMessage } from "../ports/chat-model";

export interface AgentContext {
  activeNotePath?: string;
  signal?: AbortSignal;
}

/** What an agent did, for the chat view to render as a purpose-built block. `text` is the markdown fallback. */
export type AgentResult =
  | { kind: "note-created"; agent: string; text: string; path: string; title: string; preview: string }
  | {
      kind: "search-results";
      agent: string;
      text: string;
      query: string;
      hits: { path: string; title: string; folder: string; snippet: string; score: number; startLine: number }[];
    }
  | { kind: "summary"; agent: string; text: string; title: string; summary: string; sourceFiles: string[] }
  /** The agent recognised the request but a prerequisite is missing ("Open a note first"). */
  | { kind: "message"; agent: string; text: string };

/**
 * The agent contract. Agents are tried in order; the first non-null result handles the message.
 * Returning null (or throwing) means "not mine": the message falls through to normal chat.
 */
export interface Agent {
  readonly name: string;
  tryHandle(message: string, history: ChatMessage[], context: AgentContext): Promise<AgentResult | null>;
}
