/**
 * The test kit tested with the real clients it stands in for: if these fail, the servers have drifted
 * from what `ollama/browser` and `@google/genai/web` expect.
 */
import { GoogleGenAI } from "@google/genai/web";
import { Ollama } from "ollama/browser";
import { startGeminiServer, type GeminiTestServer } from "./gemini-server";
import { startOllamaServer, type OllamaTestServer } from "./ollama-server";
import { startSilentServer } from "./silent-server";
import { startTavilyServer, type TavilyTestServer } from "./tavily-server";

describe("Ollama test server with ollama/browser", () => {
  let server: OllamaTestServer;
  let client: Ollama;
  beforeEach(async () => {
    server = await startOllamaServer();
    client = new Ollama({ host: server.url, fetch });
  });
  afterEach(() => server.close());

  it("streams a scripted reply as NDJSON and ends with done", async () => {
    server.script({ route: "chat", reply: "Paris is the capital [1]." });
    const parts: string[] = [];
    let last: { done: boolean; done_reason?: string } | undefined;
    for await (const chunk of await client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "Capital?" }], stream: true })) {
      parts.push(chunk.message.content);
      last = chunk;
    }
    expect(parts.join("")).toBe("Paris is the capital [1].");
    expect(parts.length).toBeGreaterThan(3);
    expect(last).toMatchObject({ done: true, done_reason: "stop" });
    expect(server.requests[0]).toMatchObject({ method: "POST", path: "/api/chat", route: "chat", userText: "Capital?", model: "llama3.1:8b" });
    expect(server.firstByteAt).toHaveLength(1);
  });

  it("num_predict bounds the tokens generated, thinking included, like Ollama: cut there with done_reason length", async () => {
    const messages = [{ role: "user", content: "Capital?" }];
    server.script({ route: "chat", reply: "Paris.", extra: { thinking: "one two three four", toolCalls: [{ name: "t", arguments: {} }] } });
    const chunks = [];
    for await (const chunk of await client.chat({ model: "llama3.1:8b", messages, stream: true, options: { num_predict: 3 } })) chunks.push(chunk);
    expect(chunks.map((c) => c.message.thinking ?? "").join("")).toBe("one two three ");
    expect(chunks.some((c) => c.message.content || c.message.tool_calls)).toBe(false);
    expect(chunks[chunks.length - 1]).toMatchObject({ done: true, done_reason: "length", eval_count: 3 });

    server.script({ route: "chat", tokens: ["<think>", "a ", "b ", "</think>", "Paris."] });
    const cut = await client.chat({ model: "llama3.1:8b", messages, stream: false, options: { num_predict: 2 } });
    expect(cut).toMatchObject({ done_reason: "length", message: { content: "<think>a " } });
    server.script({ route: "chat", tokens: ["<think>", "a ", "b ", "</think>", "Paris."] });
    const whole = await client.chat({ model: "llama3.1:8b", messages, stream: false, options: { num_predict: 5 } });
    expect(whole).toMatchObject({ done_reason: "stop", message: { content: "<think>a b </think>Paris." } });
  });

  it("think: false drops message.thinking; any think for a model without \"thinking\" is a 400, as Ollama 0.9 to 0.12.4 answer", async () => {
    server.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "tools", "thinking"] };
    server.script({ route: "chat", reply: "Paris.", extra: { thinking: "hmm" } });
    const off = await client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "Capital?" }], stream: false, think: false });
    expect(off.message).toMatchObject({ content: "Paris." });
    expect(off.message.thinking).toBeUndefined();
    server.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "tools"] };
    await expect(client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "Capital?" }], stream: false, think: false })).rejects.toMatchObject({
      status_code: 400,
      error: '"llama3.1:8b" does not support thinking',
    });
  });

  it("answers non-streaming chat, json format, tags, embed and version", async () => {
    const res = await client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "hi" }], stream: false, format: "json" });
    expect(JSON.parse(res.message.content)).toEqual({ answer: expect.any(String) });
    const tags = await client.list();
    expect(tags.models.map((m) => m.name)).toEqual(["llama3.1:8b", "nomic-embed-text:latest"]);
    const emb = await client.embed({ model: "nomic-embed-text", input: ["a b", "c"] });
    expect(emb.embeddings).toHaveLength(2);
    expect(emb.embeddings[0]).toHaveLength(768);
    server.embeddingDim = 8;
    expect((await client.embed({ model: "nomic-embed-text", input: "x" })).embeddings[0]).toHaveLength(8);
    expect((await client.version()).version).toMatch(/\d+\.\d+/);
  });

  it("answers 404 for a model that is not pulled, like real Ollama", async () => {
    await expect(client.chat({ model: "mistral", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({
      status_code: 404,
      error: 'model "mistral" not found, try pulling it first',
    });
  });

  it("follows the script queue: 429 twice, then the reply; cut streams never send done", async () => {
    server.script([{ route: "chat", status: 429, times: 2 }, { route: "chat", reply: "ok" }]);
    const ask = () => client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "x" }], stream: false });
    await expect(ask()).rejects.toMatchObject({ status_code: 429 });
    await expect(ask()).rejects.toMatchObject({ status_code: 429 });
    expect((await ask()).message.content).toBe("ok");
    expect(server.pending()).toBe(0);

    server.script({ route: "chat", reply: "one two three four", cutAfterTokens: 2 });
    const parts: string[] = [];
    const consume = async () => {
      for await (const c of await client.chat({ model: "llama3.1:8b", messages: [{ role: "user", content: "x" }], stream: true })) parts.push(c.message.content);
    };
    await expect(consume()).rejects.toThrow();
    expect(parts.join("")).toBe("one two ");
  });

  it("stalls until the client aborts, and close() releases stalled requests", async () => {
    server.script({ route: "chat", stall: true });
    const controller = new AbortController();
    const pending = fetch(`${server.url}/api/chat`, { method: "POST", body: JSON.stringify({ model: "llama3.1:8b", messages: [] }), signal: controller.signal });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await expect(pending).rejects.toThrow();
    server.script({ route: "tags", stall: true });
    const stalled = fetch(`${server.url}/api/tags`).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    await server.close();
    expect(await stalled).toMatchObject({ name: "TypeError" }); // fetch failed: the socket was closed
  });

  it("invalidLineAfterTokens: a line that is not JSON mid-stream, then the rest of the answer and done", async () => {
    server.script({ route: "chat", reply: "one two three", invalidLineAfterTokens: 1 });
    const res = await fetch(`${server.url}/api/chat`, { method: "POST", body: JSON.stringify({ model: "llama3.1:8b", messages: [] }) });
    const lines = (await res.text()).split("\n").filter(Boolean);
    expect(() => JSON.parse(lines[1])).toThrow();
    expect(lines.filter((l) => l.startsWith("{") && l.endsWith("}")).map((l) => (JSON.parse(l) as { message: { content: string } }).message.content).join("")).toBe("one two three");
    expect(JSON.parse(lines[lines.length - 1])).toMatchObject({ done: true });
  });
});

