// `krypton mcp-servers <vault>`: the real CLI process reads the servers from data.json, connects a real
// stdio server and a real Streamable HTTP server (token from KRYPTON_MCP_<SERVER>_<NAME>, as Obsidian keeps
// it in secret storage), and reports a crashing server with its stderr tail, without its secret.
import { join } from "node:path";
import { bundleForNode } from "../mcp/support/bundle";
import { startDemoHttpServer, type DemoHttpServer } from "../mcp/support/remote-mcp-servers";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, runCli } from "./cli-harness";

const TOKEN = "sk-cli-0123456789abcdef";
const ENV_SECRET = "crash-env-secret-4242";
let entry: string;
let http: DemoHttpServer;
let vault: TempVault;

beforeAll(async () => {
  await buildCli();
  entry = await bundleForNode(join(__dirname, "..", "mcp", "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
  http = await startDemoHttpServer({ token: TOKEN });
}, 120_000);
afterAll(() => http.close());
afterEach(() => vault?.cleanup());

async function vaultWith(servers: unknown[]): Promise<TempVault> {
  vault = await makeTempVault({ "A.md": "# A\n", ".obsidian/plugins/krypton/data.json": JSON.stringify({ embeddingProvider: "none", mcpServers: servers }) });
  return vault;
}

const stdio = (name: string, args: string[] = [], env: Record<string, string> = {}) => ({ name, enabled: true, transport: "stdio", command: process.execPath, args: [entry, ...args], env, useLoginShellPath: false });

it("lists each server's tools, with the HTTP token taken from the environment", async () => {
  await vaultWith([stdio("local"), { name: "remote", enabled: true, transport: "http", url: http.streamableUrl, headers: { Authorization: "" } }]);
  const r = await runCli(["mcp-servers", vault.root], { env: { KRYPTON_MCP_REMOTE_AUTHORIZATION: `Bearer ${TOKEN}` } });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("local: 8 tools");
  expect(r.stdout).toContain("  local:echo - Echoes the text back");
  expect(r.stdout).toContain("remote: 7 tools");
  expect(r.stdout).toMatch(/local:get\.weather\/now \(as local__get_weather_now_[0-9a-f]{8}\)/);
});

it("reports a failing server with its stderr tail and exit code 1, keeps the other, never prints the secret", async () => {
  await vaultWith([stdio("crashy", ["--crash"], { DEMO_API_KEY: ENV_SECRET }), stdio("good")]);
  const r = await runCli(["mcp-servers", vault.root, "--json"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("krypton: warning: MCP server crashy: could not start");
  expect(r.stderr).toContain("was rejected by upstream");
  expect(r.stdout + r.stderr).not.toContain(ENV_SECRET);
  const json = JSON.parse(r.stdout) as { servers: { name: string; state: string }[]; tools: { server: string; tools: { name: string }[] }[] };
  expect(json.servers.map((s) => [s.name, s.state])).toEqual([
    ["crashy", "failed"],
    ["good", "ready"],
  ]);
  expect(json.tools.find((g) => g.server === "good")?.tools.map((t) => t.name)).toContain("good:echo");
});

it("says where an empty secret should come from", async () => {
  await vaultWith([{ name: "remote", enabled: true, transport: "http", url: http.streamableUrl, headers: { Authorization: "" } }]);
  const r = await runCli(["mcp-servers", vault.root]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("MCP server remote: Authorization is empty (Obsidian keeps it in its secret storage); set KRYPTON_MCP_REMOTE_AUTHORIZATION");
  expect(r.stderr).toContain("HTTP 401");
});

it("names a stored server with no command instead of Node's spawn error", async () => {
  await vaultWith([{ ...stdio("blank"), command: "" }, stdio("good")]);
  const r = await runCli(["mcp-servers", vault.root]);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe('krypton: warning: MCP server "blank" has no command\n');
  expect(r.stdout).toContain("good: 8 tools");
});

it("with no servers configured, says so", async () => {
  await vaultWith([]);
  const r = await runCli(["mcp-servers", vault.root]);
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe("No MCP servers configured.");
});
