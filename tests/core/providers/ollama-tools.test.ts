/**
 * Ollama's turn(): native tool calls, thinking, usage, capabilities from /api/show, the "does not support
 * tools" 400, and num_ctx sized to every prompt — through the real `ollama/browser` client against the
 * loopback Ollama server.
 */
import type { ChatEvent, ChatMessage, ToolSpec } from "../../../src/core/ports/chat-model";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { estimateTokens } from "../../../src/core/providers/context-fit";
import { OLLAMA_REASONING_ROOM } from "../../../src/core/providers/answer-room";
import { numCtxFor } from "../../../src/core/providers/ollama/ollama-context";
import { IncompleteAnswerError, ProviderError } from "../../../src/core/providers/provider-error";
import { createChatModel } from "../../../src/core/providers/provider-factory";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { nodeClock } from "../../../src/node/node-clock";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { FAST_RETRY, collect, collectUntilError, networkHost, nodeFetch } from "./provider-fixtures";

const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search the user's notes.",
  parameters: { type: "object", properties: { query: { type: "string" }, limit: { type: "number" } }, required: ["query"] },
};
const TIME: ToolSpec = { name: "get_current_time", description: "The current time.", parameters: { type: "object", properties: {} } };
const ask: ChatMessage[] = [
  { role: "system", content: "You help with notes." },
  { role: "user", content: "What do my notes say about tides?" },
];

type ChatBody = {
  tools?: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  messages: { role: string; content: string; tool_calls?: unknown[]; tool_name?: string }[];
  options: { num_ctx: number; temperature?: number; num_predict?: number; top_p?: number };
  think?: unknown;
};

let server: OllamaTestServer;
const model = (name = "llama3.1:8b", maxContext?: number) =>
  new OllamaChatModel({ baseUrl: server.url, model: name, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, maxContext });
const bodyOf = (i = 0) => server.requestsTo("chat")[i].body as ChatBody;
const ofType = <T extends ChatEvent["type"]>(events: ChatEvent[], type: T) => events.filter((e): e is Extract<ChatEvent, { type: T }> => e.type === type);

beforeEach(async () => {
  server = await startOllamaServer({
    models: ["llama3.1:8b", "qwen3:8b", "gemma2:2b", "tiny:1b", "nomic-embed-text"],
    modelInfo: {
      "qwen3:8b": { capabilities: ["completion", "tools", "thinking"], contextLength: 40_960, architecture: "qwen3" },
      "gemma2:2b": { capabilities: ["completion"], contextLength: 8192, architecture: "gemma2" },
      "tiny:1b": { capabilities: ["completion", "tools"], contextLength: 2048 },
    },
  });
});
afterEach(() => server.close());

