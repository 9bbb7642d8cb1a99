// The hosts' redirect rule against real loopback servers and Node's fetch: same origin is followed (an MCP
// endpoint's /mcp → /mcp/), another origin never receives the request or its headers.
import { sameOriginRedirects } from "../../../src/core/providers/redirect-policy";
import { chromiumLikeFetch } from "../../obsidian/cors-fetch";
import { loopbackServers } from "../../support/servers/loopback-server";

const servers = loopbackServers();
const serve = servers.serve;
afterEach(() => servers.closeAll());

const fetchOf = sameOriginRedirects((input, init) => fetch(input, init));

it("follows a same-origin 307 with method, headers and body", async () => {
  const seen: string[] = [];
  const url = await serve((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push(`${req.method} ${req.url} ${req.headers["x-api-key"]} ${body}`);
      if (req.url === "/mcp") res.writeHead(307, { location: "/mcp/" }).end();
      else res.end("ok");
    });
  });
  const res = await fetchOf(`${url}/mcp`, { method: "POST", headers: { "x-api-key": "k-123456789" }, body: "{}" });
  expect(await res.text()).toBe("ok");
  expect(seen).toEqual(["POST /mcp k-123456789 {}", "POST /mcp/ k-123456789 {}"]);
});

it("refuses a redirect to another origin before sending anything there", async () => {
  const elsewhere: string[] = [];
  const other = await serve((req, res) => {
    elsewhere.push(JSON.stringify(req.headers));
    res.end("{}");
  });
  const url = await serve((_req, res) => res.writeHead(302, { location: `${other}/steal` }).end());
  await expect(fetchOf(`${url}/v1`, { headers: { "x-goog-api-key": "AIza-secret" } })).rejects.toThrow(`redirected the request to ${other}/steal`);
  expect(elsewhere).toEqual([]);
});

it("does not send a streamed body twice: a 307 that would need it again is refused", async () => {
  const seen: string[] = [];
  const url = await serve((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(307, { location: "/upload/" }).end();
  });
  const body = new Blob(["chunk"]).stream();
  const init = { method: "POST", body, duplex: "half" } as RequestInit;
  await expect(fetchOf(`${url}/upload`, init)).rejects.toThrow("redirected the request to /upload/, and its body cannot be sent a second time");
  expect(seen).toEqual(["POST /upload"]);
});

