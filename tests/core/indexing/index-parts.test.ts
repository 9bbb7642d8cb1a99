import { checksumBytes, partChecksum } from "../../../src/core/indexing/checksum";
import { createExclusionFilter, globToRegExp } from "../../../src/core/indexing/exclusions";
import { INDEX_FORMAT } from "../../../src/core/indexing/index-persistence";
import { compareBytes, compareCodePoints, decodeShard, encodeShard, encodeShardVectors, IndexLoadError } from "../../../src/core/indexing/shard-codec";
import { type ChunkRecord, chunkId, chunkRecord, encodeTrail, headingsOf, type NoteRecord } from "../../../src/core/indexing/index-records";
import { FIELD_BOOST, TextIndex } from "../../../src/core/indexing/text-index";
import { MAX_POSTING_WEIGHT, PACKED_SPAN, packPosting } from "../../../src/core/indexing/text-scoring";
import { tokenizeWords } from "../../../src/core/indexing/text-tokenizer";
import { codeAt, packInto, rowBytes } from "../../../src/core/indexing/vector-codes";
import { VectorStore } from "../../../src/core/indexing/vector-store";
import { seededRandom } from "../../support/seeded-random";
import type { Chunk } from "../../../src/core/indexing/chunk";
import { makeSnippet } from "../../../src/core/search/snippet";

function chunk(id: string, text: string, extra: Partial<Chunk> = {}): Chunk {
  return { id, path: `${id}.md`, title: id, aliases: [], tags: [], headings: [], startLine: 1, endLine: 1, text, textHash: id, ...extra };
}

/** A note record holding these chunks as the store makes them (texts in memory, not saved yet). */
function noteRecord(path: string, chunks: Chunk[], extra: Partial<NoteRecord> = {}): NoteRecord {
  const note: NoteRecord = { path, hash: "h", mtime: 1, size: 1, title: path, aliases: [], tags: [], shard: 0, chunks: [], ...extra };
  chunks.forEach((c, k) => note.chunks.push(chunkRecord(note, k, encodeTrail(c.headings), c, c.text)));
  return note;
}

describe("exclusions", () => {
  const skip = createExclusionFilter(["Templates/", "Archive", "**/*.excalidraw.md", "Daily/2023-*", "  "], ".obsidian");
  it.each([
    ["Templates/Daily.md", true],
    ["Templates.md", false],
    ["Archive/x.md", true],
    ["Archive.md", false],
    ["Archived/x.md", false],
    ["Drawing.excalidraw.md", true],
    ["a/b/Drawing.excalidraw.md", true],
    ["Daily/2023-01-01.md", true],
    ["Daily/2024-01-01.md", false],
    ["Daily/2023/deeper.md", false],
    [".obsidian/plugins/x.md", true],
    [".krypton/index/a.md", true],
    ["Notes/ok.md", false],
  ])("%s → %s", (path, excluded) => {
    expect(skip(path)).toBe(excluded);
  });

  it("uses the vault's own config folder name", () => {
    expect(createExclusionFilter([], ".config")(".config/a.md")).toBe(true);
  });

  it("treats regex characters in patterns literally", () => {
    expect(globToRegExp("a+b (1)/*.md").test("a+b (1)/x.md")).toBe(true);
    expect(globToRegExp("a+b (1)/*.md").test("aab 1/x.md")).toBe(false);
  });
});