describe("Ollama native tool calls", () => {
  it("sends tools in Ollama's function format and turns tool_calls into events with made-up ids", async () => {
    server.script({ route: "chat", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "tides", limit: 3 } }] } });
    const events = await collect(model().turn({ messages: ask, tools: [SEARCH, TIME] }));

    expect(bodyOf().tools).toEqual([
      { type: "function", function: { name: "search_notes", description: "Search the user's notes.", parameters: SEARCH.parameters } },
      { type: "function", function: { name: "get_current_time", description: "The current time.", parameters: TIME.parameters } },
    ]);
    const [call] = ofType(events, "tool-call");
    expect(call.call).toEqual({ id: expect.stringMatching(/^call_/), name: "search_notes", arguments: { query: "tides", limit: 3 } });
    expect(events[events.length - 1]).toEqual({ type: "end", finishReason: "tool-calls", usage: { promptTokens: 26, completionTokens: 0 } });
  });

  it("merges calls split across chunks (several calls, and one call's arguments under one index)", async () => {
    server.script({
      route: "chat",
      extra: {
        splitToolCalls: true,
        toolCalls: [
          { name: "search_notes", arguments: { query: "tides", limit: 2 } },
          { name: "get_current_time", arguments: {} },
        ],
      },
    });
    const calls = ofType(await collect(model().turn({ messages: ask, tools: [SEARCH, TIME] })), "tool-call").map((e) => e.call);
    expect(calls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
      { name: "search_notes", args: { query: "tides", limit: 2 } },
      { name: "get_current_time", args: {} },
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it("sends the history back: assistant tool_calls and role 'tool' results with tool_name (errors marked)", async () => {
    server.script({ route: "chat", reply: "Tides come from the moon." });
    const history: ChatMessage[] = [
      ...ask,
      { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "search_notes", arguments: { query: "tides" } }] },
      { role: "tool", content: "Ocean/Tides.md: the moon.", toolCallId: "call_1", toolName: "search_notes" },
      { role: "tool", content: "read_note needs a path", toolCallId: "call_2", toolName: "read_note", isError: true },
    ];
    const text = await model().complete({ messages: history, tools: [SEARCH] });
    expect(text).toBe("Tides come from the moon.");
    expect(bodyOf().messages.slice(2)).toEqual([
      { role: "assistant", content: "", tool_calls: [{ function: { name: "search_notes", arguments: { query: "tides" } } }] },
      { role: "tool", content: "Ocean/Tides.md: the moon.", tool_name: "search_notes" },
      { role: "tool", content: "Error: read_note needs a path", tool_name: "read_note" },
    ]);
  });

  it("maps the tool choice: none sends no tools; a named tool is sent alone and the system message says so", async () => {
    server.script([{ route: "chat", reply: "ok" }, { route: "chat", reply: "ok" }, { route: "chat", reply: "ok" }]);
    await model().complete({ messages: ask, tools: [SEARCH, TIME], toolChoice: "none" });
    expect(bodyOf(0).tools).toBeUndefined();
    await model().complete({ messages: ask, tools: [SEARCH, TIME], toolChoice: { name: "get_current_time" } });
    expect(bodyOf(1).tools?.map((t) => t.function.name)).toEqual(["get_current_time"]);
    expect(bodyOf(1).messages[0].content).toMatch(/You help with notes\.\n\nCall the tool "get_current_time" now\./);
    await model().complete({ messages: [{ role: "user", content: "time?" }], tools: [TIME], toolChoice: { name: "get_current_time" } });
    expect(bodyOf(2).messages[0]).toEqual({ role: "system", content: 'Call the tool "get_current_time" now.' });
  });

  it("a model without tools: 400 'does not support tools' becomes ProviderError tools-unsupported, remembered", async () => {
    const small = model("gemma2:2b");
    const { error } = await collectUntilError(small.turn({ messages: ask, tools: [SEARCH] }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "tools-unsupported", status: 400 });
    expect((error as Error).message).toMatch(/'gemma2:2b' does not support tool calling/);
    expect(server.requestsTo("chat")).toHaveLength(1); // not retried
    // Also known to a new instance for the same server and model (the plugin makes new ones on settings changes).
    await expect(model("gemma2:2b").capabilities()).resolves.toMatchObject({ tools: false, contextLength: 8192 });
    // Without tools the same model answers normally.
    server.script({ route: "chat", reply: "Plain." });
    await expect(small.complete({ messages: ask })).resolves.toBe("Plain.");
  });

  it("a tools-unsupported verdict wins over a template that looks tool-capable", async () => {
    server.modelInfo["llama3.1:8b"] = { capabilities: ["completion", "tools"] };
    server.script({ route: "chat", status: 400, error: "registry.ollama.ai/library/llama3.1:8b does not support tools" });
    await collectUntilError(model().turn({ messages: ask, tools: [SEARCH] }));
    await expect(model().capabilities()).resolves.toMatchObject({ tools: false });
  });
});

