/**
 * askJson against the loopback Ollama and Gemini servers: the schema travels as structured output, lenient
 * parsing, exactly one repair request, and a clear AgentError (nothing else) when the model never complies.
 */
import { z } from "zod";
import { askJson, extractJsonText, jsonSchemaOf, parseAgainst } from "../../../src/core/model/ask-json";
import { AgentError } from "../../../src/core/notes/agent-error";
import { GEMINI_CAPPED_OUTPUT } from "../../../src/core/providers/answer-room";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { FAST_RETRY, nodeFetch } from "../providers/provider-fixtures";

const Cards = z.object({ cards: z.array(z.object({ front: z.string(), back: z.string(), source: z.number().int() })) });
const ask = [{ role: "user" as const, content: "Make one card." }];

describe("askJson over Ollama", () => {
  let server: OllamaTestServer;
  const model = () => new OllamaChatModel({ baseUrl: server.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
  beforeEach(async () => {
    server = await startOllamaServer();
  });
  afterEach(() => server.close());

  it("sends the JSON schema as `format` and returns the validated value", async () => {
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [{ front: "Q", back: "A", source: 1 }] });
    const body = server.requestsTo("chat")[0].body as { format: Record<string, unknown>; options: { temperature: number } };
    expect(body.format).toMatchObject({ type: "object", required: ["cards"] });
    expect(body.format.$schema).toBeUndefined();
    expect(body.options.temperature).toBe(0);
  });

  it("accepts JSON wrapped in reasoning, prose and a code fence", async () => {
    server.script({ route: "chat", reply: '<think>hmm {not this}</think>Sure! ```json\n{"cards":[{"front":"Q {1}","back":"A","source":2}]}\n``` done' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [{ front: "Q {1}", back: "A", source: 2 }] });
  });

  it("asks for one repair naming the problem, then succeeds", async () => {
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A"}]}' });
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [{ front: "Q", back: "A", source: 1 }] });
    const repair = server.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] };
    expect(repair.messages).toHaveLength(3);
    expect(repair.messages[2].content).toMatch(/cards\.0\.source/);
  });

  it("an answer cut off at the length limit gets a repair that says so, and the error names the cut", async () => {
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}', extra: { doneReason: "length" } });
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","so', extra: { doneReason: "length" } });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/^Could not make cards: .*cut off/);
    const repair = server.requestsTo("chat")[1].body as { messages: { role: string; content: string }[] };
    // The question again, with the note in the same message; the cut answer is not sent back.
    expect(repair.messages).toHaveLength(1);
    expect(repair.messages[0].content).toMatch(/^Make one card\.\n\nYour previous reply to this was cut off .*much shorter/s);
    expect(repair.messages[0].content).not.toContain('"front":"Q"');
  });

  it("a model stuck in a loop: both requests are capped at the budget, the loop is not sent back, and the error says why", async () => {
    server.script({ route: "chat", reply: "", times: 2, extra: { loop: '{"front":"Q","back":"A","source":1},' } });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 300 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      "Could not make cards: the model did not return valid JSON (it was cut off at the length limit Krypton sets for it (300 tokens), often a sign of a model repeating itself), even after one correction. Try again or use a larger model.",
    );
    const [first, second] = server.requestsTo("chat").map((r) => r.body as { messages: { content: string }[]; options: Record<string, number> });
    expect(first.options).toMatchObject({ num_predict: 300, num_ctx: 4096 });
    expect(second.options).toMatchObject({ num_predict: 300, num_ctx: 4096 });
    expect(JSON.stringify(second.messages)).not.toContain('"back":"A"');
  });

  describe("a reasoning model that spends its tokens thinking", () => {
    const thinker = () => new OllamaChatModel({ baseUrl: server.url, model: "qwen3:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    const longThought = { thinking: "Let me think about the card. ".repeat(500) };
    beforeEach(() => {
      server.models = [...server.models, "qwen3:8b"];
      server.modelInfo["qwen3:8b"] = { capabilities: ["completion", "tools", "thinking"] };
    });
    const bodies = () => server.requestsTo("chat").map((r) => r.body as { messages: { content: string }[]; options: Record<string, number>; think?: unknown });

    it("its repair asks for the JSON at once, with thinking off (think: false), not for a shorter answer as if it had looped", async () => {
      // The same model both times: with think: false the server, like Ollama, sends no thinking, so the JSON fits.
      server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}', extra: longThought, times: 2 });
      await expect(askJson(thinker(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [{ front: "Q", back: "A", source: 1 }] });
      const [first, second] = bodies();
      expect(first.think).toBeUndefined();
      expect(second.think).toBe(false);
      expect(second.messages[0].content).toMatch(/^Make one card\.\n\nYour previous reply to this ran out of room while you were still thinking.*reply at once with only the JSON/s);
      expect(second.messages[0].content).not.toMatch(/repeated|much shorter/);
    });

    it("cut thinking twice (it thinks in its content, whatever think says): the error says the model spent the cap thinking and what to do, not to use a larger model", async () => {
      server.script({ route: "chat", tokens: ["<think>", ...Array<string>(3_000).fill("hmm "), "</think>", '{"cards":[]}'], times: 2 });
      const err = await askJson(thinker(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
      expect((err as Error).message).toBe(
        "Could not make cards: the model did not return valid JSON (the model spent the length limit Krypton sets for the answer (2,560 tokens) thinking and was cut off before it finished answering), even after one correction. Try again, or use a model that thinks less or not at all.",
      );
    });

    it("a model /api/show does not list as thinking (it thinks in its content) is never sent `think`: Ollama 0.9 to 0.12.4 refuse it with a 400", async () => {
      // Cut inside <think>: the provider's own retry with room to think, cut again; then askJson's repair.
      server.script({ route: "chat", tokens: ["<think>", ...Array<string>(3_000).fill("hmm "), "</think>", '{"cards":[]}'], times: 2 });
      server.script({ route: "chat", reply: '{"cards":[]}' });
      await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
      expect(bodies()).toHaveLength(3);
      expect(bodies().map((b) => b.think)).toEqual([undefined, undefined, undefined]);
      expect(bodies()[2].messages[0].content).toMatch(/still thinking/);
    });

    it("a thinking model that looped after a short think gets the loop repair, with thinking off as every repair", async () => {
      server.script({ route: "chat", reply: "", extra: { thinking: "Plan.", loop: '{"front":"Q"},' } });
      server.script({ route: "chat", reply: '{"cards":[]}' });
      await askJson(thinker(), ask, Cards, { what: "make cards", maxTokens: 512 });
      expect(bodies()[0].think).toBeUndefined();
      expect(bodies()[1].think).toBe(false);
      expect(bodies()[1].messages[0].content).toMatch(/much shorter/);
    });
  });

  it("a budget larger than a small window leaves: the cap gives way (not below 1,024), the call runs, and a cut names the cap sent", async () => {
    // Ollama context limit 4096 (a small machine), a 4,096-token budget (flashcards) and a ~1,700-token prompt.
    const small = () => new OllamaChatModel({ baseUrl: server.url, model: "llama3.1:8b", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY, maxContext: 4096 });
    const long = [{ role: "user" as const, content: `Make cards from: ${"word ".repeat(1_200)}` }];
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}' });
    await expect(askJson(small(), long, Cards, { what: "make cards", maxTokens: 4096 })).resolves.toEqual({ cards: [{ front: "Q", back: "A", source: 1 }] });
    const sent = (server.requestsTo("chat")[0].body as { options: { num_ctx: number; num_predict: number } }).options;
    expect(sent.num_ctx).toBe(4096);
    expect(sent.num_predict).toBeGreaterThanOrEqual(1024);
    expect(sent.num_predict).toBeLessThan(4096 - 1_700);

    server.script({ route: "chat", reply: "", times: 2, extra: { loop: '{"front":"Q","back":"A","source":1},' } });
    const err = await askJson(small(), long, Cards, { what: "make cards", maxTokens: 4096 }).catch((e: unknown) => e);
    // The error is about the repair request's answer: its (longer) prompt left a little less room.
    const capSent = (server.requestsTo("chat")[2].body as { options: { num_predict: number } }).options.num_predict;
    expect((err as Error).message).toContain(`the length limit Krypton sets for it (${capSent.toLocaleString("en-US")} tokens)`);

    // A prompt that leaves less than 1,024 tokens fails before anything is sent, as before budgets.
    const longer = [{ role: "user" as const, content: `Make cards from: ${"word ".repeat(2_400)}` }];
    const before = server.requestsTo("chat").length;
    await expect(askJson(small(), longer, Cards, { what: "make cards", maxTokens: 4096 })).rejects.toThrow(/context window allows 4,096/);
    expect(server.requestsTo("chat")).toHaveLength(before);
  });

  it("a complete JSON answer that still says done_reason \"length\" is not trusted", async () => {
    // A closed object cut at the limit may have lost whatever came after it (more cards): one repair, then it counts.
    server.script({ route: "chat", reply: '{"cards":[]}', extra: { doneReason: "length" } });
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [{ front: "Q", back: "A", source: 1 }] });
    expect(server.requestsTo("chat")).toHaveLength(2);
  });

  it("every request, the longer repair too, carries a num_ctx that fits it", async () => {
    const long = [{ role: "user" as const, content: `Make cards from: ${"word ".repeat(2_000)}` }];
    // Invalid but not cut (one chunk, so within num_predict): the repair sends it back, so the repair is the longer prompt.
    server.script({ route: "chat", tokens: [`{"cards":[{"front":"${"Q ".repeat(4_000)}`] });
    server.script({ route: "chat", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}' });
    await askJson(model(), long, Cards, { what: "make cards", maxTokens: 512 });
    const [first, second] = server.requestsTo("chat").map((r) => r.body as { messages: { content: string }[]; format: unknown; options: { num_ctx: number } });
    for (const body of [first, second]) {
      const chars = body.messages.reduce((n, m) => n + m.content.length, 0) + JSON.stringify(body.format).length;
      expect(body.options.num_ctx).toBeGreaterThanOrEqual(Math.ceil(chars / 3.5) + 512);
    }
    expect(second.options.num_ctx).toBeGreaterThan(first.options.num_ctx);
  });

  it("gives up after one repair with an AgentError that says what was asked", async () => {
    server.script({ route: "chat", reply: "I cannot do that." });
    server.script({ route: "chat", reply: "{broken" });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/^Could not make cards: the model did not return valid JSON/);
    expect(server.requestsTo("chat")).toHaveLength(2);
  });
});

