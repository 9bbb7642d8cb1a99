// STUB: replaced by the agents work (issue 5).
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import type { Agent } from "./agent";
import type { NoteOperations } from "./note-operations";

export interface AgentsDeps {
  host: Host;
  settings: () => KryptonSettings;
  operations: NoteOperations;
  chatModel: () => ChatModel | null;
}

/** The agents in the order they are tried. */
export function createAgents(_deps: AgentsDeps): Agent[] {
  return [];
}
