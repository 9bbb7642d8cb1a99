/**
 * Gemini's turn(): function declarations and calling modes, functionCall parts with thought signatures
 * echoed back verbatim (the loopback server rejects, like Gemini 3, a turn that lost one), function
 * responses with the call id, thoughts, usage and MALFORMED_FUNCTION_CALL — through the real
 * `@google/genai/web` SDK against the loopback Gemini server.
 */
import type { ChatEvent, ChatMessage, ToolSpec } from "../../../src/core/ports/chat-model";
import { GEMINI_MODEL_INFO_RETRY_MS, GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { FAST_RETRY, collect, collectUntilError, nodeFetch } from "./provider-fixtures";

const SEARCH: ToolSpec = {
  name: "search_notes",
  description: "Search the user's notes.",
  parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
};
const TIME: ToolSpec = { name: "get_current_time", description: "The current time.", parameters: { type: "object", properties: {} } };
const ask: ChatMessage[] = [
  { role: "system", content: "You help with notes." },
  { role: "user", content: "What do my notes say about tides?" },
];

type Part = { text?: string; thought?: boolean; thoughtSignature?: string; functionCall?: unknown; functionResponse?: unknown };
type Body = {
  contents: { role: string; parts: Part[] }[];
  tools?: unknown;
  toolConfig?: unknown;
};

let server: GeminiTestServer;
const model = (name = "gemini-2.5-flash") =>
  new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: name, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
const bodyOf = (i = 0) => server.requestsTo("stream")[i].body as Body;
const ofType = <T extends ChatEvent["type"]>(events: ChatEvent[], type: T) => events.filter((e): e is Extract<ChatEvent, { type: T }> => e.type === type);
const endOf = (events: ChatEvent[]) => events[events.length - 1] as Extract<ChatEvent, { type: "end" }>;

/** One agent step: the model's turn as the loop stores it, then the tool's result. */
function historyAfter(events: ChatEvent[], result: string): ChatMessage[] {
  const calls = ofType(events, "tool-call").map((e) => e.call);
  return [
    ...ask,
    { role: "assistant", content: ofType(events, "text").map((e) => e.text).join(""), toolCalls: calls, providerData: endOf(events).providerData },
    ...calls.map((c): ChatMessage => ({ role: "tool", content: result, toolCallId: c.id, toolName: c.name })),
  ];
}

beforeEach(async () => {
  server = await startGeminiServer({ requireThoughtSignatures: true });
});
afterEach(() => server.close());

describe("Gemini native function calling", () => {
  it("declares tools with parametersJsonSchema (required kept) and maps the tool choice to the calling mode", async () => {
    server.script({ route: "stream", reply: "ok", times: 3 });
    await model().complete({ messages: ask, tools: [SEARCH, TIME] });
    expect(bodyOf(0).tools).toEqual([
      {
        functionDeclarations: [
          { name: "search_notes", description: "Search the user's notes.", parametersJsonSchema: SEARCH.parameters },
          { name: "get_current_time", description: "The current time.", parametersJsonSchema: TIME.parameters },
        ],
      },
    ]);
    expect(bodyOf(0).toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    await model().complete({ messages: ask, tools: [SEARCH, TIME], toolChoice: "none" });
    expect(bodyOf(1).toolConfig).toEqual({ functionCallingConfig: { mode: "NONE" } });
    await model().complete({ messages: ask, tools: [SEARCH, TIME], toolChoice: { name: "search_notes" } });
    expect(bodyOf(2).toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["search_notes"] } });
  });

  it("functionCall parts become tool-call events (Gemini's id, else a made-up one); usage and finish reason", async () => {
    server.script({
      route: "stream",
      extra: {
        functionCalls: [
          { id: "fc-1", name: "search_notes", args: { query: "tides" }, thoughtSignature: "sig-A" },
          { name: "get_current_time", args: {} },
        ],
        usage: { prompt: 50, candidates: 10, thoughts: 5 },
      },
    });
    const events = await collect(model().turn({ messages: ask, tools: [SEARCH, TIME] }));
    expect(ofType(events, "tool-call").map((e) => e.call)).toEqual([
      { id: "fc-1", name: "search_notes", arguments: { query: "tides" } },
      { id: expect.stringMatching(/^call_/), name: "get_current_time", arguments: {} },
    ]);
    expect(endOf(events)).toMatchObject({ finishReason: "tool-calls", usage: { promptTokens: 50, completionTokens: 15 } });
  });

  it("echoes every model part back verbatim, signatures included, and answers with functionResponse parts", async () => {
    server.script({ route: "stream", extra: { functionCalls: [{ id: "fc-1", name: "search_notes", args: { query: "tides" }, thoughtSignature: "sig-A" }] } });
    const first = await collect(model().turn({ messages: ask, tools: [SEARCH] }));
    const modelParts = bodyOfFirstAnswer(first);
    expect(modelParts.some((p) => p.thoughtSignature === "sig-A" && p.functionCall)).toBe(true);

    server.script({ route: "stream", reply: "The moon causes tides." });
    const second = await collect(model().turn({ messages: historyAfter(first, "Ocean/Tides.md: the moon."), tools: [SEARCH] }));
    expect(ofType(second, "text").map((e) => e.text).join("")).toBe("The moon causes tides.");
    const contents = bodyOf(1).contents;
    expect(contents[1]).toEqual({ role: "model", parts: modelParts });
    expect(contents[2]).toEqual({
      role: "user",
      parts: [{ functionResponse: { id: "fc-1", name: "search_notes", response: { output: "Ocean/Tides.md: the moon." } } }],
    });
  });

  it("keeps a signature that arrives in a last text-less chunk", async () => {
    server.script({ route: "stream", reply: "Let me look.", extra: { functionCalls: [{ name: "search_notes", args: { query: "x" }, thoughtSignature: "sig-B" }], lastChunkSignature: "sig-END" } });
    const first = await collect(model().turn({ messages: ask, tools: [SEARCH] }));
    const parts = bodyOfFirstAnswer(first);
    expect(parts[parts.length - 1]).toEqual({ text: "", thoughtSignature: "sig-END" });

    server.script({ route: "stream", reply: "Done." });
    await collect(model().turn({ messages: historyAfter(first, "nothing found"), tools: [SEARCH] }));
    const echoed = bodyOf(1).contents[1].parts;
    expect(echoed.map((p) => p.thoughtSignature).filter(Boolean)).toEqual(["sig-B", "sig-END"]);
    // A call without a Gemini id is answered by name only (a made-up id means nothing to Gemini).
    expect(bodyOf(1).contents[2].parts[0]).toEqual({ functionResponse: { name: "search_notes", response: { output: "nothing found" } } });
  });

  it("the server rejects, like Gemini 3, a turn whose function call lost its signature; the provider error says why", async () => {
    server.script({ route: "stream", extra: { functionCalls: [{ id: "fc-1", name: "search_notes", args: { query: "tides" }, thoughtSignature: "sig-A" }] } });
    const first = await collect(model().turn({ messages: ask, tools: [SEARCH] }));
    const history = historyAfter(first, "r");
    // What a client that rebuilt the turn from text and calls would send: the signature is gone.
    const { providerData: _dropped, ...bare } = history[2];
    const lost = { ...bare, providerData: { provider: "gemini", parts: [{ functionCall: { id: "fc-1", name: "search_notes", args: { query: "tides" } } }] } };
    const { error } = await collectUntilError(model().turn({ messages: [...history.slice(0, 2), lost, ...history.slice(3)], tools: [SEARCH] }));
    expect(error).toMatchObject({ kind: "bad-response", status: 400 });
    expect((error as Error).message).toMatch(/missing a thought_signature/);
  });

  it("a turn made by another provider (model switched mid-conversation) carries Google's stand-in signature", async () => {
    server.script({ route: "stream", reply: "Tides come from the moon." });
    const fromOllama: ChatMessage[] = [
      ...ask,
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_1", name: "search_notes", arguments: { query: "tides" } },
          { id: "call_2", name: "get_current_time", arguments: {} },
        ],
      },
      { role: "tool", content: "r1", toolCallId: "call_1", toolName: "search_notes" },
      { role: "tool", content: "r2", toolCallId: "call_2", toolName: "get_current_time" },
    ];
    await expect(model().complete({ messages: fromOllama, tools: [SEARCH, TIME] })).resolves.toBe("Tides come from the moon.");
    expect(bodyOf(0).contents[1].parts).toEqual([
      { functionCall: { name: "search_notes", args: { query: "tides" } }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { name: "get_current_time", args: {} } },
    ]);
    expect(bodyOf(0).contents[2].parts).toHaveLength(2); // both results in one user turn
  });

  it("tool errors go back as an error response the model can correct itself from", async () => {
    server.requireThoughtSignatures = false;
    server.script({ route: "stream", reply: "Sorry." });
    await model().complete({
      messages: [
        ...ask,
        { role: "assistant", content: "", toolCalls: [{ id: "x", name: "read_note", arguments: {} }] },
        { role: "tool", content: "read_note needs a path", toolCallId: "x", toolName: "read_note", isError: true },
      ],
      tools: [SEARCH],
    });
    expect(bodyOf(0).contents[1]).toEqual({
      role: "model",
      parts: [{ functionCall: { name: "read_note", args: {} }, thoughtSignature: "skip_thought_signature_validator" }],
    });
    expect(bodyOf(0).contents[2].parts[0]).toEqual({ functionResponse: { name: "read_note", response: { error: "read_note needs a path" } } });
  });

  it("MALFORMED_FUNCTION_CALL ends the turn with finishReason malformed-tool-call", async () => {
    server.script({ route: "stream", reply: "", tokens: [], extra: { finishReason: "MALFORMED_FUNCTION_CALL" } });
    const events = await collect(model().turn({ messages: ask, tools: [SEARCH] }));
    expect(ofType(events, "tool-call")).toEqual([]);
    expect(endOf(events)).toMatchObject({ type: "end", finishReason: "malformed-tool-call" });
  });
});

