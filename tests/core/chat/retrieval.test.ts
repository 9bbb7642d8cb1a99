/**
 * Retrieval knobs on the real index: query rewriting, multi-query merge, rerank by the chat model or a
 * dedicated reranker, and the index-state notices. LLM calls go to the loopback Ollama server.
 */
import { mergeHits, retrieve, type RetrievalDeps } from "../../../src/core/chat/retrieval";
import type { IndexStatus } from "../../../src/core/indexing/index-status";
import type { SearchOptions } from "../../../src/core/search/search-types";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { nodeClock } from "../../../src/node/node-clock";
import { FAST_RETRY, nodeFetch } from "../providers/provider-fixtures";
import { hit, makeChatHarness, type ChatHarness } from "./chat-fixtures";

const NOTES = {
  "Ocean/Tides.md": "# Tides\n\nTides are caused by the gravity of the moon and the sun.\n",
  "Ocean/Waves.md": "# Waves\n\nWind makes waves on the ocean surface.\n",
  "Setup/Ollama.md": "# Ollama setup\n\nInstall Ollama, then run ollama serve. Set OLLAMA_ORIGINS for streaming.\n",
  "Kitchen/Bread.md": "# Bread\n\nFlour, water, salt and yeast.\n",
};

let h: ChatHarness;
let searched: { query: string; options?: SearchOptions }[];

beforeEach(async () => {
  h = await makeChatHarness(NOTES);
  searched = [];
});
afterEach(() => h.cleanup());

function deps(overrides: Partial<RetrievalDeps> = {}): RetrievalDeps {
  const index = h.index;
  return {
    index: {
      searchChunksWithReason: (query, options) => {
        searched.push({ query, options });
        return index.searchChunksWithReason(query, options);
      },
      status: () => index.status(),
    },
    webSearch: null,
    chatModel: h.model,
    rerankModel: null,
    settings: h.settings,
    logger: h.logger,
    ...overrides,
  };
}

