/**
 * Agent mode through the one chat pipeline (createKrypton → ChatService → AgentService → loop): a temp
 * vault, the Node host, the loopback Ollama server. What the chat view and the CLI rely on.
 */
import type { ChatEvent } from "../../../src/core/chat/chat-types";
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { recordingLogger } from "../chat/chat-fixtures";
import { call, final } from "./agent-loop-fixtures";

describe("ChatService in agent mode", () => {
  let vault: TempVault;
  let ollama: OllamaTestServer;
  let core: KryptonCore;
  let logger: ReturnType<typeof recordingLogger>;
  const settings = (patch: Partial<KryptonSettings> = {}): KryptonSettings => ({
    ...DEFAULT_SETTINGS,
    ollamaUrl: ollama.url,
    embeddingProvider: "none",
    requestTimeoutMs: 5000,
    geminiApiKey: "AIza-secret-gemini-key-for-tests",
    ...patch,
  });

  beforeEach(async () => {
    vault = await makeTempVault({ "Projects/Plan.md": "# Plan\n\nShip it." });
    ollama = await startOllamaServer({ modelInfo: { "llama3.1:8b": { capabilities: ["completion"] } } });
    logger = recordingLogger();
    core = createKrypton(createNodeHost(vault.root, { logger }), settings());
    await core.index.open();
  });
  afterEach(async () => {
    await core.close();
    await ollama.close();
    await vault.cleanup();
  });

  const send = async (text: string, options: { conversationId?: string; signal?: AbortSignal } = {}) => {
    const events: ChatEvent[] = [];
    for await (const e of core.chat.send(text, { mode: "rag", agent: true, ...options })) events.push(e);
    return events;
  };

  it("fixed agents still answer what they recognise; everything else goes to the loop, steps saved", async () => {
    ollama.script([
      { route: "chat", reply: call("read_note", { path: "Projects/Plan.md" }) },
      { route: "chat", reply: final("Ship it, says [[Projects/Plan]].") },
    ]);
    const events = await send("What does my plan say?");
    const done = events.at(-1) as Extract<ChatEvent, { type: "done" }>;
    expect(done.answer).toBe("Ship it, says [[Projects/Plan]].");
    expect(events.filter((e) => e.type === "step")).toHaveLength(1);
    const stored = await core.conversations.get(done.conversationId);
    expect(stored!.messages.at(-1)).toMatchObject({ role: "assistant", content: done.answer, steps: [expect.objectContaining({ tool: expect.objectContaining({ name: "read_note" }), outcome: "ok" })] });
    expect(core.agent.lastTurn(done.conversationId)!.steps).toHaveLength(1);

    // A recognised request ("find notes about …") is the search agent's, not the loop's.
    ollama.reset();
    const search = await send("find notes about plan", { conversationId: done.conversationId });
    expect(search.some((e) => e.type === "agent")).toBe(true);
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("a loop failure is an error event in plain words with no key, saved with its steps", async () => {
    ollama.script([
      { route: "chat", reply: call("list_notes", {}) },
      { route: "chat", status: 500, times: 3 },
    ]);
    const events = await send("List my notes");
    const error = events.find((e) => e.type === "error") as Extract<ChatEvent, { type: "error" }>;
    expect(error.message).toMatch(/Ollama/);
    const done = events.at(-1) as Extract<ChatEvent, { type: "done" }>;
    const stored = await core.conversations.get(done.conversationId);
    expect(stored!.messages.at(-1)).toMatchObject({ error: error.message, steps: [expect.objectContaining({ tool: expect.objectContaining({ name: "list_notes" }) })] });
    expect(JSON.stringify(events) + logger.lines.join("\n")).not.toContain("AIza-secret-gemini-key-for-tests");
  });

  it("Stop keeps the partial turn as stopped, with the steps so far", async () => {
    ollama.script([
      { route: "chat", reply: call("list_notes", {}) },
      { route: "chat", stall: true },
    ]);
    const stop = new AbortController();
    const events: ChatEvent[] = [];
    for await (const e of core.chat.send("List my notes", { mode: "rag", agent: true, signal: stop.signal })) {
      events.push(e);
      if (e.type === "step") stop.abort();
    }
    const done = events.at(-1) as Extract<ChatEvent, { type: "done" }>;
    expect(done.stopped).toBe(true);
    const stored = await core.conversations.get(done.conversationId);
    expect(stored!.messages.at(-1)).toMatchObject({ stopped: true, steps: [expect.objectContaining({ tool: expect.objectContaining({ name: "list_notes" }) })] });
  });

  it("no chat model: a clear not-configured error, nothing sent", async () => {
    core.applySettings(settings({ chatProvider: "gemini", chatModel: "gemini-2.5-flash", geminiApiKey: "" }));
    const events = await send("Anything");
    const error = events.find((e) => e.type === "error") as Extract<ChatEvent, { type: "error" }>;
    expect(error.code).toBe("not-configured");
    expect(error.message).toMatch(/Gemini/);
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });
});
