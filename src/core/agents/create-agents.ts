import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import type { Agent } from "./agent";
import { IntentRouter } from "./agent-router";
import { createCreateNoteAgent } from "./create-note-agent";
import type { NoteOperations } from "../notes/note-operations";
import { createSearchNotesAgent } from "./search-notes-agent";
import { createSummarizeAgent } from "./summarize-agent";

export interface AgentsDeps {
  host: Host;
  settings: () => KryptonSettings;
  operations: NoteOperations;
  chatModel: () => ChatModel | null;
  /** The router the study agents ask too, so a message costs one classifier call in all; else a new one. */
  router?: IntentRouter;
}

/**
 * The agents in the order they are tried: create, search, summarize. They share one IntentRouter, so a
 * message's intent (patterns, or the LLM classifier when enabled) is worked out once, not per agent.
 */
export function createAgents(deps: AgentsDeps): Agent[] {
  const router = deps.router ?? new IntentRouter({ settings: deps.settings, chatModel: deps.chatModel, logger: deps.host.logger });
  const shared = { router, operations: deps.operations, logger: deps.host.logger };
  return [createCreateNoteAgent(shared), createSearchNotesAgent(shared), createSummarizeAgent(shared)];
}
