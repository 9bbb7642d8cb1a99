// The SDK's StdioClientTransport spawning a real Node process that serves the tools over stdio.
import { join } from "node:path";
import manifest from "../../manifest.json";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { bundleForNode } from "./support/bundle";
import { snapshot, textOf } from "./support/mcp-test-kit";

let entry: string;
let vault: TempVault;
let client: Client;
let stderr = "";

// One server process for the file (spawning is the slow part); each test leaves the vault as it checks it.
beforeAll(async () => {
  entry = await bundleForNode(join(__dirname, "fixtures", "stdio-entry.ts"), "stdio-entry.cjs");
  vault = await makeTempVault({ "Ideas.md": "# Ideas\n\nGradient descent for ranking.\n", ".obsidian/app.json": "{}" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [entry, vault.root], stderr: "pipe" });
  stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: "krypton-test", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client.close();
  await vault.cleanup();
});

it("reports the plugin's version from manifest.json as serverInfo", () => {
  expect(client.getServerVersion()).toEqual({ name: "krypton", version: manifest.version });
});

it("lists the four tools", async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(["create_note", "read_note", "search_notes", "summarize_notes"]);
});

it("calls each tool", async () => {
  const created = await client.callTool({ name: "create_note", arguments: { topic: "stdio notes", folder: "Inbox" } });
  expect(created.structuredContent).toMatchObject({ filePath: "Inbox/Stdio Notes.md", title: "Stdio Notes" });
  const found = await client.callTool({ name: "search_notes", arguments: { query: "gradient" } });
  expect((found.structuredContent as { results: { filePath: string }[] }).results.map((r) => r.filePath)).toEqual(["Ideas.md"]);
  const summary = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "Ideas.md" } });
  expect(summary.structuredContent).toMatchObject({ sourceFiles: ["Ideas.md"] });
  const read = await client.callTool({ name: "read_note", arguments: { path: join(vault.root, "Inbox", "Stdio Notes.md") } });
  expect(read.structuredContent).toMatchObject({ path: "Inbox/Stdio Notes.md", content: expect.stringContaining("stdio notes") });
});

it.each([
  ["create_note", {}, "Missing required parameter: topic"],
  ["read_note", { path: "Nope.md" }, "Note not found: Nope.md"],
  ["search_notes", { query: "xylophone" }, "No notes match 'xylophone'"],
  ["summarize_notes", { mode: "topic" }, "Missing required parameter: topic"],
  ["summarize_notes", { mode: "topic", topic: "xylophone" }, "No notes match 'xylophone'"],
  ["summarize_notes", { mode: "current_note", note_path: "x.md" }, "Note not found: x.md"],
  ["read_note", { path: ".obsidian/app.json" }, "config folder"],
  ["create_note", { topic: "x", folder: "../../tmp" }, "'..'"],
  ["search_notes", { query: "x", vault_path: "/elsewhere" }, "vault_path does not match the served vault"],
])("%s %j is an isError result: %s", async (name, args, message) => {
  const before = await snapshot(vault.root);
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain(message);
  expect(await snapshot(vault.root)).toEqual(before);
});

it("keeps stdout for the protocol: diagnostics go to stderr", async () => {
  await client.listTools();
  expect(stderr).toContain("stdio test server ready");
});