describe("askJson over Gemini", () => {
  let server: GeminiTestServer;
  beforeEach(async () => {
    server = await startGeminiServer();
  });
  afterEach(() => server.close());

  it("sends responseJsonSchema with responseMimeType application/json", async () => {
    server.script({ route: "stream", reply: '{"cards":[]}' });
    const model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    await expect(askJson(model, ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    const body = server.requestsTo("stream")[0].body as { generationConfig: Record<string, unknown> };
    expect(body.generationConfig.responseMimeType).toBe("application/json");
    expect(body.generationConfig.responseJsonSchema).toMatchObject({ type: "object" });
    // The answer is capped, with room for Gemini's thinking, which counts against maxOutputTokens.
    expect(body.generationConfig.maxOutputTokens).toBe(GEMINI_CAPPED_OUTPUT);
    // A budget above that is sent as it is.
    server.script({ route: "stream", reply: '{"cards":[]}' });
    await askJson(model, ask, Cards, { what: "make cards", maxTokens: 20_000 });
    expect((server.requestsTo("stream")[1].body as { generationConfig: Record<string, unknown> }).generationConfig.maxOutputTokens).toBe(20_000);
  });
});

describe("askJson over Gemini: the repair is asked with thinking down, as far as the model allows", () => {
  let server: GeminiTestServer;
  beforeEach(async () => {
    server = await startGeminiServer({ models: ["gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro", "gemini-3-pro-preview", "gemini-3-flash-preview"] });
  });
  afterEach(() => server.close());
  const thinkingConfigs = () => server.requestsTo("stream").map((r) => (r.body as { generationConfig: { thinkingConfig?: unknown } }).generationConfig.thinkingConfig);

  it.each([
    ["gemini-2.5-flash", { thinkingBudget: 0 }],
    ["gemini-2.5-flash-lite", { thinkingBudget: 0 }],
    ["gemini-3-pro-preview", { thinkingLevel: "LOW" }],
    ["gemini-3-flash-preview", { thinkingLevel: "LOW" }],
    // 2.5 Pro cannot stop thinking: budget 0 would be refused (400), so it is asked as usual.
    ["gemini-2.5-pro", undefined],
  ])("%s: the first request thinks as usual, the repair is sent %j", async (name, repairConfig) => {
    server.script({ route: "stream", reply: "{broken" });
    server.script({ route: "stream", reply: '{"cards":[]}' });
    const model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: name, fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    await expect(askJson(model, ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    expect(thinkingConfigs()).toEqual([undefined, repairConfig]);
  });

  it("a repair with thinking off is answered without the thinking that cut the first answer", async () => {
    // 2.5 Flash spends the cap thinking; with thinkingBudget 0 the same model answers at once.
    server.script({ route: "stream", reply: '{"cards":[]}', times: 2, extra: { thoughtTokens: GEMINI_CAPPED_OUTPUT + 100 } });
    const model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    await expect(askJson(model, ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    expect(thinkingConfigs()).toEqual([undefined, { thinkingBudget: 0 }]);
  });
});

describe("askJson over Gemini: answers that stop early", () => {
  let server: GeminiTestServer;
  const model = () => new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
  beforeEach(async () => {
    server = await startGeminiServer();
  });
  afterEach(() => server.close());

  it.each(["SAFETY", "RECITATION", "PROHIBITED_CONTENT"])("finishReason %s: a clear error naming it, no repair request", async (reason) => {
    server.script({ route: "stream", reply: '{"cards":[{"front":"Q","back":"A","source":1}]}', extra: { finishReason: reason } });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(new RegExp(`^Could not make cards: .*${reason}`));
    expect(server.requestsTo("stream")).toHaveLength(1);
  });

  it("a blocked prompt (no candidates, promptFeedback.blockReason): a clear error, no repair request", async () => {
    server.script({ route: "stream", extra: { blockReason: "SAFETY" } });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as Error).message).toMatch(/^Could not make cards: .*blocked.*SAFETY/);
    expect(server.requestsTo("stream")).toHaveLength(1);
  });

  // A model stuck in a loop writes one card again and again until the cap Gemini was sent stops it.
  const looping = { loop: '{"front":"Q","back":"A","source":1},' };

  it("a cut at MAX_TOKENS twice names the cap Gemini was sent (8,192 with room to think), not the budget", async () => {
    server.script({ route: "stream", times: 2, extra: looping });
    const err = await askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`the length limit Krypton sets for it (${GEMINI_CAPPED_OUTPUT.toLocaleString("en-US")} tokens)`);
    expect(server.requestsTo("stream").map((r) => (r.body as { generationConfig: { maxOutputTokens: number } }).generationConfig.maxOutputTokens)).toEqual([GEMINI_CAPPED_OUTPUT, GEMINI_CAPPED_OUTPUT]);
  });

  it("finishReason MAX_TOKENS is a cut: one repair that says so", async () => {
    server.script({ route: "stream", extra: looping });
    server.script({ route: "stream", reply: '{"cards":[]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    expect(server.requestsTo("stream")).toHaveLength(2);
    expect(server.requestsTo("stream")[1].userText).toMatch(/cut off .*repeated itself/);
  });

  it("a server that says MAX_TOKENS on its own (a proxy's cap, below Krypton's) is a cut all the same", async () => {
    server.script({ route: "stream", reply: '{"cards":[{"front":"Q"', extra: { finishReason: "MAX_TOKENS" } });
    server.script({ route: "stream", reply: '{"cards":[]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    expect(server.requestsTo("stream")[1].userText).toMatch(/cut off/);
  });

  it("MAX_TOKENS with the tokens spent thinking (thoughtsTokenCount): the repair asks for the JSON at once; a model cut so twice, the error says why", async () => {
    // Gemini thinks without sending its thoughts (Krypton does not ask for them), past the cap.
    const overthinking = { thoughtTokens: GEMINI_CAPPED_OUTPUT + 100 };
    server.script({ route: "stream", reply: '{"cards":[]}', extra: overthinking });
    server.script({ route: "stream", reply: '{"cards":[]}' });
    await expect(askJson(model(), ask, Cards, { what: "make cards", maxTokens: 512 })).resolves.toEqual({ cards: [] });
    const repair = server.requestsTo("stream")[1].userText;
    expect(repair).toMatch(/ran out of room while you were still thinking/);
    expect(repair).not.toMatch(/repeated|much shorter/);

    // 2.5 Pro cannot stop thinking (2.5 Flash's repair has thinkingBudget 0): it can be cut so twice.
    server.models = [...server.models, "gemini-2.5-pro"];
    server.script({ route: "stream", reply: '{"cards":[]}', times: 2, extra: overthinking });
    const pro = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: server.url, model: "gemini-2.5-pro", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    const err = await askJson(pro, ask, Cards, { what: "make cards", maxTokens: 512 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(
      `Could not make cards: the model did not return valid JSON (the model spent the length limit Krypton sets for the answer (${GEMINI_CAPPED_OUTPUT.toLocaleString("en-US")} tokens) thinking and was cut off before it finished answering), even after one correction. Try again, or use a model that thinks less or not at all.`,
    );
  });
});

describe("JSON helpers", () => {
  it("extractJsonText finds the first balanced value and respects strings", () => {
    expect(extractJsonText('x {"a":"}"} y {"b":1}')).toBe('{"a":"}"}');
    expect(extractJsonText("[1,[2]] tail")).toBe("[1,[2]]");
    expect(extractJsonText("no json")).toBeNull();
    expect(extractJsonText('{"a": [1}')).toBeNull();
  });
  it("parseAgainst reports zod paths", () => {
    expect(parseAgainst('{"cards":[{"front":1}]}', Cards)).toMatchObject({ ok: false, problem: expect.stringMatching(/cards\.0\.front/) });
    expect(jsonSchemaOf(Cards)).toBe(jsonSchemaOf(Cards));
  });
});
