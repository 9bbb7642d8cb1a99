// Secrets through the real CLI: API keys, the MCP servers' env values and headers must not reach stdout,
// stderr (also with --verbose and KRYPTON_DEBUG), the model, or any file in the vault (conversations,
// the index), even when a server echoes them back.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { bundleForNode } from "../mcp/support/bundle";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../support/servers/gemini-server";
import { DEFAULT_TAVILY_KEY, startTavilyServer, type TavilyTestServer } from "../support/servers/tavily-server";
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

const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ action: "call_tool", tool, arguments: args });
const final = (response: string) => JSON.stringify({ action: "final", response });

/** Every file under the vault (notes, .krypton/chat, the index), as text. */
async function allFiles(root: string): Promise<string> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(entries.filter((e) => e.isFile()).map((e) => fs.readFile(join(e.parentPath, e.name), "latin1")));
  return texts.join("\n");
}

it("an MCP server echoing its own env secret: the tool result reaches neither the model, the output nor the vault", async () => {
  const secret = "ghp_s3cretValueFromTheUsersKeychain";
  const server = { name: "local", enabled: true, transport: "stdio", command: process.execPath, args: [entry], env: { DEMO_API_KEY: "" }, useLoginShellPath: false };
  bed.vault = await makeTempVault({
    "A.md": "# A\n",
    ".obsidian/plugins/krypton/data.json": JSON.stringify({ embeddingProvider: "none", mcpServers: [server] }),
  });
  bed.ollama.reset();
  bed.ollama.script([
    { route: "chat", reply: call("local:show_env", { name: "DEMO_API_KEY" }) },
    { route: "chat", reply: final("Done.") },
  ]);
  const r = await runCli(["chat", bed.vault.root, "--agent", "--yes", "--verbose"], {
    env: { KRYPTON_OLLAMA_URL: bed.ollama.url, KRYPTON_MCP_LOCAL_DEMO_API_KEY: secret, KRYPTON_DEBUG: "1" },
    input: "Show my server's key\n/steps\n/log\n",
  });
  expect(r.code).toBe(0);
  const requests = bed.ollama.requestsTo("chat");
  expect(requests).toHaveLength(2);
  // The tool ran (its result came back to the model) but the value was masked on the way.
  expect(requests[1].rawBody).toContain("***");
  for (const text of [r.stdout, r.stderr, requests[1].rawBody, await allFiles(bed.vault.root)]) expect(text).not.toContain(secret);
}, 60_000);

describe("a configured base URL that redirects to another host", () => {
  let gemini: GeminiTestServer;
  let tavily: TavilyTestServer;
  let elsewhere: GeminiTestServer;
  beforeAll(async () => {
    [gemini, tavily, elsewhere] = await Promise.all([startGeminiServer(), startTavilyServer(), startGeminiServer()]);
  });
  afterAll(() => Promise.all([gemini.close(), tavily.close(), elsewhere.close()]));

  it("Gemini: the key never reaches the other host; the error names where it was sent", async () => {
    bed.vault = await makeTempVault({ "A.md": "# A\n" });
    const redirect = { status: 307, body: "", headers: { location: `${elsewhere.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse` } };
    gemini.reset();
    elsewhere.reset();
    gemini.setDefault(redirect);
    const r = await runCli(["ask", bed.vault.root, "Hello?", "--mode", "none", "--chat-provider", "gemini", "--chat-model", "gemini-2.5-flash", "--no-embeddings"], {
      env: { GEMINI_API_KEY: DEFAULT_GEMINI_KEY, KRYPTON_GEMINI_BASE_URL: gemini.url },
    });
    expect(gemini.requests.length).toBeGreaterThan(0);
    expect(elsewhere.requests).toEqual([]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`redirected the request to ${elsewhere.url}`);
    expect(r.stderr).not.toContain(DEFAULT_GEMINI_KEY);
  }, 60_000);

  it("Tavily: the search (and its key) never reaches the other host", async () => {
    bed.vault = await makeTempVault({ "A.md": "# A\n" });
    tavily.reset();
    elsewhere.reset();
    tavily.setDefault({ status: 308, body: "", headers: { location: `${elsewhere.url}/search` } });
    bed.ollama.reset();
    const r = await runCli(["ask", bed.vault.root, "news about MCP", "--mode", "web", "--no-embeddings"], {
      env: { TAVILY_API_KEY: DEFAULT_TAVILY_KEY, KRYPTON_TAVILY_BASE_URL: tavily.url, KRYPTON_OLLAMA_URL: bed.ollama.url },
    });
    expect(tavily.requests.length).toBeGreaterThan(0);
    expect(elsewhere.requests).toEqual([]);
    expect(`${r.stdout}${r.stderr}`).not.toContain(DEFAULT_TAVILY_KEY);
  }, 60_000);
});
