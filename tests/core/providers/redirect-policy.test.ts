// The hosts' redirect rule against real loopback servers and Node's fetch: same origin is followed (an MCP
// endpoint's /mcp → /mcp/), another origin never receives the request or its headers.
import { sameOriginRedirects } from "../../../src/core/providers/redirect-policy";
import { chromiumLikeFetch } from "../../obsidian/cors-fetch";
import { loopbackServers } from "../../support/servers/loopback-server";

const servers = loopbackServers();
const serve = servers.serve;
afterEach(() => servers.closeAll());

const fetchOf = sameOriginRedirects((input, init) => fetch(input, init));

/** A server that logs "METHOD /path key body" and redirects /mcp to /mcp/ with `status`. */
async function serveRedirecting(seen: string[], status: number): Promise<string> {
  return serve((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push(`${req.method} ${req.url} ${req.headers["x-api-key"]} ${body}`.trim());
      if (req.url === "/mcp") res.writeHead(status, { location: "/mcp/" }).end();
      else res.end("ok");
    });
  });
}

// 307 and 308 say the request was not handled and is to be repeated, method and body unchanged, there.
it.each([307, 308])("follows a same-origin %i with method, headers and body", async (status) => {
  const seen: string[] = [];
  const url = await serveRedirecting(seen, status);
  const res = await fetchOf(`${url}/mcp`, { method: "POST", headers: { "x-api-key": "k-123456789" }, body: "{}" });
  expect(await res.text()).toBe("ok");
  expect(seen).toEqual(["POST /mcp k-123456789 {}", "POST /mcp/ k-123456789 {}"]);
});

it.each([301, 302, 303])("does not send a POST with a body on after a %i (it would go on as a GET without it): the error names the new address", async (status) => {
  const seen: string[] = [];
  const url = await serveRedirecting(seen, status);
  const chat = { method: "POST", headers: { "x-api-key": "k-1", "content-type": "application/json" }, body: '{"messages":[]}' };
  await expect(fetchOf(`${url}/mcp`, chat)).rejects.toThrow(`${url} redirected the request to ${url}/mcp/ (HTTP ${status}), which would send it on without its body, so it was not sent again: if that is the right address, put it in settings.`);
  expect(seen).toEqual(['POST /mcp k-1 {"messages":[]}']);
  // A request without a body is followed, as fetch would.
  expect(await (await fetchOf(`${url}/mcp`, { headers: { "x-api-key": "k-1" } })).text()).toBe("ok");
  expect(seen.slice(1)).toEqual(["GET /mcp k-1", "GET /mcp/ k-1"]);
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
    const get = { headers: { "x-api-key": "k-1" } };
    const first = await hostFetch(`${url}/mcp`, get);
    expect([first.status, await first.text()]).toEqual([200, "ok /mcp/"]);
    expect(await (await hostFetch(`${url}/mcp`, { method: "POST", headers: { "x-api-key": "k-1" }, body: "{}" })).text()).toBe("ok /mcp/");
    expect(await (await hostFetch(`${url}/mcp?stream=1`)).text()).toBe("ok /mcp/?stream=1");
    expect(seen).toEqual(["GET /mcp k-1", "GET /mcp/ k-1", "POST /mcp/ k-1 {}", "GET /mcp/?stream=1 -"]);
  });

  // The hidden status may be a slash redirect (the server did not handle the request) or a 303 after the
  // server acted on it: a POST's body goes to the other form only once a request without it shows that form
  // answers, as it does behind a slash redirect, and later requests go straight there.
  it.each([301, 302, 303, 307, 308])("sends a POST on to the other form of the path after a %i it cannot see, once a request without a body finds it", async (status) => {
    const seen: string[] = [];
    const url = await serveLogged(seen, (path) => (path.startsWith("/mcp/") ? { status: 200 } : { status, location: "/mcp/" }));
    const hostFetch = pageFetchOf();
    const chat = { method: "POST", headers: { "x-api-key": "k-1", "content-type": "application/json" }, body: '{"messages":[]}' };
    expect(await (await hostFetch(`${url}/mcp`, chat)).text()).toBe("ok /mcp/");
    expect(await (await hostFetch(`${url}/mcp`, chat)).text()).toBe("ok /mcp/");
    expect(seen).toEqual(['POST /mcp k-1 {"messages":[]}', "GET /mcp/ k-1", 'POST /mcp/ k-1 {"messages":[]}', 'POST /mcp/ k-1 {"messages":[]}']);
  });

  it("does not send a POST's body again when the other form of the path does not answer (a 303 after the server acted)", async () => {
    const seen: string[] = [];
    const url = await serveLogged(seen, (path) => (path === "/orders" ? { status: 303, location: "/orders/42" } : { status: 404 }));
    const order = { method: "POST", headers: { "content-type": "application/json" }, body: '{"item":1}' };
    await expect(pageFetchOf()(`${url}/orders`, order)).rejects.toThrow(`${url} redirected the request for /orders to an address the app cannot see; /orders/ did not answer instead.`);
    expect(seen).toEqual(['POST /orders - {"item":1}', "GET /orders/ -"]);
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
    await hostFetch(`${url}/mcp`);
    // The server was reconfigured: /mcp answers and /mcp/ is no more (nothing there acted on the body).
    route = (path) => (path === "/mcp" ? { status: 200 } : { status: 404 });
    expect(await (await hostFetch(`${url}/mcp`, { method: "POST", body: "{}" })).text()).toBe("ok /mcp");
    expect(await (await hostFetch(`${url}/mcp`)).text()).toBe("ok /mcp");
    expect(seen).toEqual(["GET /mcp -", "GET /mcp/ -", "POST /mcp/ - {}", "POST /mcp - {}", "GET /mcp -"]);
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
    await expect(pageFetchOf()(`${url}/mcp`, init)).rejects.toThrow("/mcp/ answers instead. The request was not sent again");
    expect(seen).toEqual(["POST /mcp - {}", "GET /mcp/ -"]);
  });
});
