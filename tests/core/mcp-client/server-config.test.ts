import { McpConfigError, normalizeServers, parseMcpServersJson, serverConfigProblem, serverSecrets, toMcpServersJson, EMPTY_SERVER } from "../../../src/core/mcp-client/server-config";
import { assignWireNames, wireNameFor, WIRE_NAME_MAX } from "../../../src/core/mcp-client/tool-names";
import { resultText } from "../../../src/core/mcp-client/tool-result";
import { shouldFallBackToSse } from "../../../src/core/mcp-client/transports";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const CLAUDE_DESKTOP = `{
  "mcpServers": {
    "filesystem": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"] },
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret123456" } },
    "remote": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer tok_abcdefgh" } },
    "old": { "type": "sse", "url": "https://old.example.com/sse", "disabled": true }
  }
}`;

describe("parseMcpServersJson", () => {
  it("reads a Claude Desktop block", () => {
    const servers = parseMcpServersJson(CLAUDE_DESKTOP);
    expect(servers.map((s) => [s.name, s.transport, s.enabled])).toEqual([
      ["filesystem", "stdio", true],
      ["github", "stdio", true],
      ["remote", "http", true],
      ["old", "sse", false],
    ]);
    expect(servers[0]).toMatchObject({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"], useLoginShellPath: true });
    expect(servers[1].env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_secret123456" });
    expect(servers[2]).toMatchObject({ url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer tok_abcdefgh" }, useLoginShellPath: false });
  });

  it("takes the inner object without the mcpServers wrapper", () => {
    expect(parseMcpServersJson(`{"a": {"command": "x"}}`)[0]).toMatchObject({ name: "a", command: "x", args: [] });
  });

  it.each([
    ["{not json", /not valid JSON/],
    ["[]", /expected a JSON object/],
    [`{"mcpServers": []}`, /must be an object of servers by name/],
    [`{"mcpServers": {}}`, /has no servers/],
    [`{"mcpServers": {"a": {}}}`, /server "a": needs "command" \(a local program\) or "url"/],
    [`{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, /server "a": has both/],
    [`{"mcpServers": {"a": {"command": ""}}}`, /server "a": command: command is empty/],
    [`{"mcpServers": {"a": {"command": "x", "args": "-y"}}}`, /server "a": args: args must be a list of strings/],
    [`{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}`, /server "a": env\.K: /],
    [`{"mcpServers": {"b": {"url": "not a url"}}}`, /server "b": url: url is not a valid URL/],
    [`{"mcpServers": {"a:b": {"command": "x"}}}`, /may not contain ":"/],
    [`{"mcpServers": {"a": "npx"}}`, /server "a": expected an object/],
  ])("explains what is wrong with %s", (text, message) => {
    expect(() => parseMcpServersJson(text)).toThrow(McpConfigError);
    expect(() => parseMcpServersJson(text)).toThrow(message);
  });

  it("round-trips through toMcpServersJson, and redacts on request", () => {
    const servers = parseMcpServersJson(CLAUDE_DESKTOP);
    expect(parseMcpServersJson(toMcpServersJson(servers))).toEqual(servers);
    const redacted = toMcpServersJson(servers, { redactSecrets: true });
    expect(redacted).not.toContain("ghp_secret123456");
    expect(redacted).not.toContain("tok_abcdefgh");
  });
});

describe("stored servers", () => {
  it("keeps good entries, drops bad ones and duplicates, fills missing fields", () => {
    const raw = [{ name: "a", command: "x" }, { name: "" }, "junk", { name: "a", command: "dup" }, { name: "b", transport: "http", url: "http://h", headers: { A: 1 } }];
    expect(normalizeServers(raw)).toEqual([
      { ...EMPTY_SERVER, name: "a", command: "x" },
      { ...EMPTY_SERVER, name: "b", transport: "http", url: "http://h", headers: {} },
    ]);
    expect(normalizeServers("nope")).toEqual([]);
  });

  it("checks the form", () => {
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "" })).toMatch(/needs a name/);
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "a" })).toBe('MCP server "a" has no command');
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "a", command: "  " })).toBe('MCP server "a" has no command');
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "a", command: "npx" }, [{ ...EMPTY_SERVER, name: "a" }])).toMatch(/already exists/);
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "a", transport: "http", url: "example.com" })).toMatch(/not a valid URL/);
    expect(serverConfigProblem({ ...EMPTY_SERVER, name: "a", transport: "http", url: "https://example.com/mcp" })).toBeNull();
  });

  it("treats header and env values as secrets, the bearer token alone too", () => {
    const secrets = serverSecrets([{ ...EMPTY_SERVER, name: "a", headers: { Authorization: "Bearer tok_abcdefgh" }, env: { KEY: "ghp_secret123456", MODE: "prod" } }]);
    expect(secrets).toEqual(expect.arrayContaining(["Bearer tok_abcdefgh", "tok_abcdefgh", "ghp_secret123456"]));
    expect(secrets).not.toContain("prod");
  });
});

describe("wire names", () => {
  const safe = /^[A-Za-z0-9_-]{1,64}$/;

  it("is server__tool when that is unambiguous", () => {
    expect(wireNameFor("github", "create_issue")).toBe("github__create_issue");
    expect(wireNameFor("brave-search", "search")).toBe("brave-search__search");
  });

  it("cleans and hashes names providers would refuse, deterministically", () => {
    const a = wireNameFor("My Server", "get.weather/now");
    expect(a).toMatch(safe);
    expect(a).toMatch(/^My_Server__get_weather_now_[0-9a-f]{8}$/);
    expect(wireNameFor("My Server", "get.weather/now")).toBe(a);
    expect(wireNameFor("My Server", "get.weather.now")).not.toBe(a);
  });

  it("never lets two servers' names meet (a__b + c vs a + b__c)", () => {
    expect(wireNameFor("a__b", "c")).not.toBe(wireNameFor("a", "b__c"));
    expect(wireNameFor("a_", "_b")).not.toBe(wireNameFor("a", "__b"));
  });

  it("stays within 64 characters", () => {
    const long = wireNameFor("server", "t".repeat(100));
    expect(long.length).toBeLessThanOrEqual(WIRE_NAME_MAX);
    expect(long).toMatch(safe);
    expect(wireNameFor("server", "t".repeat(100))).not.toBe(wireNameFor("server", "t".repeat(101)));
  });

  it("settles even a literal collision, in a fixed order", () => {
    const hashed = wireNameFor("s", "x.y");
    const tools = [
      { server: "s", tool: "x.y" },
      { server: "s", tool: hashed.slice(3) }, // a tool literally named like the other's alias
    ];
    const one = assignWireNames(tools);
    const two = assignWireNames([...tools].reverse());
    expect(new Set(one.values()).size).toBe(2);
    expect([...one.entries()].sort()).toEqual([...two.entries()].sort());
  });
});

describe("results", () => {
  it("keeps text, summarises the rest, appends structured content when there is no text", () => {
    expect(resultText({ content: [], structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(resultText({ content: [{ type: "text", text: "x".repeat(50) }] }, 30)).toContain("[cut at 30 characters]");
    expect(resultText({ content: [], isError: true })).toBe("The tool failed without a message");
  });

  it("falls back to SSE on 404 and 405 only", () => {
    expect(shouldFallBackToSse(new StreamableHTTPError(404, "x"))).toBe(true);
    expect(shouldFallBackToSse(new StreamableHTTPError(405, "x"))).toBe(true);
    expect(shouldFallBackToSse(new StreamableHTTPError(401, "x"))).toBe(false);
    expect(shouldFallBackToSse(new TypeError("fetch failed"))).toBe(false);
  });
});
