/** The settings tab's "Test connection" verdicts, model lists and the provider factory, against the loopback servers. */
import { listModels, testConnection } from "../../../src/core/providers/connection-test";
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { GeminiEmbedder } from "../../../src/core/providers/gemini/gemini-embedder";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import {
  chatModelUnavailableReason,
  createChatModel,
  createChatModelNamed,
  createEmbedder,
  embedderUnavailableReason,
} from "../../../src/core/providers/provider-factory";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { startGeminiServer, DEFAULT_GEMINI_KEY, type GeminiTestServer } from "../../support/servers/gemini-server";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { startTavilyServer, DEFAULT_TAVILY_KEY, type TavilyTestServer } from "../../support/servers/tavily-server";
import { networkHost } from "./provider-fixtures";
import { closedPortUrl } from "../../support/servers/loopback-server";

let ollama: OllamaTestServer;
let gemini: GeminiTestServer;
let tavily: TavilyTestServer;
beforeAll(async () => {
  [ollama, gemini, tavily] = await Promise.all([startOllamaServer(), startGeminiServer(), startTavilyServer()]);
});
afterAll(() => Promise.all([ollama.close(), gemini.close(), tavily.close()]));
beforeEach(() => {
  ollama.reset();
  gemini.reset();
  tavily.reset();
  ollama.models = ["llama3.1:8b", "nomic-embed-text:latest"];
});

const settings = (overrides: Partial<KryptonSettings> = {}): KryptonSettings => ({
  ...DEFAULT_SETTINGS,
  ollamaUrl: ollama.url,
  geminiBaseUrl: gemini.url,
  tavilyBaseUrl: tavily.url,
  requestTimeoutMs: 2_000,
  ...overrides,
});
const host = networkHost();

describe("testConnection", () => {
  it("Ollama: running with both models", async () => {
    const result = await testConnection(settings(), host, "ollama");
    expect(result).toMatchObject({ ok: true, models: ["llama3.1:8b", "nomic-embed-text:latest"] });
    expect(result.message).toBe("Connected to Ollama 0.9.0: 2 models installed; 'llama3.1:8b' and 'nomic-embed-text' ready.");
  });

  it("Ollama: a missing model names the pull command", async () => {
    ollama.models = ["llama3.1:8b"];
    const result = await testConnection(settings(), host, "ollama");
    expect(result.ok).toBe(false);
    expect(result.message).toBe("Ollama 0.9.0 is running, but model 'nomic-embed-text' is not installed: run `ollama pull nomic-embed-text`.");
  });

  it("Ollama: not running", async () => {
    const url = await closedPortUrl();
    const result = await testConnection(settings({ ollamaUrl: url }), host, "ollama");
    expect(result).toEqual({ ok: false, message: `Ollama is not reachable at ${url}: is it running and is the address right?` });
  });

  it("Gemini: no key, wrong key, working key, unknown model", async () => {
    expect(await testConnection(settings(), host, "gemini")).toMatchObject({ ok: false, message: expect.stringMatching(/^No Gemini API key/) });
    const wrong = await testConnection(settings({ geminiApiKey: "AIza-wrong-key" }), host, "gemini");
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toMatch(/^400: the Gemini API key was rejected/);
    expect(wrong.message).not.toContain("AIza-wrong-key");
    const ok = await testConnection(settings({ geminiApiKey: DEFAULT_GEMINI_KEY, chatProvider: "gemini", chatModel: "gemini-2.5-flash" }), host, "gemini");
    expect(ok).toMatchObject({ ok: true, message: "Connected to Gemini: the key works and 4 models are available." });
    const missing = await testConnection(settings({ geminiApiKey: DEFAULT_GEMINI_KEY, chatProvider: "gemini", chatModel: "gemini-9" }), host, "gemini");
    expect(missing).toMatchObject({ ok: false, message: expect.stringContaining("'gemini-9' is not available") });
  });

  it("Tavily: no key, wrong key, working key", async () => {
    expect(await testConnection(settings(), host, "tavily")).toMatchObject({ ok: false, message: expect.stringMatching(/^No Tavily API key/) });
    expect(await testConnection(settings({ tavilyApiKey: "tvly-bad" }), host, "tavily")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^401: the Tavily API key was rejected/),
    });
    expect(await testConnection(settings({ tavilyApiKey: DEFAULT_TAVILY_KEY }), host, "tavily")).toEqual({ ok: true, message: "Connected to Tavily: the key works." });
    expect(tavily.requests.at(-1)?.body).toMatchObject({ max_results: 1 });
  });

  it("Ollama says exactly what failed: a proxy's 401, both models missing", async () => {
    ollama.script({ route: "version", status: 401 });
    expect(await testConnection(settings(), host, "ollama")).toEqual({
      ok: false,
      message: `401: Ollama at ${ollama.url} refused the request (a proxy in front of it may need credentials).`,
    });
    ollama.models = ["mistral:7b"];
    const none = await testConnection(settings(), host, "ollama");
    expect(none).toMatchObject({ ok: false, models: ["mistral:7b"] });
    expect(none.message).toBe(
      "Ollama 0.9.0 is running, but model 'llama3.1:8b' and 'nomic-embed-text' are not installed: run `ollama pull llama3.1:8b`, then `ollama pull nomic-embed-text`.",
    );
  });

  it("Gemini says exactly what failed: unreachable, 401, 403, a missing embedding model", async () => {
    const url = await closedPortUrl();
    expect(await testConnection(settings({ geminiApiKey: DEFAULT_GEMINI_KEY, geminiBaseUrl: url }), host, "gemini")).toEqual({
      ok: false,
      message: `Gemini is not reachable at ${url}: is it running and is the address right?`,
    });
    gemini.script({ route: "models", status: 401 });
    const unauthenticated = await testConnection(settings({ geminiApiKey: DEFAULT_GEMINI_KEY }), host, "gemini");
    expect(unauthenticated).toMatchObject({ ok: false, message: expect.stringMatching(/^401: the Gemini API key was rejected/) });
    gemini.script({ route: "models", status: 403 });
    expect(await testConnection(settings({ geminiApiKey: DEFAULT_GEMINI_KEY }), host, "gemini")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^403: the Gemini API key was rejected/),
    });
    const embedding = await testConnection(
      settings({ geminiApiKey: DEFAULT_GEMINI_KEY, chatProvider: "gemini", chatModel: "gemini-9", embeddingProvider: "gemini", embeddingModel: "embedding-9" }),
      host,
      "gemini",
    );
    expect(embedding).toMatchObject({
      ok: false,
      message: "The Gemini key works, but model 'gemini-9' and 'embedding-9' are not available to it: check the model name in settings.",
    });
  });

  it("Tavily unreachable", async () => {
    const url = await closedPortUrl();
    expect(await testConnection(settings({ tavilyApiKey: DEFAULT_TAVILY_KEY, tavilyBaseUrl: url }), host, "tavily")).toEqual({
      ok: false,
      message: `Tavily is not reachable at ${url}: is it running and is the address right?`,
    });
  });

  it("does not retry: a 500 is reported at once", async () => {
    ollama.script({ route: "version", status: 500, times: Infinity });
    const result = await testConnection(settings(), host, "ollama");
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/^Ollama failed \(500\)/);
    expect(ollama.requestsTo("version")).toHaveLength(1);
  });
});

