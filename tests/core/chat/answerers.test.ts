/**
 * The chat shell and its answerers: a new answerer plugs in without touching the shell, declining falls
 * through to the next, its events become the stored answer (steps included), Stop and an early consumer
 * exit close it, and conversation files written before `steps` existed still load and continue.
 */
import type { Answerer, AnswerTurn } from "../../../src/core/chat/answerer";
import { ChatService } from "../../../src/core/chat/chat-service";
import type { ChatEvent } from "../../../src/core/chat/chat-types";
import type { AgentStep } from "../../../src/core/chat/conversation-types";
import { AbortedError } from "../../../src/core/util/errors";
import { doneOf, makeChatHarness, ofType, type ChatHarness } from "./chat-fixtures";

let h: ChatHarness;
afterEach(async () => {
  await h?.cleanup();
});

const STEP: AgentStep = {
  thought: "I should look for notes on tides.",
  tool: { name: "search_notes", arguments: { query: "tides" }, callId: "call-1" },
  result: "Ocean/Tides.md: Tides are caused by the moon.",
  durationMs: 12,
  usage: { promptTokens: 120, completionTokens: 9 },
};

/** An answerer like the agent loop will be: steps, then the streamed answer. */
function scriptedAnswerer(log: string[], options: { decline?: (turn: AnswerTurn) => boolean; stopAfterStep?: AbortController } = {}): Answerer {
  return {
    name: "scripted",
    async *answer(turn) {
      log.push(`asked: ${turn.question} (history ${turn.history.length})`);
      if (options.decline?.(turn)) return null;
      try {
        yield { type: "step", step: STEP };
        if (options.stopAfterStep) {
          options.stopAfterStep.abort();
          throw new AbortedError();
        }
        for (const text of ["The moon ", "pulls the sea."]) yield { type: "token", text };
        return {};
      } finally {
        log.push("closed");
      }
    },
  };
}

describe("ChatService answerers", () => {
  it("an inserted answerer answers before plain chat; its events are the stored answer with its steps", async () => {
    const log: string[] = [];
    h = await makeChatHarness({}, { openIndex: false, deps: { answerers: (defaults) => [defaults[0], scriptedAnswerer(log), defaults[1]] } });
    const events = await h.send("Why are there tides?", { mode: "none" });
    expect(events.map((e) => e.type)).toEqual(["step", "token", "token", "done"]);
    expect(h.ollama.requestsTo("chat")).toHaveLength(0);
    const done = doneOf(events);
    expect(done).toMatchObject({ answer: "The moon pulls the sea.", stopped: false });
    const saved = await h.store.get(done.conversationId);
    expect(saved?.messages[1]).toMatchObject({ role: "assistant", content: "The moon pulls the sea.", steps: [STEP] });
    expect(log).toEqual(["asked: Why are there tides? (history 0)", "closed"]);
  });

  it("RAG chat on Ollama sends num_ctx sized to its prompt (the notes and system prompt are never cut)", async () => {
    h = await makeChatHarness({ "Ocean/Tides.md": `# Tides\n\n${"The moon pulls the sea. ".repeat(400)}` });
    h.ollama.script({ route: "chat", reply: "The moon [1]." });
    await h.send("Why are there tides and what does the moon do?", { mode: "rag" });
    const body = h.ollama.requestsTo("chat")[0].body as { options: { num_ctx: number }; messages: { content: string }[] };
    const promptChars = body.messages.reduce((n, m) => n + m.content.length, 0);
    expect(promptChars).toBeGreaterThan(0);
    expect(body.options.num_ctx).toBeGreaterThanOrEqual(4096);
    expect(body.options.num_ctx).toBeGreaterThan(promptChars / 3.5);
  });

  it("a declining answerer falls through to plain chat, which stores no steps", async () => {
    const log: string[] = [];
    h = await makeChatHarness({}, { openIndex: false, deps: { answerers: (defaults) => [defaults[0], scriptedAnswerer(log, { decline: () => true }), defaults[1]] } });
    h.ollama.script({ route: "chat", reply: "Plain answer." });
    const events = await h.send("Hello", { mode: "none" });
    expect(doneOf(events).answer).toBe("Plain answer.");
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages[1].steps).toBeUndefined();
    expect(log).toEqual(["asked: Hello (history 0)"]);
  });

  it("Stop in an answerer saves the partial answer with its steps, marked stopped", async () => {
    const stop = new AbortController();
    h = await makeChatHarness({}, { openIndex: false, deps: { answerers: () => [scriptedAnswerer([], { stopAfterStep: stop })] } });
    const events = await h.send("Why?", { mode: "none", signal: stop.signal });
    expect(events.map((e) => e.type)).toEqual(["step", "done"]);
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages[1]).toMatchObject({ stopped: true, steps: [STEP], content: "" });
    expect(saved?.messages[1].error).toBeUndefined();
  });

  it("a consumer that stops iterating closes the answerer and keeps the partial answer", async () => {
    const log: string[] = [];
    h = await makeChatHarness({}, { openIndex: false, deps: { answerers: () => [scriptedAnswerer(log)] } });
    const seen: ChatEvent[] = [];
    for await (const event of h.service.send("Why?", { mode: "none" })) {
      seen.push(event);
      if (event.type === "token") break;
    }
    expect(log).toContain("closed");
    const [summary] = await h.store.list();
    const saved = await h.store.get(summary.id);
    expect(saved?.messages[1]).toMatchObject({ content: "The moon ", stopped: true, steps: [STEP] });
  });

  it("an answerer that throws becomes one plain internal error, saved, with keys scrubbed", async () => {
    h = await makeChatHarness({}, { openIndex: false });
    h.settings.tavilyApiKey = "tvly-secret-key-123";
    const failing: Answerer = {
      name: "failing",
      // eslint-disable-next-line require-yield
      async *answer() {
        throw new Error("boom with tvly-secret-key-123");
      },
    };
    const service = new ChatService({
      host: h.host,
      settings: () => h.settings,
      index: h.index,
      chatModel: () => h.model,
      conversations: h.store,
      agents: () => [],
      answerers: () => [failing],
    });
    const events: ChatEvent[] = [];
    for await (const e of service.send("Hi", { mode: "none" })) events.push(e);
    const [error] = ofType(events, "error");
    expect(error).toMatchObject({ code: "internal", retryable: true });
    expect(error.message).toBe("boom with ***");
    const saved = await h.store.get(doneOf(events).conversationId);
    expect(saved?.messages[1].error).toBe("boom with ***");
  });
});

