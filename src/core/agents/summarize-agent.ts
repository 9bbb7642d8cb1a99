import type { Logger } from "../ports/logger";
import type { Agent } from "./agent";
import { AgentError } from "../notes/agent-error";
import { intentAgent } from "./agent-base";
import type { IntentRouter } from "./agent-router";
import type { NoteOperations } from "../notes/note-operations";
import { AGENT_NAMES } from "../notes/note-operations-impl";

/**
 * "Summarize this note" (the active note) and "summarize my notes on X" (what the vault says about a
 * topic, with its source notes).
 */
export function createSummarizeAgent(deps: { router: IntentRouter; operations: NoteOperations; logger: Logger }): Agent {
  return intentAgent(AGENT_NAMES.summarize, ["summarize-note", "summarize-topic"], deps, (intent, context) => {
    if (intent.intent === "summarize-topic") return deps.operations.summarizeTopic(intent.argument, { signal: context.signal });
    if (!context.activeNotePath) {
      throw new AgentError("Open a note first: there is no active note to summarize.", "no-active-note");
    }
    return deps.operations.summarizeNote(context.activeNotePath, { signal: context.signal });
  });
}
