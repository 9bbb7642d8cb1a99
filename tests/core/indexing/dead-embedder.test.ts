/**
 * A dead or failing embedder costs one short wait, not minutes: the first batch of an indexing run has a
 * deadline, timeouts are not retried, a failed query embedding is not tried again for a while, and the
 * notices say what happened (timeout, server error, unusable data). Real Ollama protocol on loopback.
 */
import { createOllamaEmbedder } from "../../../src/core/providers/ollama/ollama-embedder";
import { nodeClock } from "../../../src/node/node-clock";
import { retrieve } from "../../../src/core/chat/retrieval";
import { silentLogger } from "../../../src/core/ports/logger";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeHarness, type Harness } from "./index-harness";
import { createNoteOperations } from "../../../src/core/notes/note-operations-impl";
import { createNodeHost } from "../../../src/node/node-host";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { registerNoteTools } from "../../../src/core/tools/note-tools";
import type { VaultIndex } from "../../../src/core/indexing/vault-index";
import { createKrypton } from "../../../src/core/krypton";
import type { ChatEvent } from "../../../src/core/chat/chat-types";

const NOTES = {
  "Gradient.md": "# Gradient descent\n\nGradient descent walks downhill on the loss surface.\n",
  "Bread.md": "# Bread\n\nFlour, water, salt and a lively starter.\n",
};