describe("retrieve", () => {
  it("none does nothing; rag passes maxK and the threshold to the index and keeps displayK", async () => {
    expect(await retrieve("tides", [], "none", deps())).toEqual({ notes: [], web: [], notices: [], queries: [] });
    h.settings.maxK = 3;
    h.settings.displayK = 2;
    const result = await retrieve("ocean tides waves moon", [], "rag", deps());
    expect(searched).toEqual([{ query: "ocean tides waves moon", options: expect.objectContaining({ limit: 3, minScore: h.settings.similarityThreshold }) }]);
    expect(result.notes.length).toBeLessThanOrEqual(2);
    expect(result.notes[0].chunk.path).toMatch(/^Ocean\//);
    expect(h.ollama.requestsTo("chat")).toHaveLength(0); // the LLM knobs are off by default
  });

  it("query rewriting turns a follow-up into a standalone query, for notes and web", async () => {
    h.settings.queryRewrite = true;
    h.ollama.script({ route: "chat", reply: "\"tides moon gravity\"\nextra line" });
    const history = [
      { role: "user" as const, content: "Tell me about tides" },
      { role: "assistant" as const, content: "They come from the moon." },
    ];
    const result = await retrieve("and why?", history, "rag", deps());
    expect(result.queries).toEqual(["tides moon gravity"]);
    expect(searched.map((s) => s.query)).toEqual(["tides moon gravity"]);
    const prompt = (h.ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[1].content;
    expect(prompt).toContain("User: Tell me about tides");
    expect(prompt).toContain("Question: and why?");
  });

  it("a rewrite in a code fence (as small models write it) is the query inside the fence", async () => {
    h.settings.queryRewrite = true;
    h.ollama.script({ route: "chat", reply: "```\ntides moon gravity\n```" });
    const result = await retrieve("and why?", [], "rag", deps());
    expect(result.queries).toEqual(["tides moon gravity"]);
  });

  it("a rewrite cut at the length limit is not used: the question is searched as asked", async () => {
    h.settings.queryRewrite = true;
    h.ollama.script({ route: "chat", reply: "tides and the", extra: { doneReason: "length" } });
    const result = await retrieve("why do tides happen", [], "rag", deps());
    expect(result.queries).toEqual(["why do tides happen"]);
  });

  it("a failed rewrite falls back to the question", async () => {
    h.settings.queryRewrite = true;
    h.ollama.script({ route: "chat", status: 500, times: Infinity });
    const result = await retrieve("tides", [], "rag", deps());
    expect(result.queries).toEqual(["tides"]);
    expect(result.notices).toEqual([]);
  });

  it("multi-query searches the question and its variants and merges the hits", async () => {
    h.settings.multiQuery = true;
    h.settings.multiQueryCount = 2;
    h.ollama.script({ route: "chat", reply: 'Here you go: {"queries": ["wind waves ocean", "bread yeast", "ignored third"]}' });
    const result = await retrieve("tides", [], "rag", deps());
    expect(result.queries).toEqual(["tides", "wind waves ocean", "bread yeast"]);
    expect(searched.map((s) => s.query)).toEqual(["tides", "wind waves ocean", "bread yeast"]);
    const paths = result.notes.map((n) => n.chunk.path);
    expect(paths).toEqual(expect.arrayContaining(["Ocean/Tides.md", "Ocean/Waves.md", "Kitchen/Bread.md"]));
    expect(new Set(result.notes.map((n) => n.chunk.id)).size).toBe(result.notes.length);
    // Asked through askJson: the answer's JSON schema goes to Ollama as `format`.
    expect((h.ollama.requestsTo("chat")[0].body as { format?: unknown }).format).toMatchObject({ type: "object", required: ["queries"] });
  });

  it("rerank by the chat model reorders by its scores; a bad answer keeps the search order", async () => {
    const query = "ocean tides waves wind moon";
    const ids = (r: { notes: { chunk: { id: string } }[] }) => r.notes.map((x) => x.chunk.id);
    const before = ids(await retrieve(query, [], "rag", deps()));
    expect(before.length).toBeGreaterThanOrEqual(2);
    h.settings.rerank = "chat-model";
    // Ascending scores: the model prefers the last passage, so the order flips.
    h.ollama.script({ route: "chat", reply: JSON.stringify({ scores: before.map((_, i) => i) }) });
    expect(ids(await retrieve(query, [], "rag", deps()))).toEqual([...before].reverse());
    const prompt = (h.ollama.requestsTo("chat")[0].body as { messages: { content: string }[] }).messages[1].content;
    expect(prompt).toContain(`Question: ${query}`);
    expect(prompt).toContain("[1] ");
    h.ollama.script({ route: "chat", reply: "I think passage 2 is best." });
    expect(ids(await retrieve(query, [], "rag", deps()))).toEqual(before);
    expect(h.logger.lines.some((l) => l.startsWith("warn Rerank failed"))).toBe(true);
  });

  it("rerank with a dedicated reranker model asks that model", async () => {
    h.ollama.models = [...h.ollama.models, "bge-reranker:latest"];
    const reranker = new OllamaChatModel({ baseUrl: h.ollama.url, model: "bge-reranker", fetch: nodeFetch, clock: nodeClock, timeoutMs: 2_000, retry: FAST_RETRY });
    h.settings.rerank = "reranker-model";
    h.ollama.setDefault({ route: "chat", reply: (req) => JSON.stringify({ scores: (req.userText.match(/^\[\d+\]/gm) ?? []).map(() => 5) }) });
    await retrieve("ocean tides waves", [], "rag", deps({ rerankModel: reranker }));
    expect(h.ollama.requestsTo("chat").map((r) => r.model)).toEqual(["bge-reranker"]);
  });

  it("reports an index that is still indexing, or whose embedder failed", async () => {
    const status = (s: Partial<IndexStatus>) => () => ({ ...h.index.status(), ...s });
    const partial = await retrieve("tides", [], "rag", deps({ index: { ...deps().index, status: status({ state: "indexing", progress: { done: 3, total: 10, phase: "embedding" } }) } }));
    expect(partial.notices).toEqual([{ code: "rag-partial", message: "Indexing is still running (3 of 10 notes): some notes may be missing from this answer." }]);
    expect(partial.notes.length).toBeGreaterThan(0);
    const failed = await retrieve("tides", [], "rag", deps({ index: { ...deps().index, status: status({ state: "error", chunks: 0 }) } }));
    expect(failed.notices[0]).toMatchObject({ code: "rag-unavailable", message: expect.stringContaining("the index failed to load") });
    expect(failed.notes).toEqual([]);
  });

  it("an aborted signal stops retrieval", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(retrieve("tides", [], "hybrid", deps(), controller.signal)).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("mergeHits", () => {
  it("keeps each chunk once at its best score, best first", () => {
    const a = hit("A.md", "a", {}, 0.5);
    const b = hit("B.md", "b", {}, 0.7);
    const a2 = { ...a, score: 0.9 };
    expect(mergeHits([[a, b], [a2]]).map((x) => [x.chunk.id, x.score])).toEqual([
      ["A.md#1", 0.9],
      ["B.md#1", 0.7],
    ]);
  });
});