describe("conversation files from before steps existed", () => {
  it("load, show and continue; the new answer is appended next to the old ones", async () => {
    h = await makeChatHarness({}, { openIndex: false });
    // Exactly what an earlier Krypton wrote: no steps, no notices, assistant messages with sources.
    const old = {
      id: "c-old-1",
      title: "Tides",
      createdAt: 1_700_000_000_000,
      updatedAt: 1_700_000_100_000,
      messages: [
        { id: "m-1", role: "user", content: "What causes tides?", createdAt: 1_700_000_000_000, mode: "rag" },
        {
          id: "m-2",
          role: "assistant",
          content: "The moon [1].",
          createdAt: 1_700_000_100_000,
          mode: "rag",
          sources: [{ n: 1, kind: "note", path: "Ocean/Tides.md", title: "Tides", headings: [], startLine: 0, endLine: 2, snippet: "moon" }],
        },
      ],
    };
    await h.host.data.writeAtomic("chat/c-old-1.json", JSON.stringify(old, null, 1));
    const loaded = await h.store.get("c-old-1");
    expect(loaded?.messages.map((m) => m.steps)).toEqual([undefined, undefined]);

    h.ollama.script({ route: "chat", reply: "And the sun." });
    const events = await h.send("Anything else?", { mode: "none", conversationId: "c-old-1" });
    expect(doneOf(events)).toMatchObject({ conversationId: "c-old-1", answer: "And the sun." });
    const body = h.ollama.requestsTo("chat")[0].body as { messages: { role: string; content: string }[] };
    expect(body.messages.map((m) => m.content)).toEqual(expect.arrayContaining(["What causes tides?", "The moon [1]."]));
    const after = await h.store.get("c-old-1");
    expect(after?.messages.map((m) => m.content)).toEqual(["What causes tides?", "The moon [1].", "Anything else?", "And the sun."]);
  });

  it("a message whose steps are unreadable still loads, without the steps", async () => {
    h = await makeChatHarness({}, { openIndex: false });
    const file = {
      id: "c-odd-1",
      title: "Odd",
      createdAt: 1,
      updatedAt: 2,
      messages: [
        { id: "m-1", role: "user", content: "Q", createdAt: 1 },
        { id: "m-2", role: "assistant", content: "A", createdAt: 2, steps: "not a list" },
      ],
    };
    await h.host.data.writeAtomic("chat/c-odd-1.json", JSON.stringify(file));
    const loaded = await h.store.get("c-odd-1");
    expect(loaded?.messages.map((m) => [m.content, m.steps])).toEqual([["Q", undefined], ["A", undefined]]);
  });
});
