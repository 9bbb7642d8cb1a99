/**
 * Every result built from a search of the index says when its notes were matched by keywords only, in the
 * one rule's words (core/search/keyword-only.ts): "summarize my notes on X", flashcards about a topic, a
 * quiz from the notes, a week's plan for a goal, in chat and through the tools (MCP, CLI, workflows). The
 * core runs as a host starts it with the embedding server unreachable (the CLI's probe); chat comes from
 * the loopback Ollama. With the embedder up, none of them says it. A search that finds nothing says it
 * too: a paraphrase sharing no word with the notes finds nothing by keywords, which is when it matters most.
 */
import { createKrypton, type KryptonCore } from "../../../src/core/krypton";
import type { AgentResult } from "../../../src/core/agents/agent";
import type { ChatEvent } from "../../../src/core/chat/chat-types";
import { silentLogger } from "../../../src/core/ports/logger";
import { ToolError } from "../../../src/core/tools/tool";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import type { RecordedRequest } from "../../support/servers/scripted-server";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

const NOTES: Record<string, string> = {
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter. Bake sourdough at 250 degrees.\n",
  "Travel/Lisbon.md": "# Lisbon\n\nTrams, custard tarts and steep hills.\n",
};

const REASON = "Ollama is not reachable at http://127.0.0.1:9 (connection refused: is it running?)";
const UNAVAILABLE = `Semantic search is unavailable (${REASON}): notes were matched by keywords only.`;

/** Cards for a flashcard prompt (passage 1 is the bread note), a summary for anything else. */
function modelReply(req: RecordedRequest): string {
  if (/Passages:\n\[1\]/.test(req.userText)) {
    return JSON.stringify({ cards: [{ type: "basic", front: "At what temperature is sourdough baked?", back: "250 degrees", passage: 1 }] });
  }
  return "Sourdough is made of flour, water, salt and a starter.";
}

// Both groups below: one loopback Ollama for the file (reset and scripted before each test), a fresh vault
// per test, and the core each test starts (closed after it).
let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;

beforeAll(async () => {
  ollama = await startOllamaServer({ embeddingDim: 16 });
});
afterAll(() => ollama.close());
beforeEach(async () => {
  ollama.reset();
  ollama.script({ route: "chat", reply: modelReply, times: Infinity });
  vault = await makeTempVault(NOTES);
});
afterEach(async () => {
  await core.close();
  await vault.cleanup();
});

const settings = (overrides: Partial<KryptonSettings> = {}): KryptonSettings => ({
  ...DEFAULT_SETTINGS,
  ollamaUrl: ollama.url,
  chatProvider: "ollama",
  chatModel: "llama3.1:8b",
  embeddingProvider: "ollama",
  embeddingModel: "nomic-embed-text",
  requestTimeoutMs: 5_000,
  ...overrides,
});

