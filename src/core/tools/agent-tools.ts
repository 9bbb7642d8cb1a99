import { z } from "zod";
import type { Clock } from "../ports/clock";
import type { VaultPort } from "../ports/vault";
import { createReadPolicy } from "../notes/read-policy";
import { normalizeTag, noteMetadata, readFrontmatter } from "../indexing/frontmatter";
import { createUniqueNote, nextFreeNotePath, slugify } from "../notes/note-paths";
import { toFolderPath, toNotePath, type VaultPathRules } from "../notes/vault-path-policy";
import type { WebSearch } from "../web/web-search";
import { ToolError, type ToolContext } from "./tool";
import { defineTool, type ToolRegistry } from "./tool-registry";
import { appendDiff } from "./append-diff";
import { countOf, inLineEndingOf } from "../util/text";

export interface AgentToolsDeps {
  vault: VaultPort;
  clock: Clock;
  settings: () => { excludePatterns: readonly string[]; newNoteFolder: string; tavilyApiKey: string };
  /** Null when no web search is configured; web_search is then hidden. */
  webSearch: () => WebSearch | null;
}

/** The tools the agent gets from the registry (MCP servers' tools join them). No delete, move or rename, ever. */
export const AGENT_BUILTIN_TOOLS = [
  "search_notes",
  "read_note",
  "list_notes",
  "write_note",
  "append_to_note",
  "summarize_notes",
  "web_search",
  "get_current_time",
  "list_tools",
] as const;

export const LIST_NOTES_MAX = 200;
/** Notes read (for tags) by one list_notes call; a tag filter over a huge vault says it stopped early. */
const TAG_SCAN_MAX = 5000;
const WRITE_MAX_CHARS = 100_000;

/**
 * The agent's own tools (see note-tools.ts for the ones MCP clients share). All are agent-only, so the MCP
 * bridge serves exactly what it did; the two write tools run only after the user approved the preview
 * (see agent-loop/agent-toolbox.ts).
 */