describe("Gemini thoughts, text and capabilities", () => {
  it("thought parts are thinking; stream() and complete() give the text only", async () => {
    server.script({ route: "stream", reply: "Paris.", extra: { thoughts: "France's capital." } });
    const events = await collect(model().turn({ messages: ask }));
    expect(ofType(events, "thinking").map((e) => e.text).join("")).toBe("France's capital.");
    expect(ofType(events, "text").map((e) => e.text).join("")).toBe("Paris.");
    expect(endOf(events)).toMatchObject({ finishReason: "stop" });
    server.script({ route: "stream", reply: "Paris.", extra: { thoughts: "hmm" } });
    await expect(model().complete({ messages: ask })).resolves.toBe("Paris.");
  });

  it("MAX_TOKENS after thinking: thoughtsTokenCount (Gemini sends no thought parts unless asked) tells a cut spent thinking from one spent answering", async () => {
    const capped = { messages: ask, maxTokens: 256 };
    // The loopback server cuts at the maxOutputTokens sent, thinking included, as Gemini 2.5 does.
    server.script({ route: "stream", reply: "Paris.", extra: { thoughtTokens: 9000 } });
    const hidden = await collect(model().turn(capped));
    expect(ofType(hidden, "text")).toEqual([]);
    expect(endOf(hidden)).toMatchObject({ finishReason: "length", limit: 8192, whileThinking: true, usage: { completionTokens: 8192, thinkingTokens: 8192 } });
    expect(endOf(hidden).moreRoom).toBeUndefined();

    server.script({ route: "stream", reply: "Paris", extra: { thoughts: "France's capital is the question here.", thoughtTokens: 8190 } });
    await expect(model().complete(capped)).rejects.toMatchObject({ cut: "length", whileThinking: true, message: expect.stringMatching(/while the model was still thinking$/) });

    // A short think, then an answer that ran on (a loop).
    server.script({ route: "stream", extra: { thoughtTokens: 200, loop: "again " } });
    const looped = endOf(await collect(model().turn(capped)));
    expect(looped).toMatchObject({ finishReason: "length", limit: 8192, usage: { completionTokens: 8192, thinkingTokens: 200 } });
    expect(looped.whileThinking).toBeUndefined();
  });

  it("capabilities: tools, and the context length from the models endpoint (asked once)", async () => {
    await expect(model().capabilities()).resolves.toEqual({ tools: true, contextLength: 1_048_576 });
    await expect(model().capabilities()).resolves.toEqual({ tools: true, contextLength: 1_048_576 });
    expect(server.requestsTo("model")).toHaveLength(1);
    server.apiKey = "another-key";
    await expect(model("gemini-2.0-flash").capabilities()).resolves.toEqual({ tools: true });
  });
});