// A browser's fetch (Obsidian's page) answers `redirect: "manual"` with an opaque redirect: no status, no
// Location. chromiumLikeFetch does what Chromium does (the browser test checks the real one); the servers
// allow the page's origin, as a server must for the page to see even that much.
describe("with a browser's opaque redirects", () => {
  const cors = { "access-control-allow-origin": "*", "access-control-allow-headers": "*", "access-control-allow-methods": "*" };
  /** A server that logs what reached it (preflights aside) and answers with `route`. */
  async function serveLogged(seen: string[], route: (path: string) => { status: number; location?: string }): Promise<string> {
    return serve((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        if (req.method === "OPTIONS") return void res.writeHead(204, cors).end();
        seen.push(`${req.method} ${req.url} ${req.headers["x-api-key"] ?? "-"} ${body}`.trim());
        const { status, location } = route(req.url ?? "/");
        res.writeHead(status, { ...cors, ...(location ? { location } : {}) }).end(status === 200 ? `ok ${req.url}` : "");
      });
    });
  }
  const pageFetchOf = () => sameOriginRedirects(chromiumLikeFetch());
  const mcpSlash = (path: string) => (path.startsWith("/mcp/") ? { status: 200 } : { status: 307, location: "/mcp/" });

  it("answers a same-origin /mcp → /mcp/ at the other form of the path once, then goes straight there", async () => {
    const seen: string[] = [];
    const url = await serveLogged(seen, mcpSlash);
    const hostFetch = pageFetchOf();
    const post = { method: "POST", headers: { "x-api-key": "k-1" }, body: "{}" };
    const first = await hostFetch(`${url}/mcp`, post);
    expect([first.status, await first.text()]).toEqual([200, "ok /mcp/"]);
    expect(await (await hostFetch(`${url}/mcp`, post)).text()).toBe("ok /mcp/");
    expect(await (await hostFetch(`${url}/mcp?stream=1`)).text()).toBe("ok /mcp/?stream=1");
    expect(seen).toEqual(["POST /mcp k-1 {}", "POST /mcp/ k-1 {}", "POST /mcp/ k-1 {}", "GET /mcp/?stream=1 -"]);
  });

  it("forgets a remembered path once it redirects itself, and asks the configured one again", async () => {
    const seen: string[] = [];
    let route = mcpSlash;
    const url = await serveLogged(seen, (path) => route(path));
    const hostFetch = pageFetchOf();
    await hostFetch(`${url}/mcp`);
    // The server was reconfigured: now /mcp answers and /mcp/ redirects to it.
    route = (path) => (path === "/mcp" ? { status: 200 } : { status: 308, location: "/mcp" });
    expect(await (await hostFetch(`${url}/mcp`)).text()).toBe("ok /mcp");
    expect(await (await hostFetch(`${url}/mcp`)).text()).toBe("ok /mcp");
    expect(seen).toEqual(["GET /mcp -", "GET /mcp/ -", "GET /mcp/ -", "GET /mcp -", "GET /mcp -"]);
  });

  it("forgets a remembered path that is gone, and asks the configured one again", async () => {
    const seen: string[] = [];
    let route = mcpSlash;
    const url = await serveLogged(seen, (path) => route(path));
    const hostFetch = pageFetchOf();
    await hostFetch(`${url}/mcp`, { method: "POST", body: "{}" });
    // The server was reconfigured: /mcp answers and /mcp/ is no more.
    route = (path) => (path === "/mcp" ? { status: 200 } : { status: 404 });
    expect(await (await hostFetch(`${url}/mcp`, { method: "POST", body: "{}" })).text()).toBe("ok /mcp");
    expect(await (await hostFetch(`${url}/mcp`)).text()).toBe("ok /mcp");
    expect(seen).toEqual(["POST /mcp - {}", "POST /mcp/ - {}", "POST /mcp/ - {}", "POST /mcp - {}", "GET /mcp -"]);
  });

  it("refuses a redirect it cannot see when the other form of the path does not answer; the other origin gets nothing", async () => {
    const elsewhere: string[] = [];
    const other = await serveLogged(elsewhere, () => ({ status: 200 }));
    const seen: string[] = [];
    // /v1/models goes to another origin and /v1/models/ does not exist; /away and /away/ both go there.
    const url = await serveLogged(seen, (path) => (path === "/v1/models/" ? { status: 404 } : { status: 302, location: `${other}/steal` }));
    const hostFetch = pageFetchOf();
    const key = { headers: { "x-api-key": "AIza-secret" } };
    await expect(hostFetch(`${url}/v1/models`, key)).rejects.toThrow(`${url} redirected the request for /v1/models to an address the app cannot see; /v1/models/ did not answer instead.`);
    await expect(hostFetch(`${url}/away`, key)).rejects.toThrow("redirected the request for /away to an address the app cannot see; /away/ did not answer instead.");
    // The root has no other form to try.
    await expect(hostFetch(`${url}/`, key)).rejects.toThrow("redirected the request for / to an address the app cannot see.");
    expect(seen).toEqual(["GET /v1/models AIza-secret", "GET /v1/models/ AIza-secret", "GET /away AIza-secret", "GET /away/ AIza-secret", "GET / AIza-secret"]);
    expect(elsewhere).toEqual([]);
  });

  it("does not send a streamed body twice to try the other form of the path", async () => {
    const seen: string[] = [];
    const url = await serveLogged(seen, mcpSlash);
    const init = { method: "POST", body: new Blob(["{}"]).stream(), duplex: "half" } as RequestInit;
    await expect(pageFetchOf()(`${url}/mcp`, init)).rejects.toThrow("redirected the request for /mcp (the address may need or lose a trailing slash), and its body cannot be sent a second time");
    expect(seen).toEqual(["POST /mcp - {}"]);
  });
});
