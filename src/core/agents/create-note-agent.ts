import type { Logger } from "../ports/logger";
import type { Agent } from "./agent";
import { intentAgent } from "./agent-base";
import type { IntentRouter } from "./agent-router";
import type { NoteOperations } from "../notes/note-operations";
import { AGENT_NAMES } from "../notes/note-operations-impl";

/** "Create a note on X": generates a note about X and saves it as a new file (never overwrites). */
export function createCreateNoteAgent(deps: { router: IntentRouter; operations: NoteOperations; logger: Logger }): Agent {
  return intentAgent(AGENT_NAMES.create, ["create-note"], deps, (intent, context) =>
    deps.operations.createNote(intent.argument, { signal: context.signal }),
  );
}
