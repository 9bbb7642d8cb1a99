import type { RetrievalMode } from "../settings";
import type { AgentResult } from "../agents/agent";
import type { AgentStep } from "./conversation-types";
import type { ConfirmPort } from "../agent-loop/agent-types";
import type { TokenUsage } from "../ports/chat-model";

export type Source =
  | {
      n: number;
      kind: "note";
      path: string;
      title: string;
      headings: string[];
      startLine: number;
      endLine: number;
      snippet: string;
    }
  | { n: number; kind: "web"; title: string; url: string; snippet: string };

export type ChatEvent =
  /** Context found for this answer; citation [n] refers to sources[n-1]. */
  | { type: "sources"; sources: Source[] }
  | { type: "token"; text: string }
  /** An agent handled the message instead of the chat model. */
  | { type: "agent"; result: AgentResult }
  /** One step of an agent loop (a tool call and its result), as it completes; saved with the answer. */
  | { type: "step"; step: AgentStep }
  /** Agent mode: the last `text` of tokens was the model thinking aloud before a tool call; take it back from the answer. */
  | { type: "retract"; text: string }
  /** Tokens this turn used, when the provider reports them. */
  | { type: "usage"; usage: TokenUsage }
  /** Something degraded but the answer continues ("Web search unavailable: ..."). */
  | { type: "notice"; code: string; message: string }
  /** The answer failed; message is for the user, plain words, no stack trace, no secrets. */
  | { type: "error"; code: string; message: string; retryable: boolean }
  /**
   * Always the last event. `limit`: agent mode's loop ended at a limit before the model finished ("stopped at
   * the step limit (8 steps)", AgentLoopResult.limit): the answer is what it had then, not a finished one.
   */
  | { type: "done"; conversationId: string; messageId: string; answer: string; stopped: boolean; limit?: string };

export interface SendOptions {
  mode: RetrievalMode;
  /** Omit to start a new conversation. */
  conversationId?: string;
  /** The note open in the editor, for agents and "use current note". */
  activeNotePath?: string;
  /** Add the active note's text as context. */
  useActiveNote?: boolean;
  signal?: AbortSignal;
  /** Replace the last assistant answer instead of appending a new question. */
  regenerate?: boolean;
  /** Agent mode: what the fixed agents do not recognise goes to the tool loop instead of retrieval. */
  agent?: boolean;
  /** Agent mode: asks the user before a write tool runs; without it, writes are refused. */
  confirm?: ConfirmPort;
}

export interface ChatServiceApi {
  send(message: string, options: SendOptions): AsyncIterable<ChatEvent>;
}