describe("results built from a search, with the embedding server unreachable", () => {
  const start = async (options: { embedderUnreachable?: string }) => {
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), settings());
    if (options.embedderUnreachable) core.runWithoutEmbedder(options.embedderUnreachable);
    await core.index.open();
  };
  /** What the chat pipeline (every host's chat) answers: the agent's result. */
  const chat = async (message: string, conversationId?: string): Promise<AgentResult> => {
    const events: ChatEvent[] = [];
    for await (const event of core.chat.send(message, { mode: "rag", conversationId })) events.push(event);
    const agent = events.find((e): e is Extract<ChatEvent, { type: "agent" }> => e.type === "agent");
    if (!agent) throw new Error(`no agent answered "${message}": ${JSON.stringify(events)}`);
    return agent.result;
  };

  it('"summarize my notes on X": the summary carries the reason, in chat (its block, its text) and from summarize_notes', async () => {
    await start({ embedderUnreachable: REASON });
    const result = await chat("summarize my notes on sourdough");
    expect(result).toMatchObject({ kind: "summary", sourceFiles: ["Cooking/Bread.md"], keywordOnly: UNAVAILABLE });
    expect(result.text.endsWith(`_${UNAVAILABLE}_`)).toBe(true);

    const tool = await core.tools.call("summarize_notes", { mode: "topic", topic: "sourdough" });
    expect(tool.structured).toMatchObject({ sourceFiles: ["Cooking/Bread.md"], keywordOnly: UNAVAILABLE });
    expect(tool.text.endsWith(`\n\n${UNAVAILABLE}`)).toBe(true);
  });

  it("flashcards about a topic: the run's text says it, in chat and from generate_flashcards", async () => {
    await start({ embedderUnreachable: REASON });
    const result = await chat("make flashcards about sourdough");
    expect(result.kind).toBe("message");
    expect(result.text).toMatch(/^Added 1 flashcard to \[\[Flashcards\/sourdough\]\]/);
    expect(result.text.endsWith(`\n\n_${UNAVAILABLE}_`)).toBe(true);

    const tool = await core.tools.call("generate_flashcards", { topic: "sourdough", deck: "Bread" });
    expect(tool.structured).toMatchObject({ deckPath: "Flashcards/Bread.md", keywordOnly: UNAVAILABLE });
    expect(tool.text.endsWith(`\n\n_${UNAVAILABLE}_`)).toBe(true);
  });

  it("flashcards from a note search nothing and say nothing about keywords", async () => {
    await start({ embedderUnreachable: REASON });
    const tool = await core.tools.call("generate_flashcards", { note_path: "Cooking/Bread.md" });
    expect(tool.structured).not.toHaveProperty("keywordOnly");
    expect(tool.text).not.toMatch(/keywords only/);
  });

  it("a quiz from the notes (no deck by that name): its first message says it", async () => {
    await start({ embedderUnreachable: REASON });
    const result = await chat("quiz me on sourdough");
    expect(result.text).toMatch(/^No deck named "sourdough": quiz from your notes \(\[\[Cooking\/Bread\]\]\), 1 card/);
    expect(result.text).toContain(`_${UNAVAILABLE}_`);
  });

  it("a week's plan for a goal: the plan names the related notes and says it", async () => {
    await start({ embedderUnreachable: REASON });
    await chat("set a study goal: bake sourdough");
    const result = await chat("plan my week for bake sourdough");
    expect(result.text).toMatch(/^Plan for \*\*bake sourdough\*\* \(0 flashcards due, 1 related note\):/);
    expect(result.text).toContain("read [[Cooking/Bread]]");
    expect(result.text.endsWith(`\n\n_${UNAVAILABLE}_`)).toBe(true);
  });

  it("with the embedder up, none of them says anything about keywords", async () => {
    await start({});
    expect(core.index.status()).toMatchObject({ keywordOnly: false, embedded: 2 });
    const summary = await chat("summarize my notes on sourdough");
    expect(summary.kind).toBe("summary");
    expect(summary).not.toHaveProperty("keywordOnly");
    expect((await core.tools.call("summarize_notes", { mode: "topic", topic: "sourdough" })).structured).not.toHaveProperty("keywordOnly");
    const flashcards = await core.tools.call("generate_flashcards", { topic: "sourdough" });
    expect(flashcards.structured).not.toHaveProperty("keywordOnly");
    await chat("set a study goal: bake sourdough");
    for (const text of [flashcards.text, (await chat("quiz me on sourdough")).text, (await chat("plan my week for bake sourdough")).text]) {
      expect(text).not.toMatch(/keywords only/);
    }
  });
});

