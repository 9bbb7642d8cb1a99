import { z } from "zod";
import { AgentError } from "../notes/agent-error";
import type { NoteOperations } from "../notes/note-operations";
import { summaryRemarks } from "../notes/result-text";
import { createReadPolicy, isNoteRefusedError } from "../notes/read-policy";
import type { VaultPort } from "../ports/vault";
import { ToolError, type ToolContext, type VaultLocation } from "./tool";
import { defineTool, type ToolRegistry } from "./tool-registry";
import { assertSameVault, toFolderPath, toNotePath, type VaultPathRules } from "../notes/vault-path-policy";
import { unsearchableQueryText } from "../search/unsearchable-query";
import { cutAt, formatCount } from "../util/text";

export interface NoteToolsDeps {
  operations: NoteOperations;
  vault: VaultPort;
  /** Absolute vault root, used when a call's context brings no VaultLocation (see ToolContext.vault). */
  vaultRoot?: string;
  /**
   * The user's exclude patterns (settings.excludePatterns). Notes the index skips are also off limits to
   * read_note and summarize_notes: a folder the user kept out of Krypton stays out for MCP clients too.
   */
  settings?: () => { excludePatterns: readonly string[] };
}

export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 100;
/** read_note returns at most this many characters, so one huge note cannot flood a client's context. */
export const READ_NOTE_MAX_CHARS = 100_000;

const vaultPathParam = z
  .string()
  .max(1024)
  .optional()
  .describe("Absolute path of the vault. Optional; when given it must be the vault this server serves.");

/**
 * The agents' operations as tools for outside callers (MCP, JSON endpoints, CLI). Each tool only checks
 * paths and reshapes results: the work itself is NoteOperations, the same code the chat agents run.
 * There is deliberately no tool that modifies, renames or deletes a note.
 */
