import { NOTE_KEYWORD_SHARE, TITLE_WEIGHT } from "../../../src/core/search/hybrid-search";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { HashEmbedder } from "../../support/hash-embedder";
import { makeHarness, type Harness } from "../indexing/index-harness";

const vault = {
  "Biology/Photosynthesis.md":
    "---\naliases: [Light reactions]\ntags: [plants]\n---\n# Photosynthesis\n\nPlants turn light, water and carbon dioxide into sugar.\n\n## Chlorophyll\n\nThe green pigment absorbs red and blue light.",
  "Journal/2024-05-01.md": "# Diary\n\nRead a long article today; it mentioned photosynthesis once, in passing, between other topics like trains and coffee.",
  "Cooking/Bread.md":
    "# Bread\n\n" +
    Array.from({ length: 6 }, (_, i) => `## Step ${i + 1}\n\nKnead the dough ${i + 1} times; sourdough starter makes the dough rise. ` + "filler words ".repeat(100)).join("\n\n"),
  "Cooking/Pasta.md": "# Pasta\n\nBoil salted water, then the dough-free dried pasta.",
  "Travel/Trains.md": "# Trains\n\nNight trains across Europe are slow but comfortable.",
};

describe("hybrid search", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness(vault, new HashEmbedder({ dim: 256, batchSize: 16 }));
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it("ranks a note titled with the query above one that mentions it in passing", async () => {
    const index = h.open();
    await index.open();
    const hits = await index.searchNotes("photosynthesis");
    expect(hits.map((n) => n.path).slice(0, 2)).toEqual(["Biology/Photosynthesis.md", "Journal/2024-05-01.md"]);
    expect(hits[0].title).toBe("Photosynthesis");
    expect(hits[0].folder).toBe("Biology");
    await index.close();
  });

  it("returns one entry per note, with its matching chunks best first", async () => {
    const index = h.open();
    await index.open();
    const hits = await index.searchNotes("sourdough dough", { limit: 5 });
    const paths = hits.map((n) => n.path);
    expect(new Set(paths).size).toBe(paths.length);
    const bread = hits.find((n) => n.path === "Cooking/Bread.md");
    expect(bread).toBeDefined();
    expect(hits[0].path).toBe("Cooking/Bread.md");
    expect(bread!.chunks.length).toBeGreaterThan(1);
    const scores = bread!.chunks.map((c) => c.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // The note scores at least its best chunk (it adds a share of its second-best keyword chunk).
    expect(bread!.score).toBeGreaterThanOrEqual(scores[0]);
    expect(bread!.startLine).toBe(bread!.chunks[0].chunk.startLine);
    // Chunk search does not group.
    const chunks = await index.searchChunks("sourdough dough", { limit: 20 });
    expect(chunks.filter((c) => c.chunk.path === "Cooking/Bread.md").length).toBeGreaterThan(1);
    await index.close();
  });

  it("scores w × vector + (1 − w) × keyword (w = the semanticWeight setting), plus a small title boost", async () => {
    const w = DEFAULT_SETTINGS.semanticWeight;
    const index = h.open();
    await index.open();
    // Words in no title or file name, so the title boost is 0 for every hit.
    const hits = await index.searchChunks("green pigment absorbs", { limit: 10 });
    expect(hits.length).toBeGreaterThan(1);
    expect(Math.max(...hits.map((x) => x.keywordScore))).toBeCloseTo(1, 6);
    expect(hits.some((x) => x.vectorScore > 0 && x.vectorScore < 1)).toBe(true);
    for (const x of hits) expect(x.score * (1 + TITLE_WEIGHT)).toBeCloseTo(w * x.vectorScore + (1 - w) * x.keywordScore, 5);
    // Keyword-only (no embedder): the keyword score alone.
    const keywordOnly = h.open({ embedder: null });
    await keywordOnly.open();
    const kw = await keywordOnly.searchChunks("green pigment absorbs", { limit: 10 });
    expect(kw.length).toBeGreaterThan(0);
    for (const x of kw) {
      expect(x.vectorScore).toBe(0);
      expect(x.score * (1 + TITLE_WEIGHT)).toBeCloseTo(x.keywordScore, 5);
    }
    // A title match lifts a hit by TITLE_WEIGHT / (1 + TITLE_WEIGHT) at most.
    const titled = (await index.searchChunks("photosynthesis", { limit: 10 })).find((x) => x.chunk.path === "Biology/Photosynthesis.md")!;
    expect(titled.score * (1 + TITLE_WEIGHT)).toBeCloseTo(w * titled.vectorScore + (1 - w) * titled.keywordScore + TITLE_WEIGHT, 5);
    await keywordOnly.close();
    await index.close();
  });

  it("scores a note by its best meaning and its best keyword chunk plus a share of the second-best", async () => {
    const w = DEFAULT_SETTINGS.semanticWeight;
    const index = h.open();
    await index.open();
    // "dough" is in no title: the title boost is 0; Bread has six chunks with it.
    const [bread] = await index.searchNotes("sourdough dough", { limit: 1 });
    expect(bread.path).toBe("Cooking/Bread.md");
    const kws = bread.chunks.map((c) => c.keywordScore).sort((a, b) => b - a);
    const vec = Math.max(...bread.chunks.map((c) => c.vectorScore));
    expect(kws[1]).toBeGreaterThan(0);
    const keyword = Math.min(1, kws[0] + NOTE_KEYWORD_SHARE * kws[1]);
    expect(bread.score * (1 + TITLE_WEIGHT)).toBeCloseTo(w * vec + (1 - w) * keyword, 5);
    expect(bread.score).toBeGreaterThan(bread.chunks[0].score);
    // Share 0: the note is its best chunk again.
    const [alone] = await index.searchNotes("sourdough dough", { limit: 1, noteKeywordShare: 0 });
    expect(alone.score).toBeCloseTo(alone.chunks[0].score, 10);
    // Meaning only: no keyword share, the best chunk's meaning.
    const [meaning] = await index.searchNotes("sourdough dough", { limit: 1, semanticWeight: 1 });
    expect(meaning.score * (1 + TITLE_WEIGHT)).toBeCloseTo(Math.max(...meaning.chunks.map((c) => c.vectorScore)), 5);
    await index.close();
  });

  it("follows the semanticWeight setting: 0 ranks by keywords only, 1 by meaning only", async () => {
    const keywords = h.open({ settings: { semanticWeight: 0 } });
    await keywords.open();
    const kw = await keywords.searchChunks("green pigment absorbs", { limit: 10 });
    expect(kw.length).toBeGreaterThan(0);
    for (const x of kw) expect(x.vectorScore).toBe(0);
    await keywords.close();
    const meaning = h.open({ settings: { semanticWeight: 1 } });
    await meaning.open();
    const vec = await meaning.searchChunks("green pigment absorbs", { limit: 10 });
    expect(vec.length).toBeGreaterThan(0);
    for (const x of vec) {
      expect(x.keywordScore).toBe(0);
      expect(x.score * (1 + TITLE_WEIGHT)).toBeCloseTo(x.vectorScore, 5);
    }
    expect(vec.map((x) => x.vectorScore)).toEqual([...vec.map((x) => x.vectorScore)].sort((a, b) => b - a));
    // Without vectors (no embedding model) meaning-only still answers, by keywords.
    const noModel = h.open({ embedder: null, settings: { semanticWeight: 1 } });
    await noModel.open();
    expect((await noModel.searchChunks("green pigment absorbs", { limit: 10 })).length).toBeGreaterThan(0);
    await noModel.close();
    // A per-call weight wins over the setting.
    const mixed = await meaning.searchChunks("green pigment absorbs", { limit: 10, semanticWeight: 0 });
    for (const x of mixed) expect(x.vectorScore).toBe(0);
    await meaning.close();
  });

  it("gives scores in 0..1, best first, and snippets that show the matched words", async () => {
    const index = h.open();
    await index.open();
    for (const q of ["light", "night trains", "pigment absorbs", "carbon dioxide sugar"]) {
      const hits = await index.searchChunks(q, { limit: 10 });
      expect(hits.length).toBeGreaterThan(0);
      for (const hit of hits) {
        for (const s of [hit.score, hit.keywordScore, hit.vectorScore]) {
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(1);
        }
      }
      expect(hits.map((x) => x.score)).toEqual([...hits.map((x) => x.score)].sort((a, b) => b - a));
      expect(hits[0].snippet.toLowerCase()).toContain(q.split(" ")[0]);
      expect(hits[0].snippet.length).toBeLessThanOrEqual(230);
    }
    const [bread] = await index.searchNotes("sourdough");
    expect(bread.snippet).toMatch(/sourdough/);
    expect(bread.snippet).not.toMatch(/^#/);
    await index.close();
  });

  it("finds notes while the last word is still being typed", async () => {
    const index = h.open({ embedder: null });
    await index.open();
    expect((await index.searchNotes("photosyn"))[0].path).toBe("Biology/Photosynthesis.md");
    expect((await index.searchNotes("night tra"))[0].path).toBe("Travel/Trains.md");
    await index.close();
  });

  it("finds notes by alias, tag and folder name", async () => {
    const index = h.open();
    await index.open();
    expect((await index.searchNotes("light reactions"))[0].path).toBe("Biology/Photosynthesis.md");
    expect((await index.searchNotes("plants"))[0].path).toBe("Biology/Photosynthesis.md");
    expect((await index.searchNotes("travel"))[0].path).toBe("Travel/Trains.md");
    await index.close();
  });

  it("honours limit, minScore and pathPrefix, and answers an empty query with nothing", async () => {
    const index = h.open();
    await index.open();
    expect(await index.searchNotes("   ")).toEqual([]);
    expect(await index.searchNotes("dough water", { limit: 1 })).toHaveLength(1);
    const cooking = await index.searchNotes("water", { pathPrefix: "Cooking/" });
    expect(cooking.map((n) => n.path)).toEqual(["Cooking/Pasta.md"]);
    const strict = await index.searchChunks("water", { minScore: 0.99 });
    for (const hit of strict) expect(hit.score).toBeGreaterThanOrEqual(0.99);
    await index.close();
  });

  it("finds nothing for stop words or unknown words when searching by keyword only", async () => {
    const index = h.open({ embedder: null });
    await index.open();
    expect(await index.searchNotes("the and of")).toEqual([]);
    expect(await index.searchNotes("zzzunknownword")).toEqual([]);
    const hits = await index.searchNotes("trains");
    expect(hits.map((n) => n.path)).toEqual(["Travel/Trains.md", "Journal/2024-05-01.md"]);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    await index.close();
  });

  it("falls back to keywords when the query cannot be embedded, without failing", async () => {
    const good = new HashEmbedder({ dim: 256, batchSize: 16 });
    const index = h.open({ embedder: good });
    await index.open();
    const hybrid = await index.searchNotes("night trains");
    expect(hybrid[0].chunks[0].vectorScore).toBeGreaterThan(0);
    await index.close();

    // Same model id (so the stored vectors still count), but it fails now.
    let calls = 0;
    const broken = new HashEmbedder({
      dim: 256,
      batchSize: 16,
      failWith: () => {
        calls++;
        return new ProviderError("unreachable", "Ollama is not reachable");
      },
    });
    const offline = h.open({ embedder: broken });
    await offline.open();
    const hits = await offline.searchNotes("night trains");
    expect(calls).toBeGreaterThan(0);
    expect(hits[0].path).toBe("Travel/Trains.md");
    expect(hits[0].chunks[0].vectorScore).toBe(0);
    expect(hits[0].score).toBeGreaterThan(0);
  });

  it("does not wait for an embedder that hangs: keyword results after the query timeout", async () => {
    const hanging = { id: "hash:256", batchSize: 16, embed: () => new Promise<Float32Array[]>(() => undefined) };
    const index = h.open({ embedder: hanging, index: { queryTimeoutMs: 50 } });
    await index.open();
    const hits = await index.searchNotes("comfortable trains");
    expect(hits[0].path).toBe("Travel/Trains.md");
    expect(hits[0].chunks[0].vectorScore).toBe(0);
    await index.close();
  });

  it("is stopped, not empty, when stopped while its query is embedded", async () => {
    // An embedder that answers only when stopped: the search must say it was stopped, not "nothing matches".
    const stopped = new AbortController();
    const slow = {
      id: "hash:256",
      batchSize: 16,
      embed: () => {
        stopped.abort();
        return new Promise<Float32Array[]>(() => undefined);
      },
    };
    const index = h.open({ embedder: slow });
    await index.open();
    await expect(index.searchNotesWithReason("comfortable trains", { signal: stopped.signal })).rejects.toMatchObject({ name: "AbortError" });
    await index.close();
  });

  it("caches query vectors: repeating a query does not embed it again", async () => {
    const embedder = new HashEmbedder({ dim: 256, batchSize: 16 });
    const index = h.open({ embedder });
    await index.open();
    embedder.reset();
    await index.searchNotes("comfortable night trains");
    await index.searchNotes("comfortable night trains");
    expect(embedder.calls).toBe(1);
  });
});

describe("note-level keyword evidence", () => {
  let h: Harness;
  const filler = "Other garden chores fill this section: raking, pruning, watering the beds and fixing the fence. ";
  beforeAll(async () => {
    // Opened without an embedder below: keyword scores alone, so the ranking is exact.
    h = await makeHarness({
      // One short paragraph with both words: the best single chunk.
      "Garden/Single.md": "# Single\n\nCompost heap: worms turn kitchen scraps into soil.",
      // Both words again in each of two longer sections: each chunk alone scores lower.
      "Garden/Spread.md": `# Spread\n\n## Autumn\n\nThe compost gets the fallen leaves; worms do the rest. ${filler.repeat(2)}\n\n## Spring\n\nWorms are back in the compost by April. ${filler.repeat(2)}`,
    });
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it("ranks a note whose sections each hold the query's words above its best chunk alone", async () => {
    const index = h.open({ embedder: null });
    await index.open();
    // "manure" is in no note: the query's coverage stays below 1, so no note's keyword evidence reaches the cap of 1.
    const query = "compost worms manure";
    const chunks = await index.searchChunks(query, { limit: 5 });
    expect(chunks.map((c) => c.chunk.id)).toEqual(["Garden/Single.md#0", "Garden/Spread.md#1", "Garden/Spread.md#0"]);
    // By best chunk alone (the share at 0) Single wins; with the second section's evidence, Spread does.
    expect((await index.searchNotes(query, { noteKeywordShare: 0 })).map((n) => n.path)).toEqual(["Garden/Single.md", "Garden/Spread.md"]);
    const notes = await index.searchNotes(query);
    expect(notes.map((n) => n.path)).toEqual(["Garden/Spread.md", "Garden/Single.md"]);
    const [best, second] = notes[0].chunks.map((c) => c.keywordScore);
    expect(notes[0].score * (1 + TITLE_WEIGHT)).toBeCloseTo(best + NOTE_KEYWORD_SHARE * second, 5);
    await index.close();
  });
});

describe("a long note that matches in every section", () => {
  let h: Harness;
  const small = Array.from({ length: 12 }, (_, i) => i);
  beforeAll(async () => {
    // A journal whose 150 entries each mention the query's word: its chunks alone fill a plain candidate pool.
    const journal = ["# Journal", ""];
    const filler = "Errands, reading and a long walk filled the rest of the day. ".repeat(16);
    for (let d = 0; d < 150; d++) journal.push(`## Day ${d}`, "", `Meeting day ${d}: a meeting, then another meeting. ${filler}`, "");
    const notes: Record<string, string> = { "Journal.md": journal.join("\n") };
    // Each mentions the word once, in a longer text: every journal chunk outscores them by keywords.
    for (const i of small) notes[`Notes/Room ${i}.md`] = `# Room ${i}\n\nThe weekly meeting moved to room ${i}. ${filler}${filler}\n`;
    h = await makeHarness(notes, new HashEmbedder({ dim: 64, batchSize: 32 }));
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it.each([
    ["by keywords", null],
    ["by meaning and keywords", undefined],
  ])("does not crowd the other matching notes out of the results (%s)", async (_how, embedder) => {
    const index = h.open(embedder === null ? { embedder: null } : {});
    expect((await index.open()).chunks).toBeGreaterThan(150);
    const ten = await index.searchNotes("meeting", { limit: 10 });
    expect(ten).toHaveLength(10);
    const all = await index.searchNotes("meeting", { limit: 20 });
    expect(all.map((n) => n.path).sort()).toEqual(["Journal.md", ...small.map((i) => `Notes/Room ${i}.md`)].sort());
    await index.close();
  });
});
