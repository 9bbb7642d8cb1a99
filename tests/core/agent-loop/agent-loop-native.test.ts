/**
 * The loop with native tool calling through the real providers: Ollama (`tools` / `message.tool_calls`,
 * `role: "tool"` answers with `tool_name`) and Gemini (function declarations, functionCall parts whose
 * thought signatures must come back verbatim, functionResponse with the call id), each against its
 * loopback server.
 */
import { GeminiChatModel } from "../../../src/core/providers/gemini/gemini-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { DEFAULT_GEMINI_KEY, startGeminiServer, type GeminiTestServer } from "../../support/servers/gemini-server";
import { FAST_RETRY, nodeFetch } from "../providers/provider-fixtures";
import { makeLoopWorld, type LoopWorld } from "./agent-loop-fixtures";

const NOTES = { "Projects/Plan.md": "# Plan\n\nShip the agent mode." };

describe("native tool calling through the providers", () => {
  let world: LoopWorld;
  let gemini: GeminiTestServer | undefined;
  afterEach(async () => {
    await world?.close();
    await gemini?.close();
    gemini = undefined;
  });

  it("Ollama: tool_calls (split across chunks) run, results go back as tool messages, usage is summed", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.script([
      {
        route: "chat",
        extra: { toolCalls: [{ name: "read_note", arguments: { path: "Projects/Plan.md" } }], splitToolCalls: true, doneReason: "stop", usage: { prompt: 300, completion: 12 } },
        reply: "",
      },
      { route: "chat", reply: "Ship the agent mode.", extra: { usage: { prompt: 340, completion: 5 } } },
    ]);
    const { result, tokens } = await world.run("What is my plan?");

    expect(result.protocol).toBe("native");
    expect(result.answer).toBe("Ship the agent mode.");
    expect(tokens).toBe("Ship the agent mode.");
    expect(result.steps).toEqual([expect.objectContaining({ tool: expect.objectContaining({ name: "read_note", arguments: { path: "Projects/Plan.md" } }), outcome: "ok" })]);
    expect(result.usage).toEqual({ promptTokens: 640, completionTokens: 17 });
    const [first, second] = world.bodies() as { tools?: { function: { name: string; parameters: unknown } }[]; messages: { role: string; content: string; tool_name?: string }[] }[];
    expect(first.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(["read_note", "search_notes", "append_to_note"]));
    expect(JSON.stringify(first.tools)).not.toContain("vault_path");
    const tool = second.messages.find((m) => m.role === "tool");
    expect(tool).toMatchObject({ role: "tool", tool_name: "read_note", content: "# Plan\n\nShip the agent mode." });
    expect(second.messages.at(-1)!.content).toMatch(/^Write your answer in English/);
  });

  it("Ollama: an empty reply after a tool result (small models do this) is asked once more for the answer; empty again, a clear error", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    const readPlan = { route: "chat", reply: "", extra: { toolCalls: [{ name: "read_note", arguments: { path: "Projects/Plan.md" } }] } };
    world.ollama.script([readPlan, { route: "chat", tokens: [" ", "\n"] }, { route: "chat", reply: "Ship the agent mode." }]);
    const { result, tokens } = await world.run("What is my plan?");
    expect(result).toMatchObject({ answer: "Ship the agent mode.", endReason: "answer" });
    expect(tokens).toBe("Ship the agent mode.");
    expect(result.steps).toHaveLength(1);
    const retry = world.bodies()[2].messages;
    expect(retry.at(-2)).toMatchObject({ role: "user", content: expect.stringMatching(/^Your last reply was empty/) });
    expect(retry.at(-1)!.content).toMatch(/^Write your answer in English/);

    world.ollama.script([readPlan, { route: "chat", reply: "", times: 2 }]);
    await expect(world.run("What is my plan?")).rejects.toThrow(/^The model \(ollama:llama3\.1:8b\) returned an empty answer/);
    expect(world.bodies()).toHaveLength(6);
  });

  it("Ollama: a final answer cut at the length limit is an error saying so, not an answer", async () => {
    world = await makeLoopWorld({ files: NOTES, nativeTools: true });
    world.ollama.script({ route: "chat", reply: "Your plan is to ship", extra: { doneReason: "length" } });
    await expect(world.run("What is my plan?")).rejects.toThrow(/^the answer from ollama:llama3\.1:8b was cut off at the model's length limit$/);
  });

  it("Gemini behind an address that takes connections but never answers: one wait (the models endpoint's), no chat request", async () => {
    world = await makeLoopWorld({ files: NOTES });
    gemini = await startGeminiServer();
    gemini.setDefault({ stall: true });
    // Another model than the other tests': what the models endpoint said is remembered per model.
    world.model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.0-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 100, retry: FAST_RETRY });
    await expect(world.run("What is my plan?")).rejects.toThrow(/^Gemini did not answer within 1 s/);
    expect(gemini.requests.map((r) => r.route)).toEqual(["model"]);
  });

  it("Gemini: an answer stopped for safety is an error naming the reason, not 'an empty answer'", async () => {
    world = await makeLoopWorld({ files: NOTES });
    gemini = await startGeminiServer();
    world.model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    gemini.script({ route: "stream", tokens: [], extra: { finishReason: "SAFETY" } });
    await expect(world.run("What is my plan?")).rejects.toThrow(/gemini:gemini-2\.5-flash stopped without finishing its answer \(SAFETY\)/);
    expect(gemini.requestsTo("stream")).toHaveLength(1);
  });

  it("Gemini: an answer cut while the model was still thinking is an error saying so, not blamed on a loop", async () => {
    world = await makeLoopWorld({ files: NOTES });
    gemini = await startGeminiServer();
    world.model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    // Agent turns are uncapped: the loopback Gemini cuts at the model's own output limit (65,536), thinking included.
    gemini.script({ route: "stream", reply: "Ship it.", extra: { thoughtTokens: 70_000 } });
    await expect(world.run("What is my plan?")).rejects.toThrow(/^the answer from gemini:gemini-2\.5-flash was cut off at the model's length limit while the model was still thinking$/);
    expect((gemini.requestsTo("stream")[0].body as { generationConfig?: { maxOutputTokens?: number } }).generationConfig?.maxOutputTokens).toBeUndefined();
  });

  it("Gemini, JSON action protocol: replies cut while thinking get the thinking correction; cut so every time, the error says why", async () => {
    world = await makeLoopWorld({ files: NOTES });
    gemini = await startGeminiServer({ models: ["gemini-2.5-flash", "gemini-2.5-pro"] });
    // 2.5 Flash's correction is asked with thinkingBudget 0, and answers.
    const flash = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.5-flash", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    world.model = flash;
    gemini.script({ route: "stream", reply: '{"action":"final","response":"Ship it."}', extra: { thoughtTokens: 9_000 }, times: 2 });
    const { result } = await world.run("What is my plan?", { sampling: { maxTokens: 512 }, noNativeTools: new Set([flash.id]) });
    expect(result.answer).toBe("Ship it.");
    const thinking = gemini.requestsTo("stream").map((r) => (r.body as { generationConfig: { thinkingConfig?: unknown } }).generationConfig.thinkingConfig);
    expect(thinking).toEqual([undefined, { thinkingBudget: 0 }]);
    gemini.reset();

    // 2.5 Pro cannot stop thinking: cut every time.
    world.model = new GeminiChatModel({ apiKey: DEFAULT_GEMINI_KEY, baseUrl: gemini.url, model: "gemini-2.5-pro", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    // Capped as a workflow task's config.maxTokens caps each turn: 8,192 on Gemini, thinking included.
    gemini.script({ route: "stream", reply: '{"action":"final","response":"Ship it."}', extra: { thoughtTokens: 9_000 }, times: 3 });
    const run = world.run("What is my plan?", { sampling: { maxTokens: 512 }, noNativeTools: new Set([world.model.id]) });
    await expect(run).rejects.toThrow(
      "The model (gemini:gemini-2.5-pro) did not return a valid action (the model spent the length limit Krypton sets for the answer (8,192 tokens) thinking and was cut off before it finished answering), even after 2 corrections. Try again, or use a model that thinks less or not at all.",
    );
    const sent = gemini.requestsTo("stream").map((r) => r.body as { contents: { role: string; parts: { text?: string }[] }[] });
    expect(sent).toHaveLength(3);
    const lastTurn = sent[2].contents.at(-1)!.parts.map((p) => p.text).join("\n");
    expect(lastTurn).toMatch(/Your last reply ran out of room while you were still thinking/);
    expect(lastTurn).not.toMatch(/repeated itself/);

    // Uncapped (agent mode in chat), the cut is at the model's own limit: no number Krypton set is named.
    gemini.script({ route: "stream", reply: '{"action":"final","response":"Ship it."}', extra: { thoughtTokens: 70_000 }, times: 3 });
    await expect(world.run("What is my plan?", { noNativeTools: new Set([world.model.id]) })).rejects.toThrow(
      "did not return a valid action (the model spent its whole length limit thinking and was cut off before it finished answering), even after 2 corrections. Try again, or use a model that thinks less or not at all.",
    );
  });

  it("Gemini: thought signatures come back verbatim (the server rejects a turn that lost one), function responses carry the call id", async () => {
    world = await makeLoopWorld({ files: NOTES });
    gemini = await startGeminiServer({ requireThoughtSignatures: true });
    world.model = new GeminiChatModel({
      apiKey: DEFAULT_GEMINI_KEY,
      baseUrl: gemini.url,
      model: "gemini-2.5-flash",
      fetch: nodeFetch,
      clock: nodeClock,
      timeoutMs: 2_000,
      retry: FAST_RETRY,
    });
    gemini.script([
      { route: "stream", reply: "", extra: { functionCalls: [{ name: "read_note", args: { path: "Projects/Plan.md" }, id: "call-7", thoughtSignature: "sig-abc" }] } },
      { route: "stream", reply: "Ship the agent mode." },
    ]);
    const { result } = await world.run("What is my plan?", { secrets: [DEFAULT_GEMINI_KEY] });

    expect(result).toMatchObject({ protocol: "native", answer: "Ship the agent mode.", endReason: "answer" });
    expect(result.steps[0]).toMatchObject({ tool: { name: "read_note", callId: "call-7" }, outcome: "ok" });
    const second = gemini.requestsTo("stream")[1].body as { contents: { role: string; parts: Record<string, unknown>[] }[] };
    const modelTurn = second.contents.find((c) => c.role === "model")!;
    expect(modelTurn.parts).toEqual(expect.arrayContaining([expect.objectContaining({ functionCall: expect.objectContaining({ name: "read_note" }), thoughtSignature: "sig-abc" })]));
    const response = second.contents.flatMap((c) => c.parts).find((p) => p.functionResponse) as { functionResponse: { id?: string; name: string } };
    expect(response.functionResponse).toMatchObject({ id: "call-7", name: "read_note" });
    expect(JSON.stringify(result.exchange)).not.toContain(DEFAULT_GEMINI_KEY);
  });
});
