import { createOllamaEmbedder } from "../../../src/core/providers/ollama/ollama-embedder";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { nodeClock } from "../../../src/node/node-clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { hashEmbedding } from "../../support/hash-embedder";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeHarness, type Harness } from "./index-harness";

const fetchFn = (input: string | URL | Request, init?: RequestInit) => fetch(input, init);

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe("Ollama embedder (against a loopback Ollama)", () => {
  let ollama: OllamaTestServer;
  beforeEach(async () => {
    ollama = await startOllamaServer({ embeddingDim: 24 });
  });
  afterEach(async () => {
    await ollama.close();
  });

  const embedder = (overrides: { model?: string; timeoutMs?: number; baseUrl?: string } = {}) =>
    createOllamaEmbedder({
      baseUrl: overrides.baseUrl ?? ollama.url,
      model: overrides.model ?? "nomic-embed-text",
      fetch: fetchFn,
      clock: nodeClock,
      timeoutMs: overrides.timeoutMs ?? 2_000,
      batchSize: 8,
    });

  it("embeds a batch in one /api/embed request, in order", async () => {
    const e = embedder();
    expect(e.id).toBe("ollama:nomic-embed-text");
    expect(e.batchSize).toBe(8);
    const vectors = await e.embed(["first text", "second text"]);
    expect(vectors).toHaveLength(2);
    expect(Array.from(vectors[1])).toEqual(Array.from(hashEmbedding("second text", 24)));
    expect(Array.from(vectors[0])).toEqual(Array.from(hashEmbedding("first text", 24)));
    // The decoded arrays themselves: no typed array (an array buffer, V8 external memory) per batch or vector.
    expect(vectors.every((v) => Array.isArray(v))).toBe(true);
    const [req] = ollama.requestsTo("embed");
    expect((req.body as { input: string[] }).input).toEqual(["first text", "second text"]);
  });

  it("names the missing model and the command that installs it", async () => {
    const err = await failure(embedder({ model: "mxbai-embed-large" }).embed(["x"]));
    expect(err.kind).toBe("model-missing");
    expect(err.message).toBe("Embedding model 'mxbai-embed-large' is not installed: run `ollama pull mxbai-embed-large`");
  });

  it("maps 429, 500, malformed answers, stalls and unreachable servers to ProviderError kinds", async () => {
    ollama.script({ route: "embed", status: 429 });
    expect((await failure(embedder().embed(["x"]))).kind).toBe("rate-limited");
    ollama.script({ route: "embed", status: 500 });
    expect((await failure(embedder().embed(["x"]))).kind).toBe("server");
    ollama.script({ route: "embed", malformed: true });
    expect((await failure(embedder().embed(["x"]))).kind).toBe("bad-response");
    ollama.script({ route: "embed", body: { model: "nomic-embed-text", embeddings: [[1, 2]] } });
    expect((await failure(embedder().embed(["x", "y"]))).kind).toBe("bad-response");
    ollama.script({ route: "embed", stall: true });
    expect((await failure(embedder({ timeoutMs: 100 }).embed(["x"]))).kind).toBe("timeout");
    const err = await failure(embedder({ baseUrl: "http://127.0.0.1:9" }).embed(["x"]));
    expect(err.kind).toBe("unreachable");
  });

  it("stops when aborted", async () => {
    ollama.script({ route: "embed", delayMs: 2_000 });
    const controller = new AbortController();
    const pending = embedder().embed(["x"], controller.signal);
    setTimeout(() => controller.abort(), 30);
    expect((await failure(pending)).kind).toBe("aborted");
  });

  it("cuts over-long input and retries once when Ollama refuses it for its context length", async () => {
    ollama.script({ route: "embed", status: 400, error: "the input length exceeds the context length" });
    const long = "word ".repeat(5_000);
    const vectors = await embedder().embed(["short", long]);
    expect(vectors).toHaveLength(2);
    const requests = ollama.requestsTo("embed");
    expect(requests).toHaveLength(2);
    const retried = (requests[1].body as { input: string[] }).input;
    expect(retried[0]).toBe("short");
    expect(retried[1].length).toBeLessThan(long.length);
  });

  describe("driving the index", () => {
    let h: Harness;
    afterEach(async () => {
      await h?.cleanup();
    });

    it("indexes through Ollama, retries a 429, and falls back to keywords while the model is missing", async () => {
      h = await makeHarness({ "A.md": "# A\n\nOtters hold hands.", "B.md": "# B\n\nBeavers build dams." });
      const settings = { ...DEFAULT_SETTINGS, ollamaUrl: ollama.url, embeddingModel: "all-minilm" };
      const host = createNodeHost(h.vault.root, { logger: silentLogger });
      const e = createOllamaEmbedder(settings, host);
      ollama.models.push("all-minilm");
      ollama.script({ route: "embed", status: 429 });
      const index = h.open({ embedder: e });
      const status = await index.open();
      expect(status.embedded).toBe(status.chunks);
      expect(status.embedder).toBe("ollama:all-minilm");
      expect((await index.searchNotes("otters"))[0].path).toBe("A.md");
      await index.close();

      ollama.models.pop();
      await h.vault.write("C.md", "# C\n\nCormorants dive.");
      const again = h.open({ embedder: e });
      const later = await again.open();
      expect(later.keywordOnly).toBe(true);
      expect(later.embedderError).toMatch(/ollama pull all-minilm/);
      // The query cannot be embedded either: search falls back to keywords and still answers.
      expect((await again.searchNotes("cormorants"))[0].path).toBe("C.md");
    });
  });
});
