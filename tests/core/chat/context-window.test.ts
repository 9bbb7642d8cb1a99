/**
 * The prompt fits the model's window through the whole pipeline (createKrypton → ChatService → answerers
 * → provider): what the loopback Ollama receives keeps the system prompt, the tools and the question;
 * earlier turns go first, then long tool results are cut with a marker; what cannot fit is an error
 * before anything is sent.
 */
import type { ChatEvent } from "../../../src/core/chat/chat-types";
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { call, final } from "../agent-loop/agent-loop-fixtures";

type Body = { messages: { role: string; content: string }[]; tools?: { function: { name: string } }[]; options: { num_ctx: number } };

const NOTES = ["Big1", "Big2", "Big3", "Big4", "Big5"];
const fitNotices = (events: ChatEvent[]) => events.filter((e): e is Extract<ChatEvent, { type: "notice" }> => e.type === "notice" && e.code === "context-fitted");
const CUT_MARKER = /\[… [\d,]+ of [\d,]+ characters cut here by Krypton to fit the model's context window …\]/;

describe("the prompt fits the model's window", () => {
  let vault: TempVault;
  let ollama: OllamaTestServer;
  let core: KryptonCore;

  const start = async (patch: Partial<KryptonSettings>, nativeTools = true, files: Record<string, string> = {}) => {
    // Each result is clipped to the toolbox's 12,000 characters; five of them outgrow a 16k window.
    const notes = Object.fromEntries(NOTES.map((n) => [`${n}.md`, `# ${n}\n\nBEGIN ${"word ".repeat(30_000)}END`]));
    vault = await makeTempVault({ ...notes, ...files });
    ollama = await startOllamaServer(nativeTools ? {} : { modelInfo: { "llama3.1:8b": { capabilities: ["completion"] } } });
    core = createKrypton(createNodeHost(vault.root), { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingProvider: "none", requestTimeoutMs: 5000, ...patch });
    await core.index.open();
  };
  afterEach(async () => {
    await core.close();
    await ollama.close();
    await vault.cleanup();
  });
  const send = async (text: string, options: { agent?: boolean; conversationId?: string; mode?: "none" | "rag" } = {}) => {
    const events: ChatEvent[] = [];
    for await (const e of core.chat.send(text, { mode: "none", ...options })) events.push(e);
    return events;
  };
  const bodies = () => ollama.requestsTo("chat").map((r) => r.body as Body);

  it.each([
    ["native tool calls", true],
    ["the JSON action protocol", false],
  ])("agent mode (%s): long tool results are cut with a marker; system prompt, tools and question arrive whole", async (_name, native) => {
    await start({}, native);
    ollama.script(
      native
        ? [
            { route: "chat", reply: "", extra: { toolCalls: NOTES.map((n) => ({ name: "read_note", arguments: { path: `${n}.md` } })) } },
            { route: "chat", reply: "They are long." },
          ]
        : [...NOTES.map((n) => ({ route: "chat" as const, reply: call("read_note", { path: `${n}.md` }) })), { route: "chat", reply: final("They are long.") }],
    );
    const events = await send("What do my Big notes say?", { agent: true });
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    const first = bodies()[0];
    const last = bodies().at(-1)!;
    expect(last.options.num_ctx).toBeLessThanOrEqual(16_384);
    expect(last.messages[0]).toEqual(first.messages[0]); // the system prompt (with the JSON protocol: its tool list)
    expect(last.tools?.map((t) => t.function.name)).toEqual(first.tools?.map((t) => t.function.name));
    expect(last.messages.some((m) => m.role === "user" && m.content === "What do my Big notes say?")).toBe(true);
    const results = last.messages.filter((m) => m.content.includes("BEGIN"));
    expect(results).toHaveLength(NOTES.length);
    for (const result of results) {
      expect(result.role).toBe(native ? "tool" : "user");
      if (!native) expect(result.content.startsWith("Result of read_note:\n")).toBe(true);
      expect(result.content).toMatch(CUT_MARKER);
    }
    // The user is told once per answer, however many model steps were fitted.
    expect(fitNotices(events).map((e) => e.message)).toEqual([
      "To fit llama3.1:8b's context window (16,384 tokens), this answer shortened 5 tool results.",
    ]);
  });

  it("a long chat drops its oldest turns first; the system prompt and the new question stay", async () => {
    await start({ ollamaMaxContext: 4096, memoryMaxChars: 1_000_000 });
    let conversationId: string | undefined;
    const answers: ChatEvent[][] = [];
    for (let i = 1; i <= 6; i++) {
      ollama.script({ route: "chat", reply: `Answer ${i}: ${"lorem ".repeat(400)}` });
      answers.push(await send(`Question ${i}?`, { conversationId }));
      const done = answers.at(-1)!.at(-1) as Extract<ChatEvent, { type: "done" }>;
      conversationId = done.conversationId;
    }
    const last = bodies().at(-1)!;
    const sent = last.messages.map((m) => m.content.slice(0, 11));
    expect(last.options.num_ctx).toBe(4096);
    expect(last.messages[0]).toEqual(bodies()[0].messages[0]);
    expect(sent.at(-2)).toBe("Question 6?");
    expect(last.messages.at(-1)).toMatchObject({ role: "system", content: expect.stringMatching(/^Write your answer in .*\("Question 6\?"\)/) });
    expect(sent).not.toContain("Question 1?");
    expect(sent).toContain("Answer 5: l");
    // What is kept is the newest stretch, opening with a question.
    const kept = sent.slice(1, -2);
    const firstKept = Number(/\d/.exec(kept[0])![0]);
    expect(kept[0].startsWith("Question")).toBe(true);
    expect(kept).toEqual(Array.from({ length: 6 - firstKept }, (_, i) => [`Question ${firstKept + i}?`, `Answer ${firstKept + i}: l`]).flat());
    // The user is told how many earlier messages the model did not see; an answer that fitted says nothing.
    expect(fitNotices(answers[0])).toEqual([]);
    expect(fitNotices(answers[5]).map((e) => e.message)).toEqual([
      `To fit llama3.1:8b's context window (4,096 tokens), this answer left out the ${10 - kept.length} earliest messages of the conversation.`,
    ]);
  });

  it.each([
    ["plain chat", false],
    ["agent mode", true],
  ])("%s: an answer that fails after its prompt was fitted still says what the prompt lost, before the error", async (_name, agent) => {
    await start({ ollamaMaxContext: 4096, memoryMaxChars: 1_000_000 });
    let conversationId: string | undefined;
    for (let i = 1; i <= 6; i++) {
      ollama.script({ route: "chat", reply: `Answer ${i}: ${"lorem ".repeat(400)}` });
      const done = (await send(`Question ${i}?`, { conversationId })).at(-1) as Extract<ChatEvent, { type: "done" }>;
      conversationId = done.conversationId;
    }
    ollama.script({ route: "chat", status: 400, body: { error: "model crashed" }, times: Infinity });
    const events = await send("Question 7?", { conversationId, agent });
    const kinds = events.map((e) => (e.type === "notice" && e.code === "context-fitted" ? "fitted" : e.type)).filter((t) => t === "fitted" || t === "error");
    expect(kinds).toEqual(["fitted", "error"]);
    expect(fitNotices(events)[0].message).toMatch(/^To fit llama3\.1:8b's context window \(4,096 tokens\), this answer left out the \d+ earliest messages of the conversation\.$/);
  });

  it("RAG: note excerpts that do not fit are cut with a marker; the question after them stays", async () => {
    const ocean = (i: number) => `# Ocean ${i}\n\n${`Tides rise and fall twice a day, pulled by the moon (${i}). `.repeat(20)}`;
    await start({ ollamaMaxContext: 2048 }, true, Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`Ocean${i}.md`, ocean(i)])));
    ollama.script({ route: "chat", reply: "The moon [1]." });
    const events = await send("Why do tides rise?", { mode: "rag" });
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    const body = bodies()[0];
    const user = body.messages.at(-2)!;
    expect(body.options.num_ctx).toBe(2048);
    expect(user.content.startsWith("Context:\n\n## Local notes\n[1] Ocean")).toBe(true);
    expect(user.content).toMatch(CUT_MARKER);
    expect(user.content.endsWith("\n\nQuestion: Why do tides rise?")).toBe(true);
    expect(fitNotices(events).map((e) => e.message)).toEqual([
      "To fit llama3.1:8b's context window (2,048 tokens), this answer shortened the excerpts given with the question.",
    ]);
  });

  it("a question too long for the window is an error naming the tokens and the setting; nothing is sent", async () => {
    await start({ ollamaMaxContext: 4096 });
    const events = await send(`Please read this: ${"text ".repeat(5000)}`);
    const error = events.find((e) => e.type === "error") as Extract<ChatEvent, { type: "error" }>;
    expect(error).toMatchObject({ code: "context-too-long", retryable: false });
    expect(error.message).toMatch(/needs about [\d,]+ tokens but its context window allows 4,096/);
    expect(error.message).toContain("Ollama context limit (Settings → Models; KRYPTON_OLLAMA_MAX_CONTEXT");
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });
});