export function registerAgentTools(registry: ToolRegistry, deps: AgentToolsDeps): void {
  const { vault } = deps;
  const rules = (access: VaultPathRules["access"]): VaultPathRules => ({ configDir: vault.configDir, access });
  // The one read policy (core/notes/read-policy.ts), the same the index, search, chat and MCP tools use.
  const excluded = (path: string) => !createReadPolicy(deps.settings(), vault.configDir).mayRead(path);
  const assertNotExcluded = (path: string) => {
    const why = createReadPolicy(deps.settings(), vault.configDir).refusal(path);
    if (why) throw new ToolError(`Krypton does not read ${path}: ${why}`, "refused");
  };

  registry.register(
    defineTool({
      name: "list_notes",
      title: "List notes",
      description: "Lists the vault's notes (path and last change), optionally only those in a folder and/or with a tag.",
      inputSchema: {
        folder: z.string().max(1024).optional().describe('Vault-relative folder, e.g. "Projects". Sub-folders are included.'),
        tag: z.string().max(200).optional().describe('Only notes with this tag, e.g. "project" or "#area/ml".'),
        limit: z.number().int().min(1).max(LIST_NOTES_MAX).optional().describe(`At most this many notes (default 50, max ${LIST_NOTES_MAX}).`),
      },
      outputSchema: { notes: z.array(z.object({ path: z.string(), modified: z.string() })), total: z.number() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      // The MCP bridge's tool list stays as documented; exposing this one there is a separate decision.
      agentOnly: true,
      async run(input, context) {
        const folder = input.folder ? toFolderPath(input.folder, rules("read")) : "";
        const tag = input.tag ? normalizeTag(input.tag).toLowerCase() : "";
        let notes = (await vault.listNotes()).filter((n) => !excluded(n.path) && (!folder || n.path.startsWith(`${folder}/`)));
        let scanNote = "";
        if (tag) {
          const tagged = [];
          for (const note of notes.slice(0, TAG_SCAN_MAX)) {
            if (context.signal?.aborted) throw new ToolError("list_notes was cancelled");
            if (hasTag(await vault.readNote(note.path).catch(() => ""), tag)) tagged.push(note);
          }
          if (notes.length > TAG_SCAN_MAX) scanNote = ` (only the first ${TAG_SCAN_MAX} notes were checked for the tag)`;
          notes = tagged;
        }
        notes.sort((a, b) => b.mtime - a.mtime);
        const limit = input.limit ?? 50;
        const shown = notes.slice(0, limit).map((n) => ({ path: n.path, modified: new Date(n.mtime).toISOString().slice(0, 10) }));
        if (shown.length === 0) {
          const where = [folder && `in ${folder}`, tag && `tagged #${tag}`].filter(Boolean).join(" ");
          throw new ToolError(`No notes ${where || "in the vault"}${scanNote}`, "not-found");
        }
        const more = notes.length > shown.length ? `\n(${notes.length - shown.length} more; narrow by folder or tag)` : "";
        const text = `${shown.map((n) => `- ${n.path} (${n.modified})`).join("\n")}${more}${scanNote}`;
        return { structured: { notes: shown, total: notes.length }, text };
      },
    }),
  );

  const writeInput = {
    title: z.string().trim().min(1).max(200).describe("The note's title; it becomes the file name."),
    content: z.string().min(1).max(WRITE_MAX_CHARS).describe("The note's full markdown."),
    folder: z.string().max(1024).optional().describe("Vault-relative folder; defaults to Krypton's new-note folder."),
  };
  const writeTarget = (input: { title: string; folder?: string }) => {
    const folder = toFolderPath(input.folder ?? deps.settings().newNoteFolder, rules("write"));
    return { folder, slug: slugify(input.title) };
  };
  registry.register(
    defineTool({
      name: "write_note",
      changesVault: true,
      title: "Write a new note",
      description:
        "Saves a NEW note with the given title and markdown. Never overwrites: if the name is taken, a suffix is added. " +
        "The user is asked to approve first.",
      inputSchema: writeInput,
      outputSchema: { path: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      agentOnly: true,
      async preview(input) {
        const { folder, slug } = writeTarget(input);
        // The path run() creates now, not the one asked for: the user approves where the note goes.
        const where = await nextFreeNotePath(vault, folder, slug);
        if (where === null) throw new ToolError(`Could not find a free file name for ${slug}.md`, "failed");
        return { title: `Create a new note ${where}`, preview: input.content };
      },
      async run(input) {
        const { folder, slug } = writeTarget(input);
        const path = await createUniqueNote(vault, folder, slug, input.content);
        if (path === null) throw new ToolError(`Could not find a free file name for ${slug}.md`, "failed");
        return { structured: { path }, text: `Created ${path}` };
      },
    }),
  );

  const appendInput = {
    path: z.string().trim().min(1).max(1024).describe('The existing note, e.g. "Projects/Plan.md".'),
    content: z.string().min(1).max(WRITE_MAX_CHARS).describe("Markdown to add at the end of the note."),
  };
  /** The text that goes on the end: always starts on a new line, in the note's own line ending. */
  const addition = (before: string, content: string) =>
    inLineEndingOf(before, (before === "" || before.endsWith("\n") ? "" : "\n") + content.replace(/(\r?\n)*$/, "\n"));
  registry.register(
    defineTool({
      name: "append_to_note",
      changesVault: true,
      title: "Append to a note",
      description: "Adds markdown at the end of an existing note. The user sees the diff and must approve it first.",
      inputSchema: appendInput,
      outputSchema: { path: z.string(), addedLines: z.number() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      agentOnly: true,
      async preview(input) {
        const path = toNotePath(input.path, rules("write"));
        assertNotExcluded(path);
        const before = await vault.readNote(path);
        const added = addition(before, input.content);
        const lines = added.split("\n").length - 1;
        return { title: `Append ${countOf(lines, "line")} to ${path}`, preview: appendDiff(path, before, added), basis: before };
      },
      async run(input, context: ToolContext) {
        const path = toNotePath(input.path, rules("write"));
        assertNotExcluded(path);
        const basis = context.approved?.basis;
        // No approved preview (never happens through the agent loop): refuse rather than write unseen.
        if (basis === undefined) throw new ToolError("append_to_note needs the user's approval of the diff first", "refused");
        const added = addition(basis, input.content);
        await vault.appendToNote(path, added, basis);
        const lines = added.split("\n").length - 1;
        return { structured: { path, addedLines: lines }, text: `Appended ${countOf(lines, "line")} to ${path}` };
      },
    }),
  );

  registry.register(
    defineTool({
      name: "web_search",
      title: "Web search",
      description: "Searches the web (Tavily) and returns titles, URLs and snippets. Sends the query to Tavily.",
      inputSchema: { query: z.string().trim().min(1).max(400).describe("What to search for.") },
      outputSchema: { results: z.array(z.object({ title: z.string(), url: z.string(), content: z.string() })) },
      annotations: { readOnlyHint: true, openWorldHint: true },
      agentOnly: true,
      isAvailable: () => deps.settings().tavilyApiKey.trim() !== "",
      async run(input, context) {
        const search = deps.webSearch();
        if (!search) throw new ToolError("Web search is not configured: add a Tavily API key in Krypton's settings", "refused");
        const results = await search.search(input.query, context.signal);
        if (results.length === 0) throw new ToolError(`The web search found nothing for '${input.query}'`, "not-found");
        const text = results.map((r, i) => `${i + 1}. ${r.title} (${r.url})\n   ${r.content.replace(/\s+/g, " ").slice(0, 500)}`).join("\n");
        return { structured: { results }, text };
      },
    }),
  );

  registry.register(
    defineTool({
      name: "get_current_time",
      title: "Current time",
      description: "Returns the current date and time (ISO 8601 and readable), optionally in an IANA time zone.",
      inputSchema: { timezone: z.string().max(64).optional().describe('IANA time zone, e.g. "Europe/Berlin". Default: the local zone.') },
      outputSchema: { iso: z.string(), readable: z.string(), timezone: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
      agentOnly: true,
      async run(input) {
        const now = new Date(deps.clock.now());
        let timezone = input.timezone?.trim() || Intl.DateTimeFormat().resolvedOptions().timeZone;
        let readable: string;
        try {
          readable = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeStyle: "long", timeZone: timezone }).format(now);
        } catch {
          throw new ToolError(`Unknown time zone: ${timezone}. Use an IANA name such as "Europe/Berlin" or "America/New_York"`, "invalid-input");
        }
        timezone ||= "UTC";
        return { structured: { iso: now.toISOString(), readable, timezone }, text: `${readable} (${now.toISOString()})` };
      },
    }),
  );

  registry.register(
    defineTool({
      name: "list_tools",
      title: "List tools",
      description: "Lists the tools available to you right now, with what each does.",
      inputSchema: {},
      outputSchema: { tools: z.array(z.object({ name: z.string(), description: z.string() })) },
      annotations: { readOnlyHint: true, openWorldHint: false },
      agentOnly: true,
      async run(_input, context) {
        const visible = context.visibleTools ? new Set(context.visibleTools) : null;
        const tools = registry
          .list({ agent: true })
          .filter((t) => (visible ? visible.has(t.name) : t.isAvailable?.() !== false))
          .map((t) => ({ name: t.name, description: t.description }));
        return { structured: { tools }, text: tools.map((t) => `- ${t.name}: ${t.description}`).join("\n") };
      },
    }),
  );
}

/** Frontmatter tags and inline #tags (nested tags match their parent: "area" matches "#area/ml"). */
function hasTag(content: string, tag: string): boolean {
  const lines = content.replace(/^\uFEFF/, "").split(/\r?\n/);
  const front = readFrontmatter(lines);
  const tags = noteMetadata(front?.fields ?? null).tags.map((t) => t.toLowerCase());
  const body = front ? lines.slice(front.endLine + 1).join("\n") : content;
  for (const match of body.matchAll(/(?:^|\s)#([\p{L}\p{N}_/-]+)/gu)) tags.push(match[1].toLowerCase());
  return tags.some((t) => t === tag || t.startsWith(`${tag}/`));
}