describe("a dead or failing embedder", () => {
  let ollama: OllamaTestServer;
  let h: Harness;
  const embedder = (timeoutMs = 60_000) =>
    createOllamaEmbedder({ baseUrl: ollama.url, model: "nomic-embed-text", fetch: (i, init) => fetch(i, init), clock: nodeClock, timeoutMs, batchSize: 1 });

  beforeAll(async () => {
    ollama = await startOllamaServer({ embeddingDim: 16 });
  });
  afterAll(() => ollama.close());
  beforeEach(async () => {
    ollama.reset();
    h = await makeHarness(NOTES);
  });
  afterEach(() => h.cleanup());

  it("indexing: a first batch that gets no answer ends the run at its deadline, with no retry, keyword-only and saying so", async () => {
    ollama.script({ route: "embed", stall: true, times: Infinity });
    const index = h.open({ embedder: embedder(), index: { embedFirstAnswerMs: 300, retry: { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 } } });
    const status = await index.open();
    expect(status).toMatchObject({ notes: 2, keywordOnly: true, embedded: 0 });
    expect(status.embedderError).toBe("The embedding model 'nomic-embed-text' did not answer within 1 s");
    expect(ollama.requestsTo("embed")).toHaveLength(1); // no retry, and no second batch opened meanwhile
    expect((await index.searchNotes("gradient")).map((hit) => hit.path)).toEqual(["Gradient.md"]);
  });

  it("indexing: a timeout after the first batch is not retried either, and cancels the batches in flight", async () => {
    ollama.script([{ route: "embed" }, { route: "embed", stall: true, times: Infinity }]);
    const index = h.open({ embedder: embedder(200), index: { retry: { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 }, embedConcurrency: 2 } });
    const status = await index.open();
    expect(status.embedded).toBe(1);
    expect(status.embedderError).toMatch(/did not answer within 1 s/);
    // The first batch, then at most one stalled request per worker: none of them retried.
    expect(ollama.requestsTo("embed").length).toBeLessThanOrEqual(3);
  });

  it("indexing: a fast 503 while the model loads is still retried", async () => {
    ollama.script({ route: "embed", status: 503 });
    const index = h.open({ embedder: embedder(), index: { retry: { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 } } });
    const status = await index.open();
    expect(status).toMatchObject({ keywordOnly: false, embedded: 2 });
    expect(status.embedderError).toBeUndefined();
  });

  it.each([
    ["a stall", { route: "embed", stall: true }, /^the embedding model did not answer within 1 s$/],
    ["a 500", { route: "embed", status: 500 }, /^the embedding server failed \(Ollama failed \(500\)/],
    ["bad data", { route: "embed", malformed: true }, /^the embedding model returned unusable data/],
  ] as const)("a query embedding that fails with %s: keyword-only once, the notice says what happened, no second try", async (_name, script, why) => {
    const index = h.open({ embedder: embedder(), index: { queryTimeoutMs: 300, embedRetryAfterMs: 60_000 } });
    await index.open(); // the notes get their vectors while the embedder works
    ollama.reset();
    ollama.script({ ...script });
    const hits = await index.searchChunks("gradient descent");
    expect(hits[0].chunk.path).toBe("Gradient.md");
    expect(index.status().queryEmbedError).toMatch(why);

    // The chat's notice names the real problem, not a timeout for everything.
    const retrieval = await retrieve("what is gradient descent", [], "rag", {
      index,
      webSearch: null,
      chatModel: null,
      rerankModel: null,
      settings: h.settings,
      logger: silentLogger,
      hostKind: "cli",
    });
    const notice = retrieval.notices.find((n) => n.code === "rag-keyword-only");
    expect(notice?.message).toMatch(/^Semantic search failed \(the embedding/);
    expect(notice?.message).toContain(index.status().queryEmbedError);
    // Once per process: neither query above nor any later one asked the embedder again.
    await index.searchChunks("another question");
    expect(ollama.requestsTo("embed")).toHaveLength(1);
  });

  /** The search tools over an index: what the chat's "find notes about X", MCP and agent mode call. */
  function searchTools(index: VaultIndex) {
    const host = createNodeHost(h.vault.root, { logger: silentLogger });
    const operations = createNoteOperations({ host, settings: () => h.settings, index, chatModel: () => null });
    const registry = new ToolRegistry();
    registerNoteTools(registry, { operations, vault: host.vault, vaultRoot: h.vault.root });
    return { operations, registry };
  }

  it("the search tools say when notes were matched by keywords only, and why (chat agent, MCP, agent mode)", async () => {
    const index = h.open({ embedder: embedder(), index: { queryTimeoutMs: 300, embedRetryAfterMs: 60_000 } });
    await index.open();
    const { operations, registry } = searchTools(index);

    // Working embedder: meaning is used, nothing to say.
    const fine = await operations.searchNotes("gradient descent");
    expect(fine.keywordOnly).toBeUndefined();
    expect(fine.text).not.toMatch(/keywords only/);

    ollama.script({ route: "embed", status: 500 });
    const found = await operations.searchNotes("walking downhill gradient");
    expect(found.hits[0].path).toBe("Gradient.md");
    expect(found.keywordOnly).toMatch(/^Semantic search failed \(the embedding server failed \(Ollama failed \(500\).*: notes were matched by keywords only\.$/);
    expect(found.text.endsWith(`_${found.keywordOnly}_`)).toBe(true);

    const called = await registry.call("search_notes", { query: "gradient" });
    expect(called.structured).toMatchObject({ keywordOnly: found.keywordOnly });
    expect(called.text).toContain(found.keywordOnly);
  });

  it("a vault without an embedder by choice gets no keyword-only remark from the search tools", async () => {
    const index = h.open({ embedder: null });
    await index.open();
    const { operations, registry } = searchTools(index);
    const found = await operations.searchNotes("gradient");
    expect(found.hits[0].path).toBe("Gradient.md");
    expect(found.keywordOnly).toBeUndefined();
    expect((await registry.call("search_notes", { query: "gradient" })).structured).not.toHaveProperty("keywordOnly");
  });

  it("an embedder that is down at indexing: the search tools say semantic search is unavailable", async () => {
    ollama.script({ route: "embed", status: 500, times: Infinity });
    const index = h.open({ embedder: embedder(), index: { retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } } });
    const status = await index.open();
    expect(status.keywordOnly).toBe(true);
    const found = await searchTools(index).operations.searchNotes("gradient");
    expect(found.keywordOnly).toMatch(/^Semantic search is unavailable \(.+\): notes were matched by keywords only\.$/);
  });

  // The index's reason is shown alone (status bar, status dialog, `krypton status`, beside "keyword-only") and
  // inside the search remark: it says what is wrong, once, and leaves "keywords only" to them.
  it.each([
    ["unreachable", null, /^Ollama is not reachable at http:\/\/127\.0\.0\.1:9: is it running and is the address right\?$/],
    ["rate-limited", { route: "embed", status: 429, times: Infinity }, /^The embedding service is rate-limiting requests$/],
    ["timing out", { route: "embed", stall: true, times: Infinity }, /^The embedding model 'nomic-embed-text' did not answer within 1 s$/],
    ["failing (500)", { route: "embed", status: 500, times: Infinity }, /^Embedding failed: Ollama failed \(500\): llama runner process has terminated: exit status 2$/],
  ] as const)("an embedder %s at indexing: its reason reads well alone and inside the search remark", async (_name, script, why) => {
    if (script) ollama.script({ ...script });
    const down = script
      ? embedder()
      : createOllamaEmbedder({ baseUrl: "http://127.0.0.1:9", model: "nomic-embed-text", fetch: (i, init) => fetch(i, init), clock: nodeClock, timeoutMs: 60_000 });
    const stalls = script !== null && "stall" in script;
    const index = h.open({ embedder: down, index: { ...(stalls ? { embedFirstAnswerMs: 300 } : {}), retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } } });
    const status = await index.open();
    expect(status.keywordOnly).toBe(true);
    expect(status.embedderError).toMatch(why);
    const found = await searchTools(index).operations.searchNotes("gradient");
    expect(found.keywordOnly).toBe(`Semantic search is unavailable (${status.embedderError}): notes were matched by keywords only.`);
    expect(found.keywordOnly?.match(/keywords only/g)).toHaveLength(1);
  });

  it("an embedder the host found unreachable before starting (the CLI's probe): never asked, and its reason is the index's, as if the index had met it", async () => {
    const reason = "Ollama is not reachable at http://127.0.0.1:9 (connection refused: is it running?)";
    const settings = { ...h.settings, ollamaUrl: ollama.url, embeddingModel: "nomic-embed-text", chatModel: "llama3.1:8b", defaultMode: "rag" as const };
    const up = createKrypton(createNodeHost(h.vault.root, { logger: silentLogger }), settings);
    expect((await up.index.open()).embedded).toBe(2);
    await up.close();
    ollama.reset();

    const down = createKrypton(createNodeHost(h.vault.root, { logger: silentLogger }), settings);
    down.runWithoutEmbedder(reason);
    try {
      // The saved index answers a one-shot search with the reason too.
      const saved = await down.index.searchSavedNotes("gradient");
      expect(saved?.status).toMatchObject({ keywordOnly: true, embedderError: reason });
      const status = await down.index.open();
      expect(status).toMatchObject({ keywordOnly: true, embedderError: reason });
      expect(down.embedder()).toBeNull();
      expect(down.settings().embeddingProvider).toBe("ollama"); // the user's choice is unchanged

      const unavailable = `Semantic search is unavailable (${reason}): notes were matched by keywords only.`;
      expect((await down.operations.searchNotes("gradient")).keywordOnly).toBe(unavailable);
      const events: ChatEvent[] = [];
      for await (const event of down.chat.send("what is gradient descent?", { mode: "rag" })) events.push(event);
      expect(events).toContainEqual({ type: "notice", code: "rag-keyword-only", message: unavailable });
      expect(ollama.requestsTo("embed")).toHaveLength(0);
    } finally {
      await down.close();
    }
    // Its vectors were kept for the next run that reaches the embedder.
    const back = h.open({ embedder: embedder() });
    expect((await back.open()).embedded).toBe(2);
  });
});