describe("silent server (accepts, never answers)", () => {
  it("accepts the connection and sends nothing until the client gives up", async () => {
    const silent = await startSilentServer();
    try {
      const err = await fetch(`${silent.url}/api/embed`, { method: "POST", body: "{}", signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: "TimeoutError" });
      expect(silent.connections()).toBe(1);
    } finally {
      await silent.close();
    }
  });
});

describe("Gemini test server with @google/genai/web", () => {
  let server: GeminiTestServer;
  const client = (apiKey = "test-gemini-key") => new GoogleGenAI({
      apiKey,
      // A custom fetch also keeps the SDK from reaching for undici's global dispatcher (absent under jest).
      httpOptions: { baseUrl: server.url, fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init) },
    });
  beforeEach(async () => {
    server = await startGeminiServer();
  });
  afterEach(() => server.close());

  it("streams SSE chunks and answers generateContent", async () => {
    server.script({ route: "stream", reply: "Hello from Gemini [2]." });
    const stream = await client().models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: [{ role: "user", parts: [{ text: "Hi?" }] }],
      config: { systemInstruction: "Be brief." },
    });
    let text = "";
    for await (const chunk of stream) text += chunk.text ?? "";
    expect(text).toBe("Hello from Gemini [2].");
    const req = server.requestsTo("stream")[0]!;
    expect(req.query.alt).toBe("sse");
    expect(req.headers["x-goog-api-key"]).toBe("test-gemini-key");
    expect(req.userText).toBe("Hi?");
    const once = await client().models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
    expect(once.text).toBe("This is the test Gemini answer.");
  });

  it("maxOutputTokens bounds the tokens generated, thinking included, like Gemini 2.5: cut there with MAX_TOKENS and usage that adds up", async () => {
    const contents = "Capital?";
    server.script({ route: "stream", reply: "Paris is the capital.", extra: { thoughts: "one two", thoughtTokens: 3, functionCalls: [{ name: "t", args: {} }] } });
    const chunks = [];
    for await (const c of await client().models.generateContentStream({ model: "gemini-2.5-flash", contents, config: { maxOutputTokens: 7 } })) chunks.push(c);
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts.filter((p) => p.thought).map((p) => p.text).join("")).toBe("one two");
    expect(parts.filter((p) => !p.thought).map((p) => p.text).join("")).toBe("Paris is ");
    expect(parts.some((p) => p.functionCall)).toBe(false);
    const last = chunks[chunks.length - 1]!;
    expect(last.candidates?.[0]).toMatchObject({ finishReason: "MAX_TOKENS", content: { role: "model" } });
    expect(last.candidates?.[0]?.content?.parts).toBeUndefined();
    expect(last.usageMetadata).toEqual({ promptTokenCount: 12, candidatesTokenCount: 2, thoughtsTokenCount: 5, totalTokenCount: 19 });

    // Spent thinking: no part at all, no candidatesTokenCount (Google's JSON leaves out zero counts).
    server.script({ route: "generate", reply: "Paris.", extra: { thoughtTokens: 50 } });
    const thought = await client().models.generateContent({ model: "gemini-2.5-flash", contents, config: { maxOutputTokens: 8 } });
    expect(thought.candidates?.[0]).toMatchObject({ finishReason: "MAX_TOKENS", content: { role: "model" } });
    expect(thought.candidates?.[0]?.content?.parts).toBeUndefined();
    expect(thought.usageMetadata).toEqual({ promptTokenCount: 12, thoughtsTokenCount: 8, totalTokenCount: 20 });

    // A loop runs to the cap; an answer that fits ends with STOP.
    server.script({ route: "generate", extra: { loop: "again " } });
    const looped = await client().models.generateContent({ model: "gemini-2.5-flash", contents, config: { maxOutputTokens: 4 } });
    expect(looped).toMatchObject({ text: "again again again again ", candidates: [{ finishReason: "MAX_TOKENS" }], usageMetadata: { candidatesTokenCount: 4 } });
    server.script({ route: "generate", reply: "Paris.", extra: { thoughtTokens: 3 } });
    const whole = await client().models.generateContent({ model: "gemini-2.5-flash", contents, config: { maxOutputTokens: 4 } });
    expect(whole).toMatchObject({ text: "Paris.", candidates: [{ finishReason: "STOP" }], usageMetadata: { candidatesTokenCount: 1, thoughtsTokenCount: 3, totalTokenCount: 16 } });
  });

  it("takes thinkingConfig as Gemini does: budget 0 thinks not at all, a setting the model does not take is a 400", async () => {
    server.models = [...server.models, "gemini-2.5-pro", "gemini-3-pro-preview"];
    const ask = (model: string, thinkingConfig: Record<string, unknown>) => client().models.generateContent({ model, contents: "Capital?", config: { thinkingConfig } });
    server.script({ route: "generate", reply: "Paris.", extra: { thoughtTokens: 50 }, times: 2 });
    expect((await ask("gemini-2.5-flash", { thinkingBudget: 0 })).usageMetadata?.thoughtsTokenCount).toBeUndefined();
    expect((await ask("gemini-3-pro-preview", { thinkingLevel: "LOW" })).text).toBe("Paris.");
    await expect(ask("gemini-2.5-pro", { thinkingBudget: 0 })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("only works in thinking mode") });
    await expect(ask("gemini-2.5-flash", { thinkingLevel: "LOW" })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("Thinking level is not supported") });
    await expect(ask("gemini-3-pro-preview", { thinkingLevel: "LOW", thinkingBudget: 0 })).rejects.toMatchObject({ status: 400 });
  });

  it("embeds through batchEmbedContents and honours outputDimensionality", async () => {
    const res = await client().models.embedContent({ model: "gemini-embedding-001", contents: ["a", "b c"], config: { outputDimensionality: 16 } });
    expect(res.embeddings).toHaveLength(2);
    expect(res.embeddings![0]!.values).toHaveLength(16);
    expect(server.requestsTo("batchEmbed")).toHaveLength(1);
  });

  it("rejects wrong keys and scripted errors with Google's error JSON", async () => {
    await expect(client("nope").models.generateContent({ model: "gemini-2.5-flash", contents: "x" })).rejects.toMatchObject({ status: 400 });
    server.script({ route: "generate", status: 429 });
    await expect(client().models.generateContent({ model: "gemini-2.5-flash", contents: "x" })).rejects.toMatchObject({ status: 429 });
    await expect(client().models.generateContent({ model: "gemini-9", contents: "x" })).rejects.toMatchObject({ status: 404 });
    const wrong = await fetch(`${server.url}/v1beta/models/gemini-2.5-flash:generateContent?key=nope`, { method: "POST", body: "{}" });
    expect(await wrong.json()).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT", details: [{ reason: "API_KEY_INVALID" }, { locale: "en-US" }] } });
  });

  it("lists models through the SDK pager", async () => {
    const names: string[] = [];
    for await (const m of await client().models.list()) names.push(m.name ?? "");
    expect(names).toContain("models/gemini-2.5-flash");
  });
});

describe("Tavily test server", () => {
  let server: TavilyTestServer;
  beforeEach(async () => {
    server = await startTavilyServer();
  });
  afterEach(() => server.close());
  const search = (body: unknown, key = "tvly-test-key") =>
    fetch(`${server.url}/search`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });

  it("returns results up to max_results, 401 for a wrong key, scripted statuses", async () => {
    const ok = await search({ query: "obsidian plugins", max_results: 3 });
    const json = (await ok.json()) as { query: string; results: { title: string; url: string; content: string; score: number }[] };
    expect(json.query).toBe("obsidian plugins");
    expect(json.results).toHaveLength(3);
    expect(json.results[0]).toMatchObject({ title: "Result 1 for obsidian plugins", url: "https://example.com/obsidian-plugins/1" });
    expect((await search({ query: "x" }, "bad")).status).toBe(401);
    server.script({ status: 429 });
    const limited = await search({ query: "x" });
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ detail: { error: expect.any(String) } });
    const bodyKey = await fetch(`${server.url}/search`, { method: "POST", body: JSON.stringify({ api_key: "tvly-test-key", query: "y" }) });
    expect(bodyKey.status).toBe(200);
  });
});