describe("VectorStore", () => {
  it("finds the same top k as a brute-force reference over its 4-bit codes, skipping freed slots", () => {
    const store = new VectorStore();
    let seed = 7;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
    const vectors: number[][] = [];
    // 5000 vectors span two memory blocks; 13 dimensions are not a multiple of the SIMD width.
    for (let i = 0; i < 5000; i++) {
      const v = Array.from({ length: 13 }, rnd);
      vectors.push(v);
      expect(store.add(v)).toBe(i);
    }
    expect(store.simd).toBe(true);
    for (let i = 0; i < 5000; i += 3) store.remove(i);
    expect(store.size).toBe(5000 - 1667);
    const q = Array.from({ length: 13 }, rnd);
    const qNorm = Math.hypot(...q);
    const unit = q.map((x) => x / qNorm);
    const cos = (v: number[]) => v.reduce((s, x, i) => s + x * q[i], 0) / Math.hypot(...v) / qNorm;
    // The reference scores the stored (quantized) vectors exactly, in floats.
    const stored = (i: number) => Array.from(store.vectorAt(i)).reduce((s, x, d) => s + x * unit[d], 0);
    const expected = vectors
      .map((_, i) => ({ i, s: stored(i) }))
      .filter(({ i }) => i % 3 !== 0)
      .sort((a, b) => b.s - a.s)
      .slice(0, 10);
    const got = store.search(q, 10);
    expect(got.slots).toEqual(expected.map((e) => e.i));
    got.scores.forEach((s, k) => expect(s).toBeCloseTo(expected[k].s, 5));
    // Quantization moves a cosine by at most half a step per dimension, weighted by the query.
    const queryMass = unit.reduce((s, x) => s + Math.abs(x), 0);
    got.slots.forEach((slot, k) => expect(Math.abs(got.scores[k] - cos(vectors[slot]))).toBeLessThanOrEqual((store.codesAt(slot).scale / 2) * queryMass + 1e-6));
    // Freed slots are reused.
    expect(store.add(q)).toBe(4998);
    expect(store.search(q, 1).slots).toEqual([4998]);
    expect(store.search(q, 1).scores[0]).toBeCloseTo(1, 2);
  });

  it("keeps cosines of real-sized (768-d) vectors within a few thousandths of the exact ones, and finds the best ones", () => {
    const random = seededRandom(3);
    const gaussian = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const dim = 768;
    const query = Array.from({ length: dim }, gaussian);
    const norm = (v: number[]) => Math.hypot(...v);
    // Vectors at graded distances from the query, as real hits are: cosines from about 0.9 down to 0.
    const vectors = Array.from({ length: 400 }, (_, i) => {
      const noise = Array.from({ length: dim }, gaussian);
      const mix = 1 - i / 400;
      return query.map((q, d) => mix * q + (1 - mix) * 1.5 * noise[d]);
    });
    const exact = (v: number[]) => v.reduce((s, x, d) => s + x * query[d], 0) / norm(v) / norm(query);
    const store = new VectorStore();
    vectors.forEach((v) => store.add(v));
    const errors = vectors.map((v, i) => Math.abs(store.cosine(i, query) - exact(v)));
    expect(errors.reduce((a, b) => a + b, 0) / errors.length).toBeLessThan(0.006);
    expect(Math.max(...errors)).toBeLessThan(0.025);
    // The top 20 found are all among the exact best, up to near-ties (cosines within the rounding of the 20th).
    const found = store.search(query, 20);
    const twentieth = vectors.map(exact).sort((a, b) => b - a)[19];
    for (const slot of found.slots) expect(exact(vectors[slot])).toBeGreaterThan(twentieth - 0.01);
  });

  it("room reserved up front (a load that knows its vector count) changes no slot and no score", () => {
    const reserved = new VectorStore();
    reserved.reserve(9000, 16);
    const grown = new VectorStore();
    const codes = new Int8Array(16 * 3000).map((_, i) => ((i * 37) % 255) - 127);
    for (let v = 0; v < 3000; v++) codes[v * 16] = 127;
    const scales = new Float32Array(3000).fill(0.01);
    for (let s = 0; s < 3; s++) expect(reserved.addCodesMany(codes, scales, 3000, 16)).toBe(grown.addCodesMany(codes, scales, 3000, 16));
    const q = Array.from({ length: 16 }, (_, i) => Math.sin(i));
    expect(reserved.search(q, 5)).toEqual(grown.search(q, 5));
    expect(reserved.size).toBe(9000);
  });

  it("rejects a vector of another dimension and refuses zero vectors", () => {
    const store = new VectorStore();
    store.add([1, 0, 0]);
    expect(() => store.add([1, 0])).toThrow(/dimensions/);
    expect(() => store.add([0, 0, 0])).toThrow(/all zeros/);
    expect(store.size).toBe(1);
    expect(store.search([1, 0, 0], 5).slots[0]).toBe(0);
    expect(store.search([1, 0], 5).slots).toEqual([]);
  });
});

