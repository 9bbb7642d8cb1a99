/**
 * ChatService end to end on real parts: temp vault + real VaultIndex (Ollama embedder), the Ollama chat
 * model and Tavily over loopback protocol servers, conversations on disk. Every mode, every degradation
 * path, Stop, agents, regenerate and memory bounds.
 */
import type { AgentResult } from "../../../src/core/agents/agent";
import { ChatService, toHistory } from "../../../src/core/chat/chat-service";
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { startGeminiServer, type GeminiBehaviour } from "../../support/servers/gemini-server";
import { FAST_RETRY, nodeFetch, waitFor } from "../providers/provider-fixtures";
import { closedPortUrl } from "../../support/servers/loopback-server";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { doneOf, makeChatHarness, ofType, type ChatHarness } from "./chat-fixtures";

const NOTES = {
  "Ocean/Tides.md": "# Tides\n\nTides are caused by the gravity of the moon and the sun.\nSpring tides happen at new and full moon.\n",
  "Setup/Ollama.md": "# Ollama setup\n\n## Install\n\nInstall Ollama, then run `ollama serve`.\nSet OLLAMA_ORIGINS so Obsidian can stream.\n",
  "Kitchen/Bread.md": "# Bread\n\nFlour, water, salt and yeast. Knead for ten minutes.\n",
};

let h: ChatHarness;
afterEach(async () => {
  await h?.cleanup();
});

