/**
 * A prompt that cannot fit the model's window fails before anything is sent, naming the tokens needed and
 * allowed and what to change; earlier turns and quoted material are what gives way, never the system
 * prompt, the tools or the question. Through the real providers against the loopback servers.
 */
import type { ChatEvent, ChatMessage, ToolSpec } from "../../../src/core/ports/chat-model";
import { ContextWindowError } from "../../../src/core/providers/context-fit";
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { collect, FAST_RETRY, nodeFetch } from "./provider-fixtures";

const TOOL: ToolSpec = { name: "read_note", description: "Returns a note's markdown.", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };

describe("fitting the prompt to Ollama's window", () => {
  let ollama: OllamaTestServer;
  beforeEach(async () => {
    ollama = await startOllamaServer({ models: ["llama3.1:8b", "small:1b"], modelInfo: { "small:1b": { contextLength: 4096 } } });
  });
  afterEach(() => ollama.close());
  const model = (name: string, maxContext?: number) =>
    new OllamaChatModel({ baseUrl: ollama.url, model: name, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, maxContext });
  type Body = { messages: { role: string; content: string }[]; tools?: unknown[]; options: { num_ctx: number } };

  it("a system prompt bigger than the limit fails with the tokens and the setting to change, and sends no chat request", async () => {
    const messages: ChatMessage[] = [{ role: "system", content: "Follow these rules. ".repeat(2000) }, { role: "user", content: "Hi" }];
    const error = await model("llama3.1:8b", 4096).complete({ messages }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextWindowError);
    expect(error).toMatchObject({ kind: "context-too-long", allowed: 4096 });
    expect((error as ContextWindowError).needed).toBeGreaterThan(4096);
    expect((error as Error).message).toMatch(/needs about 1[0-9],\d{3} tokens but its context window allows 4,096/);
    expect((error as Error).message).toContain("Ollama context limit (Settings → Models; KRYPTON_OLLAMA_MAX_CONTEXT");
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("when the model's own maximum is the bound, the error says so instead of pointing at the setting", async () => {
    const messages: ChatMessage[] = [{ role: "user", content: "y".repeat(30_000) }];
    const error = await model("small:1b").complete({ messages }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "context-too-long", allowed: 4096 });
    expect((error as Error).message).toContain("4,096 tokens is this model's own maximum");
    expect((error as Error).message).not.toContain("KRYPTON_OLLAMA_MAX_CONTEXT");
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("drops earlier turns oldest first, and only as many as needed", async () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "You are Krypton." },
      { role: "user", content: `old question ${"a".repeat(6000)}`, earlierTurn: true },
      { role: "assistant", content: `old answer ${"b".repeat(6000)}`, earlierTurn: true },
      { role: "user", content: `middle question ${"c".repeat(6000)}`, earlierTurn: true },
      { role: "assistant", content: "middle answer", earlierTurn: true },
      { role: "user", content: "recent question", earlierTurn: true },
      { role: "assistant", content: "recent answer", earlierTurn: true },
      { role: "user", content: "And now?" },
    ];
    ollama.script({ route: "chat", reply: "Now this." });
    await model("llama3.1:8b", 4096).complete({ messages });
    const sent = (ollama.requestsTo("chat")[0].body as Body).messages.map((m) => m.content.replace(/ [abc]+$/, ""));
    expect(sent).toEqual(["You are Krypton.", "middle question", "middle answer", "recent question", "recent answer", "And now?"]);
    // Oldest first even when short, until it fits; an answer left at the front goes with its question.
    const turns: ChatMessage[] = [
      { role: "system", content: "You are Krypton." },
      { role: "user", content: "first question", earlierTurn: true },
      { role: "assistant", content: "first answer", earlierTurn: true },
      { role: "user", content: `long question ${"d".repeat(12_000)}`, earlierTurn: true },
      { role: "assistant", content: "long answer", earlierTurn: true },
      { role: "user", content: "last question", earlierTurn: true },
      { role: "assistant", content: "last answer", earlierTurn: true },
      { role: "user", content: "And now?" },
    ];
    ollama.script({ route: "chat", reply: "Now this." });
    await model("llama3.1:8b", 4096).complete({ messages: turns });
    const again = (ollama.requestsTo("chat")[1].body as Body).messages.map((m) => m.content);
    expect(again).toEqual(["You are Krypton.", "last question", "last answer", "And now?"]);
  });

  it("then shortens tool results with a marker; the system prompt, tools, question and tool call arrive whole", async () => {
    const system = "You are Krypton. Use the tools.";
    const messages: ChatMessage[] = [
      { role: "system", content: system },
      { role: "user", content: "earlier question", earlierTurn: true },
      { role: "assistant", content: "earlier answer", earlierTurn: true },
      { role: "user", content: "What does Big say?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_note", arguments: { path: "Big.md" } }] },
      { role: "tool", content: `BEGIN ${"z".repeat(60_000)} END`, toolCallId: "c1", toolName: "read_note" },
      { role: "tool", content: "a short result stays whole", toolCallId: "c2", toolName: "read_note" },
    ];
    ollama.script({ route: "chat", reply: "It is big." });
    await model("llama3.1:8b", 8192).complete({ messages, tools: [TOOL] });
    const body = ollama.requestsTo("chat")[0].body as Body & { messages: { tool_calls?: unknown[] }[] };
    expect(body.options.num_ctx).toBe(8192);
    expect(body.tools).toHaveLength(1);
    const sent = body.messages.map((m) => m.content);
    expect(sent[0]).toBe(system);
    expect(sent).not.toContain("earlier question"); // earlier turns go before any result is cut
    expect(sent).toContain("What does Big say?");
    expect(body.messages[2].tool_calls).toHaveLength(1);
    expect(sent).toContain("a short result stays whole");
    const big = body.messages.find((m) => m.content.startsWith("BEGIN"))!;
    expect(big.content).toMatch(/\[… [\d,]+ of 60,010 characters cut here by Krypton to fit the model's context window …\]/);
    expect(big.content).not.toContain("END");
    expect(big.content.length).toBeGreaterThan(15_000); // cut to what fits, not to nothing
  });

  it("turn() reports what it cut, before the answer, so the user can be told; a request that fits reports nothing", async () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "You are Krypton." },
      { role: "user", content: `earlier question ${"e".repeat(9000)}`, earlierTurn: true },
      { role: "assistant", content: "earlier answer", earlierTurn: true },
      { role: "user", content: "What do the notes say?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_note", arguments: { path: "A.md" } }] },
      { role: "tool", content: "x".repeat(30_000), toolCallId: "c1", toolName: "read_note" },
      { role: "user", content: `Context: ${"y".repeat(30_000)}`, quoted: { start: 9, end: 30_009, kind: "excerpts" } },
    ];
    ollama.script([
      { route: "chat", reply: "Fitted." },
      { route: "chat", reply: "Whole." },
    ]);
    const events = await collect(model("llama3.1:8b", 8192).turn({ messages }));
    expect(events[0]).toMatchObject({ type: "fitted", fit: { model: "ollama:llama3.1:8b", tokens: 8192, droppedMessages: 2, shortened: { toolResults: 1, excerpts: 1 } } });
    // The event carries the messages as sent, for logs: what the server received.
    const sent = (ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages.map((m) => m.content);
    expect((events[0] as Extract<ChatEvent, { type: "fitted" }>).messages.map((m) => m.content)).toEqual(sent);
    expect(events.filter((e) => e.type === "text").map((e) => e.text)).toEqual(["Fitted."]);
    const whole = await collect(model("llama3.1:8b", 8192).turn({ messages: [{ role: "user", content: "Hi" }] }));
    expect(whole.some((e) => e.type === "fitted")).toBe(false);
  });
});