/** A TextIndex keyed by chunk ids, as the tests below think of documents (the store keys it by record). */
function idIndex() {
  const index = new TextIndex<string>();
  const slots = new Map<string, number>();
  return {
    index,
    add(chunks: Chunk[]) {
      for (const c of chunks) {
        if (slots.has(c.id)) index.removeSlot(slots.get(c.id)!);
        slots.set(c.id, index.add(c, c.id));
      }
    },
    remove(ids: string[]) {
      for (const id of ids) index.removeSlot(slots.get(id) ?? -1);
    },
    searchNow: (query: string, limit: number) => index.searchNow(query, limit).map((h) => ({ ...h, id: h.owner })),
    compact: (between: () => Promise<void>) => index.compact(between),
    get size() {
      return index.size;
    },
  };
}

describe("TextIndex", () => {
  it("a shard loaded as one block scores exactly like the same chunks added one by one, after removals and compaction too", async () => {
    const words = ["compost", "garden", "tomato", "bees", "orchard", "soil", "water", "sun", "photosynthesis", "leaf", "root", "prune"];
    let seed = 5;
    const pick = () => words[(seed = (seed * 48271) % 2147483647) % words.length];
    const chunks = Array.from({ length: 300 }, (_, i) =>
      chunk(`c${i}`, Array.from({ length: 5 + (i % 17) }, pick).join(" "), { title: i % 7 === 0 ? `Garden ${pick()}` : `Note ${i}`, headings: i % 3 === 0 ? [pick()] : [] }),
    );
    const oneByOne = new TextIndex<string>();
    const slotsA = chunks.map((c) => oneByOne.add(c, c.id));
    // The block: the chunks' stored analysis, as a shard file holds it (encoded and decoded for real).
    const loaded = new TextIndex<string>();
    const records = chunks.map((c) => noteRecord(c.path, [c], { title: c.title }));
    const stored = decodeShard(await encodeShard(records, 0, () => null, (rec) => rec.text as string), 0, 0).text;
    // Sorted words: what lets a search find a word in a shard without decoding its word list.
    expect(stored.dictionary).toEqual([...stored.dictionary].sort());
    const first = loaded.addBlock(chunks.map((c) => c.id), loaded.resolveTerms(stored.dictionary), stored);
    const same = () => {
      for (const q of ["compost", "garden tomato", "bees orchard soil", "photo", "water sun leaf root prune", "nothing"]) {
        const a = oneByOne.searchNow(q, 20).map((h) => [h.owner, h.score.toFixed(6), h.matched, h.coverage.toFixed(6)]);
        const b = loaded.searchNow(q, 20).map((h) => [h.owner, h.score.toFixed(6), h.matched, h.coverage.toFixed(6)]);
        expect({ q, b }).toEqual({ q, b: a });
      }
    };
    same();
    for (let i = 0; i < chunks.length; i += 4) {
      oneByOne.removeSlot(slotsA[i]);
      loaded.removeSlot(first + i);
    }
    same();
    const extra = chunk("new", "compost compost bees", { title: "Fresh" });
    oneByOne.add(extra, extra.id);
    loaded.add(extra, extra.id);
    same();
    await oneByOne.compact(async () => undefined);
    await loaded.compact(async () => undefined);
    same();
    expect(loaded.size).toBe(oneByOne.size);
  });

  it("sealing the words added one by one into blocks changes no result, with searches, removals and additions between its steps", async () => {
    const words = ["compost", "garden", "tomato", "bees", "orchard", "soil", "water", "sun", "photosynthesis", "leaf", "root", "prune"];
    let seed = 11;
    const pick = () => words[(seed = (seed * 48271) % 2147483647) % words.length];
    const chunks = Array.from({ length: 400 }, (_, i) => chunk(`c${i}`, Array.from({ length: 3 + (i % 13) }, pick).join(" "), { title: `Note ${i % 9}` }));
    const plain = new TextIndex<string>();
    const sealed = new TextIndex<string>();
    // Small limits: many chunks tie, so the order runs are read in shows too.
    const queries = ["compost", "garden tomato", "bees orchard soil", "photo", "water sun leaf root prune", "note", "nothing"];
    const same = () => {
      for (const q of queries) {
        for (const limit of [3, 10, 400]) {
          const a = plain.searchNow(q, limit).map((h) => [h.owner, h.slot, h.score.toFixed(6), h.matched, h.coverage.toFixed(6)]);
          const b = sealed.searchNow(q, limit).map((h) => [h.owner, h.slot, h.score.toFixed(6), h.matched, h.coverage.toFixed(6)]);
          expect({ q, limit, b }).toEqual({ q, limit, b: a });
        }
      }
    };
    const add = (c: Chunk) => expect(sealed.add(c, c.id)).toBe(plain.add(c, c.id));
    chunks.slice(0, 150).forEach(add);
    expect(sealed.unsealedPostings).toBeGreaterThan(0);
    await sealed.seal(async () => same(), 3);
    expect(sealed.unsealedPostings).toBe(0);
    same();
    chunks.slice(150, 300).forEach(add);
    let removed = 0;
    // Removals between seal steps (what a search meanwhile then compacts): each word still moves whole.
    await sealed.seal(async () => {
      plain.removeSlot(removed);
      sealed.removeSlot(removed);
      removed += 7;
      same();
    }, 2);
    // Chunks with new words added between seal steps (a scan goes on meanwhile): found, and nothing lost.
    chunks.slice(300, 350).forEach(add);
    let extra = 0;
    await sealed.seal(async () => {
      const c = chunk(`x${extra}`, `freshword${extra} compost`, { title: "Late" });
      extra++;
      add(c);
      same();
    }, 1);
    expect(extra).toBeGreaterThan(0);
    expect(sealed.searchNow("freshword0", 5).map((h) => h.owner)).toEqual(["x0"]);
    chunks.slice(350).forEach(add);
    same();
    await plain.compact(async () => undefined);
    await sealed.compact(async () => undefined);
    same();
    await sealed.seal(async () => undefined);
    same();
    expect(sealed.size).toBe(plain.size);
  });

  it("keeps every posting of a word in more chunks than one packed run spans, loaded, sealed and one by one alike", async () => {
    // 70,000 chunks in one shard (one huge note) and one scan: the word "common" is in all of them, so its
    // runs must split at PACKED_SPAN; "tally" is counted 40,000 times in one chunk (past MAX_POSTING_WEIGHT,
    // which every form of run caps alike).
    const count = PACKED_SPAN + 4464;
    const chunks = Array.from({ length: count }, (_, i) =>
      chunk(`c${i}`, `common w${i % 997}${i % 5000 === 7 ? " tally".repeat(i === 65007 ? 40000 : 1 + (i % 9)) : ""}`, { title: "", path: "n.md" }),
    );
    const oneByOne = new TextIndex<string>();
    chunks.forEach((c) => oneByOne.add(c, c.id));
    const sealed = new TextIndex<string>();
    sealed.add(chunk("before", "common"), "before");
    sealed.removeSlot(0);
    chunks.forEach((c) => sealed.add(c, c.id));
    await sealed.seal(async () => undefined, 4096);
    const loaded = new TextIndex<string>();
    const note = noteRecord("n.md", chunks, { title: "" });
    const stored = decodeShard(await encodeShard([note], 0, () => null, (rec) => rec.text as string), 0, 0).text;
    loaded.addBlock(chunks.map((c) => c.id), loaded.resolveTerms(stored.dictionary), stored);
    for (const [q, limit] of [["common", count], ["w996", 100], ["tally", 20], ["common tally w7", 50]] as const) {
      const a = oneByOne.searchNow(q, limit).map((h) => [h.owner, h.score.toFixed(5), h.matched]);
      expect(a.length).toBe(q === "common" ? count : Math.min(limit, a.length));
      for (const other of [sealed, loaded]) expect({ q, hits: other.searchNow(q, limit).map((h) => [h.owner, h.score.toFixed(5), h.matched]) }).toEqual({ q, hits: a });
    }
    expect(loaded.searchNow("tally", 20).map((h) => h.owner)).toContain("c65007");
  });

  it("packs a posting's boosted count exactly: every field boost is a multiple of one half", () => {
    for (const boost of Object.values(FIELD_BOOST)) expect(Number.isInteger(boost * 2)).toBe(true);
    for (const weight of [0.5, 1, 1.5, 3, 7.5, 1234.5, 32767.5]) expect(packPosting(12345, weight) & 0xffff).toBe(weight * 2);
    expect(packPosting(PACKED_SPAN - 1, 1) >>> 16).toBe(PACKED_SPAN - 1);
    // Beyond MAX_POSTING_WEIGHT a count stays at the top, in packed runs and the scorer alike.
    expect(MAX_POSTING_WEIGHT).toBe(32767.5);
    expect(packPosting(0, 40000) & 0xffff).toBe(0xffff);
  });

  it("scores with field boosts, removes lazily and compacts", async () => {
    const index = idIndex();
    index.add([
      chunk("a", "nothing about it here, just gardens"),
      chunk("b", "compost compost compost is great", { title: "Gardening" }),
      chunk("c", "a compost heap", { title: "Compost" }),
    ]);
    const hits = index.searchNow("compost", 10);
    expect(hits.map((x) => x.id)).toEqual(["c", "b"]);
    index.remove(["c"]);
    expect(index.searchNow("compost", 10).map((x) => x.id)).toEqual(["b"]);
    index.add([chunk("c", "a different text about bees")]);
    expect(index.searchNow("compost", 10).map((x) => x.id)).toEqual(["b"]);
    expect(index.searchNow("bees", 10).map((x) => x.id)).toEqual(["c"]);
    await index.compact(async () => undefined);
    expect(index.size).toBe(3);
    expect(index.searchNow("gardens compost bees", 2)).toHaveLength(2);
  });

  it("completes a half-typed last word, ranking exact matches first", () => {
    const index = idIndex();
    const same = { title: "Note", path: "Note.md" };
    index.add([
      chunk("a", "photosynthesis in leaves", same),
      chunk("b", "a photo of leaves", same),
      chunk("c", "photographs and photons", same),
      chunk("d", "nothing", same),
    ]);
    expect(index.searchNow("phot", 10).map((x) => x.id).sort()).toEqual(["a", "b", "c"]);
    expect(index.searchNow("photo", 10)[0].id).toBe("b");
    // Only the last word is completed; "ph" is too short to complete.
    expect(index.searchNow("phot leaves", 10).map((x) => x.id).sort()).toEqual(["a", "b"]);
    expect(index.searchNow("ph", 10)).toEqual([]);
    index.remove(["a"]);
    // "photos" is stemmed to "photo": the remaining photo chunk is found.
    expect(index.searchNow("photos", 10).map((x) => x.id)).toEqual(["b"]);
    expect(index.searchNow("photosy", 10)).toEqual([]);
  });

  it("tokenizes any script, folds accents and drops stop words", () => {
    expect(tokenizeWords("The Naïve café — 日本語 und Ümlaut_x 42!")).toEqual(["naive", "cafe", "日本語", "und", "umlaut_x", "42"]);
    expect(tokenizeWords("the and of", true)).toEqual(["the", "and", "of"]);
    expect(tokenizeWords("x".repeat(41))).toEqual([]);
  });
});