describe("ChatService modes", () => {
  beforeEach(async () => {
    h = await makeChatHarness(NOTES);
  });

  it("none: history only, streams tokens, saves both messages in a new titled conversation", async () => {
    h.ollama.script({ route: "chat", reply: "Hello there, how can I help?" });
    const events = await h.send("Hi Krypton!", { mode: "none" });
    expect(events.map((e) => e.type)).toEqual(["sources", ...Array(6).fill("token"), "done"]);
    expect(ofType(events, "sources")[0].sources).toEqual([]);
    const done = doneOf(events);
    expect(done).toMatchObject({ answer: "Hello there, how can I help?", stopped: false });
    expect(h.tavily.requests).toHaveLength(0);
    expect(h.ollama.requestsTo("embed").filter((r) => JSON.stringify(r.body).includes("Krypton"))).toHaveLength(0);

    const saved = await h.store.get(done.conversationId);
    expect(saved?.title).toBe("Hi Krypton!");
    expect(saved?.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Hi Krypton!"],
      ["assistant", "Hello there, how can I help?"],
    ]);
    expect(saved?.messages[1].id).toBe(done.messageId);

    // The next turn in the same conversation carries the history.
    h.ollama.script({ route: "chat", reply: "Sure." });
    await h.send("Tell me more", { mode: "none", conversationId: done.conversationId });
    const body = h.ollama.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "system"]);
    expect(body.messages[3].content).toBe("Tell me more");
    expect(body.messages[4].content).toMatch(/^Write your answer in .*\("Tell me more"\)/);
    expect((await h.store.list())[0].messageCount).toBe(4);
  });

  it("rag: notes from the real index become numbered sources and a labelled prompt section", async () => {
    h.ollama.script({ route: "chat", reply: "The moon's gravity causes tides [1]." });
    const events = await h.send("What causes tides and the moon gravity?", { mode: "rag" });
    const sources = ofType(events, "sources")[0].sources;
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.length).toBeLessThanOrEqual(h.settings.displayK);
    expect(sources[0]).toMatchObject({ n: 1, kind: "note", path: "Ocean/Tides.md", title: "Tides", startLine: expect.any(Number) });
    const prompt = h.lastPrompt();
    expect(prompt).toContain("## Local notes\n[1] Ocean/Tides.md");
    expect(prompt).toContain("gravity of the moon");
    expect(prompt).not.toContain("## Web results");
    expect(prompt).toMatch(/Question: What causes tides and the moon gravity\?$/);
    const done = doneOf(events);
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toMatchObject({ mode: "rag", sources });
    expect(h.tavily.requests).toHaveLength(0);
  });

  it("rag honours maxK, displayK and the similarity threshold", async () => {
    h.settings.displayK = 1;
    await h.send("ollama install serve origins", { mode: "rag" });
    expect((h.lastPrompt().match(/^\[\d+\] /gm) ?? []).length).toBe(1);
    h.settings.similarityThreshold = 0.99;
    const events = await h.send("ollama install serve origins", { mode: "rag" });
    expect(ofType(events, "sources")[0].sources).toEqual([]);
    expect(h.lastPrompt()).not.toContain("## Local notes");
  });

  it("web: Tavily results only, with URLs as sources", async () => {
    h.settings.webMaxResults = 2;
    const events = await h.send("latest Obsidian release", { mode: "web" });
    expect(h.tavily.requests[0].body).toMatchObject({ query: "latest Obsidian release", max_results: 2 });
    expect(ofType(events, "sources")[0].sources).toEqual([
      { n: 1, kind: "web", title: "Result 1 for latest Obsidian release", url: "https://example.com/latest-obsidian-release/1", snippet: "Snippet 1 about latest Obsidian release." },
      { n: 2, kind: "web", title: "Result 2 for latest Obsidian release", url: "https://example.com/latest-obsidian-release/2", snippet: "Snippet 2 about latest Obsidian release." },
    ]);
    expect(h.lastPrompt()).toContain("## Web results\n[1] Result 1 for latest Obsidian release — https://example.com/latest-obsidian-release/1");
    expect(h.lastPrompt()).not.toContain("## Local notes");
  });

  it("hybrid: notes and web in separate sections, numbered notes first", async () => {
    h.settings.webMaxResults = 1;
    const events = await h.send("tides moon gravity", { mode: "hybrid" });
    const sources = ofType(events, "sources")[0].sources;
    const kinds = sources.map((s) => s.kind);
    expect(kinds[kinds.length - 1]).toBe("web");
    expect(kinds.filter((k) => k === "note").length).toBeGreaterThan(0);
    expect(sources.map((s) => s.n)).toEqual(sources.map((_, i) => i + 1));
    const prompt = h.lastPrompt();
    expect(prompt.indexOf("## Local notes")).toBeGreaterThan(-1);
    expect(prompt.indexOf("## Web results")).toBeGreaterThan(prompt.indexOf("## Local notes"));
    expect(prompt).toContain(`[${sources.length}] Result 1 for tides moon gravity`);
    expect(h.tavily.requests).toHaveLength(1);
  });

  it("uses the current note as context when asked", async () => {
    await h.send("Summarize this", { mode: "none", activeNotePath: "Kitchen/Bread.md", useActiveNote: true });
    expect(h.lastPrompt()).toContain("## Current note\n[1] Kitchen/Bread.md\n# Bread");
    const events = await h.send("Summarize this", { mode: "none", activeNotePath: "Gone.md", useActiveNote: true });
    expect(ofType(events, "notice")).toEqual([expect.objectContaining({ code: "active-note-unreadable" })]);
    expect(doneOf(events).stopped).toBe(false);
  });

  it("says so when the current note was asked for but none is open (a PDF in front, no note at all)", async () => {
    const events = await h.send("Summarize this", { mode: "none", useActiveNote: true });
    expect(ofType(events, "notice")).toEqual([{ type: "notice", code: "active-note-missing", message: "No note is open, so this answer does not use one." }]);
    expect(h.lastPrompt()).not.toContain("## Current note");
    expect(doneOf(events).answer).toBe("This is the test model's answer.");
  });
});