describe("Gemini models endpoint failures", () => {
  // Long enough to need the model's input limit, so each request asks the models endpoint for it.
  const long: ChatMessage[] = [{ role: "user", content: "tides ".repeat(4000) }];
  let time = 1_000_000;
  const clock = { ...nodeClock, now: () => time };
  const model = () => new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock, timeoutMs: 2_000, retry: FAST_RETRY });

  it("a failure is remembered for a while, so chat requests do not each wait for it; then it is asked again", async () => {
    server.script({ route: "model", status: 404, times: 1 });
    server.setDefault({ route: "stream", reply: "ok" });
    for (let i = 0; i < 3; i++) await expect(model().complete({ messages: long })).resolves.toBe("ok");
    expect(server.requestsTo("model")).toHaveLength(1);
    await expect(model().capabilities()).resolves.toEqual({ tools: true });
    expect(server.requestsTo("model")).toHaveLength(1);

    time += GEMINI_MODEL_INFO_RETRY_MS + 1; // the endpoint has recovered meanwhile
    await expect(model().complete({ messages: long })).resolves.toBe("ok");
    expect(server.requestsTo("model")).toHaveLength(2);
    await expect(model().capabilities()).resolves.toEqual({ tools: true, contextLength: 1_048_576 });
    expect(server.requestsTo("model")).toHaveLength(2);
  });

  it("a request stopped while it asks is not remembered as a failure", async () => {
    server.script({ route: "model", stall: true });
    const stop = new AbortController();
    const asked = model().capabilities(stop.signal);
    while (server.requestsTo("model").length === 0) await nodeClock.sleep(5);
    stop.abort();
    await expect(asked).rejects.toThrow();
    await expect(model().capabilities()).resolves.toEqual({ tools: true, contextLength: 1_048_576 });
    expect(server.requestsTo("model")).toHaveLength(2);
  });
});

/** The model parts of a finished turn, as stored in its end event. */
function bodyOfFirstAnswer(events: ChatEvent[]): Part[] {
  const data = endOf(events).providerData as { provider: string; parts: Part[] };
  expect(data.provider).toBe("gemini");
  return data.parts;
}
