export type AgentErrorCode = "not-found" | "no-model" | "index-not-ready" | "no-active-note" | "invalid-input" | "failed";

/** A failure an agent explains to the user ("Open a note first", "No notes match 'x'"). Safe to show. */
export class AgentError extends Error {
  /**
   * Set when the failure comes from a search that matched by keywords only: why (SearchResult.keywordOnly).
   * Hosts say it beside the message, as they do beside found results.
   */
  readonly keywordOnly?: string;

  constructor(
    message: string,
    readonly code: AgentErrorCode = "failed",
    options: { keywordOnly?: string } = {},
  ) {
    super(message);
    this.name = "AgentError";
    if (options.keywordOnly) this.keywordOnly = options.keywordOnly;
  }
}

/**
 * "No notes match 'x'": a search found nothing (or nothing on the topic). With the search's keyword-only
 * reason: a paraphrase sharing no word with the notes finds nothing by keywords.
 */
export function noNotesMatch(subject: string, keywordOnly: string | undefined): AgentError {
  return new AgentError(`No notes match '${subject}'`, "not-found", { keywordOnly });
}
