import type { AgentResult } from "../agents/agent";
import type { Source } from "./chat-types";
import type { NoteRename } from "./citation-renames";
import type { RetrievalMode } from "../settings";
import type { TokenUsage } from "../ports/chat-model";

/** One step of an agent loop, kept with the answer so it can be shown (collapsed) and inspected later. */
export interface AgentStep {
  /** The model's reasoning or text before its tool calls, when it gave any. */
  thought?: string;
  /** The tool call of this step. */
  tool?: { name: string; arguments: Record<string, unknown>; callId?: string };
  /** The tool's result as the model saw it (may be shortened for storage). */
  result?: string;
  /** The result is an error the model was told about (unknown tool, bad arguments, denied). */
  isError?: boolean;
  durationMs?: number;
  /** Tokens the model turn of this step used, when the provider reports them. */
  usage?: TokenUsage;
  /** Which model step (1-based) of the turn made this call. */
  step?: number;
  /** "denied": the user refused a write; "blocked": the loop guard stopped a repeated call. */
  outcome?: "ok" | "error" | "denied" | "blocked";
}

export interface StoredMessage {
  id: string;
  role: "user" | "assistant";
  content: string;
  createdAt: number;
  mode?: RetrievalMode;
  sources?: Source[];
  agent?: AgentResult;
  notices?: string[];
  /** The user pressed Stop: content is the partial answer. */
  stopped?: boolean;
  /**
   * The answer is incomplete: it was saved while still streaming (a process killed mid-answer leaves it
   * so), or the stream broke off (then `error` says why). Absent on a finished answer.
   */
  partial?: boolean;
  /** assistant: the id of the question it answers (keeps each answer after its question when processes interleave). */
  replyTo?: string;
  /** The answer failed with this message. */
  error?: string;
  /** Agent loop steps behind this answer (absent in older conversation files and for plain answers). */
  steps?: AgentStep[];
  /** Tokens the turn used, when the provider reported them. */
  usage?: TokenUsage;
}

export interface Conversation {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messages: StoredMessage[];
}

export interface ConversationSummary {
  id: string;
  title: string;
  updatedAt: number;
  /** First words of the conversation, for the history list. */
  summary: string;
  messageCount: number;
}

/** Conversations under ".krypton/chat/": a head file and one record file per message each, plus an index file. */
export interface ConversationStoreApi {
  list(): Promise<ConversationSummary[]>;
  get(id: string): Promise<Conversation | null>;
  create(title?: string): Promise<Conversation>;
  /**
   * Appends or replaces (same id) a message and saves it atomically as its own record, so writers in
   * several processes never lose each other's messages. A `partial` message leaves the index alone.
   */
  put(conversationId: string, message: StoredMessage): Promise<void>;
  /** Removes a message (regenerate drops the old answer). */
  removeMessage(conversationId: string, messageId: string): Promise<void>;
  rename(id: string, title: string): Promise<void>;
  delete(id: string): Promise<void>;
  search(text: string): Promise<ConversationSummary[]>;
  /** Files skipped because they were corrupt, reported once. */
  problems(): string[];
  /** A note was renamed or moved: saved answers that cite it are rewritten to cite its new path. */
  followNoteRename(rename: NoteRename, signal?: AbortSignal): Promise<void>;
}