describe("Ollama thinking, text and usage", () => {
  it("streams message.thinking and a leading <think> block as thinking, the rest as text, then usage", async () => {
    server.script({ route: "chat", reply: "Paris.", extra: { thinking: "The user asks about France.", usage: { prompt: 40, completion: 7 } } });
    const events = await collect(model("qwen3:8b").turn({ messages: ask }));
    expect(ofType(events, "thinking").map((e) => e.text).join("")).toBe("The user asks about France.");
    expect(ofType(events, "text").map((e) => e.text).join("")).toBe("Paris.");
    expect(events[events.length - 1]).toEqual({ type: "end", finishReason: "stop", usage: { promptTokens: 40, completionTokens: 7 } });

    server.script({ route: "chat", tokens: ["<think>", "plan", "</think>", "\n\nAnswer"] });
    const inline = await collect(model("qwen3:8b").turn({ messages: ask }));
    expect(inline.filter((e) => e.type !== "end")).toEqual([
      { type: "thinking", text: "plan" },
      { type: "text", text: "Answer" },
    ]);
    // stream()/complete() are views: text only.
    server.script({ route: "chat", reply: "Paris.", extra: { thinking: "hmm" } });
    await expect(model("qwen3:8b").complete({ messages: ask })).resolves.toBe("Paris.");
  });

  it("maps done_reason: length, and anything unknown to other", async () => {
    server.script([
      { route: "chat", reply: "cut", extra: { doneReason: "length" } },
      { route: "chat", reply: "x", extra: { doneReason: "unload" } },
    ]);
    expect((await collect(model().turn({ messages: ask }))).pop()).toMatchObject({ finishReason: "length" });
    expect((await collect(model().turn({ messages: ask }))).pop()).toMatchObject({ finishReason: "other" });
  });
});

