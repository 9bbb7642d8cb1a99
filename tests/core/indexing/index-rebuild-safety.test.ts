import { promises as fs } from "node:fs";
import { join } from "node:path";
import { HashEmbedder } from "../../support/hash-embedder";
import { makeHarness, longNote, type Harness } from "./index-harness";

/** A rebuild stopped half way must leave the complete old index in place, readable by anyone. */
describe("VaultIndex: a rebuild that does not complete keeps the old index", () => {
  let h: Harness;
  afterEach(async () => {
    await h.cleanup();
  });

  it("stopped mid-embedding (checkpoints written), the old manifest and shards stay; the next start uses them", async () => {
    h = await makeHarness({ "A.md": "# Alpha\n\nApples in the orchard.", "B.md": "# Bravo\n\nBananas in the sun.", "Long.md": longNote("Long", 12) });
    const first = h.open();
    const built = await first.open();
    await first.close();
    const dir = join(h.vault.root, ".krypton", "index");
    const manifestBefore = await fs.readFile(join(dir, "manifest.json"), "utf8");

    // A slow embedder and a checkpoint after every vector: the rebuild writes new shard files as it goes.
    const slow = new HashEmbedder({ dim: 32, batchSize: 1, delayMs: 15 });
    const rebuilding = h.open({ embedder: slow, index: { checkpointEveryChunks: 1, checkpointEveryMs: 0 } });
    await rebuilding.open();
    const stop = new AbortController();
    const run = rebuilding.rebuild(stop.signal);
    while (slow.calls < 4) await new Promise((r) => setTimeout(r, 5));
    stop.abort();
    await expect(run).rejects.toThrow(/abort/i);
    expect(slow.calls).toBeLessThan(built.chunks);
    // Checkpoints of the rebuild did write shard files, but the manifest is the old one, byte for byte.
    expect(await fs.readFile(join(dir, "manifest.json"), "utf8")).toBe(manifestBefore);
    const manifest = JSON.parse(manifestBefore) as { shards: { file: string }[] };
    const files = await fs.readdir(dir);
    for (const s of manifest.shards) expect(files).toContain(s.file);

    // Another process reads the old index while the stopped rebuild's instance still holds the lock.
    const reader = h.open();
    const seen = await reader.open();
    expect(seen.readOnly).toBe(true);
    expect(seen.embedded).toBe(built.chunks);
    expect((await reader.searchNotes("bananas"))[0].path).toBe("B.md");
    await reader.close();
    await rebuilding.close();

    // The next writer starts from the complete old index (nothing to re-embed) and clears the rebuild's files.
    h.embedder.reset();
    const next = h.open();
    const status = await next.open();
    expect(status.rebuiltReason).toBeUndefined();
    expect(status.embedded).toBe(built.chunks);
    expect(h.embedder.calls).toBe(0);
    const after = await fs.readdir(dir);
    const referenced = (JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8")) as { shards: { file: string }[] }).shards.map((s) => s.file);
    expect(after.filter((f) => f.startsWith("shard-")).sort()).toEqual(referenced.sort());
  });

  it("a completed rebuild switches to the new files and removes the old ones", async () => {
    h = await makeHarness({ "A.md": "# Alpha\n\nApples.", "B.md": "# Bravo\n\nBananas." });
    const index = h.open({ index: { checkpointEveryChunks: 1, checkpointEveryMs: 0 } });
    await index.open();
    const dir = join(h.vault.root, ".krypton", "index");
    const before = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8")) as { generation: number; shards: { file: string }[] };
    const status = await index.rebuild();
    expect(status.embedded).toBe(status.chunks);
    const after = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8")) as { generation: number; shards: { file: string }[] };
    expect(after.generation).toBeGreaterThan(before.generation);
    const files = await fs.readdir(dir);
    for (const s of before.shards) expect(files).not.toContain(s.file);
    expect(files.filter((f) => f.startsWith("shard-")).sort()).toEqual(after.shards.map((s) => s.file).sort());
  });
});
