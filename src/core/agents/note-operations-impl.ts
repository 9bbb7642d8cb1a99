// STUB: replaced by the agents work (issue 5).
import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import type { NoteOperations } from "./note-operations";

export interface NoteOperationsDeps {
  host: Host;
  settings: () => KryptonSettings;
  index: VaultIndexApi;
  chatModel: () => ChatModel | null;
}

export function createNoteOperations(_deps: NoteOperationsDeps): NoteOperations {
  const missing = () => Promise.reject(new Error("not implemented"));
  return { createNote: missing, searchNotes: missing, summarizeNote: missing, summarizeText: missing, summarizeTopic: missing };
}