describe("heading trails", () => {
  it("keep a trail as one string and give back exactly the headings, empty ones and none included", () => {
    const note = noteRecord("n.md", []);
    for (const headings of [[], [""], ["", ""], ["Setup"], ["Setup", "Ollama", "東京 🌧️"], ["a".repeat(40), "", "b"]]) {
      const trail = encodeTrail(headings);
      expect(typeof trail).toBe("string");
      expect(headingsOf(chunkRecord(note, 0, trail, { startLine: 1, endLine: 1, textHash: "h" }, undefined))).toEqual(headings);
    }
    expect(encodeTrail([])).toBe("");
    expect(encodeTrail([""])).not.toBe(encodeTrail([]));
  });
});

describe("index shards", () => {
  /** A vector as the store keeps it: a row of 4-bit codes and its scale. */
  const stored = (vector: number[]) => {
    const codes = new Int8Array(rowBytes(vector.length));
    const scale = packInto(vector, 0, vector.length, codes, 0);
    return { codes, scale };
  };
  const note = (path: string, texts: string[]): NoteRecord => {
    const n = noteRecord(path, texts.map((text, i) => ({ ...chunk(`${path}#${i}`, text), path })), { size: 2, aliases: ["al"], tags: ["t"] });
    n.chunks.forEach((rec, i) => (rec.slot = i));
    return n;
  };

  it("round-trips notes, chunks and only the vectors that exist", async () => {
    const notes = [note("a.md", ["one", "two"]), note("b.md", ["three"])];
    const vectors = [stored([1, 0]), null, stored([0, -1])];
    let k = 0;
    const bytes = await encodeShard(notes, 2, () => vectors[k++], (rec) => rec.text as string);
    const decoded = decodeShard(bytes, 3, 2);
    expect(decoded.notes.map((n) => n.path)).toEqual(["a.md", "b.md"]);
    // Texts are not part of the decoded records: they are read by position, on demand.
    expect(decoded.notes[0].chunks[1].text).toBeUndefined();
    expect(decoded.notes[0].chunks[1].at).toBe(1);
    expect([0, 1, 2].map((i) => decoded.texts.textAt(i))).toEqual(["one", "two", "three"]);
    expect(decoded.notes[1].shard).toBe(3);
    expect(Array.from(decoded.vectorIndex)).toEqual([0, -1, 1]);
    expect(Array.from(decoded.codes)).toEqual([...stored([1, 0]).codes, ...stored([0, -1]).codes]);
    // Two 16-byte rows: (7, 0) and (0, −7).
    expect([codeAt(decoded.codes, 0, 0), codeAt(decoded.codes, 0, 1), codeAt(decoded.codes, 16, 0), codeAt(decoded.codes, 16, 1)]).toEqual([7, 0, 0, -7]);
    expect(Array.from(decoded.scales)).toEqual([Math.fround(1 / 7), Math.fround(1 / 7)]);
    expect(decoded.format).toBe(INDEX_FORMAT);
  });

  it("writes a thousand chunk texts of every UTF-8 width byte-exact, yielding every 64 chunks while it measures and writes them", async () => {
    // 1, 2, 3 and 4 UTF-8 bytes per character, and a lone surrogate (written as U+FFFD, as TextEncoder does).
    const pieces = ["plain ascii", "café déjà vu", "東京の雨", "emoji 🌧️ and 𝄞", "half \ud83c pair"];
    const texts = Array.from({ length: 1000 }, (_, i) => `${pieces[i % pieces.length]} ${i}`);
    let ticks = 0;
    const bytes = await encodeShard([note("many.md", texts)], 0, () => null, (rec) => rec.text as string, async () => void ticks++);
    const decoded = decodeShard(bytes, 0, 0);
    const expected = texts.map((t) => new TextDecoder().decode(new TextEncoder().encode(t)));
    expect(Array.from({ length: 1000 }, (_, i) => decoded.texts.textAt(i))).toEqual(expected);
    expect(decoded.texts.textAt(4)).toBe("half \ufffd pair 4");
    // The texts are measured, analysed and written in steps of 64 chunks: three passes.
    expect(ticks).toBeGreaterThanOrEqual(3 * Math.floor(1000 / 64));
  });

  it("re-encodes a shard whose chunks only got vectors byte for byte as a full encode would, and refuses one whose notes changed", async () => {
    const texts = ["café and 東京", "two", "three 🌧️", "four"];
    const notes = [note("a.md", texts.slice(0, 2)), note("b.md", texts.slice(2))];
    const textOf = (rec: ChunkRecord) => rec.text as string;
    const codes = (k: number) => ({ codes: stored([k, -k, 3]).codes, scale: 0.5 + k });
    // Saved with one vector, then three more came.
    const before = await encodeShard(notes, 3, (rec) => (chunkId(rec) === "a.md#0" ? codes(1) : null), textOf);
    const now = (rec: ChunkRecord) => (chunkId(rec) === "b.md#1" ? null : codes(chunkId(rec).length));
    const full = await encodeShard(notes, 3, now, textOf);
    expect(encodeShardVectors(before, notes, 3, now)).toEqual(full);
    // Vectors dropped altogether, and a shard saved before any vector existed.
    expect(encodeShardVectors(before, notes, 3, () => null)).toEqual(await encodeShard(notes, 3, () => null, textOf));
    const bare = await encodeShard(notes, 3, () => null, textOf);
    expect(encodeShardVectors(bare, notes, 3, now)).toEqual(full);
    // Anything the file holds about the notes changed: a full encode is needed.
    expect(encodeShardVectors(before, [notes[0]], 3, now)).toBeNull();
    expect(encodeShardVectors(before, [{ ...notes[0], mtime: 9 }, notes[1]], 3, now)).toBeNull();
    const rehashed = { ...notes[1], chunks: notes[1].chunks.map((r, i) => ({ ...r, textHash: i === 0 ? "changed" : r.textHash })) };
    expect(encodeShardVectors(before, [notes[0], rehashed], 3, now)).toBeNull();
    expect(encodeShardVectors(before.subarray(0, before.length - 1), notes, 3, now)).toBeNull();
    expect(encodeShardVectors(new Uint8Array(100), notes, 3, now)).toBeNull();
  });

  it("stores chunks as columns: heading trails once per shard, no ids (derived from path#n), hashes and lines exact", async () => {
    const hash = (n: number) => n.toString(16).padStart(16, "0");
    const plain = noteRecord(
      "p.md",
      ["one", "two", "three"].map((text, i) => ({ ...chunk(`p.md#${i}`, text), path: "p.md", headings: i === 0 ? [] : ["Setup", "Ollama"], startLine: 1 + i * 10, endLine: 5 + i * 10, textHash: hash(i) })),
    );
    const other = noteRecord("o.md", [{ ...chunk("o.md#0", "x"), path: "o.md", headings: ["Setup", "Ollama"], textHash: hash(99) }]);
    const bytes = await encodeShard([plain, other], 0, () => null, (rec) => rec.text as string);
    expect(new TextDecoder().decode(bytes)).not.toContain("p.md#");
    const decoded = decodeShard(bytes, 0, 0);
    const [p, o] = decoded.notes;
    expect(p.chunks.map((r) => chunkId(r))).toEqual(["p.md#0", "p.md#1", "p.md#2"]);
    expect(chunkId(o.chunks[0])).toBe("o.md#0");
    expect(o.chunks[0].note).toBe(o);
    expect(p.chunks.map((r) => [r.startLine, r.endLine, r.textHash])).toEqual([0, 1, 2].map((i) => [1 + i * 10, 5 + i * 10, hash(i)]));
    expect(p.chunks.map((r) => headingsOf(r))).toEqual([[], ["Setup", "Ollama"], ["Setup", "Ollama"]]);
    expect(headingsOf(o.chunks[0])).toEqual(["Setup", "Ollama"]);
    // One trail for every chunk under the same headings, across notes.
    expect(new TextDecoder().decode(bytes).match(/"Ollama"/g)).toHaveLength(1);
  });

  it("sorts shard words in the byte order of their UTF-8 (what a one-shot search binary-searches), non-ASCII included", async () => {
    const tricky = ["zebra", "äpfel", "apfel", "東京", "京都", "ｆｕｌｌ", "\u{1F600}smile", "\uE000private", "ω", "a", "ab", "\u{20000}cjk"];
    const encode = (w: string) => new TextEncoder().encode(w);
    for (const a of tricky) for (const b of tricky) expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(compareBytes(encode(a), encode(b))));
    const bytes = await encodeShard([note("w.md", [tricky.join(" ")])], 0, () => null, (rec) => rec.text as string);
    const words = decodeShard(bytes, 0, 0).text.dictionary;
    expect(words.length).toBeGreaterThan(5);
    const sorted = [...words].sort((a, b) => compareBytes(encode(a), encode(b)));
    expect(words).toEqual(sorted);
  });

  it("refuses truncated or foreign bytes with IndexLoadError", async () => {
    const bytes = await encodeShard([note("a.md", ["one"])], 2, () => stored([1, 0]), () => "one");
    expect(() => decodeShard(bytes.subarray(0, bytes.length - 3), 0, 2)).toThrow(IndexLoadError);
    expect(() => decodeShard(new Uint8Array(10), 0, 2)).toThrow(IndexLoadError);
    expect(() => decodeShard(bytes, 0, 3)).toThrow(/dimension/);
  });

  it.each([
    ["partChecksum", (b: Uint8Array) => partChecksum(b)],
    ["checksumBytes (formats 2 and 4)", checksumBytes],
  ])("%s differs for any changed byte, swapped words and lengths, and is the same for aligned and unaligned views", (_name, sum) => {
    const a = new Uint8Array(1001).map((_, i) => i * 31);
    for (const at of [0, 3, 4, 500, 999, 1000]) {
      const b = a.slice();
      b[at] ^= 0x80;
      expect(sum(b)).not.toBe(sum(a));
    }
    // Words that trade places (lanes must not be interchangeable).
    const swapped = a.slice();
    swapped.set(a.subarray(0, 4), 4);
    swapped.set(a.subarray(4, 8), 0);
    expect(sum(swapped)).not.toBe(sum(a));
    expect(sum(a.subarray(0, 1000))).not.toBe(sum(a));
    const shifted = new Uint8Array(1002);
    shifted.set(a, 1);
    expect(sum(shifted.subarray(1))).toBe(sum(a));
  });

  it("partChecksum of pieces is that of their concatenation, whatever lane a piece starts in", () => {
    const a = new Uint8Array(4099).map((_, i) => (i * 131 + 7) & 255);
    for (const cut of [0, 4, 8, 12, 16, 20, 1024, 4096]) expect(partChecksum([a.subarray(0, cut), a.subarray(cut)])).toBe(partChecksum(a));
    expect(partChecksum([a.subarray(0, 12), a.subarray(12, 2052), a.subarray(2052)])).toBe(partChecksum(a));
    expect(() => partChecksum([a.subarray(0, 3), a.subarray(3)])).toThrow(/whole words/);
  });
});

