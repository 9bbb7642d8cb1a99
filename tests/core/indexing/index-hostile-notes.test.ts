import { chunkNote } from "../../../src/core/indexing/markdown-chunker";
import { DEFAULT_MAX_CHUNKS_PER_NOTE } from "../../../src/core/indexing/vault-index";
import { makeHarness, type Harness } from "./index-harness";

/** Work per note is bounded: one hostile file cannot make 100,000 chunks (and the time and memory they cost). */
const manyHeadings = (n: number) => Array.from({ length: n }, (_, i) => `${"#".repeat(1 + (i % 6))} Heading ${i}\nline ${i}\n`).join("");

describe("chunkNote: maxChunks", () => {
  it("stops at maxChunks and says after which line", () => {
    const note = manyHeadings(500);
    const all = chunkNote("h.md", note, { maxChars: 1500 });
    expect(all.chunks).toHaveLength(500);
    expect(all.cutAfterLine).toBeUndefined();
    const cut = chunkNote("h.md", note, { maxChars: 1500, maxChunks: 100 });
    expect(cut.chunks).toHaveLength(100);
    expect(cut.chunks.map((c) => c.id)).toEqual(all.chunks.slice(0, 100).map((c) => c.id));
    expect(cut.cutAfterLine).toBe(all.chunks[99].endLine);
  });

  it("a note with exactly maxChunks chunks is not reported as cut", () => {
    const exact = chunkNote("h.md", manyHeadings(100), { maxChars: 1500, maxChunks: 100 });
    expect(exact.chunks).toHaveLength(100);
    expect(exact.cutAfterLine).toBeUndefined();
  });

  it("a note of headings only is bounded too", () => {
    const only = Array.from({ length: 50_000 }, (_, i) => `# H${i}`).join("\n");
    const cut = chunkNote("only.md", only, { maxChars: 100, maxChunks: 50 });
    expect(cut.chunks).toHaveLength(50);
    expect(cut.cutAfterLine).toBeGreaterThan(0);
  });
});

describe("VaultIndex: per-note limits", () => {
  let h: Harness;
  afterEach(async () => {
    await h.cleanup();
  });

  it("a note with 100,000 headings is indexed up to the chunk limit and named; other notes are whole", async () => {
    h = await makeHarness({ "Hostile.md": manyHeadings(100_000), "Bread.md": "# Sourdough\n\nFlour, water, salt.\n" });
    const index = h.open({ embedder: null });
    const status = await index.open();
    expect(status.chunks).toBe(DEFAULT_MAX_CHUNKS_PER_NOTE + 1);
    expect(status.partial).toEqual([{ path: "Hostile.md", error: expect.stringMatching(/^indexed up to line 4,000 only: the note has more than 2,000 chunks$/) }]);
    expect(status.failures).toEqual([]);
    expect((await index.searchNotes("sourdough"))[0].path).toBe("Bread.md");
    expect((await index.searchNotes("heading 1999"))[0].path).toBe("Hostile.md");
    await index.close();

    // After a restart the note is still named (the limit is saved with it), without re-reading it.
    const restarted = h.open({ embedder: null });
    const reloaded = await restarted.open();
    expect(reloaded.partial).toEqual(status.partial);
    expect(reloaded.chunks).toBe(status.chunks);

    // Edited back to a normal size, the note is whole and no longer named.
    await h.vault.write("Hostile.md", manyHeadings(10));
    const again = await restarted.sync();
    expect(again.partial).toBeUndefined();
    expect(again.chunks).toBe(11);
  });

  it("a note over the character limit is cut at a line end and named", async () => {
    const long = Array.from({ length: 2_000 }, (_, i) => `Line ${i} about herons and harbours.`).join("\n");
    h = await makeHarness({ "Long.md": long });
    const index = h.open({ embedder: null, index: { maxNoteChars: 10_000 } });
    const status = await index.open();
    expect(status.partial?.[0].path).toBe("Long.md");
    expect(status.partial?.[0].error).toMatch(/^indexed up to line \d+ only: the note has more than 10,000 characters$/);
    const chunks = await index.chunksOf("Long.md");
    expect(chunks.reduce((n, c) => n + c.text.length, 0)).toBeLessThanOrEqual(10_000);
    expect(chunks[chunks.length - 1].text.endsWith("harbours.")).toBe(true);
  });
});