describe("a search that finds nothing, when meaning could not be used", () => {
  const NO_MATCH = "No notes match 'xyzzy'";
  const FAILED = /^Semantic search failed \(the embedding server failed .*\): notes were matched by keywords only\.$/;
  const start = async (options: { embedderUnreachable?: string; settings?: Partial<KryptonSettings> } = {}) => {
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), settings(options.settings));
    if (options.embedderUnreachable) core.runWithoutEmbedder(options.embedderUnreachable);
    await core.index.open();
    await core.index.idle();
  };
  const send = async (message: string, mode: "rag" | "none" = "rag"): Promise<ChatEvent[]> => {
    const events: ChatEvent[] = [];
    for await (const event of core.chat.send(message, { mode })) events.push(event);
    return events;
  };
  const chat = async (message: string): Promise<AgentResult> => {
    const agent = (await send(message)).find((e): e is Extract<ChatEvent, { type: "agent" }> => e.type === "agent");
    if (!agent) throw new Error(`no agent answered "${message}"`);
    return agent.result;
  };
  const toolError = async (name: string, args: Record<string, unknown>): Promise<ToolError> => {
    const err = await core.tools.call(name, args).then(
      () => null,
      (e: unknown) => e,
    );
    if (!(err instanceof ToolError)) throw new Error(`${name} did not fail with a ToolError: ${String(err)}`);
    return err;
  };

  it("the embedder is down: every agent's 'No notes match' says why, in chat and from the tools", async () => {
    await start({ embedderUnreachable: REASON });
    const remark = `\n\n_${UNAVAILABLE}_`;
    for (const message of ["find notes about xyzzy", "summarize my notes on xyzzy"]) {
      expect(await chat(message)).toMatchObject({ kind: "message", text: `${NO_MATCH}${remark}`, failed: "not-found", keywordOnly: UNAVAILABLE });
    }
    expect(await chat("make flashcards about xyzzy")).toMatchObject({ kind: "message", text: `${NO_MATCH}${remark}`, keywordOnly: UNAVAILABLE });
    expect(await chat("quiz me on xyzzy")).toMatchObject({ kind: "message", text: `${NO_MATCH}${remark}`, keywordOnly: UNAVAILABLE });
    expect(await vault.exists("Flashcards/xyzzy.md")).toBe(false);

    const search = await toolError("search_notes", { query: "xyzzy" });
    expect(search).toMatchObject({ code: "not-found", message: `${NO_MATCH}\n\n${UNAVAILABLE}`, keywordOnly: UNAVAILABLE, structured: { results: [], keywordOnly: UNAVAILABLE } });
    for (const [name, args] of [
      ["summarize_notes", { mode: "topic", topic: "xyzzy" }],
      ["generate_flashcards", { topic: "xyzzy" }],
    ] as const) {
      expect(await toolError(name, args)).toMatchObject({ code: "not-found", message: `${NO_MATCH}\n\n${UNAVAILABLE}`, keywordOnly: UNAVAILABLE });
    }
  });

  it("the embedder is down: a chat answer from no notes, and a goal's plan with no related note, say why", async () => {
    await start({ embedderUnreachable: REASON });
    const events = await send("Is xyzzy a magic word?");
    expect(events.find((e) => e.type === "agent")).toBeUndefined();
    expect(events.find((e) => e.type === "sources")).toMatchObject({ sources: [] });
    expect(events.filter((e) => e.type === "notice")).toEqual([{ type: "notice", code: "rag-keyword-only", message: UNAVAILABLE }]);

    await chat("set a study goal: master xyzzy");
    const plan = await chat("plan my week for master xyzzy");
    expect(plan.text).toMatch(/^Plan for \*\*master xyzzy\*\* \(0 flashcards due, 0 related notes\):/);
    expect(plan.text.endsWith(`\n\n_${UNAVAILABLE}_`)).toBe(true);
  });

  it("a query's vector fails (500 on /api/embed): 'find notes about X' that finds nothing says the search failed", async () => {
    await start();
    expect(core.index.status()).toMatchObject({ keywordOnly: false, embedded: 2 });
    ollama.script({ route: "embed", status: 500, times: Infinity });
    const result = await chat("find notes about xyzzy");
    expect(result).toMatchObject({ kind: "message", failed: "not-found", keywordOnly: expect.stringMatching(FAILED) });
    expect(result.text).toBe(`${NO_MATCH}\n\n_${(result as { keywordOnly: string }).keywordOnly}_`);
  });

  it("with the embedder up, or a vault set to no embedding model, a search that finds nothing says only that", async () => {
    for (const overrides of [{}, { embeddingProvider: "none" as const }]) {
      await start({ settings: overrides });
      expect(await chat("find notes about xyzzy")).toEqual({ kind: "message", agent: "search-notes", text: NO_MATCH, failed: "not-found" });
      const search = await toolError("search_notes", { query: "xyzzy" });
      expect([search.message, search.keywordOnly, search.structured]).toEqual([NO_MATCH, undefined, undefined]);
      expect((await send("Is xyzzy a magic word?")).filter((e) => e.type === "notice")).toEqual([]);
      await core.close();
    }
    core = createKrypton(createNodeHost(vault.root, { logger: silentLogger }), settings());
  });
});
