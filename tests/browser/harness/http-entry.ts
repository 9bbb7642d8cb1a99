// The page for redirects.browser.test.ts: Obsidian's real HTTP stack (createObsidianHttp: the page's fetch,
// the CORS fallback and the redirect policy) and Krypton's real MCP client, on window for the test to drive.
import { McpConnection } from "../../../src/core/mcp-client/mcp-connection";
import { EMPTY_SERVER } from "../../../src/core/mcp-client/server-config";
import { errorMessage } from "../../../src/core/util/errors";
import { createObsidianHttp } from "../../../src/obsidian/host/obsidian-fetch";

export interface HttpPage {
  /** URLs the stack handed to requestUrl (the CORS fallback). */
  requestUrlCalls: string[];
  fetch(url: string, init?: RequestInit): Promise<{ status: number; text: string } | { error: string }>;
  /** Connects as the settings' "http" server would, lists the tools and calls echo. */
  mcp(url: string, headers: Record<string, string>): Promise<{ tools: string[]; echo: string } | { error: string }>;
}

const requestUrlCalls: string[] = [];
const hostFetch = createObsidianHttp({
  pageFetch: (input, init) => window.fetch(input, init),
  // A page has no requestUrl: it records the fallback and fails like an unreachable server.
  requestUrl: (request) => {
    requestUrlCalls.push(request.url);
    return Promise.reject(new Error("no requestUrl in this page"));
  },
  pageOrigin: location.origin,
});

const page: HttpPage = {
  requestUrlCalls,
  async fetch(url, init) {
    try {
      const response = await hostFetch(url, init);
      return { status: response.status, text: await response.text() };
    } catch (err) {
      return { error: errorMessage(err) };
    }
  },
  async mcp(url, headers) {
    try {
      const server = { ...EMPTY_SERVER, name: "remote", transport: "http" as const, url, headers };
      const connection = await McpConnection.connect(server, { fetch: hostFetch, clientInfo: { name: "krypton-test", version: "0" }, timeoutMs: 20_000, secrets: Object.values(headers) });
      try {
        const result = await connection.callTool("echo", { text: "hi" }, { timeoutMs: 20_000 });
        const first = result.content[0];
        return { tools: connection.listTools().map((t) => t.name), echo: first?.type === "text" ? first.text : "" };
      } finally {
        await connection.close();
      }
    } catch (err) {
      return { error: errorMessage(err) };
    }
  },
};
(window as unknown as { kryptonHttp: HttpPage }).kryptonHttp = page;
