/**
 * The agents inside the whole core (createKrypton): the ChatService tries them first and falls through
 * to normal chat. Real Ollama provider, real index, real temp vault, loopback Ollama server.
 */
import type { ChatEvent } from "../../../src/core/chat/chat-types";
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import { silentLogger } from "../../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { collect } from "../providers/provider-fixtures";

describe("agents in the chat pipeline", () => {
  let vault: TempVault;
  let ollama: OllamaTestServer;
  let core: KryptonCore;

  beforeEach(async () => {
    vault = await makeTempVault({
      "Cloud/aws.md": "# AWS\n\nAWS Lambda runs functions. S3 stores objects.\n",
      "today.md": "# Today\n\nBuy milk.\n",
    });
    ollama = await startOllamaServer();
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), {
      ...DEFAULT_SETTINGS,
      ollamaUrl: ollama.url,
      requestTimeoutMs: 5_000,
    });
    await core.index.open();
  });

  afterEach(async () => {
    await core.close();
    await ollama.close();
    await vault.cleanup();
  });

  it("'create a note on X' is handled by the create agent and saves a new note", async () => {
    ollama.script({ route: "chat", reply: "# Machine Learning Basics\n\nModels learn from data." });

    const events = await collect(core.chat.send("create a note on machine learning basics", { mode: "rag" }));

    const agent = events.find((e) => e.type === "agent");
    expect(agent).toMatchObject({ type: "agent", result: { kind: "note-created", path: "Krypton/machine-learning-basics.md" } });
    expect(events.some((e) => e.type === "token")).toBe(false);
    expect(await vault.read("Krypton/machine-learning-basics.md")).toContain("Models learn from data.");
    expect(events[events.length - 1]).toMatchObject({ type: "done", stopped: false });
  });

  it("an ordinary question falls through to normal chat", async () => {
    ollama.script({ route: "chat", reply: "Paris is the capital of France." });

    const events = await collect(core.chat.send("how do I create a note in Obsidian?", { mode: "none" }));

    expect(events.some((e) => e.type === "agent")).toBe(false);
    const done = events[events.length - 1];
    expect(done).toMatchObject({ type: "done", answer: "Paris is the capital of France." });
    expect(await vault.exists("Krypton")).toBe(false);
  });

  it("a missing prerequisite is explained by the agent, not sent to the model", async () => {
    const events = await collect(core.chat.send("summarize this note", { mode: "rag" }));
    expect(events.find((e) => e.type === "agent")).toMatchObject({
      result: { kind: "message", text: "Open a note first: there is no active note to summarize." },
    });
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("search and topic summaries go through the same index", async () => {
    const found = await collect(core.chat.send("find notes about AWS Lambda", { mode: "rag" }));
    expect(found.find((e) => e.type === "agent")).toMatchObject({ result: { kind: "search-results", hits: [{ path: "Cloud/aws.md" }] } });

    ollama.script({ route: "chat", reply: "Lambda and S3." });
    const summary = await collect(core.chat.send("summarize my notes about AWS", { mode: "rag" }));
    expect(summary.find((e) => e.type === "agent")).toMatchObject({ result: { kind: "summary", sourceFiles: ["Cloud/aws.md"] } });
  });

  it("an agent that crashes falls through to normal chat: logged, never shown as an error", async () => {
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
    const crashing = createKrypton(createNodeHost(vault.root, { logger }), { ...core.settings() });
    try {
      // A bug inside the agent's action (not an AgentError, which the agent turns into a message).
      crashing.operations.createNote = () => Promise.reject(new TypeError("cannot read properties of undefined"));
      ollama.script({ route: "chat", reply: "Tides come from the moon." });

      const events = await collect(crashing.chat.send("create a note on tides", { mode: "none" }));

      expect(events.some((e) => e.type === "agent" || e.type === "error")).toBe(false);
      expect(events[events.length - 1]).toMatchObject({ type: "done", answer: "Tides come from the moon.", stopped: false });
      expect(warnings.some((w) => w.includes('Agent "create-note" failed'))).toBe(true);
      expect(await vault.exists("Krypton")).toBe(false);
    } finally {
      await crashing.close();
    }
  });

  it("a note created in the chat is found by the next message (the CLI's `chat`, the MCP server)", async () => {
    ollama.script({ route: "chat", reply: "# Tide pools\n\nTide pools shelter anemones at low water." });
    await collect(core.chat.send("create a note on tide pools", { mode: "rag" }));

    const found = await collect(core.chat.send("find notes about anemones", { mode: "rag" }));

    expect(found.find((e) => e.type === "agent")).toMatchObject({ result: { kind: "search-results", hits: [{ path: "Krypton/tide-pools.md" }] } });
  });

  it("with model-based intent detection, the study agents share the note agents' one classifier call", async () => {
    core.applySettings({ ...core.settings(), intentClassifier: true });
    ollama.script({ route: "chat", reply: '{"intent":"list_study_goals","argument":""}' });
    const events = await collect(core.chat.send("¿qué metas tengo apuntadas?", { mode: "none" }));
    expect(events.find((e) => e.type === "agent")).toMatchObject({ result: { kind: "message", agent: "study-goals", text: expect.stringMatching(/^You have no study goals yet\./) } });
    expect(ollama.requestsTo("chat")).toHaveLength(1);
  });

  // An id the store does not have (another vault's, a typo) starts a new conversation: the quiz belongs to that
  // new conversation, so answering in it, by the id the answer reports, goes on with the quiz.
  it("a quiz started under a conversation id the store does not have continues in the conversation that was started", async () => {
    await vault.write("Flashcards/AWS.md", '---\nkrypton-deck: true\ndeck: "AWS"\n---\n\n#flashcards/aws\n\nWhat does S3 stand for?::Simple Storage Service\n');
    const started = await collect(core.chat.send("quiz me on AWS", { mode: "none", conversationId: "not-a-conversation" }));
    expect(started.find((e) => e.type === "agent")).toMatchObject({ result: { text: expect.stringContaining("What does S3 stand for?") } });
    const done = started[started.length - 1];
    expect(done.type === "done" && done.conversationId).not.toBe("not-a-conversation");
    const conversationId = done.type === "done" ? done.conversationId : "";

    const answered = await collect(core.chat.send("simple storage service", { mode: "none", conversationId }));

    expect(answered.find((e) => e.type === "agent")).toMatchObject({ result: { agent: "quiz", text: expect.stringContaining("Correct") } });
    expect(ollama.requestsTo("chat")).toHaveLength(0);
  });

  it("agents are skipped when turned off in settings", async () => {
    core.applySettings({ ...core.settings(), agentsEnabled: false });
    ollama.script({ route: "chat", reply: "Sure, here is some text about tides." });
    const events = await collect(core.chat.send("create a note on tides", { mode: "none" }));
    expect(events.some((e) => e.type === "agent")).toBe(false);
    expect(await vault.exists("Krypton")).toBe(false);
  });
});
