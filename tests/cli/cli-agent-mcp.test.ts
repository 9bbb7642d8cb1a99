// `krypton ask --agent` with the user's MCP servers: the real CLI process connects a real stdio MCP server
// (an SDK server from the test kit) and a crashing one; the agent (JSON protocol, loopback Ollama) calls the
// working server's tools, the crashing one is one warning, /tools-style listing groups tools by server.
import { join } from "node:path";
import { bundleForNode } from "../mcp/support/bundle";
import { makeTempVault } from "../support/temp-vault";
import { useCliTestBed } from "../support/cli-test-bed";
import { runCli } from "./cli-harness";

// A model without native tools: the agent speaks the JSON action protocol.
const bed = useCliTestBed({ ollama: { modelInfo: { "llama3.1:8b": { capabilities: ["completion"] } } } });
/** The stdio MCP server from the test kit, bundled for Node. */
let entry: string;

beforeAll(async () => {
  entry = await bundleForNode(join(__dirname, "..", "mcp", "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
}, 120_000);

const stdio = (name: string, args: string[] = []) => ({ name, enabled: true, transport: "stdio", command: process.execPath, args: [entry, ...args], env: {}, useLoginShellPath: false });
const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ action: "call_tool", tool, arguments: args });
const final = (response: string) => JSON.stringify({ action: "final", response });

it("calls a tool of a working MCP server beside a failing one; a tool without readOnlyHint asks first", async () => {
  bed.vault = await makeTempVault({
    "A.md": "# A\n",
    ".obsidian/plugins/krypton/data.json": JSON.stringify({ embeddingProvider: "none", mcpServers: [stdio("crashy", ["--crash"]), stdio("local")] }),
  });
  bed.ollama.reset();
  bed.ollama.script([
    { route: "chat", reply: call("local:echo", { text: "hello from the agent" }) },
    { route: "chat", reply: call("local:show_env", { name: "HOME" }) },
    { route: "chat", reply: final("The server echoed it.") },
  ]);
  const r = await runCli(["ask", bed.vault.root, "Echo hello through my MCP server", "--agent", "--json"], { env: bed.env });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("krypton: warning: MCP server crashy: could not start");
  const json = JSON.parse(r.stdout) as { answer: string; steps: { tool: { name: string }; outcome: string; result: string }[] };
  expect(json.answer).toBe("The server echoed it.");
  expect(json.steps[0]).toMatchObject({ tool: { name: "local:echo" }, outcome: "ok" });
  expect(json.steps[0].result).toContain("hello from the agent");
  // show_env has no readOnlyHint: a write as far as Krypton knows, so it needs approval (none without a terminal).
  expect(json.steps[1]).toMatchObject({ tool: { name: "local:show_env" }, outcome: "denied" });
  const system = (bed.ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[0].content;
  expect(system).toContain("- local:echo:");
  expect(system).not.toContain("crashy:");
}, 60_000);

it("krypton chat: a failing MCP server is one warning per run, however often /agent is switched on", async () => {
  bed.vault = await makeTempVault({
    "A.md": "# A\n",
    ".obsidian/plugins/krypton/data.json": JSON.stringify({
      embeddingProvider: "none",
      mcpServers: [{ ...stdio("crashy", ["--crash"]), env: { API_KEY: "" } }],
    }),
  });
  const r = await runCli(["chat", bed.vault.root, "--agent"], { env: bed.env, input: "/agent off\n/agent on\n/agent on\n" });
  expect(r.code).toBe(0);
  expect(r.stderr.match(/MCP server crashy: could not start/g)).toHaveLength(1);
  expect(r.stderr.match(/MCP server crashy: API_KEY is empty/g)).toHaveLength(1);
  // Each switch is still acknowledged: only the warnings are not repeated.
  expect(r.stderr.match(/Agent mode: on/g)).toHaveLength(2);
}, 60_000);