describe("ChatService degradation", () => {
  it("RAG with an index that is not ready: one-line notice, answer without notes", async () => {
    h = await makeChatHarness(NOTES, { openIndex: false });
    const events = await h.send("What causes tides?", { mode: "rag" });
    expect(ofType(events, "notice")).toEqual([
      { type: "notice", code: "rag-unavailable", message: "Your notes could not be searched (they are not indexed yet), so this answer does not use them." },
    ]);
    expect(ofType(events, "sources")[0].sources).toEqual([]);
    expect(doneOf(events).answer).toBe("This is the test model's answer.");
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages[1].notices).toEqual([expect.stringContaining("not indexed yet")]);
  });

  it("RAG when the search itself throws: notice, logged, answer goes on", async () => {
    h = await makeChatHarness(NOTES);
    const broken = Object.create(h.index) as typeof h.index;
    broken.searchChunksWithReason = () => Promise.reject(new Error("index file is locked"));
    const service = new ChatService({
      host: h.host,
      settings: () => h.settings,
      index: broken,
      chatModel: () => h.model,
      conversations: h.store,
      agents: () => [],
      webSearch: () => null,
    });
    const events = [];
    for await (const e of service.send("tides", { mode: "hybrid" })) events.push(e);
    expect(ofType(events, "notice").map((n) => n.code)).toEqual(["rag-unavailable", "web-unavailable"]);
    expect(ofType(events, "notice")[0].message).toContain("index file is locked");
    expect(doneOf(events).answer).toBe("This is the test model's answer.");
    expect(h.logger.lines.some((l) => l.startsWith("warn Note search failed"))).toBe(true);
  });

  it.each(["rag", "hybrid"] as const)("%s: a question of only common words that finds no note says why, as the search dialog does", async (mode) => {
    h = await makeChatHarness(NOTES);
    h.settings.similarityThreshold = 0.99; // no note is that close by meaning; keywords cannot find "the and of"
    const events = await h.send("the and of", { mode });
    expect(ofType(events, "notice").filter((n) => n.code.startsWith("rag-"))).toEqual([
      { type: "notice", code: "rag-unsearchable", message: '"the and of" has only common words, which search ignores; add a word that names the topic.' },
    ]);
    expect(ofType(events, "sources")[0].sources.filter((s) => s.kind === "note")).toEqual([]);
    // A question with a word to search for that finds nothing is only that: no such notice.
    const other = await h.send("zzqxj", { mode });
    expect(ofType(other, "notice").filter((n) => n.code.startsWith("rag-"))).toEqual([]);
  });

  it("embedder down: keyword hits still come, with a notice that semantic search is off", async () => {
    h = await makeChatHarness(NOTES, { openIndex: false });
    h.ollama.script({ route: "embed", status: 500, times: Infinity });
    await h.index.open();
    const events = await h.send("tides moon", { mode: "rag" });
    expect(ofType(events, "notice").map((n) => n.code)).toEqual(["rag-keyword-only"]);
    expect(ofType(events, "sources")[0].sources[0]).toMatchObject({ path: "Ocean/Tides.md" });
    expect(doneOf(events).answer).toBeTruthy();
  });

  it("embedder down only at question time (notes already embedded): keyword hits, with a notice", async () => {
    h = await makeChatHarness(NOTES);
    expect(h.index.status()).toMatchObject({ keywordOnly: false, embedded: expect.any(Number) });
    h.ollama.script({ route: "embed", status: 500, times: Infinity });
    const events = await h.send("tides moon", { mode: "rag" });
    expect(ofType(events, "notice")).toEqual([expect.objectContaining({ code: "rag-keyword-only", message: expect.stringContaining("matched by keywords only") })]);
    // It says what happened: a server error, not "did not answer in time".
    expect(ofType(events, "notice")[0].message).toMatch(/^Semantic search failed \(the embedding server failed \(Ollama failed \(500\)/);
    expect(ofType(events, "sources")[0].sources[0]).toMatchObject({ path: "Ocean/Tides.md" });
    // With the embedder back, no notice.
    h.ollama.reset();
    const again = await h.send("moon tides gravity", { mode: "rag" });
    expect(ofType(again, "notice")).toEqual([]);
  });

  it.each([
    ["no key", { tavilyApiKey: "" }, undefined, "Web search is not set up (set TAVILY_API_KEY)"],
    ["401", { tavilyApiKey: "tvly-wrong-secret" }, undefined, "Web search failed (401: the Tavily API key was rejected"],
    ["429 to exhaustion", {}, { status: 429, times: Infinity }, "Web search failed (429: Tavily rate limit reached"],
    ["500", {}, { status: 500, times: Infinity }, "Web search failed (Tavily failed (500)"],
    ["timeout", { requestTimeoutMs: 100 }, { stall: true }, "Web search failed (Tavily did not answer within"],
    ["malformed", {}, { malformed: true }, "Web search failed (Tavily sent an answer that is not valid JSON"],
  ])("Tavily fails (%s): web part dropped with a notice, the answer goes on", async (_name, settings, script, message) => {
    h = await makeChatHarness(NOTES);
    Object.assign(h.settings, settings);
    if (script) h.tavily.script(script);
    const events = await h.send("tides moon", { mode: "hybrid" });
    const notices = ofType(events, "notice");
    expect(notices).toHaveLength(1);
    expect(notices[0].code).toBe("web-unavailable");
    expect(notices[0].message).toContain(message);
    expect(notices[0].message).not.toContain("tvly-wrong-secret");
    expect(ofType(events, "sources")[0].sources.every((s) => s.kind === "note")).toBe(true);
    expect(h.lastPrompt()).not.toContain("## Web results");
    expect(doneOf(events).answer).toBe("This is the test model's answer.");
    expect(ofType(events, "error")).toEqual([]);
  });

  it("Tavily 429 once is retried and the web results are used", async () => {
    h = await makeChatHarness(NOTES);
    h.tavily.script({ status: 429 });
    const events = await h.send("obsidian", { mode: "web" });
    expect(ofType(events, "notice")).toEqual([]);
    expect(ofType(events, "sources")[0].sources).toHaveLength(5);
    expect(h.tavily.requests).toHaveLength(2);
  });

  it("LLM 429 is retried, then the answer streams", async () => {
    h = await makeChatHarness(NOTES);
    h.ollama.script([{ route: "chat", status: 429 }, { route: "chat", reply: "Recovered." }]);
    const events = await h.send("hi", { mode: "none" });
    expect(ofType(events, "error")).toEqual([]);
    expect(doneOf(events).answer).toBe("Recovered.");
  });

  it.each([
    ["500 after retries", { route: "chat", status: 500, times: Infinity }, {}, "server", true, /^Ollama failed \(500\)/],
    ["401", { route: "chat", status: 401, times: Infinity }, {}, "unauthorized", false, /^401: Ollama at/],
    ["stall (timeout)", { route: "chat", stall: true }, { timeoutMs: 100 }, "timeout", true, /did not answer within/],
    ["silence between tokens", { route: "chat", reply: "a b c", stallAfterTokens: 1 }, { timeoutMs: 100 }, "timeout", true, /stopped sending/],
    ["cut stream", { route: "chat", reply: "a b c d", cutAfterTokens: 2 }, {}, "bad-response", true, /^The connection to Ollama broke off while its answer was arriving, so the answer is incomplete\. Try again/],
    ["invalid JSON line mid-stream", { route: "chat", reply: "a b c d", invalidLineAfterTokens: 2 }, {}, "bad-response", true, /not JSON in the middle/],
  ] as const)("LLM fails (%s): an error event in plain words, then done", async (_name, script, modelOptions, code, retryable, message) => {
    h = await makeChatHarness(NOTES);
    h.model = new OllamaChatModel({ baseUrl: h.ollama.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, ...modelOptions });
    h.ollama.script({ ...script });
    const events = await h.send("hi", { mode: "none" });
    const errors = ofType(events, "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code, retryable });
    expect(errors[0].message).toMatch(message);
    expect(errors[0].message).not.toMatch(/\n\s+at /); // no stack trace
    const done = doneOf(events);
    expect(done.stopped).toBe(false);
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toMatchObject({ role: "assistant", error: errors[0].message, content: done.answer });
    // What arrived before a broken stream is kept, marked incomplete.
    if (done.answer) expect(saved?.messages[1]).toMatchObject({ partial: true, content: expect.stringMatching(/^a/) });
  });

  it("a model that is not pulled says how to pull it", async () => {
    h = await makeChatHarness(NOTES);
    h.ollama.models = ["nomic-embed-text"];
    const events = await h.send("hi", { mode: "none" });
    expect(ofType(events, "error")[0]).toMatchObject({ code: "model-missing", message: "Model 'llama3.1:8b' is not installed in Ollama: run `ollama pull llama3.1:8b`." });
  });

  it("Ollama not running: 'not reachable', never a hang", async () => {
    h = await makeChatHarness(NOTES);
    const url = await closedPortUrl();
    h.model = new OllamaChatModel({ baseUrl: url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    const events = await h.send("hi", { mode: "none" });
    expect(ofType(events, "error")[0]).toMatchObject({ code: "unreachable", message: expect.stringContaining(`Ollama is not reachable at ${url}`) });
    doneOf(events);
  });

  it("an empty answer is an error, never a silent empty reply", async () => {
    h = await makeChatHarness(NOTES);
    h.ollama.script({ route: "chat", tokens: ["", "  "] });
    const events = await h.send("hi", { mode: "none" });
    expect(ofType(events, "error")[0]).toMatchObject({ code: "empty-answer" });
  });

  it.each([
    ["plain chat", false],
    ["agent mode", true],
  ])("%s: an answer of only whitespace is saved as no answer, like an empty one, not as the whitespace", async (_name, agent) => {
    h = await makeChatHarness(NOTES);
    h.ollama.script({ route: "chat", tokens: ["\n", "  ", "\n\n"], times: Infinity });
    const events = await h.send("hi", { mode: "none", agent });
    const [error] = ofType(events, "error");
    expect(error.message).toMatch(/returned an empty answer/);
    const done = doneOf(events);
    expect(done.answer).toBe("");
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toEqual(expect.objectContaining({ role: "assistant", content: "", error: error.message }));
    expect(saved?.messages[1]).not.toHaveProperty("partial");
  });

  it.each<[string, GeminiBehaviour, RegExp]>([
    ["finishReason SAFETY", { tokens: [], extra: { finishReason: "SAFETY" } }, /SAFETY/],
    ["a blocked prompt", { extra: { blockReason: "PROHIBITED_CONTENT" } }, /prompt blocked: PROHIBITED_CONTENT/],
  ])("a Gemini stream with no text (%s) is an error naming Gemini's reason, never a silent empty reply", async (_name, script, reason) => {
    h = await makeChatHarness(NOTES);
    const gemini = await startGeminiServer();
    try {
      h.model = new GeminiChatModel({ apiKey: "test-gemini-key", baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
      gemini.script({ route: "stream", ...script });
      const events = await h.send("hi", { mode: "none" });
      expect(ofType(events, "token")).toEqual([]);
      expect(ofType(events, "error")).toEqual([expect.objectContaining({ message: expect.stringMatching(reason) })]);
      expect(ofType(events, "error")[0].message).toContain("gemini:gemini-2.5-flash");
      expect(doneOf(events).answer).toBe("");
    } finally {
      await gemini.close();
    }
  });

  it("an answer cut at the length limit says so; the text that came is kept, marked incomplete", async () => {
    h = await makeChatHarness(NOTES);
    h.ollama.script({ route: "chat", reply: "Tides come from the", extra: { doneReason: "length" } });
    const events = await h.send("hi", { mode: "none" });
    expect(ofType(events, "error")).toEqual([expect.objectContaining({ message: expect.stringMatching(/cut off at the model's length limit/), retryable: true })]);
    const done = doneOf(events);
    expect(done.answer).toBe("Tides come from the");
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toMatchObject({ partial: true, content: "Tides come from the" });
  });

  it("no chat model configured: a clear error, the question is still saved", async () => {
    h = await makeChatHarness(NOTES);
    h.model = null;
    Object.assign(h.settings, { chatProvider: "gemini", chatModel: "gemini-2.5-flash", geminiApiKey: "" });
    const events = await h.send("hi", { mode: "rag" });
    // The harness host is the CLI's: the fix named is the environment variable.
    expect(ofType(events, "error")).toEqual([
      { type: "error", code: "not-configured", message: "Gemini is selected for chat but there is no Gemini API key: set GEMINI_API_KEY.", retryable: false },
    ]);
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("inside Obsidian the same problems point to Krypton's settings", async () => {
    h = await makeChatHarness(NOTES);
    const service = new ChatService({
      host: { ...h.host, platform: { kind: "obsidian", mobile: false } },
      settings: () => h.settings,
      index: h.index,
      chatModel: () => h.model,
      conversations: h.store,
      agents: () => [],
    });
    const collect = async (mode: "web" | "none") => {
      const events = [];
      for await (const e of service.send("hi", { mode })) events.push(e);
      return events;
    };
    h.settings.tavilyApiKey = "";
    expect(ofType(await collect("web"), "notice")[0].message).toBe("Web search is not set up (add a Tavily API key in settings), so this answer does not use the web.");
    h.model = null;
    Object.assign(h.settings, { chatProvider: "gemini", chatModel: "gemini-2.5-flash", geminiApiKey: "" });
    expect(ofType(await collect("none"), "error")[0].message).toBe("Gemini is selected for chat but there is no Gemini API key: add one in Krypton's settings.");
  });

  it("Gemini answers through the same pipeline, with notes from the index", async () => {
    h = await makeChatHarness(NOTES);
    const gemini = await startGeminiServer();
    try {
      h.model = new GeminiChatModel({ apiKey: "test-gemini-key", baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
      gemini.script({ route: "stream", reply: "Tides come from the moon [1]." });
      const events = await h.send("tides moon gravity", { mode: "rag" });
      expect(doneOf(events).answer).toBe("Tides come from the moon [1].");
      const body = gemini.requestsTo("stream")[0].body as { systemInstruction: { parts: { text: string }[] }; contents: { parts: { text: string }[] }[] };
      expect(body.systemInstruction.parts[0].text).toContain("Cite the blocks");
      expect(body.contents[0].parts[0].text).toContain("## Local notes\n[1] Ocean/Tides.md");
    } finally {
      await gemini.close();
    }
  });

  it("error messages never contain API keys", async () => {
    h = await makeChatHarness(NOTES);
    const gemini = await startGeminiServer();
    try {
      const key = "AIzaSy-SECRET-KEY-0123456789";
      h.settings.geminiApiKey = key;
      h.model = new GeminiChatModel({ apiKey: key, baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
      gemini.script({ route: "stream", status: 400, error: `API key ${key} not valid. Please pass a valid API key.` });
      const events = await h.send("hi", { mode: "none" });
      const error = ofType(events, "error")[0];
      expect(error.code).toBe("unauthorized");
      expect(error.message).not.toContain(key);
      const file = await h.vault.read(`.krypton/chat/${doneOf(events).conversationId}.json`);
      expect(file).not.toContain(key);
      expect(h.logger.lines.join("\n")).not.toContain(key);
    } finally {
      await gemini.close();
    }
  });
});

describe("ChatService Stop", () => {
  beforeEach(async () => {
    h = await makeChatHarness(NOTES);
  });

  it("Stop mid-stream keeps the partial answer, marks it stopped and ends with done", async () => {
    h.ollama.script({ route: "chat", reply: "one two three four five six seven", tokenDelayMs: 20 });
    const controller = new AbortController();
    const events = [];
    for await (const e of h.service.send("count", { mode: "none", signal: controller.signal })) {
      events.push(e);
      if (ofType(events, "token").length === 2) controller.abort();
    }
    const done = doneOf(events);
    expect(done).toMatchObject({ answer: "one two ", stopped: true });
    expect(ofType(events, "error")).toEqual([]);
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toMatchObject({ content: "one two ", stopped: true });
    expect(saved?.messages[1].error).toBeUndefined();
  });

  it("Stop during retrieval ends at once without calling the model", async () => {
    h.tavily.script({ delayMs: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const events = [];
    for await (const e of h.service.send("slow web", { mode: "web", signal: controller.signal })) events.push(e);
    expect(doneOf(events)).toMatchObject({ answer: "", stopped: true });
    expect(h.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("a consumer that breaks out of the loop closes the request and the partial answer is kept as stopped", async () => {
    h.ollama.script({ route: "chat", reply: "one two three four five six seven", tokenDelayMs: 20 });
    let conversationId = "";
    let tokens = 0;
    for await (const e of h.service.send("count", { mode: "none" })) {
      if (e.type === "token" && ++tokens === 2) break;
    }
    await waitFor(() => h.ollama.requestsTo("chat")[0]?.closedEarly === true, "the HTTP request to close");
    const [summary] = await h.store.list();
    conversationId = summary.id;
    const saved = await h.store.get(conversationId);
    expect(saved?.messages.map((m) => [m.role, m.content, m.stopped])).toEqual([
      ["user", "count", undefined],
      ["assistant", "one two ", true],
    ]);
  });

  it("an already-aborted signal saves the question and stops", async () => {
    const controller = new AbortController();
    controller.abort();
    const events = [];
    for await (const e of h.service.send("never mind", { mode: "rag", signal: controller.signal })) events.push(e);
    expect(events.map((e) => e.type)).toEqual(["done"]);
    expect(doneOf(events).stopped).toBe(true);
    expect(h.ollama.requestsTo("chat")).toHaveLength(0);
  });
});

describe("ChatService agents", () => {
  beforeEach(async () => {
    h = await makeChatHarness(NOTES);
  });
  const result = (agent: string, text: string): AgentResult => ({ kind: "message", agent, text });

  it("the first non-null result wins; later agents and the model are not asked", async () => {
    const calls: string[] = [];
    h.agents.push(
      { name: "no", tryHandle: async () => (calls.push("no"), null) },
      { name: "yes", tryHandle: async (msg, history, ctx) => (calls.push(`yes:${msg}:${history.length}:${ctx.activeNotePath}`), result("yes", "Handled by yes.")) },
      { name: "late", tryHandle: async () => (calls.push("late"), result("late", "too late")) },
    );
    const events = await h.send("create a note", { mode: "rag", activeNotePath: "Kitchen/Bread.md" });
    expect(calls).toEqual(["no", "yes:create a note:0:Kitchen/Bread.md"]);
    expect(events.map((e) => e.type)).toEqual(["agent", "done"]);
    expect(ofType(events, "agent")[0].result).toEqual(result("yes", "Handled by yes."));
    expect(doneOf(events).answer).toBe("Handled by yes.");
    expect(h.ollama.requestsTo("chat")).toHaveLength(0);
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages[1]).toMatchObject({ content: "Handled by yes.", agent: result("yes", "Handled by yes.") });
  });

  it("a throwing agent counts as null (logged) and the next one is tried", async () => {
    h.agents.push(
      { name: "broken", tryHandle: async () => Promise.reject(new Error("boom")) },
      { name: "second", tryHandle: async () => result("second", "Second handled it.") },
    );
    const events = await h.send("do it", { mode: "none" });
    expect(ofType(events, "agent")[0].result.agent).toBe("second");
    expect(h.logger.lines.some((l) => l.includes('Agent "broken" failed') && l.includes("boom"))).toBe(true);
  });

  it("when every agent passes, normal chat answers", async () => {
    h.agents.push({ name: "never", tryHandle: async () => null }, { name: "broken", tryHandle: () => Promise.reject(new Error("x")) });
    h.ollama.script({ route: "chat", reply: "Normal answer." });
    const events = await h.send("what is up", { mode: "none" });
    expect(ofType(events, "agent")).toEqual([]);
    expect(doneOf(events).answer).toBe("Normal answer.");
  });

  it("agents receive the bounded conversation history", async () => {
    let seen: unknown;
    h.ollama.script({ route: "chat", reply: "First answer." });
    const first = doneOf(await h.send("first question", { mode: "none" }));
    h.agents.push({ name: "spy", tryHandle: async (_m, history) => ((seen = history), null) });
    await h.send("second question", { mode: "none", conversationId: first.conversationId });
    expect(seen).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: "First answer." },
    ]);
  });
});

describe("ChatService conversations", () => {
  beforeEach(async () => {
    h = await makeChatHarness(NOTES);
  });

  it("regenerate replaces the last answer without repeating the question", async () => {
    h.ollama.script({ route: "chat", reply: "First try." });
    const first = doneOf(await h.send("Explain tides", { mode: "none" }));
    h.ollama.script({ route: "chat", reply: "Second try." });
    const again = doneOf(await h.send("", { mode: "none", conversationId: first.conversationId, regenerate: true }));
    expect(again.conversationId).toBe(first.conversationId);
    expect(again.answer).toBe("Second try.");
    const saved = await h.store.get(first.conversationId);
    expect(saved?.messages.map((m) => m.content)).toEqual(["Explain tides", "Second try."]);
    const body = h.ollama.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] };
    expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "system"]);
    expect(body.messages[1].content).toBe("Explain tides");
  });

  it("an empty question is refused without saving anything", async () => {
    const events = await h.send("   ", { mode: "rag" });
    expect(events.map((e) => e.type)).toEqual(["error", "done"]);
    expect(ofType(events, "error")[0]).toMatchObject({ code: "empty-question" });
    expect(await h.store.list()).toEqual([]);
    expect(h.ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("regenerate without a conversation is a clear error", async () => {
    const events = await h.send("", { mode: "none", conversationId: "c-missing", regenerate: true });
    expect(ofType(events, "error")[0]).toMatchObject({ code: "conversation", message: "There is no answer to regenerate in this conversation." });
    doneOf(events);
  });

  it("an unknown or unreadable conversation id starts a new conversation with a notice", async () => {
    const events = await h.send("hello", { mode: "none", conversationId: "c-gone" });
    expect(ofType(events, "notice")[0]).toMatchObject({ code: "conversation-missing" });
    const done = doneOf(events);
    expect(done.conversationId).not.toBe("c-gone");
    expect((await h.store.get(done.conversationId))?.messages).toHaveLength(2);
  });

  it("history in the prompt follows the memory policy bounds", async () => {
    h.settings.memoryMaxMessages = 2;
    let id: string | undefined;
    for (let i = 0; i < 4; i++) {
      h.ollama.script({ route: "chat", reply: `answer ${i}` });
      id = doneOf(await h.send(`question ${i}`, { mode: "none", conversationId: id })).conversationId;
    }
    const body = h.ollama.requestsTo("chat")[3].body as { messages: { content: string }[] };
    // Between the system prompt and the answer-language instruction.
    expect(body.messages.map((m) => m.content).slice(1, -1)).toEqual(["question 2", "answer 2", "question 3"]);
    h.settings.memoryMaxMessages = 50;
    h.settings.memoryMaxChars = "answer 2".length + "question 2".length;
    await h.send("question 4", { mode: "none", conversationId: id });
    const last = h.ollama.requestsTo("chat")[4].body as { messages: { content: string }[] };
    expect(last.messages.map((m) => m.content).slice(1, -1)).toEqual(["question 3", "answer 3", "question 4"]);
  });

  it("a failed save becomes a notice; the answer is still delivered", async () => {
    const store = h.store;
    const flaky = Object.create(store) as typeof store;
    flaky.put = (id, message) => (message.role === "assistant" ? Promise.reject(new Error("ENOSPC: no space left on device")) : store.put(id, message));
    const service = new ChatService({ host: h.host, settings: () => h.settings, index: h.index, chatModel: () => h.model, conversations: flaky, agents: () => [], webSearch: () => null });
    h.ollama.script({ route: "chat", reply: "Still here." });
    const events = [];
    for await (const e of service.send("hi", { mode: "none" })) events.push(e);
    expect(ofType(events, "notice")).toEqual([{ type: "notice", code: "save-failed", message: expect.stringContaining("no space left") }]);
    expect(doneOf(events).answer).toBe("Still here.");
  });

  it("failed answers stay out of the history the model sees", () => {
    expect(
      toHistory([
        { id: "1", role: "user", content: "q", createdAt: 1 },
        { id: "2", role: "assistant", content: "", error: "Ollama failed", createdAt: 2 },
        { id: "3", role: "user", content: "q again", createdAt: 3 },
        { id: "4", role: "assistant", content: "partial", stopped: true, createdAt: 4 },
      ]),
    ).toEqual([
      { role: "user", content: "q" },
      { role: "user", content: "q again" },
      { role: "assistant", content: "partial" },
    ]);
  });
});

describe("ChatService on mobile", () => {
  it("uses the mobile memory bounds", async () => {
    h = await makeChatHarness(NOTES, { mobile: true });
    h.settings.mobileMemoryMaxMessages = 1;
    h.ollama.script({ route: "chat", reply: "a0" });
    const id = doneOf(await h.send("q0", { mode: "none" })).conversationId;
    await h.send("q1", { mode: "none", conversationId: id });
    const body = h.ollama.requestsTo("chat")[1].body as { messages: { content: string }[] };
    // One message allowed: the newest is the assistant turn, which cannot open a conversation.
    expect(body.messages.map((m) => m.content).slice(1, -1)).toEqual(["q1"]);
  });
});