describe("snippets", () => {
  it("shows the part of a long chunk where the query words are", () => {
    const text = "Intro words. ".repeat(40) + "Here the **sourdough** starter [[Bread|bread]] rises overnight. " + "Outro words. ".repeat(40);
    const snippet = makeSnippet(text, "sourdough starter");
    expect(snippet).toContain("sourdough starter bread rises");
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(230);
  });

  it("falls back to the opening when no word matches", () => {
    expect(makeSnippet("## Heading\n\nShort text", "zzz")).toBe("Heading Short text");
  });
});

describe("IndexStore", () => {
  it("gives each chunk of a note its own heading trail, an empty heading apart from none, equal trails shared", async () => {
    const { IndexStore } = await import("../../../src/core/indexing/index-store");
    const { WorkSlicer } = await import("../../../src/core/indexing/work-slicer");
    const clock = { now: () => 0, setTimer: () => () => undefined, sleep: async () => undefined, yieldToHost: async () => undefined };
    const store = new IndexStore();
    const trails = [[], [""], ["Setup"], ["Setup", ""], ["Setup"]];
    const chunks = trails.map((headings, i) => chunk(`n.md#${i}`, `text ${i}`, { path: "n.md", headings }));
    await store.putNote({ path: "n.md", hash: "h", mtime: 1, size: 1, title: "n", aliases: [], tags: [] }, chunks, new WorkSlicer(clock));
    const records = store.notes.get("n.md")!.chunks;
    expect(records.map((r) => headingsOf(r))).toEqual(trails);
    expect(records[4].trail).toBe(records[2].trail);
  });

  it("lists the chunks waiting for a vector in steps, and a chunk replaced meanwhile is no longer current", async () => {
    const { IndexStore } = await import("../../../src/core/indexing/index-store");
    const { WorkSlicer } = await import("../../../src/core/indexing/work-slicer");
    const clock = { now: () => 0, setTimer: () => () => undefined, sleep: async () => undefined, yieldToHost: async () => undefined };
    const store = new IndexStore();
    const slicer = new WorkSlicer(clock);
    const meta = (path: string) => ({ path, hash: "h", mtime: 1, size: 1, title: path, aliases: [], tags: [] });
    for (let i = 0; i < 1000; i++) {
      const path = `n${i}.md`;
      await store.putNote(meta(path), [chunk(`${path}#0`, `note ${i}`, { path }), chunk(`${path}#1`, `more ${i}`, { path })], slicer);
    }
    let ticks = 0;
    const pending = await store.pendingChunks(async () => {
      ticks++;
      // A note changed while the list is taken: its old chunks stay listed, but are no longer current.
      if (ticks === 1) await store.putNote(meta("n0.md"), [chunk("n0.md#0", "changed", { path: "n0.md" })], slicer);
    });
    // The changed note's new chunk is listed too (the note went to the end of the map), once.
    expect(pending).toHaveLength(2001);
    expect(pending.filter((rec) => !store.isCurrent(rec)).map((rec) => chunkId(rec))).toEqual(["n0.md#0", "n0.md#1"]);
    expect(pending.filter((rec) => store.isCurrent(rec) && rec.note.path === "n0.md").map((rec) => rec.text)).toEqual(["changed"]);
    expect(ticks).toBe(Math.floor(1001 / 256));
  });
});
