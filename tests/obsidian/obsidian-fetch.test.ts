import { Ollama } from "ollama/browser";
import { requestUrl, requestUrlLog } from "../support/obsidian-stub";
import { startOllamaServer, DEFAULT_OLLAMA_REPLY, type OllamaTestServer } from "../support/servers/ollama-server";
import { createObsidianFetch, ollamaCorsNotice } from "../../src/obsidian/host/obsidian-fetch";
import type { FetchLike } from "../../src/core/ports/http";
import { chromiumLikeFetch, PAGE_ORIGIN, type CorsFetch } from "./cors-fetch";
import { startLoopbackServer } from "../support/servers/loopback-server";

let ollama: OllamaTestServer;
let page: CorsFetch;
let fallbacks: string[];
let hostFetch: FetchLike;

beforeEach(async () => {
  ollama = await startOllamaServer();
  page = chromiumLikeFetch();
  fallbacks = [];
  requestUrlLog.length = 0;
  hostFetch = createObsidianFetch({
    pageFetch: page,
    requestUrl: (r) => requestUrl(r),
    pageOrigin: PAGE_ORIGIN,
    onCorsFallback: (origin) => fallbacks.push(origin),
  });
});
afterEach(() => ollama.close());

test("a server that refuses the app's origin is reached through requestUrl, with the same answer", async () => {
  const direct = await (await fetch(`${ollama.url}/api/tags`)).json();
  const res = await hostFetch(`${ollama.url}/api/tags`, { headers: { "Content-Type": "application/json" } });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual(direct);
  expect(fallbacks).toEqual([ollama.url]);
  expect(requestUrlLog).toEqual([`${ollama.url}/api/tags`]);
});

test("the fallback is announced once per origin and later requests skip the doomed page fetch", async () => {
  await hostFetch(`${ollama.url}/api/tags`, { headers: { "Content-Type": "application/json" } });
  const pageCalls = page.calls.length;
  const res = await hostFetch(`${ollama.url}/api/version`, { headers: { "Content-Type": "application/json" } });
  expect(await res.json()).toHaveProperty("version");
  expect(fallbacks).toHaveLength(1);
  expect(page.calls.length).toBe(pageCalls);
});

test("after the user allows the origin, streaming comes back without a restart; the notice is never repeated", async () => {
  let time = 1_000;
  let refuse = true;
  const pageCalls: string[] = [];
  const toggled = createObsidianFetch({
    pageFetch: (input, init) => {
      pageCalls.push(String(input));
      return refuse ? Promise.reject(new TypeError("Failed to fetch")) : fetch(input, init);
    },
    requestUrl: (r) => requestUrl(r),
    pageOrigin: PAGE_ORIGIN,
    onCorsFallback: (origin) => fallbacks.push(origin),
    now: () => time,
    recheckAfterMs: 60_000,
  });
  const tags = async () => (await toggled(`${ollama.url}/api/tags`)).status;
  expect(await tags()).toBe(200);
  expect([pageCalls.length, requestUrlLog.length, fallbacks.length]).toEqual([1, 1, 1]);
  // Within the re-check window: straight to requestUrl, no doomed page fetch.
  time += 59_000;
  expect(await tags()).toBe(200);
  expect([pageCalls.length, requestUrlLog.length]).toEqual([1, 2]);
  // The user set OLLAMA_ORIGINS and restarted Ollama: after the window the page's fetch is used again.
  refuse = false;
  time += 2_000;
  expect(await tags()).toBe(200);
  expect(await tags()).toBe(200);
  expect([pageCalls.length, requestUrlLog.length]).toEqual([3, 2]);
  // Refused again later (another Ollama started): it falls back, but the user is not told a second time.
  refuse = true;
  expect(await tags()).toBe(200);
  expect(requestUrlLog).toHaveLength(3);
  expect(fallbacks).toEqual([ollama.url]);
});

test("concurrent requests to a refusing origin announce it once", async () => {
  const statuses = await Promise.all([1, 2, 3, 4].map(() => hostFetch(`${ollama.url}/api/tags`, { headers: { "Content-Type": "application/json" } }).then((r) => r.status)));
  expect(statuses).toEqual([200, 200, 200, 200]);
  expect(fallbacks).toEqual([ollama.url]);
});

test("the real Ollama client gets the whole streamed answer through the fallback (NDJSON in one piece)", async () => {
  const client = new Ollama({ host: ollama.url, fetch: hostFetch });
  let text = "";
  for await (const part of await client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "Hi" }], stream: true })) {
    text += part.message.content;
  }
  expect(text).toBe(DEFAULT_OLLAMA_REPLY);
  expect(ollama.requestsTo("chat")).toHaveLength(1); // the preflight stopped the page's POST; one real chat call
  expect(fallbacks).toEqual([ollama.url]);
});

test("HTTP errors keep their status and body through the fallback", async () => {
  const res = await hostFetch(`${ollama.url}/api/chat`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "not-pulled", messages: [{ role: "user", content: "Hi" }], stream: false }),
  });
  expect(res.status).toBe(404);
  expect((await res.json()).error).toMatch(/not found/);
});

test("a server that allows the origin is fetched by the page itself (streaming intact, no fallback)", async () => {
  const server = await startLoopbackServer((req, res) => {
    res.writeHead(200, { "Content-Type": "application/x-ndjson", "Access-Control-Allow-Origin": PAGE_ORIGIN });
    res.write('{"n":1}\n');
    res.end('{"n":2}\n');
  });
  try {
    const res = await hostFetch(`${server.url}/stream`);
    expect(await res.text()).toBe('{"n":1}\n{"n":2}\n');
    expect(fallbacks).toEqual([]);
    expect(requestUrlLog).toEqual([]);
  } finally {
    await server.close();
  }
});

test("an unreachable server is a network error, not CORS: the original TypeError, no notice", async () => {
  const closed = await startOllamaServer();
  const url = closed.url;
  await closed.close();
  requestUrlLog.length = 0;
  await expect(hostFetch(`${url}/api/tags`)).rejects.toMatchObject({ name: "TypeError" });
  expect(requestUrlLog).toEqual([`${url}/api/tags`]); // requestUrl was tried and could not reach it either
  expect(fallbacks).toEqual([]);
});

test("a TypeError on a same-origin request is passed through untouched", async () => {
  const sameOrigin = createObsidianFetch({
    pageFetch: () => Promise.reject(new TypeError("Failed to fetch")),
    requestUrl: (r) => requestUrl(r),
    pageOrigin: "http://127.0.0.1:1",
    onCorsFallback: (o) => fallbacks.push(o),
  });
  await expect(sameOrigin("http://127.0.0.1:1/x")).rejects.toThrow("Failed to fetch");
  expect(requestUrlLog).toEqual([]);
});

test("an aborted request rejects with AbortError, also on the fallback path", async () => {
  await hostFetch(`${ollama.url}/api/tags`, { headers: { "Content-Type": "application/json" } }); // origin now known as CORS
  const aborter = new AbortController();
  ollama.script({ route: "tags", delayMs: 5_000 });
  const pending = hostFetch(`${ollama.url}/api/tags`, { signal: aborter.signal });
  aborter.abort();
  await expect(pending).rejects.toMatchObject({ name: "AbortError" });
});

test("the notice says in plain words how to enable streaming", () => {
  const text = ollamaCorsNotice("http://192.168.1.5:11434");
  expect(text).toContain("http://192.168.1.5:11434");
  expect(text).toContain("OLLAMA_ORIGINS=app://obsidian.md*");
  expect(text).toContain("Ollama FAQ");
});
