// run_workflow through the real bridge and the SDK client, on the real core and the loopback Ollama:
// the flow note is read with read_note's rules (paths, exclusions), invalid flows are explained.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createKrypton, type KryptonCore } from "../../src/core/krypton";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { silentLogger } from "../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { createNodeHost } from "../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { connectStreamable, textOf } from "./support/mcp-test-kit";

const WORKFLOWS = join(__dirname, "..", "..", "examples", "demo-vault", "Workflows");
const token = generateMcpToken();
let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;
let bridge: McpHttpServerHandle;
let client: Client;

beforeEach(async () => {
  ollama = await startOllamaServer();
  vault = await makeTempVault({
    "Workflows/Branching.md": readFileSync(join(WORKFLOWS, "Conditional branching.md"), "utf8"),
    "Private/Flow.md": readFileSync(join(WORKFLOWS, "Sequential pipeline.md"), "utf8"),
    "Broken.md": '```krypton-flow\n{"id":"b","defaultModel":"ollama/llama3.1:8b","agents":[{"name":"a","type":"task","params":{"task":"t"}}],"transitions":[{"from":"a","to":"zz"}]}\n```',
  });
  core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, requestTimeoutMs: 5_000, excludePatterns: ["Private/"] });
  bridge = await startMcpHttpServer({ registry: core.tools, port: 0, token, vaultRoot: vault.root });
  client = await connectStreamable(bridge.url, token);
});

afterEach(async () => {
  await client.close();
  await bridge.close();
  await core.close();
  await vault.cleanup();
  await ollama.close();
});

it("runs a flow note and returns the result, status and path", async () => {
  ollama.setDefault({ reply: (req) => (req.userText.includes("Score this draft") ? '{"value": 55}' : "Three small improvements.") });
  const result = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Workflows/Branching.md", input: "my draft" } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({ status: "finished", result: "Three small improvements.", message: "Finished.", path: ["score_draft", "polish"] });
  expect(textOf(result)).toContain("[finished: score_draft → polish]");
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
