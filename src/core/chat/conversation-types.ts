import type { AgentResult } from "../agents/agent";
import type { AgentStep } from "../agent-loop/agent-types";
import type { TokenUsage } from "../ports/chat-model";
import type { Source } from "./chat-types";
import type { RetrievalMode } from "../settings";

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
  /** The answer failed with this message. */
  error?: string;
  /** Agent mode: the tool calls behind this answer (older files have none). */
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

/** Conversations under ".krypton/chat/": one JSON file each plus an index file. */
export interface ConversationStoreApi {
  list(): Promise<ConversationSummary[]>;
  get(id: string): Promise<Conversation | null>;
  create(title?: string): Promise<Conversation>;
  /** Appends or replaces (same id) a message and saves atomically. */
  put(conversationId: string, message: StoredMessage): Promise<void>;
  /** Removes a message (regenerate drops the old answer). */
  removeMessage(conversationId: string, messageId: string): Promise<void>;
  rename(id: string, title: string): Promise<void>;
  delete(id: string): Promise<void>;
  search(text: string): Promise<ConversationSummary[]>;
  /** Files skipped because they were corrupt, reported once. */
  problems(): string[];
}
