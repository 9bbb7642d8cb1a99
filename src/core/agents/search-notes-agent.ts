import type { Logger } from "../ports/logger";
import type { Agent } from "./agent";
import { intentAgent } from "./agent-base";
import type { IntentRouter } from "./agent-router";
import type { NoteOperations } from "../notes/note-operations";
import { AGENT_NAMES } from "../notes/note-operations-impl";

/** "Find notes about X": the hybrid search, one entry per note with title, folder, snippet and score. */
export function createSearchNotesAgent(deps: { router: IntentRouter; operations: NoteOperations; logger: Logger }): Agent {
  return intentAgent(AGENT_NAMES.search, ["search-notes"], deps, (intent, context) =>
    deps.operations.searchNotes(intent.argument, { signal: context.signal }),
  );
}