describe("fitting the prompt to Gemini's input limit", () => {
  let gemini: GeminiTestServer;
  beforeEach(async () => {
    gemini = await startGeminiServer({ inputTokenLimits: { "gemini-2.0-flash": 8192 } });
  });
  afterEach(() => gemini.close());

  it("a prompt over the model's inputTokenLimit fails before the stream is opened", async () => {
    const model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.0-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    const error = await model.complete({ messages: [{ role: "system", content: "s".repeat(40_000) }, { role: "user", content: "Hi" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "context-too-long", allowed: 8192 });
    expect((error as Error).message).toContain("gemini:gemini-2.0-flash");
    expect(gemini.requestsTo("stream")).toHaveLength(0);
  });

  it("turn() reports the earlier turns it left out to fit the input limit", async () => {
    const model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.0-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    gemini.script({ route: "stream", reply: "Fitted." });
    const messages: ChatMessage[] = [
      { role: "user", content: `old question ${"o".repeat(30_000)}`, earlierTurn: true },
      { role: "assistant", content: "old answer", earlierTurn: true },
      { role: "user", content: "And now?" },
    ];
    const events = await collect(model.turn({ messages }));
    expect(events[0]).toEqual({
      type: "fitted",
      fit: { model: "gemini:gemini-2.0-flash", tokens: 8192, droppedMessages: 2, shortened: { toolResults: 0, excerpts: 0 } },
      messages: [{ role: "user", content: "And now?" }],
    });
  });
});
