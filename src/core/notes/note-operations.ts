import type { AgentErrorCode } from "./agent-error";

/** What an agent did, for the chat view to render as a purpose-built block. `text` is the markdown fallback. */
export type AgentResult =
  | { kind: "note-created"; agent: string; text: string; path: string; title: string; preview: string }
  | {
      kind: "search-results";
      agent: string;
      text: string;
      query: string;
      hits: { path: string; title: string; folder: string; snippet: string; score: number; startLine: number }[];
      /** Set when meaning could not be used and the notes were matched by keywords only: why, as a sentence. */
      keywordOnly?: string;
    }
  | {
      kind: "summary";
      agent: string;
      text: string;
      title: string;
      summary: string;
      sourceFiles: string[];
      /** Set when the excerpts were shortened to fit the model's context window: what was cut, as a sentence. */
      fitted?: string;
      /** A topic summary whose notes were matched by keywords only: why, as a sentence (SearchResult.keywordOnly). */
      keywordOnly?: string;
    }
  /** The agent recognised the request but a prerequisite is missing ("Open a note first"). */
  /** `failed`: the agent could not do its job (an AgentError's code), so hosts can say so (CLI exit 1). */
  /**
   * `keywordOnly`: the message is an AgentError from a search that matched by keywords only ("No notes
   * match 'x'"): why; `text` ends with it (keywordOnlyRemark), where hosts that say it elsewhere take it off.
   */
  | { kind: "message"; agent: string; text: string; failed?: AgentErrorCode; keywordOnly?: string };

export type NoteCreated = Extract<AgentResult, { kind: "note-created" }>;
export type SearchResults = Extract<AgentResult, { kind: "search-results" }>;
export type Summary = Extract<AgentResult, { kind: "summary" }>;

/**
 * The agents' actions as plain operations: the single implementation behind the chat agents
 * (tryHandle), the commands, the CLI and the MCP tools. Failures throw AgentError.
 */
export interface NoteOperations {
  /** Generates a note about the topic and saves it as a new file; never overwrites. */
  createNote(topic: string, options?: { folder?: string; signal?: AbortSignal }): Promise<NoteCreated>;
  searchNotes(query: string, options?: { limit?: number; signal?: AbortSignal }): Promise<SearchResults>;
  /** Summarizes one note; long notes are summarized in parts, then combined. */
  summarizeNote(path: string, options?: { signal?: AbortSignal }): Promise<Summary>;
  /** Summarizes given text (an editor selection). */
  summarizeText(title: string, text: string, options?: { signal?: AbortSignal }): Promise<Summary>;
  /** Summarizes what the vault's notes say about a topic. */
  summarizeTopic(topic: string, options?: { signal?: AbortSignal }): Promise<Summary>;
}
