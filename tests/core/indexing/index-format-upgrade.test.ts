import { promises as fs } from "node:fs";
import { join } from "node:path";
import { INDEX_FORMAT } from "../../../src/core/indexing/index-persistence";
import { makeHarness, type Harness } from "./index-harness";

/**
 * tests/fixtures/index-format-2 holds a vault indexed by the previous release (format 2: float32 vectors,
 * embedder hash:32); index-format-4 the same vault saved in format 4 (int8 vectors, chunk-major words, no
 * note listing); index-format-5 the same saved in format 5 (int8 vectors, today's layout otherwise).
 * Updating Krypton must keep those vectors (packed into 4-bit codes): no note is embedded again.
 */
describe.each([
  [2, "float32 vectors"],
  [4, "chunk-major words"],
  [5, "int8 vectors"],
])("VaultIndex: an index saved in format %i (%s)", (format) => {
  const FIXTURE = join(__dirname, `../../fixtures/index-format-${format}/vault`);
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness({});
    await fs.cp(FIXTURE, h.vault.root, { recursive: true });
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it("loads its vectors without re-embedding, searches by meaning, and is saved in the current format", async () => {
    const manifestPath = join(h.vault.root, ".krypton/index/manifest.json");
    expect(JSON.parse(await fs.readFile(manifestPath, "utf8")).format).toBe(format);
    const index = h.open();
    const status = await index.open();
    await index.idle();
    expect(status.rebuiltReason).toBeUndefined();
    expect(status.chunks).toBe(4);
    expect(index.status().embedded).toBe(4);
    // Only the query is embedded; no chunk text is.
    const hits = await index.searchNotes("moon ocean high low tides", { semanticWeight: 1 });
    expect(hits[0].path).toBe("Tides.md");
    expect(h.embedder.texts).toEqual(["moon ocean high low tides"]);
    await index.close();

    const manifest = JSON.parse(await fs.readFile(manifestPath, "utf8"));
    expect(manifest.format).toBe(INDEX_FORMAT);
    const shard = await fs.readFile(join(h.vault.root, ".krypton/index", manifest.shards[0].file));
    expect(shard.readUInt32LE(4)).toBe(INDEX_FORMAT);

    // And the rewritten index reopens with the same vectors, still without embedding a chunk.
    h.embedder.reset();
    const again = h.open();
    await again.open();
    await again.idle();
    expect(again.status().embedded).toBe(4);
    expect((await again.searchNotes("moon ocean high low tides", { semanticWeight: 1 }))[0].path).toBe("Tides.md");
    expect(h.embedder.texts).toEqual(["moon ocean high low tides"]);
  });
});
