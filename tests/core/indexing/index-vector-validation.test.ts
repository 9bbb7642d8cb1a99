import { nodeClock } from "../../../src/node/node-clock";
import { createOllamaEmbedder } from "../../../src/core/providers/ollama/ollama-embedder";
import { readVector, vectorProblem } from "../../../src/core/indexing/vector-check";
import { VectorStore } from "../../../src/core/indexing/vector-store";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeHarness, type Harness } from "./index-harness";

const notes = {
  "Apples.md": "# Apples\n\nApples grow on trees in the orchard.",
  "Bananas.md": "# Bananas\n\nBananas ripen in the sun.",
  "Cherries.md": "# Cherries\n\nCherries are small red fruit.",
};

describe("vectorProblem: the one check before a vector is stored or ranks", () => {
  it("accepts a normal vector and names each kind of damage", () => {
    expect(vectorProblem([0.1, -0.2, 0.3], 3)).toBeNull();
    expect(vectorProblem([0.1, NaN, 0.3], 3)).toMatch(/NaN at position 1/);
    expect(vectorProblem([1e39, 0, 0], 3)).toMatch(/out of range/);
    expect(vectorProblem(Float32Array.from([1e39, 0, 0]), 3)).toMatch(/out of range/);
    expect(vectorProblem([0, 0, 0], 3)).toMatch(/all zeros/);
    expect(vectorProblem([0.1, 0.2], 3)).toMatch(/2 dimensions instead of 3/);
    expect(vectorProblem([], 0)).toMatch(/empty/);
  });

  it("finds a value that is not a number in every kind of input it takes: plain, holey and array-like", () => {
    expect(vectorProblem([0.1, "0.5", 0.3] as unknown as number[], 3)).toMatch(/NaN at position 1/);
    expect(vectorProblem([0.1, 0.2, null] as unknown as number[], 3)).toMatch(/NaN at position 2/);
    const holey = new Array<number>(3);
    holey[0] = 0.5;
    holey[2] = 0.5;
    expect(vectorProblem(holey, 3)).toMatch(/NaN at position 1/);
    expect(vectorProblem({ length: 2, 0: 1, 1: true } as unknown as ArrayLike<number>, 2)).toMatch(/NaN at position 1/);
    expect(vectorProblem({ length: 2, 0: 1, 1: 0.5 }, 2)).toBeNull();
    expect(vectorProblem(Float64Array.from([0.25, -1]), 2)).toBeNull();
    expect(vectorProblem(Float64Array.from([0.25, Infinity]), 2)).toMatch(/out of range/);
    // The same function after seeing every kind (one loop per kind: none of them slows the others down).
    expect(vectorProblem([0.1, -0.2, 0.3], 3)).toBeNull();
  });

  it("reads a vector longer than any before (its scratch grows) and leaves the values for the caller", () => {
    const long = Array.from({ length: 5000 }, (_, i) => (i % 7) - 3);
    expect(vectorProblem(long, 5000)).toBeNull();
    const into = new Float64Array(3);
    expect(readVector([1, 2, 3], 3, into)).toBeNull();
    expect(Array.from(into)).toEqual([1, 2, 3]);
    expect(() => readVector(long, 0, into)).toThrow(RangeError);
  });

  it("the vector store refuses an unusable vector instead of storing zeros or NaN", () => {
    const store = new VectorStore();
    expect(() => store.add([0, 0, 0])).toThrow(/unusable vector \(all zeros\)/);
    expect(() => store.add([NaN, 1, 0])).toThrow(/NaN/);
    expect(store.size).toBe(0);
    store.add([1, 0, 0]);
    expect(store.size).toBe(1);
  });

  it("stores a plain array of numbers (what embedders return) exactly as the same vector in a Float32Array", () => {
    const store = new VectorStore();
    const values = Array.from({ length: 64 }, (_, i) => Math.fround(Math.sin(i + 1)));
    const fromArray = store.add(values);
    const fromTyped = store.add(Float32Array.from(values));
    expect(Array.from(store.codesAt(fromArray).codes)).toEqual(Array.from(store.codesAt(fromTyped).codes));
    expect(store.codesAt(fromArray).scale).toBe(store.codesAt(fromTyped).scale);
    expect(store.cosine(fromArray, values)).toBeCloseTo(1, 2);
  });
});

describe("VaultIndex with an embedding server that sends bad vectors", () => {
  let ollama: OllamaTestServer;
  let h: Harness;
  beforeEach(async () => {
    ollama = await startOllamaServer({ embeddingDim: 16 });
    h = await makeHarness(notes);
  });
  afterEach(async () => {
    await h.cleanup();
    await ollama.close();
  });

  const embedder = () =>
    createOllamaEmbedder({ baseUrl: ollama.url, model: "nomic-embed-text", fetch: (i, init) => fetch(i, init), clock: nodeClock, timeoutMs: 2_000, batchSize: 2 });

  it.each([
    ["out-of-range", /out of range/],
    ["zero", /all zeros/],
    ["nan", /unreadable/],
  ] as const)("%s vectors are an embedding failure: nothing stored, search scores stay numbers, the next run embeds", async (bad, why) => {
    ollama.script({ route: "embed", extra: { badVectors: bad }, times: Infinity });
    const e = embedder();
    const index = h.open({ embedder: e });
    const status = await index.open();
    expect(status.embedded).toBe(0);
    expect(status.chunks).toBe(3);
    expect(status.embedderError).toMatch(why);
    const hits = await index.searchNotes("apples orchard");
    expect(hits[0].path).toBe("Apples.md");
    for (const hit of hits) expect(Number.isFinite(hit.score)).toBe(true);
    await index.close();

    // The server recovers: the chunks still lack vectors, so the next run embeds them (nothing poisoned was kept).
    ollama.reset();
    const again = h.open({ embedder: e });
    const recovered = await again.open();
    expect(recovered.embedded).toBe(3);
    expect(recovered.embedderError).toBeUndefined();
    const after = await again.searchNotes("apples orchard");
    expect(after[0].path).toBe("Apples.md");
    const chunkHits = await again.searchChunks("apples orchard");
    expect(chunkHits[0].vectorScore).toBeGreaterThan(0);
    for (const hit of chunkHits) expect(Number.isFinite(hit.score) && Number.isFinite(hit.vectorScore)).toBe(true);
  });

  it("a bad query vector is ignored: keyword ranking, never a NaN score", async () => {
    const e = embedder();
    const index = h.open({ embedder: e });
    expect((await index.open()).embedded).toBe(3);
    ollama.script({ route: "embed", extra: { badVectors: "out-of-range" }, times: Infinity });
    const hits = await index.searchChunks("bananas sun");
    expect(hits[0].chunk.path).toBe("Bananas.md");
    for (const hit of hits) {
      expect(Number.isFinite(hit.score)).toBe(true);
      expect(hit.vectorScore).toBe(0);
    }
  });
});
