/**
 * Redirects inside Obsidian's page, in a real Chromium: Obsidian's HTTP stack (createObsidianHttp) and
 * Krypton's MCP client run in the page; the servers are real loopback servers on other origins, as a remote
 * MCP server or a model API is for Obsidian's app://obsidian.md. Chromium answers `redirect: "manual"` with
 * an opaque redirect, so these check what the redirect policy makes of the real thing: an MCP server mounted
 * at /mcp/ (Starlette-style: CORS middleware around a router that redirects /mcp → /mcp/) configured as
 * /mcp connects (on the second try: the first message's body is not sent twice), and a redirect to another
 * origin sends nothing there.
 */
import * as http from "node:http";
import { join } from "node:path";
import { build } from "esbuild";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Page } from "playwright-core";
import { launchChromium, type BrowserSession } from "./harness/chromium";
import { createDemoServer } from "../mcp/support/remote-mcp-servers";
import type { HttpPage } from "./harness/http-entry";
import { loopbackServers } from "../support/servers/loopback-server";

const TOKEN = "t0k3n-for-the-mcp-server";

jest.setTimeout(60_000);

const servers = loopbackServers();
const serve = servers.serve;

let pageUrl: string;
let browser: BrowserSession;
let page: Page;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [join(__dirname, "harness", "http-entry.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "chrome120",
    alias: { obsidian: join(__dirname, "harness", "obsidian-shim.ts") },
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0].text;
  pageUrl = await serve((req, res) => {
    if (req.url === "/http.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><html><body><script src="/http.js"></script></body></html>');
  });
  browser = await launchChromium();
  page = browser.page;
  await page.goto(pageUrl);
  await page.waitForFunction(() => "kryptonHttp" in window);
});

afterAll(async () => {
  await browser?.close();
  await servers.closeAll();
});

/** What reached a server, preflights aside: "METHOD /path authorization-or-key". */
type Log = string[];

/**
 * CORS middleware around the app, as Starlette's CORSMiddleware: it answers preflights itself and adds
 * the allow-origin header to every answer to the page, redirects included.
 */
function corsFor(req: http.IncomingMessage, res: http.ServerResponse, log: Log): boolean {
  res.setHeader("access-control-allow-origin", pageUrl);
  res.setHeader("vary", "Origin");
  if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
    res.writeHead(200, {
      "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
      "access-control-allow-headers": req.headers["access-control-request-headers"] ?? "",
    });
    res.end();
    return true;
  }
  log.push(`${req.method} ${req.url} ${req.headers.authorization ?? req.headers["x-goog-api-key"] ?? "-"}`);
  return false;
}

/** A remote MCP server mounted at /mcp/ (stateless Streamable HTTP, the real SDK) that redirects /mcp there. */
async function starletteMcpServer(log: Log): Promise<string> {
  const base = await serve((req, res) => {
    if (corsFor(req, res, log)) return;
    if (req.url === "/mcp") return void res.writeHead(307, { location: `${base}/mcp/` }).end();
    if (req.url !== "/mcp/") return void res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    void createDemoServer()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  return base;
}

it("an MCP server at /mcp/ configured as /mcp: a request without a body finds /mcp/, the message goes there, and later ones go straight there", async () => {
  const log: Log = [];
  const mcp = await starletteMcpServer(log);
  const connect = () => page.evaluate(([url, token]) => (window as unknown as { kryptonHttp: HttpPage }).kryptonHttp.mcp(url, { Authorization: `Bearer ${token}` }), [`${mcp}/mcp`, TOKEN]);
  expect(await connect()).toEqual({ tools: expect.arrayContaining(["echo"]), echo: "echo: hi" });
  // The page cannot see the redirect's status: the initialize request went to /mcp, a request without a
  // body found /mcp/ (405: it answers), and only then did initialize go there; the rest (initialized, the GET
  // stream, tools/list, tools/call) went straight to /mcp/, and the token nowhere else.
  const auth = `Bearer ${TOKEN}`;
  expect(log.slice(0, 3)).toEqual([`POST /mcp ${auth}`, `GET /mcp/ ${auth}`, `POST /mcp/ ${auth}`]);
  expect(log.slice(3).sort()).toEqual([`GET /mcp/ ${auth}`, ...Array(3).fill(`POST /mcp/ ${auth}`)]);
  expect(await connect()).toEqual({ tools: expect.arrayContaining(["echo"]), echo: "echo: hi" });
  expect(log.slice(8).every((line) => line.includes(" /mcp/ "))).toBe(true);
  expect(await requestUrlCallsTo(mcp)).toEqual([]);
});

/** The page's requestUrl fallback calls to `origin`: the log spans the whole file, so each test looks at its own server's. */
async function requestUrlCallsTo(origin: string): Promise<string[]> {
  const calls = await page.evaluate(() => (window as unknown as { kryptonHttp: HttpPage }).kryptonHttp.requestUrlCalls);
  return calls.filter((url) => url.startsWith(`${origin}/`));
}

describe("a redirect to another origin", () => {
  let elsewhere: Log;
  let other: string;
  beforeEach(async () => {
    elsewhere = [];
    other = await serve((req, res) => {
      elsewhere.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "access-control-allow-origin": "*", "access-control-allow-headers": "*" }).end("{}");
    });
  });

  it("is refused in the page and the other origin receives nothing, preflight included", async () => {
    const log: Log = [];
    // /v1/models goes to another origin and /v1/models/ does not exist; /away and /away/ both go there.
    const api = await serve((req, res) => {
      if (corsFor(req, res, log)) return;
      if (req.url === "/v1/models/") return void res.writeHead(404).end();
      res.writeHead(req.method === "POST" ? 307 : 302, { location: `${other}/steal` }).end();
    });
    const key = { "x-goog-api-key": "AIza-secret" };
    const get = await page.evaluate(([url, headers]) => (window as unknown as { kryptonHttp: HttpPage }).kryptonHttp.fetch(url, { headers }), [`${api}/v1/models`, key] as const);
    expect(get).toEqual({ error: expect.stringContaining("redirected the request for /v1/models to an address the app cannot see; /v1/models/ did not answer instead.") });
    const post = await page.evaluate(
      ([url, headers]) => (window as unknown as { kryptonHttp: HttpPage }).kryptonHttp.fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" }),
      [`${api}/away`, key] as const,
    );
    expect(post).toEqual({ error: expect.stringContaining("redirected the request for /away to an address the app cannot see; /away/ did not answer instead.") });
    // The POST's body is not sent again: a GET without it tries /away/.
    expect(log).toEqual(["GET /v1/models AIza-secret", "GET /v1/models/ AIza-secret", "POST /away AIza-secret", "GET /away/ AIza-secret"]);
    expect(elsewhere).toEqual([]);
  });

  it("without CORS headers on the redirect, fails in the page like a CORS refusal and goes to requestUrl", async () => {
    // As a proxy's http → https redirect usually is: Chromium gives no opaque redirect, just "Failed to
    // fetch", so the stack retries through requestUrl, which in Obsidian follows redirects out of sight.
    const log: Log = [];
    const api = await serve((req, res) => {
      log.push(`${req.method} ${req.url}`);
      res.writeHead(302, { location: `${other}/steal` }).end();
    });
    const result = await page.evaluate((url) => (window as unknown as { kryptonHttp: HttpPage }).kryptonHttp.fetch(url), `${api}/api/tags`);
    expect(result).toEqual({ error: "Failed to fetch" });
    expect(await requestUrlCallsTo(api)).toEqual([`${api}/api/tags`]);
    expect(log).toEqual(["GET /api/tags"]);
    expect(elsewhere).toEqual([]);
  });
});