describe("listModels", () => {
  it("Ollama chat and embedding dropdowns", async () => {
    expect(await listModels(settings(), host, "ollama", "chat")).toEqual({ ok: true, models: ["llama3.1:8b"] });
    expect(await listModels(settings(), host, "ollama", "embedding")).toEqual({ ok: true, models: ["nomic-embed-text:latest"] });
  });

  it("Gemini needs a key; with one it lists by purpose", async () => {
    expect(await listModels(settings(), host, "gemini", "chat")).toMatchObject({ ok: false });
    expect(await listModels(settings({ geminiApiKey: DEFAULT_GEMINI_KEY }), host, "gemini", "embedding")).toEqual({
      ok: true,
      models: ["gemini-embedding-001", "text-embedding-004"],
    });
  });

  it("reports an unreachable server in plain words", async () => {
    const result = await listModels(settings({ ollamaUrl: await closedPortUrl() }), host, "ollama", "chat");
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining("not reachable") });
  });
});

describe("provider factory", () => {
  it("builds the configured chat model and embedder", () => {
    expect(createChatModel(settings(), host)).toBeInstanceOf(OllamaChatModel);
    expect(createChatModel(settings(), host)?.id).toBe("ollama:llama3.1:8b");
    expect(createEmbedder(settings(), host)?.id).toBe("ollama:nomic-embed-text");
    const g = settings({ chatProvider: "gemini", chatModel: "gemini-2.5-flash", embeddingProvider: "gemini", embeddingModel: "", geminiApiKey: "k-123" });
    expect(createChatModel(g, host)).toBeInstanceOf(GeminiChatModel);
    expect(createEmbedder(g, host)).toBeInstanceOf(GeminiEmbedder);
    expect(createEmbedder(g, host)?.id).toBe("gemini:gemini-embedding-001");
    expect(createChatModelNamed(settings(), host, "qwen2.5:1.5b")?.id).toBe("ollama:qwen2.5:1.5b");
  });

  it("returns null with a plain reason when something is missing", () => {
    const noKey = settings({ chatProvider: "gemini", chatModel: "gemini-2.5-flash", embeddingProvider: "gemini" });
    expect(createChatModel(noKey, host)).toBeNull();
    expect(chatModelUnavailableReason(noKey)).toBe("Gemini is selected for chat but there is no Gemini API key: add one in Krypton's settings.");
    expect(chatModelUnavailableReason(noKey, "cli")).toBe("Gemini is selected for chat but there is no Gemini API key: set GEMINI_API_KEY.");
    expect(chatModelUnavailableReason(settings({ chatModel: "" }), "cli")).toBe("No chat model is selected: pass --chat-model or set KRYPTON_CHAT_MODEL.");
    expect(createEmbedder(noKey, host)).toBeNull();
    expect(embedderUnavailableReason(noKey)).toMatch(/no Gemini API key/);
    expect(createEmbedder(settings({ embeddingProvider: "none" }), host)).toBeNull();
    expect(embedderUnavailableReason(settings({ embeddingProvider: "none" }))).toMatch(/keywords only/);
    expect(createChatModel(settings({ chatModel: " " }), host)).toBeNull();
    expect(chatModelUnavailableReason(settings({ chatModel: "" }))).toMatch(/No chat model is selected/);
    expect(chatModelUnavailableReason(settings())).toBeNull();
  });

  it("the chat model the factory builds really talks to the configured server", async () => {
    ollama.script({ route: "chat", reply: "factory ok" });
    await expect(createChatModel(settings(), host)!.complete({ messages: [{ role: "user", content: "hi" }] })).resolves.toBe("factory ok");
  });
});