describe("Ollama answers cut while thinking", () => {
  const thoughts = (n: number) => "hmm ".repeat(n);
  const endOf = (events: ChatEvent[]) => events[events.length - 1] as Extract<ChatEvent, { type: "end" }>;
  const capped = { messages: ask, maxTokens: 256 };

  it("cut before any answer text (message.thinking or a <think> block): the end event and complete()'s error say it was thinking, with the cap sent", async () => {
    server.script({ route: "chat", reply: "Paris.", extra: { thinking: thoughts(3000) } });
    const events = await collect(model("qwen3:8b").turn(capped));
    expect(ofType(events, "text")).toEqual([]);
    expect(endOf(events)).toMatchObject({ finishReason: "length", limit: 256 + OLLAMA_REASONING_ROOM, whileThinking: true });
    // The window had room to spare: nothing to raise.
    expect(endOf(events).moreRoom).toBeUndefined();

    server.script({ route: "chat", tokens: ["<think>", ...Array<string>(3000).fill("hmm "), "</think>", "Paris."] });
    const err = (await model("qwen3:8b").complete(capped).catch((e: unknown) => e)) as IncompleteAnswerError;
    expect(err).toMatchObject({ cut: "length", whileThinking: true, limit: 256 + OLLAMA_REASONING_ROOM });
    expect(err.message).toBe("the answer from ollama:qwen3:8b was cut off at the model's length limit while the model was still thinking");
  });

  it("a long think, then an answer cut short: thinking took most of the tokens, so it counts as thinking", async () => {
    server.script({ route: "chat", reply: "word ".repeat(1000), extra: { thinking: thoughts(2000) } });
    const events = await collect(model("qwen3:8b").turn(capped));
    expect(ofType(events, "text").length).toBeGreaterThan(0);
    expect(endOf(events)).toMatchObject({ finishReason: "length", whileThinking: true });
  });

  it("a short think, then a loop, is not: the answer used the tokens; nor is a model that does not think", async () => {
    server.script({ route: "chat", reply: "", extra: { thinking: "Plan the card.", loop: '{"front":"Q"},' } });
    const looped = endOf(await collect(model("qwen3:8b").turn(capped)));
    expect(looped).toMatchObject({ finishReason: "length", limit: 256 + OLLAMA_REASONING_ROOM });
    expect(looped.whileThinking).toBeUndefined();

    server.script({ route: "chat", reply: "", extra: { loop: "again " } });
    const err = (await model("gemma2:2b").complete(capped).catch((e: unknown) => e)) as IncompleteAnswerError;
    expect(err).toMatchObject({ cut: "length", whileThinking: false, limit: 256 });
    expect(err.message).not.toMatch(/thinking/);
  });

  it("when the context limit left less than the full room to think, the cut says how to give it more", async () => {
    // Flashcards from one part of a note (~2k tokens) with their 4,096-token budget, on an 8k context limit.
    const part: ChatMessage[] = [{ role: "user", content: `Write flashcards from:\n${"z".repeat(7200)}` }];
    server.script({ route: "chat", reply: "Q :: A", extra: { thinking: thoughts(8000) } });
    const end = endOf(await collect(model("qwen3:8b", 8192).turn({ messages: part, maxTokens: 4096 })));
    expect(end.limit).toBeLessThan(4096 + OLLAMA_REASONING_ROOM);
    expect(end).toMatchObject({ whileThinking: true, moreRoom: expect.stringMatching(/^raise Ollama context limit \(Settings → Models/) });
  });
});

describe("Ollama capabilities", () => {
  it("reads /api/show once per model: capabilities and the architecture's context length", async () => {
    await expect(model("qwen3:8b").capabilities()).resolves.toEqual({ tools: true, thinking: true, contextLength: 40_960 });
    await expect(model("qwen3:8b").capabilities()).resolves.toEqual({ tools: true, thinking: true, contextLength: 40_960 });
    expect(server.requestsTo("show")).toHaveLength(1);
    expect(server.requestsTo("show")[0].body).toEqual({ model: "qwen3:8b" });
    await expect(model("gemma2:2b").capabilities()).resolves.toEqual({ tools: false, thinking: false, contextLength: 8192 });
  });

  it("older Ollama without `capabilities`: the template decides", async () => {
    server.script({ route: "show", body: { template: "{{ if .Tools }}tools{{ end }}", model_info: { "general.architecture": "llama", "llama.context_length": 8192 } } });
    await expect(model().capabilities()).resolves.toEqual({ tools: true, contextLength: 8192 });
  });

  it("a missing model is a clear ProviderError", async () => {
    await expect(model("nope:1b").capabilities()).rejects.toMatchObject({ kind: "model-missing" });
  });
});

describe("num_ctx", () => {
  it("is always sent, for plain chat too: the floor for short prompts, without asking /api/show", async () => {
    server.script({ route: "chat", reply: "Hi.", times: 2 });
    await model().complete({ messages: ask, temperature: 0.2, topP: 0.9 });
    expect(bodyOf().options).toEqual({ num_ctx: 4096, temperature: 0.2, top_p: 0.9 });
    expect(server.requestsTo("show")).toHaveLength(0);
    // A capped answer asks once whether the model reasons (it would need room to think).
    await model().complete({ messages: ask, temperature: 0.2, maxTokens: 100, topP: 0.9 });
    expect(bodyOf(1).options).toEqual({ num_ctx: 4096, temperature: 0.2, num_predict: 100, top_p: 0.9 });
    expect(server.requestsTo("show")).toHaveLength(1);
  });

  it("an answer's cap is num_predict and the window keeps room for it; a reasoning model gets room to think on top", async () => {
    const note: ChatMessage[] = [{ role: "user", content: `Summarize:\n${"z".repeat(8000)}` }]; // ~2.3k tokens
    server.script({ route: "chat", reply: "ok", times: 3 });
    await model().complete({ messages: note });
    expect(bodyOf(0).options).toEqual({ num_ctx: 4096 }); // room for 1,024 tokens of answer by default
    await model().complete({ messages: note, maxTokens: 3072 });
    expect(bodyOf(1).options).toEqual({ num_ctx: 8192, num_predict: 3072 }); // 2.3k + 3,072 > 4096
    // qwen3 thinks (/api/show lists "thinking"): its thoughts count against num_predict too.
    await model("qwen3:8b").complete({ messages: ask, maxTokens: 256 });
    expect(bodyOf(2).options).toEqual({ num_ctx: 4096, num_predict: 256 + OLLAMA_REASONING_ROOM });
  });

  it("measures a prompt once per request (not again to fit it and size num_ctx), and num_ctx is what that measure asks for", async () => {
    // Each message's text is read once to measure it and once to send it.
    let reads = 0;
    const counted = (role: ChatMessage["role"], text: string): ChatMessage => ({
      role,
      get content() {
        reads++;
        return text;
      },
    });
    const note = [counted("system", "You help with notes."), counted("user", `Summarize:\n${"z".repeat(8000)}`)]; // ~2.3k tokens
    server.script({ route: "chat", reply: "ok", times: 2 });
    // qwen3 thinks: 2.3k + 3,072 + room to think (2,048) → 8192, the window it had before the measure was shared.
    await model("qwen3:8b").complete({ messages: note, maxTokens: 3072 });
    expect(bodyOf(0).options).toEqual({ num_ctx: 8192, num_predict: 3072 + OLLAMA_REASONING_ROOM });
    expect(reads).toBe(2 * note.length);
    // Uncapped, past the smallest window (the model's maximum is asked for): measured once all the same.
    reads = 0;
    const long = [counted("user", "x".repeat(14_000))]; // ~4k tokens + 1,024 of reply → 8192
    await model().complete({ messages: long });
    expect(bodyOf(1).options).toEqual({ num_ctx: 8192 });
    expect(reads).toBe(2 * long.length);
  });

  it("a reasoning model's room to think takes only what the window has left: it never fails or cuts a request that fits without it", async () => {
    // Flashcards from one part of a note (~2k tokens) with their 4,096-token budget, on an 8k context limit.
    const part: ChatMessage[] = [{ role: "user", content: `Write flashcards from:\n${"z".repeat(7200)}` }];
    const request = { messages: part, maxTokens: 4096 };
    const left = 8192 - estimateTokens(request);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(OLLAMA_REASONING_ROOM);
    server.script({ route: "chat", reply: "ok" });
    await model("qwen3:8b", 8192).complete(request);
    expect(bodyOf().options).toEqual({ num_ctx: 8192, num_predict: 4096 + left });
    expect(bodyOf().messages[0].content).toBe(part[0].content);
  });

  // deepseek-r1 on Ollama before 0.9 (or a qwq GGUF): it thinks in its content, and /api/show lists no "thinking".
  const thinker = (thoughts: number, answer: string) => ["<think>", ...Array<string>(thoughts).fill("hmm "), "</think>", answer];

  it("a model that thinks in its content without /api/show saying so: cut while thinking, it is asked again once with the room, and keeps it", async () => {
    server.script({ route: "chat", tokens: thinker(400, "Paris."), times: 3 });
    const events = await collect(model().turn({ messages: ask, maxTokens: 256 }));
    expect(server.requestsTo("chat").map((_, i) => bodyOf(i).options.num_predict)).toEqual([256, 256 + OLLAMA_REASONING_ROOM]);
    // The caller sees the answer that finished, its thinking once: the cut attempt is not passed on.
    expect(ofType(events, "thinking").map((e) => e.text).join("")).toBe("hmm ".repeat(400));
    expect(ofType(events, "text").map((e) => e.text).join("")).toBe("Paris.");
    expect(events[events.length - 1]).toMatchObject({ type: "end", finishReason: "stop" });
    // Learned for the server and model: the next capped request has the room from the start.
    await expect(model().complete({ messages: ask, maxTokens: 256 })).resolves.toBe("Paris.");
    expect(server.requestsTo("chat")).toHaveLength(3);
    expect(bodyOf(2).options.num_predict).toBe(256 + OLLAMA_REASONING_ROOM);
    await expect(model().capabilities()).resolves.toMatchObject({ thinking: true });
  });

  it("an answer cut once its text has begun is not asked again (that text is already out), but the model is known to think from then on", async () => {
    server.script({ route: "chat", tokens: ["<think>", "plan ", "</think>", ...Array<string>(300).fill("and so on ")], times: 2 });
    await expect(model().complete({ messages: ask, maxTokens: 256 })).rejects.toMatchObject({ cut: "length" });
    expect(server.requestsTo("chat")).toHaveLength(1);
    await model().complete({ messages: ask, maxTokens: 512 });
    expect(bodyOf(1).options.num_predict).toBe(512 + OLLAMA_REASONING_ROOM);
  });

  it("an uncapped answer that thinks teaches it too; a model that does not think is cut and never asked again", async () => {
    server.script({ route: "chat", tokens: thinker(3, "Hi."), times: 2 });
    await model().complete({ messages: ask });
    await model().complete({ messages: ask, maxTokens: 256 });
    expect(bodyOf(1).options.num_predict).toBe(256 + OLLAMA_REASONING_ROOM);

    server.script({ route: "chat", reply: "word ".repeat(300) });
    await expect(model("gemma2:2b").complete({ messages: ask, maxTokens: 256 })).rejects.toMatchObject({ cut: "length", limit: 256 });
    expect(server.requestsTo("chat")).toHaveLength(3);
  });

  it("grows with the prompt in powers of two, up to the setting, never above the model's maximum", async () => {
    const long: ChatMessage[] = [{ role: "system", content: "Rules. ".repeat(100) }, { role: "user", content: "x".repeat(30_000) }];
    server.script({ route: "chat", reply: "ok", times: 3 });
    await model().complete({ messages: long });
    expect(bodyOf(0).options.num_ctx).toBe(16_384); // ~9.8k tokens → 16384
    expect(server.requestsTo("show")).toHaveLength(1);
    await model("llama3.1:8b", 12_000).complete({ messages: long });
    expect(bodyOf(1).options.num_ctx).toBe(12_000); // the setting caps it
    server.models.push("mid:3b");
    server.modelInfo["mid:3b"] = { capabilities: ["completion"], contextLength: 10_240 };
    await model("mid:3b").complete({ messages: long });
    expect(bodyOf(2).options.num_ctx).toBe(10_240); // the model's maximum caps it
  });

  it("an Ollama that takes connections but never answers: a long prompt's /api/show is the one wait, the chat request is not sent", async () => {
    server.setDefault({ stall: true });
    const hung = new OllamaChatModel({ baseUrl: server.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 100, retry: FAST_RETRY });
    const long: ChatMessage[] = [ask[0], { role: "user", content: "x".repeat(30_000) }];
    await expect(hung.complete({ messages: long })).rejects.toMatchObject({ kind: "timeout", message: expect.stringMatching(/^Ollama did not answer within 1 s/) });
    expect(server.requests.map((r) => r.route)).toEqual(["show"]);
  });

  it("counts Japanese, Chinese and Korean at about a token per character, other non-Latin scripts at two characters: num_ctx holds the whole prompt", async () => {
    // About 6,000 tokens for any current tokenizer: at 3.5 characters per token it would get a 4,096 window,
    // and Ollama would cut the prompt's start (the system prompt and the question's context) without a word.
    const japanese: ChatMessage[] = [ask[0], { role: "user", content: "潮の満ち引きは月と太陽の引力によって起こります。".repeat(250) }];
    expect(japanese[1].content.length).toBe(6000);
    expect(numCtxFor(estimateTokens({ messages: japanese }), 16_384)).toBe(8192);
    // Russian: about 2 characters per token (3.5 would make 5,600 tokens of 20,000 characters, not 10,000).
    const russian: ChatMessage[] = [ask[0], { role: "user", content: "Приливы вызываются притяжением Луны и Солнца. ".repeat(435) }];
    expect(numCtxFor(estimateTokens({ messages: russian }), 16_384)).toBe(16_384);
    // Latin-script text is counted as before.
    expect(numCtxFor(estimateTokens({ messages: [ask[0], { role: "user", content: "Tides come from the moon. ".repeat(230) }] }), 16_384)).toBe(4096);
  });

  it("counts the tools and the reply budget, and the settings reach the model through the factory", async () => {
    const manyTools: ToolSpec[] = Array.from({ length: 60 }, (_, i) => ({ ...SEARCH, name: `tool_${i}`, description: "d".repeat(200) }));
    expect(estimateTokens({ messages: ask, tools: manyTools })).toBeGreaterThan(estimateTokens({ messages: ask }) + 3000);
    expect(numCtxFor(estimateTokens({ messages: ask, tools: manyTools }), 16_384)).toBe(8192);
    expect(numCtxFor(estimateTokens({ messages: ask, tools: manyTools, toolChoice: "none" }), 16_384)).toBe(4096);
    expect(numCtxFor(estimateTokens({ messages: ask, maxTokens: 10_000 }), 16_384)).toBe(16_384);
    expect(numCtxFor(estimateTokens({ messages: ask, maxTokens: 100_000 }), 16_384, 131_072)).toBe(16_384);

    const chat = createChatModel({ ...DEFAULT_SETTINGS, ollamaUrl: server.url, ollamaMaxContext: 6000 }, networkHost())!;
    server.script({ route: "chat", reply: "ok" });
    await chat.complete({ messages: [{ role: "user", content: "y".repeat(14_000) }] }); // ~5k tokens → 8192, capped
    expect(bodyOf().options.num_ctx).toBe(6000);
  });
});
