// The hosts' redirect rule against real loopback servers and Node's fetch: same origin is followed (an MCP
// endpoint's /mcp → /mcp/), another origin never receives the request or its headers.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { sameOriginRedirects } from "../../../src/core/providers/redirect-policy";

const servers: http.Server[] = [];
async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterEach(() => Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve)))));

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
