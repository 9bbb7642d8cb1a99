/**
 * Gemini chat and embeddings through the real `@google/genai/web` SDK, pointed at the loopback Gemini
 * server via httpOptions.baseUrl and the host fetch.
 */
import { GeminiChatModel, listGeminiModels, toGeminiContents } from "../../../src/core/providers/gemini/gemini-chat-model";
import { GeminiEmbedder } from "../../../src/core/providers/gemini/gemini-embedder";
import * as net from "node:net";
import type { FetchLike } from "../../../src/core/ports/http";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { FAST_RETRY, collect, collectUntilError, nodeFetch, waitFor } from "./provider-fixtures";
import { closedPortUrl } from "../../support/servers/loopback-server";

const ask = [
  { role: "system" as const, content: "Answer briefly." },
  { role: "user" as const, content: "Hi" },
  { role: "assistant" as const, content: "Hello!" },
  { role: "user" as const, content: "Capital of France?" },
];

describe("GeminiChatModel", () => {
  let server: GeminiTestServer;
  const options = (overrides: Record<string, unknown> = {}) => ({
    apiKey: DEFAULT_GEMINI_KEY,
    baseUrl: server.url,
    model: "gemini-2.5-flash",
    fetch: nodeFetch,
    clock: nodeClock,
    timeoutMs: 2_000,
    retry: FAST_RETRY,
    ...overrides,
  });
  const model = (overrides: Record<string, unknown> = {}) => new GeminiChatModel(options(overrides));

  beforeEach(async () => {
    server = await startGeminiServer();
  });
  afterEach(() => server.close());

  it("streams over SSE with the system prompt as systemInstruction and model turns", async () => {
    server.script({ route: "stream", reply: "Paris [1]." });
    const tokens = await collect(model().stream({ messages: ask, temperature: 0 }));
    expect(tokens.join("")).toBe("Paris [1].");
    const req = server.requestsTo("stream")[0];
    expect(req.headers["x-goog-api-key"]).toBe(DEFAULT_GEMINI_KEY);
    expect(req.body).toMatchObject({
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello!" }] },
        { role: "user", parts: [{ text: "Capital of France?" }] },
      ],
      systemInstruction: { parts: [{ text: "Answer briefly." }] },
      generationConfig: { temperature: 0 },
    });
    expect(toGeminiContents(ask).system).toBe("Answer briefly.");
  });

  it("keeps a late system message in place (after tool results), as the last text the model reads", () => {
    const { system, contents } = toGeminiContents([
      { role: "system", content: "You are Krypton." },
      { role: "user", content: "Was steht in Plan.md?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_note", arguments: { path: "Plan.md" } }] },
      { role: "tool", toolCallId: "c1", toolName: "read_note", content: "Ship the bridge." },
      { role: "system", content: "Answer in German." },
    ]);
    expect(system).toBe("You are Krypton.");
    expect(contents.at(-1)).toEqual({ role: "user", parts: [{ functionResponse: { name: "read_note", response: { output: "Ship the bridge." } } }, { text: "Answer in German." }] });
  });

  it("uses the host fetch for every request (so Obsidian's fetch carries it)", async () => {
    const seen: string[] = [];
    const spy: FetchLike = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    await model({ fetch: spy }).complete({ messages: ask });
    expect(seen).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse$/)]);
  });

  it("asks for JSON with responseMimeType", async () => {
    const text = await model().complete({ messages: ask, json: true });
    expect(JSON.parse(text)).toEqual({ answer: expect.any(String) });
  });

  it("a wrong key is 'unauthorized' with Google's status, never the key itself", async () => {
    const err = await model({ apiKey: "AIzaWRONG-KEY-123456" }).complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "unauthorized", status: 400 });
    expect((err as Error).message).toMatch(/^400: the Gemini API key was rejected/);
    expect((err as Error).message).not.toContain("AIzaWRONG");
    server.script({ route: "stream", status: 403 });
    await expect(model().complete({ messages: ask })).rejects.toMatchObject({ kind: "unauthorized", status: 403 });
  });

  it("an unknown model is model-missing", async () => {
    await expect(model({ model: "gemini-0.1-nope" }).complete({ messages: ask })).rejects.toMatchObject({
      kind: "model-missing",
      message: "Gemini model 'gemini-0.1-nope' was not found: check the model name in settings.",
    });
  });

  it("retries 429 then answers; 500 exhausts the budget as a server error", async () => {
    server.script({ route: "stream", status: 429, times: 2 });
    await expect(model().complete({ messages: ask })).resolves.toBe("This is the test Gemini answer.");
    expect(server.requestsTo("stream")).toHaveLength(3);
    server.reset();
    server.script({ route: "stream", status: 500, times: Infinity });
    await expect(model().complete({ messages: ask })).rejects.toMatchObject({ kind: "server", status: 500 });
    expect(server.requestsTo("stream")).toHaveLength(3);
  });

  /** nodeClock, but sleeps are recorded and skipped: the test checks the wait asked for, not the time taken. */
  const recordingClock = () => {
    const sleeps: number[] = [];
    const clock = { ...nodeClock, sleep: (ms: number, signal?: AbortSignal) => (sleeps.push(ms), nodeClock.sleep(0, signal)) };
    return { clock, sleeps };
  };

  it("429 with Google's retryDelay waits that long (not our shorter backoff), then answers", async () => {
    server.script({ route: "stream", status: 429, extra: { retryDelay: "12.5s" } });
    const { clock, sleeps } = recordingClock();
    await expect(model({ clock }).complete({ messages: ask })).resolves.toBe("This is the test Gemini answer.");
    expect(server.requestsTo("stream")).toHaveLength(2);
    expect(sleeps).toEqual([12_500]);
  });

  it("429 asking for a wait beyond the cap fails at once, saying when to try again", async () => {
    server.script({ route: "stream", status: 429, extra: { retryDelay: "38s" }, times: Infinity });
    const { clock, sleeps } = recordingClock();
    const err = await model({ clock }).complete({ messages: ask }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "rate-limited", status: 429, retryAfterMs: 38_000 });
    expect((err as Error).message).toMatch(/^429: Gemini rate limit or quota reached; Gemini asks to wait 38 s before the next request/);
    expect(server.requestsTo("stream")).toHaveLength(1);
    expect(sleeps).toEqual([]);
    // The cap is part of the retry policy: with a higher one, the same hint is honoured.
    server.reset();
    server.script({ route: "stream", status: 429, extra: { retryDelay: "38s" } });
    const raised = recordingClock();
    await expect(model({ clock: raised.clock, retry: { ...FAST_RETRY, maxRetryAfterMs: 60_000 } }).complete({ messages: ask })).resolves.toBeTruthy();
    expect(raised.sleeps).toEqual([38_000]);
  });

  it("Stop during the wait Google asked for ends the call at once", async () => {
    server.script({ route: "stream", status: 429, extra: { retryDelay: "15s" } });
    const controller = new AbortController();
    const pending = model().complete({ messages: ask, signal: controller.signal });
    await waitFor(() => server.requestsTo("stream").length === 1, "the first request");
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: "aborted" });
    expect(server.requestsTo("stream")).toHaveLength(1);
  });

  it("embeddings honour retryDelay too", async () => {
    server.script({ route: "batchEmbed", status: 429, extra: { retryDelay: "3s" } });
    const { clock, sleeps } = recordingClock();
    const embedder = new GeminiEmbedder({ ...options({ clock }), model: "gemini-embedding-001" });
    expect(await embedder.embed(["a"])).toHaveLength(1);
    expect(sleeps).toEqual([3_000]);
  });

  it("cut streams and malformed chunks are bad-response, keeping what arrived", async () => {
    server.script({ route: "stream", reply: "one two three four", cutAfterTokens: 2 });
    const cut = await collectUntilError(model().stream({ messages: ask }));
    expect(cut.tokens.join("")).toBe("one two ");
    expect(cut.error).toMatchObject({ kind: "bad-response", message: expect.stringMatching(/^The connection to Gemini broke off while its answer was arriving, so the answer is incomplete\. Try again;/) });
    expect((cut.error as Error).message).not.toMatch(/terminated/);
    server.script({ route: "stream", reply: "one two three", malformed: true });
    const bad = await collectUntilError(model().stream({ messages: ask }));
    expect(bad.error).toMatchObject({ kind: "bad-response", message: expect.stringMatching(/^Gemini sent part of its answer in a form Krypton could not read, so the answer stopped there\. Try again;/) });
    expect((bad.error as Error).message).not.toMatch(/JSON at position/);
  });

  it("stalls time out; Stop aborts", async () => {
    server.script({ route: "stream", stall: true });
    await expect(model({ timeoutMs: 80 }).complete({ messages: ask })).rejects.toMatchObject({ kind: "timeout" });
    server.script({ route: "stream", reply: "a b c d e f", tokenDelayMs: 30 });
    const controller = new AbortController();
    const tokens: string[] = [];
    const run = async () => {
      for await (const t of model().stream({ messages: ask, signal: controller.signal })) {
        tokens.push(t);
        controller.abort();
      }
    };
    await expect(run()).rejects.toMatchObject({ kind: "aborted" });
    expect(tokens).toHaveLength(1);
  });

  it("a socket destroyed right after it was accepted is not 'not reachable': the server was reached", async () => {
    const sockets = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => sockets.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(sockets.address() as net.AddressInfo).port}`;
    try {
      const err = await model({ baseUrl: url }).complete({ messages: ask }).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: "server" });
      expect((err as Error).message).toMatch(new RegExp(`^Gemini at ${url} accepted the connection but closed it before sending any answer\\.`));
    } finally {
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    }
  });

  it("unreachable base URL", async () => {
    const url = await closedPortUrl();
    await expect(model({ baseUrl: url }).complete({ messages: ask })).rejects.toMatchObject({ kind: "unreachable" });
  });

  it("lists chat and embedding models", async () => {
    const base = options();
    expect(await listGeminiModels(base, "chat")).toEqual(["gemini-2.5-flash", "gemini-2.0-flash"]);
    expect(await listGeminiModels(base, "embedding")).toEqual(["gemini-embedding-001", "text-embedding-004"]);
  });
});

describe("GeminiEmbedder", () => {
  let server: GeminiTestServer;
  beforeEach(async () => {
    server = await startGeminiServer();
  });
  afterEach(() => server.close());
  const embedder = (overrides: Record<string, unknown> = {}) =>
    new GeminiEmbedder({
      apiKey: DEFAULT_GEMINI_KEY,
      baseUrl: server.url,
      model: "gemini-embedding-001",
      fetch: nodeFetch,
      clock: nodeClock,
      timeoutMs: 2_000,
      retry: FAST_RETRY,
      ...overrides,
    });

  it("embeds a batch in one batchEmbedContents call, 768-dim, handed on as decoded", async () => {
    const vectors = await embedder().embed(["ollama setup", "gemini keys", "tavily search"]);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      // The decoded arrays themselves: no typed array (V8 external memory) per batch or vector.
      expect(Array.isArray(v)).toBe(true);
      expect(v).toHaveLength(768);
    }
    expect(Array.from(vectors[0])).not.toEqual(Array.from(vectors[1]));
    const req = server.requestsTo("batchEmbed")[0];
    expect((req.body as { requests: { outputDimensionality: number }[] }).requests[0].outputDimensionality).toBe(768);
    expect(embedder().id).toBe("gemini:gemini-embedding-001");
    expect(embedder().batchSize).toBe(100);
    await expect(embedder().embed([])).resolves.toEqual([]);
  });

  it("leaves a truncated embedding's length alone (the vector store normalizes every vector it takes)", async () => {
    server.script({ route: "batchEmbed", extra: { embed: () => [3, 4, ...new Array<number>(766).fill(0)] } });
    const [v] = await embedder().embed(["x"]);
    expect(Array.from(v).slice(0, 3)).toEqual([3, 4, 0]);
  });

  it("retries 429 and 5xx, maps a wrong key and malformed answers", async () => {
    server.script([{ route: "batchEmbed", status: 429 }, { route: "batchEmbed", status: 503 }]);
    await expect(embedder().embed(["x"])).resolves.toHaveLength(1);
    await expect(embedder({ apiKey: "nope-nope" }).embed(["x"])).rejects.toMatchObject({ kind: "unauthorized" });
    server.script({ route: "batchEmbed", malformed: true });
    await expect(embedder().embed(["x"])).rejects.toMatchObject({ kind: "bad-response" });
    server.script({ route: "batchEmbed", body: { embeddings: [] } });
    await expect(embedder().embed(["x"])).rejects.toMatchObject({ kind: "bad-response" });
  });
});
