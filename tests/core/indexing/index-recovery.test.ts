import { promises as fs } from "node:fs";
import { join } from "node:path";
import { indexAndClose, indexDir, makeHarness, SMALL_VAULT, type Harness } from "./index-harness";
import { INDEX_FORMAT } from "../../../src/core/indexing/index-persistence";

/** Every file of a folder with its bytes (hex): what "untouched" means. */
async function snapshotDir(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await fs.readdir(dir)).sort()) out[name] = (await fs.readFile(join(dir, name))).toString("hex");
  return out;
}

async function indexFiles(h: Harness): Promise<string[]> {
  return (await fs.readdir(indexDir(h))).sort();
}

async function shardPath(h: Harness): Promise<string> {
  const shard = (await indexFiles(h)).find((f) => f.startsWith("shard-"));
  if (!shard) throw new Error("no shard written");
  return join(indexDir(h), shard);
}

describe("VaultIndex: persistence and recovery", () => {
  let h: Harness;
  let chunks: number;
  beforeEach(async () => {
    h = await makeHarness(SMALL_VAULT);
    chunks = await indexAndClose(h);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it("writes a manifest, binary shards and no leftovers", async () => {
    const files = await indexFiles(h);
    expect(files).toContain("manifest.json");
    expect(files.some((f) => /^shard-\d+-\d+\.bin$/.test(f))).toBe(true);
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(files).not.toContain("write.lock"); // released on close
    const manifest = JSON.parse(await fs.readFile(join(indexDir(h), "manifest.json"), "utf8"));
    expect(manifest.format).toBe(INDEX_FORMAT);
    expect(manifest.embedder).toEqual({ id: "hash:32", dim: 32 });
    expect(manifest.shards[0].checksum).toMatch(/^[0-9a-f]{16}$/);
  });

  const damages: [string, (h: Harness) => Promise<void>, RegExp][] = [
    ["a missing manifest", async (h) => fs.rm(join(indexDir(h), "manifest.json")), /manifest was missing/],
    ["a corrupt manifest", async (h) => fs.writeFile(join(indexDir(h), "manifest.json"), "{ not json"), /manifest/],
    ["a missing shard", async (h) => fs.rm(await shardPath(h)), /missing/],
    [
      "a truncated shard",
      async (h) => {
        const p = await shardPath(h);
        const bytes = await fs.readFile(p);
        await fs.writeFile(p, bytes.subarray(0, Math.floor(bytes.length / 2)));
      },
      /truncated/,
    ],
    [
      "a shard with flipped bytes",
      async (h) => {
        const p = await shardPath(h);
        const bytes = await fs.readFile(p);
        for (let i = 100; i < bytes.length; i += 97) bytes[i] ^= 0x5a;
        await fs.writeFile(p, bytes);
      },
      /corrupt/,
    ],
  ];

  it.each(damages)("recovers from %s: rebuilds, says why, loses nothing", async (_name, damage, reason) => {
    await damage(h);
    const index = h.open();
    const status = await index.open();
    expect(status.state).toBe("ready");
    expect(status.chunks).toBe(chunks);
    expect(status.embedded).toBe(chunks);
    expect(status.rebuiltReason).toMatch(reason);
    // Every host puts "rebuilt" before the reason ("Krypton rebuilt its index: …"): the reason does not say it again.
    expect(status.rebuiltReason).not.toMatch(/rebuilt/);
    expect((await index.searchNotes("bananas"))[0].path).toBe("B.md");
    await index.close();
    // Repaired on disk: the next start is clean and embeds nothing.
    h.embedder.reset();
    const again = h.open();
    const next = await again.open();
    expect(next.rebuiltReason).toBeUndefined();
    expect(next.chunks).toBe(chunks);
    expect(h.embedder.calls).toBe(0);
  });

  it("never writes over an index a newer Krypton saved: says so, searches by keywords in memory, embeds nothing", async () => {
    // Each copy rebuilding the other's index would re-embed the whole vault at every switch (hours on a laptop).
    const path = join(indexDir(h), "manifest.json");
    const manifest = JSON.parse(await fs.readFile(path, "utf8"));
    // A newer format may change anything, the shard list's shape too: only its format number is read.
    await fs.writeFile(path, JSON.stringify({ ...manifest, format: 999, shards: "a newer layout" }));
    const before = await snapshotDir(indexDir(h));
    const newer = `the index was saved by a newer version of Krypton (index format 999; this version reads up to format ${INDEX_FORMAT}), which this version leaves as it is: update Krypton (\`git pull && npm ci\` in its folder)`;
    for (const readOnly of [false, true]) {
      const index = h.open();
      const status = await index.open(undefined, { readOnly });
      expect(status).toMatchObject({ state: "ready", readOnly: true, writeError: newer, chunks, embedded: 0 });
      expect(status.rebuiltReason).toBeUndefined();
      expect((await index.searchNotes("bananas"))[0].path).toBe("B.md");
      await h.vault.write("C.md", "# Charlie\n\nCherries in a bowl.");
      expect((await index.sync()).writeError).toBe(newer);
      await expect(index.rebuild()).resolves.toMatchObject({ writeError: newer });
      await index.close();
      await fs.rm(join(h.vault.root, "C.md"));
    }
    expect(h.embedder.calls).toBe(0);
    expect(await snapshotDir(indexDir(h))).toEqual(before);
  });

  it("names an index in a format this version no longer reads as an older one", async () => {
    const path = join(h.vault.root, ".krypton", "index", "manifest.json");
    const manifest = JSON.parse(await fs.readFile(path, "utf8"));
    await fs.writeFile(path, JSON.stringify({ ...manifest, format: 1 }));
    const status = await h.open().open();
    expect(status.rebuiltReason).toBe(`the index format changed (1 → ${INDEX_FORMAT})`);
    expect(status.chunks).toBe(chunks);
  });

  it("rebuilds an index made by another chunker version", async () => {
    const path = join(indexDir(h), "manifest.json");
    const manifest = JSON.parse(await fs.readFile(path, "utf8"));
    await fs.writeFile(path, JSON.stringify({ ...manifest, chunkerVersion: -1 }));
    const status = await h.open().open();
    expect(status.rebuiltReason).toMatch(/chunker/);
    expect(status.chunks).toBe(chunks);
  });

  it("removes shard files a crashed writer left behind", async () => {
    const dir = indexDir(h);
    await fs.writeFile(join(dir, "shard-99-99.bin"), "orphan");
    await fs.writeFile(join(dir, "shard-0-1.bin.123-abcd.tmp"), "half written");
    const index = h.open();
    await index.open();
    const files = await indexFiles(h);
    expect(files).not.toContain("shard-99-99.bin");
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("rebuild() starts from scratch and re-embeds everything", async () => {
    const index = h.open();
    await index.open();
    expect(h.embedder.calls).toBe(0);
    const oldShards = (await indexFiles(h)).filter((f) => f.startsWith("shard-"));
    const status = await index.rebuild();
    expect(status.chunks).toBe(chunks);
    expect(h.embedder.texts).toHaveLength(chunks);
    // The old generation's files are gone, the new ones are named in the manifest.
    const files = await indexFiles(h);
    for (const old of oldShards) expect(files).not.toContain(old);
    const manifest = JSON.parse(await fs.readFile(join(indexDir(h), "manifest.json"), "utf8"));
    expect(files.filter((f) => f.startsWith("shard-")).sort()).toEqual(manifest.shards.map((s: { file: string }) => s.file).sort());
  });
});
