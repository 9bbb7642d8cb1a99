import type { z } from "zod";

/**
 * Where the served vault lives, supplied per call by the host that exposes the tools (MCP bridge, CLI).
 * Core cannot touch the file system, so the host brings the two checks only it can do.
 */
export interface VaultLocation {
  /** Absolute path of the vault folder as the host sees it ("/home/me/Notes", "C:/Users/me/Notes"). */
  root: string;
  /** Resolves an absolute path the way the file system does (Node: realpath), to compare a client's vault_path. */
  resolve?(absolutePath: string): Promise<string>;
  /** Rejects with a VaultPathError when a vault-relative path leads out of the vault (Node: through a symlink). */
  assertInside?(relativePath: string): Promise<void>;
}

export interface ToolContext {
  signal?: AbortSignal;
  /** "agent": Krypton's own agent loop, which asks the user before any write. Agent-only tools refuse everyone else. */
  caller?: "agent" | "external";
  /** The preview the user approved for this call (write tools): the change must still apply to what they saw. */
  approved?: ToolPreview;
  /** The tools the agent may use this turn, for list_tools (a preset can narrow them). */
  visibleTools?: readonly string[];
  /** Absent when the host cannot say where the vault is: then absolute paths and vault_path are refused. */
  vault?: VaultLocation;
  /** The flow notes whose runs led to this call (run_workflow in a flow's task), outermost first: none runs inside itself. */
  workflows?: readonly string[];
}

export interface ToolOutput<T> {
  /** Matches the tool's outputSchema (MCP structuredContent: always an object). */
  structured: T;
  /** Human-readable rendering (MCP text content, CLI output). */
  text: string;
}

/** Hints for clients (MCP tool annotations); they never replace the server's own checks. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * One capability exposed to outside callers (MCP today, the agent mode later).
 * Input schemas are zod raw shapes, the form the MCP SDK takes.
 */
export interface ToolDefinition<S extends z.ZodRawShape = z.ZodRawShape, O extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  outputSchema: z.ZodRawShape;
  annotations?: ToolAnnotations;
  /**
   * Only Krypton's agent loop may call it (it writes or appends and needs the user's confirmation, which
   * outside callers such as MCP clients cannot give). Hidden from list() and refused by call() otherwise.
   */
  agentOnly?: boolean;
  /**
   * The tool needs the vault index: "reads", it searches the index itself (the index gate holds its calls
   * while the index loads: gateOnIndex); "through-tools", it runs tools that may (run_workflow's flows). A
   * host that opens the index only when a run needs it (the CLI) opens it for a run that may call such a
   * tool. Absent: the tool never touches the index (read_note, write_note, the user's MCP servers' tools).
   */
  needsIndex?: "reads" | "through-tools";
  /**
   * The tool creates or changes notes itself (create_note, write_note, append_to_note, a flashcard deck, a
   * goal note): after a call, the index gate marks the index behind (IndexFreshness.invalidate), since a
   * host without vault events (the standalone server, the CLI) does not see our own write otherwise. Absent:
   * it writes nothing, or only through other tools, whose own calls pass the gate (run_workflow).
   * A function decides per call from the checked arguments, for a tool with read-only actions (study_goals'
   * "list"): a read then leaves the index alone. It says nothing to clients or confirmations: those go by
   * `annotations`, and a tool that may write for some arguments is not read-only as a whole.
   */
  changesVault?: true | ((input: Record<string, unknown>) => boolean);
  /** The JSON Schema of the input when the tool did not come with a zod shape (tools of remote MCP servers). */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * Set on tools of the user's own MCP servers (src/core/mcp-client/). They exist for Krypton's agent only:
   * Krypton's MCP server never lists or runs them (no re-export of someone else's server, see core/mcp/mcp-server.ts).
   */
  remote?: RemoteToolInfo;
  /** False hides the tool for now (web_search without a Tavily key). */
  isAvailable?(): boolean;
  /** What the change will look like, for the confirmation of a write tool (a diff, the new note). */
  preview?(input: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<ToolPreview>;
  run(input: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<ToolOutput<O>>;
}

/**
 * Whether a run limited to `tools` may need the vault index (one of them has ToolDefinition.needsIndex): a host
 * that opens the index only when needed (the CLI) asks this for a flow's tasks and for agent mode's tools.
 */
export function toolsNeedIndex(tools: readonly ToolDefinition[]): boolean {
  return tools.some((tool) => tool.needsIndex !== undefined);
}

export interface ToolPreview {
  /** One line: "Append 3 lines to Projects/Plan.md". */
  title: string;
  /** A unified diff or the text to be written. */
  preview: string;
  /** The note's content the preview was computed from; the write is refused if the note changed since. */
  basis?: string;
}

export interface RemoteToolInfo {
  /** The MCP server's name as configured. */
  server: string;
  /** The tool's own name on that server. */
  tool: string;
  /** Provider-safe alias ([a-zA-Z0-9_-], at most 64 characters), "server__tool" when possible. */
  wireName: string;
}

/** An error whose message a person can act on ("Missing required parameter: topic"). Safe to show to clients. */
export class ToolError extends Error {
  /** A failed search that matched by keywords only ("No notes match 'x'"): why; the message ends with it. */
  readonly keywordOnly?: string;
  /** What the tool has to show for the failure, matching its outputSchema (search_notes: no results): MCP's structuredContent. */
  readonly structured?: Record<string, unknown>;

  constructor(
    message: string,
    /** "unknown-tool" lets HTTP callers answer 404; everything else is the caller's input or the vault's state. */
    readonly code: "unknown-tool" | "invalid-input" | "not-found" | "refused" | "failed" = "failed",
    /** `cause`: the failure this one reports, for a caller that words it its own way (the CLI's goals command). */
    options: { keywordOnly?: string; structured?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(options.keywordOnly ? `${message}\n\n${options.keywordOnly}` : message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolError";
    if (options.keywordOnly) this.keywordOnly = options.keywordOnly;
    if (options.structured) this.structured = options.structured;
  }
}
