import type { ChatMessage, TokenUsage, ToolCall } from "../ports/chat-model";

/** One tool call the agent made, as shown under the answer and stored with the message (`steps`). */
export interface AgentStep {
  /** 1-based model step this call belongs to. */
  step: number;
  /** What the model said before calling (its reasoning or a short plan), when it said anything. */
  thought?: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The tool's text result or its error message, clipped for display. */
  result: string;
  isError: boolean;
  /** "denied" when the user refused a write, "blocked" when the loop guard stopped a repeat. */
  outcome: "ok" | "error" | "denied" | "blocked";
  durationMs: number;
  /** Tokens the model used for the step that asked for this call. */
  tokens?: TokenUsage;
}

/** The user's answer to "may the agent run this write tool?". */
export type ConfirmDecision = "once" | "conversation" | "deny";

export interface ConfirmRequest {
  tool: string;
  arguments: Record<string, unknown>;
  /** One line: "Append 3 lines to Projects/Plan.md". */
  title: string;
  /** The change to review: a unified diff for appends, the new note's text for creations. */
  preview: string;
}

/**
 * Asks the person at the keyboard (chat view buttons, CLI prompt). Host-neutral: core only sees this
 * callback. Rejecting with an abort error counts as Stop.
 */
export type ConfirmPort = (request: ConfirmRequest, signal?: AbortSignal) => Promise<ConfirmDecision>;

/** How the loop talked to the model: "native" tool calls, or the JSON action protocol. */
export type AgentProtocol = "native" | "json";

/** One request and its reply, for /log. Secrets are already redacted. */
export interface ExchangeEntry {
  request: ChatMessage[];
  reply: string;
  toolCalls?: ToolCall[];
}

export type AgentLoopEvent =
  | { type: "token"; text: string }
  | { type: "step"; step: AgentStep }
  /** The last `text` streamed was the model thinking aloud before a tool call, not the answer: hosts take it back. */
  | { type: "retract"; text: string }
  | { type: "notice"; code: string; message: string }
  | { type: "done"; result: AgentLoopResult };

export type AgentEndReason = "answer" | "step-limit" | "time-limit" | "loop-guard" | "stopped";

export interface AgentLoopResult {
  answer: string;
  steps: AgentStep[];
  usage: Required<TokenUsage>;
  protocol: AgentProtocol;
  endReason: AgentEndReason;
  exchange: ExchangeEntry[];
}