export function registerNoteTools(registry: ToolRegistry, deps: NoteToolsDeps): void {
  const { operations, vault } = deps;
  const locationOf = (context: ToolContext): VaultLocation | undefined =>
    context.vault ?? (deps.vaultRoot ? { root: deps.vaultRoot } : undefined);
  const rulesOf = (context: ToolContext, access: VaultPathRules["access"]): VaultPathRules => ({ configDir: vault.configDir, vaultRoot: locationOf(context)?.root, access });
  const checkVaultPath = async (vaultPath: string | undefined, context: ToolContext) => {
    if (vaultPath !== undefined) await assertSameVault(vaultPath, locationOf(context));
  };
  /** The host's file-system check (symlinks leading out); a no-op where the host has none. */
  const assertInside = async (path: string, context: ToolContext) => {
    await locationOf(context)?.assertInside?.(path);
  };
  /** The one read policy (core/notes/read-policy.ts), the same the index, search and chat use. */
  const assertNotExcluded = (path: string) => {
    const why = createReadPolicy({ excludePatterns: deps.settings?.().excludePatterns ?? [] }, vault.configDir).refusal(path);
    if (why) throw new ToolError(`Krypton does not read ${path}: ${why}`, "refused");
  };

  const createNote = defineTool({
    name: "create_note",
    changesVault: true,
    title: "Create note",
    description:
      "Writes a new markdown note about a topic with the configured language model and saves it in the vault. " +
      "Never overwrites an existing note. Returns the new note's path, title and a preview.",
    inputSchema: {
      topic: z.string().trim().min(1).max(500).describe("What the note should be about, e.g. \"machine learning basics\"."),
      folder: z.string().max(1024).optional().describe("Vault-relative folder for the note; defaults to the folder set in Krypton's settings."),
      vault_path: vaultPathParam,
    },
    outputSchema: { filePath: z.string(), title: z.string(), preview: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run(input, context) {
      await checkVaultPath(input.vault_path, context);
      const folder = input.folder === undefined ? undefined : toFolderPath(input.folder, rulesOf(context, "write"));
      if (folder) await assertInside(folder, context);
      const created = await operations.createNote(input.topic, { folder, signal: context.signal });
      const structured = { filePath: created.path, title: created.title, preview: created.preview };
      return { structured, text: `Created ${created.path}\n\n${created.preview}` };
    },
  });

  const searchNotes = defineTool({
    name: "search_notes",
    title: "Search notes",
    description:
      "Searches the vault's notes by meaning and keywords (Krypton's index). Returns the best matches with path, title, a snippet and a score.",
    needsIndex: "reads",
    inputSchema: {
      query: z.string().trim().min(1).max(2000).describe("What to look for."),
      limit: z
        .number()
        .int()
        .min(1)
        .max(SEARCH_LIMIT_MAX)
        .optional()
        .describe(`Maximum number of results, 1 to ${SEARCH_LIMIT_MAX} (default ${SEARCH_LIMIT_DEFAULT}).`),
      vault_path: vaultPathParam,
    },
    outputSchema: {
      results: z.array(z.object({ filePath: z.string(), title: z.string(), snippet: z.string(), score: z.number() })),
      keywordOnly: z.string().optional().describe("Set when meaning could not be used: why, and that notes were matched by keywords only."),
      unsearchable: z.string().optional().describe("Set when nothing was found and search ignores every word of the query (only common words): why."),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(input, context) {
      await checkVaultPath(input.vault_path, context);
      const limit = input.limit ?? SEARCH_LIMIT_DEFAULT;
      const found = await operations.searchNotes(input.query, { limit, signal: context.signal }).catch((err: unknown) => {
        throw err instanceof AgentError && err.code === "not-found" ? noNotesMatchError(input.query, err.keywordOnly) : err;
      });
      const results = found.hits.slice(0, limit).map((hit) => ({ filePath: hit.path, title: hit.title, snippet: hit.snippet, score: hit.score }));
      if (results.length === 0) throw noNotesMatchError(input.query, found.keywordOnly);
      const text = results
        .map((r, i) => `${i + 1}. ${r.title} (${r.filePath}, score ${r.score.toFixed(2)})\n   ${r.snippet.replace(/\s+/g, " ").trim()}`)
        .join("\n");
      const structured: { results: typeof results; keywordOnly?: string } = { results };
      if (found.keywordOnly) structured.keywordOnly = found.keywordOnly;
      return { structured, text: found.keywordOnly ? `${text}\n\n${found.keywordOnly}` : text };
    },
  });

  const summarizeNotes = defineTool({
    name: "summarize_notes",
    title: "Summarize notes",
    description:
      "Summarizes one note (mode \"current_note\" with note_path) or what the vault's notes say about a topic (mode \"topic\" with topic). " +
      "Returns a title, the summary and the notes it used.",
    // Mode "topic" searches the index; one declaration per tool, so "current_note" waits on a loading index too.
    needsIndex: "reads",
    inputSchema: {
      mode: z.enum(["current_note", "topic"]).describe("\"current_note\": summarize note_path. \"topic\": summarize the notes about topic."),
      note_path: z.string().max(1024).optional().describe("The note to summarize, vault-relative or absolute inside the vault (mode \"current_note\")."),
      topic: z.string().max(500).optional().describe("The topic to summarize across notes (mode \"topic\")."),
      vault_path: vaultPathParam,
    },
    outputSchema: {
      title: z.string(),
      summary: z.string(),
      sourceFiles: z.array(z.string()),
      fitted: z.string().optional().describe("Set when the notes' excerpts were shortened to fit the model's context window (mode \"topic\"): what was cut."),
      keywordOnly: z.string().optional().describe("Set when the notes were matched by keywords only (mode \"topic\"): why."),
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(input, context) {
      await checkVaultPath(input.vault_path, context);
      let summary;
      if (input.mode === "current_note") {
        if (input.note_path === undefined || input.note_path.trim() === "") {
          throw new ToolError('Missing required parameter: note_path (needed when mode is "current_note")', "invalid-input");
        }
        const path = toNotePath(input.note_path, rulesOf(context, "read"), "note_path");
        assertNotExcluded(path);
        await assertInside(path, context);
        summary = await operations.summarizeNote(path, { signal: context.signal });
      } else {
        const topic = input.topic?.trim();
        if (!topic) throw new ToolError('Missing required parameter: topic (needed when mode is "topic")', "invalid-input");
        summary = await operations.summarizeTopic(topic, { signal: context.signal });
      }
      const structured: { title: string; summary: string; sourceFiles: string[]; fitted?: string; keywordOnly?: string } = {
        title: summary.title,
        summary: summary.summary,
        sourceFiles: [...summary.sourceFiles],
      };
      if (summary.fitted) structured.fitted = summary.fitted;
      if (summary.keywordOnly) structured.keywordOnly = summary.keywordOnly;
      const sources = structured.sourceFiles.length > 0 ? `\n\nSources:\n${structured.sourceFiles.map((f) => `- ${f}`).join("\n")}` : "";
      const remarks = summaryRemarks(summary).map((remark) => `\n\n${remark}`);
      return { structured, text: `${structured.title}\n\n${structured.summary}${sources}${remarks.join("")}` };
    },
  });

  const readNote = defineTool({
    name: "read_note",
    title: "Read note",
    description:
      "Returns a note's markdown, e.g. one that search_notes found. The path is vault-relative or absolute inside the vault. " +
      `Notes longer than ${formatCount(READ_NOTE_MAX_CHARS)} characters are cut there (truncated: true).`,
    inputSchema: { path: z.string().max(1024).describe("The note's path, e.g. \"Projects/Plan.md\".") },
    outputSchema: { path: z.string(), content: z.string(), truncated: z.boolean(), totalChars: z.number() },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async run(input, context) {
      if (input.path.trim() === "") throw new ToolError("Missing required parameter: path", "invalid-input");
      const path = toNotePath(input.path, rulesOf(context, "read"));
      assertNotExcluded(path);
      await assertInside(path, context);
      const full = await vault.readNote(path).catch((err: unknown) => {
        throw isNoteRefusedError(err) ? new ToolError(err.message, "refused") : err;
      });
      const truncated = full.length > READ_NOTE_MAX_CHARS;
      const content = truncated ? `${cutAt(full, READ_NOTE_MAX_CHARS)}${truncationMarker(full.length)}` : full;
      return { structured: { path, content, truncated, totalChars: full.length }, text: content };
    },
  });

  registry.register(createNote);
  registry.register(searchNotes);
  registry.register(summarizeNotes);
  registry.register(readNote);
}

/**
 * search_notes found nothing: still an error (404 on the JSON endpoint), but it says why in its text and fields
 * when it can: keywords alone were used, or every word of the query is one search ignores ("the and of").
 */
function noNotesMatchError(query: string, keywordOnly: string | undefined): ToolError {
  const unsearchable = unsearchableQueryText(query) ?? undefined;
  if (!keywordOnly && !unsearchable) return new ToolError(`No notes match '${query}'`, "not-found");
  const structured = { results: [], ...(keywordOnly ? { keywordOnly } : {}), ...(unsearchable ? { unsearchable } : {}) };
  return new ToolError(unsearchable ?? `No notes match '${query}'`, "not-found", { keywordOnly, structured });
}

/** Appended to a cut note, on its own line, so neither a person nor a model mistakes the cut for the note's end. */
export function truncationMarker(totalChars: number): string {
  return `\n\n[… truncated by Krypton: showing the first ${formatCount(READ_NOTE_MAX_CHARS)} of ${formatCount(totalChars)} characters]`;
}
