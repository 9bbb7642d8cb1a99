// The ready-to-copy client set-ups the settings tab shows, checked by doing what each client does with
// them against the real bridge (the stdio ones are run in tests/cli/cli-mcp.test.ts with the real CLI).
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import {
  bridgeUrl,
  claudeDesktopConfig,
  claudeDesktopStdioConfig,
  INSPECTOR_PACKAGE,
  inspectorCommand,
  inspectorStdioCommand,
} from "../../src/obsidian/mcp/client-config";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { noteToolRegistry } from "./support/mcp-test-kit";

/** The argv a POSIX shell makes of a command line (run through /bin/sh itself, not re-implemented). */
function shellArgv(command: string): string[] {
  const out = execFileSync("/bin/sh", ["-c", `for a in ${command}; do printf '%s\\0' "$a"; done`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

async function listToolNames(url: string, headers: Record<string, string>): Promise<string[]> {
  const client = new Client({ name: "client-config-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await client.close();
  }
}

const TOOLS = ["create_note", "read_note", "search_notes", "summarize_notes"];
let vault: TempVault;
let bridge: McpHttpServerHandle;
const token = generateMcpToken();

beforeAll(async () => {
  vault = await makeTempVault({ "A.md": "# A" });
  bridge = await startMcpHttpServer({ registry: noteToolRegistry(vault.root).registry, port: 0, token, vaultRoot: vault.root });
});
afterAll(async () => {
  await bridge.close();
  await vault.cleanup();
});

it("the bridge URL is the Streamable HTTP endpoint on 127.0.0.1", () => {
  expect(bridgeUrl(bridge.port)).toBe(bridge.url);
});

it("the MCP Inspector command parses into --cli <url> --transport http --header <auth> --method tools/list, and that request works", async () => {
  const argv = shellArgv(inspectorCommand(bridge.url, token));
  expect(argv).toEqual(["npx", INSPECTOR_PACKAGE, "--cli", bridge.url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/list"]);
  const header = argv[argv.indexOf("--header") + 1];
  const colon = header.indexOf(":");
  expect(await listToolNames(argv[3], { [header.slice(0, colon)]: header.slice(colon + 1).trim() })).toEqual(TOOLS);
});

it("the Claude Desktop HTTP config runs mcp-remote with the bridge URL and a header that authenticates once its env is filled in", async () => {
  const config = JSON.parse(claudeDesktopConfig(bridge.url, token)) as { mcpServers: { krypton: { command: string; args: string[]; env: Record<string, string> } } };
  const server = config.mcpServers.krypton;
  expect(server.command).toBe("npx");
  expect(server.args.slice(0, 3)).toEqual(["-y", "mcp-remote", bridge.url]);
  // No spaces inside args (Claude Desktop on Windows splits them); the secret is in env, filled in by mcp-remote.
  expect(server.args.some((a) => a.includes(" "))).toBe(false);
  const header = server.args[server.args.indexOf("--header") + 1].replace(/\$\{(\w+)\}/g, (_m, name: string) => server.env[name]);
  expect(header).toBe(`Authorization:Bearer ${token}`);
  // mcp-remote splits "Name:value" at the first colon.
  const colon = header.indexOf(":");
  expect(await listToolNames(server.args[2], { [header.slice(0, colon)]: header.slice(colon + 1) })).toEqual(TOOLS);
  // Without the env substitution nothing gets in.
  await expect(listToolNames(server.args[2], {})).rejects.toThrow();
});

it.each(["/home/me/Notes", "/home/me/My Notes", '/tmp/a "quoted" $HOME `x` \\ vault'])(
  "the standalone set-ups name the vault exactly, whatever its characters (%s)",
  (root) => {
    expect(JSON.parse(claudeDesktopStdioConfig(root))).toEqual({ mcpServers: { krypton: { command: "krypton", args: ["mcp", root] } } });
    expect(shellArgv(inspectorStdioCommand(root))).toEqual(["npx", INSPECTOR_PACKAGE, "--cli", "krypton", "mcp", root, "--method", "tools/list"]);
  },
);
