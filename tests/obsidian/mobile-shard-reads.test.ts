/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { FileSystemAdapter } from "../support/obsidian-stub";
import { ObsidianDataDir } from "../../src/obsidian/host/obsidian-data-dir";
import { createNodeHost } from "../../src/node/node-host";
import { silentLogger } from "../../src/core/ports/logger";
import { VaultIndex, type VaultIndexOptions } from "../../src/core/indexing/vault-index";
import { SHARD_MAX_CHUNKS } from "../../src/core/indexing/index-persistence";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { HashEmbedder } from "../support/hash-embedder";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { FAST, longNote } from "../core/indexing/index-harness";

// The index on mobile: Obsidian's data dir with no FileRanges, so every read of a shard reads its whole file
// (the stand-in's adapter, like Obsidian's, has readBinary of whole files only). Counted here per file.
let vault: TempVault;
const opened: VaultIndex[] = [];
const wholeReads = new Map<string, number>();
// One note per 8 chunks (each paragraph its own chunk): two shards' worth.
const NOTES = 160;
beforeEach(async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < NOTES; i++) files[`N${i}.md`] = longNote(`Note ${i}`, 8, `topic${i}x`);
  vault = await makeTempVault(files);
  wholeReads.clear();
});
afterEach(async () => {
  for (const index of opened.splice(0)) await index.close();
  await vault.cleanup();
});

function openMobile(embedder: HashEmbedder | null, options: VaultIndexOptions = {}): VaultIndex {
  const adapter = new FileSystemAdapter(vault.root);
  const readBinary = adapter.readBinary.bind(adapter);
  adapter.readBinary = (path) => {
    const file = /^\.krypton\/index\/(shard-.*)$/.exec(path)?.[1];
    if (file) wholeReads.set(file, (wholeReads.get(file) ?? 0) + 1);
    return readBinary(path);
  };
  const host = { ...createNodeHost(vault.root, { logger: silentLogger }), data: new ObsidianDataDir(adapter as never) };
  const settings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [] };
  const index = new VaultIndex({ host, settings: () => settings, embedder: () => embedder, options: { ...FAST, ...options } });
  opened.push(index);
  return index;
}

test("embedding a saved keyword-only index reads each shard file for its texts once, not once per batch", async () => {
  const keywords = openMobile(null);
  const built = await keywords.open();
  expect(built.chunks).toBeGreaterThan(SHARD_MAX_CHUNKS);
  await keywords.close();
  wholeReads.clear();

  // One worker and one save at the end, so each file's reads are exactly: loaded, texts read back, re-saved with vectors.
  const embedder = new HashEmbedder({ dim: 32, batchSize: 64 });
  const index = openMobile(embedder, { embedConcurrency: 1, checkpointEveryChunks: 1e9, checkpointEveryMs: 1e9 });
  const status = await index.open();
  expect(status.embedded).toBe(built.chunks);
  expect(embedder.calls).toBe(Math.ceil(built.chunks / 64));
  // Before: each 64-chunk batch read its shard's whole file again (18 reads of the 1,024-chunk shard).
  expect([...wholeReads.values()]).toEqual([3, 3]);
});

test("a shard whose texts a search just read is not read again for the next search or the note's chunks", async () => {
  const keywords = openMobile(null);
  await keywords.open();
  await keywords.close();
  wholeReads.clear();

  const index = openMobile(null);
  await index.open();
  expect([...wholeReads.values()]).toEqual([1, 1]); // loading reads each shard once
  wholeReads.clear();
  const search = async () => (await index.searchNotes("topic7x", { limit: 10 })).map((h) => h.path);
  expect(await search()).toEqual(["N7.md"]);
  expect([...wholeReads.values()]).toEqual([1]);
  expect(await search()).toEqual(["N7.md"]);
  expect((await index.chunksOf("N7.md"))[0].text).toContain("topic7x");
  expect([...wholeReads.values()]).toEqual([1]);
});
