/**
 * Shared pieces for the MCP tests: a tool registry over a REAL vault folder (FsVault, the note tools,
 * the path policy) whose NoteOperations are a small deterministic stand-in for the agents' LLM-backed
 * ones, so the bridge and its security can be tested on their own; a vault snapshot to prove that a
 * refused request changed nothing; and SDK clients for each transport.
 */
import { promises as fs } from "node:fs";
import { join, relative, sep } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { NoteOperations } from "../../../src/core/notes/note-operations";
import { AgentError } from "../../../src/core/notes/agent-error";
import type { Logger } from "../../../src/core/ports/logger";
import { registerNoteTools } from "../../../src/core/tools/note-tools";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { FsVault } from "../../../src/node/fs-vault";

/** NoteOperations without a model: notes are written from the topic, search is a substring match. */
export function scriptedOperations(vault: FsVault): NoteOperations {
  const titleOf = (topic: string) => topic.replace(/\b\w/g, (c) => c.toUpperCase()).trim();
  const search = async (query: string, limit = 20) => {
    const hits = [];
    for (const note of await vault.listNotes()) {
      const text = await vault.readNote(note.path);
      const at = text.toLowerCase().indexOf(query.toLowerCase());
      if (at === -1) continue;
      const title = note.path.slice(note.path.lastIndexOf("/") + 1).replace(/\.md$/, "");
      const folder = note.path.includes("/") ? note.path.slice(0, note.path.lastIndexOf("/")) : "";
      hits.push({ path: note.path, title, folder, snippet: text.slice(Math.max(0, at - 20), at + 60), score: 1 / (hits.length + 1), startLine: 1 });
    }
    return hits.slice(0, limit);
  };
  return {
    async createNote(topic, options) {
      const title = titleOf(topic);
      const path = `${options?.folder ? `${options.folder}/` : "Krypton/"}${title}.md`;
      const content = `# ${title}\n\nA note about ${topic}.\n`;
      await vault.createNote(path, content);
      return { kind: "note-created", agent: "test", text: `Created ${path}`, path, title, preview: content.slice(0, 80) };
    },
    async searchNotes(query, options) {
      const hits = await search(query, options?.limit);
      return { kind: "search-results", agent: "test", text: "", query, hits };
    },
    async summarizeNote(path) {
      const text = await vault.readNote(path);
      const title = path.replace(/\.md$/, "");
      return { kind: "summary", agent: "test", text, title: `Summary of ${title}`, summary: text.split("\n").filter(Boolean).slice(0, 2).join(" "), sourceFiles: [path] };
    },
    async summarizeText(title, text) {
      return { kind: "summary", agent: "test", text, title, summary: text.slice(0, 100), sourceFiles: [] };
    },
    async summarizeTopic(topic) {
      const hits = await search(topic);
      if (hits.length === 0) throw new AgentError(`No notes match '${topic}'`, "not-found");
      return { kind: "summary", agent: "test", text: "", title: `Summary: ${topic}`, summary: `${hits.length} notes mention ${topic}.`, sourceFiles: hits.map((h) => h.path) };
    },
  };
}

export function noteToolRegistry(vaultRoot: string, options: { excludePatterns?: string[] } = {}): { registry: ToolRegistry; vault: FsVault } {
  const vault = new FsVault(vaultRoot);
  const registry = new ToolRegistry();
  const excludePatterns = options.excludePatterns ?? [];
  registerNoteTools(registry, { operations: scriptedOperations(vault), vault, settings: () => ({ excludePatterns }) });
  return { registry, vault };
}

/** Every file under a folder (hidden ones included) with its content: compare before/after a refused request. */
export async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const key = relative(root, full).split(sep).join("/");
      if (entry.isSymbolicLink()) out[key] = `-> ${await fs.readlink(full)}`;
      else if (entry.isDirectory()) {
        out[`${key}/`] = "";
        await walk(full);
      } else out[key] = await fs.readFile(full, "utf8");
    }
  };
  await walk(root);
  return out;
}

/** A logger that keeps every line, to check that no secret was logged. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: string) => (message: string, data?: unknown) => {
    lines.push(`${level} ${message}${data === undefined ? "" : ` ${JSON.stringify(data)}`}`);
  };
  return { lines, debug: rec("debug"), info: rec("info"), warn: rec("warn"), error: rec("error") };
}

export async function connectStreamable(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "krypton-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export async function connectSse(baseUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: "krypton-test", version: "1.0.0" });
  await client.connect(new SSEClientTransport(new URL("/sse", baseUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** The text of a tool result's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.find((c) => c.type === "text")?.text ?? "";
}
