/** Tavily over plain REST through the host fetch, against the loopback Tavily server. */
import { TavilySearch, createWebSearch } from "../../../src/core/web/tavily-search";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_TAVILY_KEY, startTavilyServer, type TavilyTestServer } from "../../support/servers/tavily-server";
import { FAST_RETRY, networkHost, nodeFetch } from "../providers/provider-fixtures";
import { closedPortUrl } from "../../support/servers/loopback-server";

describe("TavilySearch", () => {
  let server: TavilyTestServer;
  const search = (overrides: Partial<ConstructorParameters<typeof TavilySearch>[0]> = {}) =>
    new TavilySearch({ apiKey: DEFAULT_TAVILY_KEY, baseUrl: server.url, maxResults: 3, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, ...overrides });

  beforeEach(async () => {
    server = await startTavilyServer();
  });
  afterEach(() => server.close());

  it("POSTs the query with a Bearer key and max_results, returning title/url/content", async () => {
    const results = await search().search("obsidian sync");
    expect(results).toEqual([
      { title: "Result 1 for obsidian sync", url: "https://example.com/obsidian-sync/1", content: "Snippet 1 about obsidian sync." },
      { title: "Result 2 for obsidian sync", url: "https://example.com/obsidian-sync/2", content: "Snippet 2 about obsidian sync." },
      { title: "Result 3 for obsidian sync", url: "https://example.com/obsidian-sync/3", content: "Snippet 3 about obsidian sync." },
    ]);
    const req = server.requests[0];
    expect(req.headers.authorization).toBe(`Bearer ${DEFAULT_TAVILY_KEY}`);
    expect(req.body).toMatchObject({ query: "obsidian sync", max_results: 3 });
    expect(JSON.stringify(req.body)).not.toContain(DEFAULT_TAVILY_KEY);
  });

  it("createWebSearch takes key, base URL and webMaxResults from settings", async () => {
    const settings = { ...DEFAULT_SETTINGS, tavilyApiKey: DEFAULT_TAVILY_KEY, tavilyBaseUrl: `${server.url}/`, webMaxResults: 2 };
    expect(await createWebSearch(settings, networkHost()).search("q")).toHaveLength(2);
  });

  it("without a key it is not-configured and sends nothing", async () => {
    await expect(search({ apiKey: " " }).search("q")).rejects.toMatchObject({ kind: "not-configured" });
    expect(server.requests).toHaveLength(0);
  });

  it("401 is unauthorized, never echoing the key", async () => {
    const err = await search({ apiKey: "tvly-WRONG-secret" }).search("q").catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "unauthorized", status: 401 });
    expect((err as Error).message).toMatch(/^401: the Tavily API key was rejected/);
    expect((err as Error).message).not.toContain("tvly-WRONG-secret");
  });

  it("429 is retried then succeeds; 500 exhausts the retries", async () => {
    server.script({ status: 429 });
    await expect(search().search("q")).resolves.toHaveLength(3);
    expect(server.requests).toHaveLength(2);
    server.script({ status: 500, times: Infinity });
    await expect(search().search("q")).rejects.toMatchObject({ kind: "server", status: 500 });
  });

  it("429 with Retry-After waits as asked; a wait beyond the cap fails at once", async () => {
    const sleeps: number[] = [];
    const clock = { ...nodeClock, sleep: (ms: number, signal?: AbortSignal) => (sleeps.push(ms), nodeClock.sleep(0, signal)) };
    server.script({ status: 429, headers: { "Retry-After": "7" } });
    await expect(search({ clock }).search("q")).resolves.toHaveLength(3);
    expect(sleeps).toEqual([7_000]);
    server.script({ status: 429, headers: { "Retry-After": "120" }, times: Infinity });
    const err = await search({ clock }).search("q").catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "rate-limited", retryAfterMs: 120_000 });
    // The service's own wait, worded as its request (Krypton did not wait and will not retry by itself).
    expect((err as Error).message).toMatch(/^429: Tavily rate limit reached; Tavily asks to wait 2 min before the next request \(/);
    expect(sleeps).toEqual([7_000]);
    expect(server.requests).toHaveLength(3);
  });

  it("malformed JSON, a cut answer and a stall each fail in plain words", async () => {
    server.script({ malformed: true });
    await expect(search().search("q")).rejects.toMatchObject({ kind: "bad-response" });
    server.script({ cutAfterTokens: 0 });
    await expect(search().search("q")).rejects.toMatchObject({ kind: "bad-response", message: expect.stringMatching(/^The connection to Tavily broke off while its answer was arriving/) });
    server.script({ stall: true });
    await expect(search({ timeoutMs: 60 }).search("q")).rejects.toMatchObject({ kind: "timeout" });
  });

  it("unreachable service and Stop", async () => {
    await expect(search({ baseUrl: await closedPortUrl() }).search("q")).rejects.toMatchObject({ kind: "unreachable" });
    server.script({ delayMs: 500 });
    const controller = new AbortController();
    const pending = search().search("q", controller.signal);
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ kind: "aborted" });
  });

  it("drops results without a URL and trims long content", async () => {
    server.script({ extra: { results: [{ title: "", url: "https://a.example", content: "x".repeat(5000) }, { title: "no url", url: "", content: "c" }] } });
    const results = await search().search("q");
    expect(results).toHaveLength(1);
    expect(results[0].title).toBe("https://a.example");
    expect(results[0].content.length).toBe(1500);
  });
});
