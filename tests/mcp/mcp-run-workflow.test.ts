// run_workflow through the real bridge and the SDK client, on the real core and the loopback Ollama:
// the flow note is read with read_note's rules (paths, exclusions), invalid flows are explained, and a
// step's tools pass the same index gate as a client's own calls.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MANIFEST_PATH } from "../../src/core/indexing/index-persistence";
import { createKrypton, type KryptonCore } from "../../src/core/krypton";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { silentLogger } from "../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { DEFAULT_INDEX_FRESHNESS, gateOnIndex, IndexFreshness } from "../../src/core/tools/index-freshness";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { createNodeHost } from "../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import type { TempVault } from "../support/temp-vault";
import { connectStreamable, textOf } from "./support/mcp-test-kit";
import { closeRealCoreBridge, startRealCoreBridge } from "./support/real-core-bridge";

const WORKFLOWS = join(__dirname, "..", "..", "examples", "demo-vault", "Workflows");
const token = generateMcpToken();
let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;
let bridge: McpHttpServerHandle;
let client: Client;

beforeEach(async () => {
  ollama = await startOllamaServer();
  ({ vault, core, bridge, client } = await startRealCoreBridge({
    ollama,
    token,
    notes: {
      "Workflows/Branching.md": readFileSync(join(WORKFLOWS, "Conditional branching.md"), "utf8"),
      "Private/Flow.md": readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"),
      "Broken.md": '```krypton-flow\n{"id":"b","defaultModel":"ollama/llama3.1:8b","agents":[{"name":"a","type":"task","params":{"task":"t"}}],"transitions":[{"from":"a","to":"zz"}]}\n```',
    },
    settings: { excludePatterns: ["Private/"] },
  }));
});

afterEach(async () => {
  await closeRealCoreBridge({ vault, core, bridge, client });
  await ollama.close();
});

it("runs a flow note and returns the result, status and path", async () => {
  ollama.setDefault({ reply: (req) => (req.userText.includes("Score this draft") ? '{"value": 55}' : "Three small improvements.") });
  const result = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Workflows/Branching.md", input: "my draft" } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({ status: "finished", result: "Three small improvements.", message: "Finished.", path: ["score_draft", "polish"] });
  expect(textOf(result)).toContain("[finished: score_draft → polish]");
});

it("a step's tool call that failed is in the result (toolErrors, text), though the model answered on", async () => {
  await vault.write(
    "Workflows/Reader.md",
    "```krypton-flow\n" + JSON.stringify({ id: "reader", defaultModel: "ollama/llama3.1:8b", agents: [{ name: "read", type: "task", params: { task: "Read {{input}}", toolNames: ["read_note"] } }], transitions: [] }) + "\n```\n",
  );
  ollama.script([
    { route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Missing.md" } }] } },
    { route: "chat", reply: "There is no such note." },
  ]);
  const result = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Workflows/Reader.md", input: "Missing.md" } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ status: "finished", result: "There is no such note.", toolErrors: ["read: read_note failed: Note not found: Missing.md"] });
  expect(textOf(result)).toContain("Tool errors:\n- read: read_note failed: Note not found: Missing.md");
});

it("explains an invalid flow with pointers and runs nothing", async () => {
  const result = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Broken.md", input: "x" } });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain('/transitions/0/to: unknown agent "zz"');
  expect(ollama.requestsTo("chat")).toHaveLength(0);
});

it("follows read_note's rules: excluded folders and paths outside the vault are refused", async () => {
  const excluded = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Private/Flow.md", input: "x" } });
  expect(excluded.isError).toBe(true);
  expect(textOf(excluded)).toMatch(/exclude patterns/);
  const outside = await client.callTool({ name: "run_workflow", arguments: { flow_path: "../outside.md", input: "x" } });
  expect(outside.isError).toBe(true);
  expect(ollama.requestsTo("chat")).toHaveLength(0);
});

describe("on a server whose index is still loading (krypton mcp right after it started)", () => {
  const SEARCHING_FLOW = {
    id: "research",
    defaultModel: "ollama/llama3.1:8b",
    agents: [{ name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } }],
    transitions: [],
  };
  let loading: { core: KryptonCore; bridge: McpHttpServerHandle; client: Client; release: () => void; opened: Promise<unknown> };

  beforeEach(async () => {
    await vault.write("Cooking/Bread.md", "# Sourdough\n\nFlour, water, salt and a lively starter.\n");
    await vault.write("Workflows/Research.md", "```krypton-flow\n" + JSON.stringify(SEARCHING_FLOW) + "\n```\n");
    // The saved index is read only once someone waits for the index: until then it stays "loading". Without
    // the gate nobody waits, and a step's search meets the loading index however fast the machine is.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const host = createNodeHost(vault.root, { logger: silentLogger });
    const data = Object.create(host.data) as typeof host.data;
    data.readText = (path) => (path === MANIFEST_PATH ? held.then(() => host.data.readText(path)) : host.data.readText(path));
    const loadingCore = createKrypton({ ...host, data }, { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, requestTimeoutMs: 5_000 });
    const opened = loadingCore.index.open();
    // As `krypton mcp` wires it; the long wait is a hang guard, the sync is what lets the load go on.
    const freshness = new IndexFreshness(
      (signal) => {
        release();
        return loadingCore.index.sync(signal);
      },
      { maxAgeMs: DEFAULT_INDEX_FRESHNESS.maxAgeMs, clock: host.clock },
    );
    gateOnIndex(loadingCore.tools, { index: loadingCore.index, maxWaitMs: 60_000, clock: host.clock, freshness });
    const loadingBridge = await startMcpHttpServer({ registry: loadingCore.tools, port: 0, token, vaultRoot: vault.root });
    loading = { core: loadingCore, bridge: loadingBridge, client: await connectStreamable(loadingBridge.url, token), release, opened };
  });

  afterEach(async () => {
    loading.release();
    await loading.client.close();
    await loading.bridge.close();
    await loading.opened.catch(() => undefined);
    await loading.core.close();
  });

  it("a step's search_notes waits for the index as a client's own search_notes does", async () => {
    expect(loading.core.index.status().state).toBe("loading");
    ollama.script([
      { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "sourdough" } }] } },
      { route: "chat", reply: "Cooking/Bread.md" },
    ]);
    const result = await loading.client.callTool({ name: "run_workflow", arguments: { flow_path: "Workflows/Research.md", input: "bread" } });
    expect(result.isError).toBeFalsy();
    const toolResults = ollama
      .requestsTo("chat")
      .flatMap((r) => (r.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === "tool").map((m) => m.content));
    expect(toolResults).toHaveLength(1);
    expect(toolResults[0]).not.toContain("not ready");
    expect(toolResults[0]).toContain("Cooking/Bread.md");
    expect(result.structuredContent).toMatchObject({ status: "finished", result: "Cooking/Bread.md", path: ["find"] });
    expect(result.structuredContent).not.toHaveProperty("toolErrors");
  });
});
