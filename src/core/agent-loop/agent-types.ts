import type { AgentStep } from "../chat/conversation-types";
import type { ChatMessage, TokenUsage, ToolCall } from "../ports/chat-model";

/** One tool call the agent made, as stored with the answer (chat/conversation-types.ts owns the shape). */
export type { AgentStep };

/** A step as the loop records it: the stored shape with every field set. */
export type LoopStep = AgentStep & {
  step: number;
  tool: NonNullable<AgentStep["tool"]>;
  result: string;
  isError: boolean;
  outcome: NonNullable<AgentStep["outcome"]>;
  durationMs: number;
};

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
  /** The messages as sent: after fitting the window, when that cut something. */
  request: ChatMessage[];
  /** What fitting the window cut from this request ("To fit …, this request left out …"), when it did. */
  fitted?: string;
  reply: string;
  toolCalls?: ToolCall[];
}

export type AgentLoopEvent =
  | { type: "token"; text: string }
  | { type: "step"; step: LoopStep }
  /** The last `text` streamed was the model thinking aloud before a tool call, not the answer: hosts take it back. */
  | { type: "retract"; text: string }
  | { type: "notice"; code: string; message: string }
  | { type: "done"; result: AgentLoopResult };

export type AgentEndReason = "answer" | "step-limit" | "time-limit" | "loop-guard" | "stopped";

/** The end reasons that are a limit: the loop stopped before the model finished. */
export type AgentLimitReason = Exclude<AgentEndReason, "answer" | "stopped">;

export interface AgentLoopResult {
  answer: string;
  steps: LoopStep[];
  usage: Required<Pick<TokenUsage, "promptTokens" | "completionTokens">>;
  protocol: AgentProtocol;
  endReason: AgentEndReason;
  /**
   * How a limit ended the loop before the model finished, with its number: "stopped at the step limit (8
   * steps)", "stopped at the time limit (180 s)", "stopped by the loop guard (3 repeated tool calls
   * blocked)". Absent when the model answered or the user stopped it. Hosts that run the loop unwatched (a
   * workflow step) report it; agent mode's answer carries its own marker.
   */
  limit?: string;
  exchange: ExchangeEntry[];
}
