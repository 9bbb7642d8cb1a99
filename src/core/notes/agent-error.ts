export type AgentErrorCode = "not-found" | "no-model" | "index-not-ready" | "no-active-note" | "invalid-input" | "failed";

/** A failure an agent explains to the user ("Open a note first", "No notes match 'x'"). Safe to show. */
export class AgentError extends Error {
  constructor(
    message: string,
    readonly code: AgentErrorCode = "failed",
  ) {
    super(message);
    this.name = "AgentError";
  }
}
