import { promises as fs } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "../../src/core/ports/logger";
import { VaultIndex } from "../../src/core/indexing/vault-index";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../src/core/settings";
import { createNodeHost } from "../../src/node/node-host";
import { FAST } from "../core/indexing/index-harness";
import { HashEmbedder } from "../support/hash-embedder";
import { makeTempVault, type TempVault } from "../support/temp-vault";

/**
 * Stat-based change detection on the Node host (CLI, `krypton mcp`): opening an index whose notes did not
 * change reads no note at all; a note whose mtime moved without a content change is read once, and once
 * its new mtime is saved, not again.
 */
describe("FsVault scan + VaultIndex: unchanged notes are never read", () => {
  let vault: TempVault;
  const settings: KryptonSettings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [] };
  const embedder = new HashEmbedder({ dim: 16, batchSize: 8 });
  const opened: VaultIndex[] = [];
  let reads: string[] = [];

  function open(options: { readOnly?: boolean } = {}): Promise<VaultIndex> {
    const host = createNodeHost(vault.root, { logger: silentLogger });
    const readNote = host.vault.readNote.bind(host.vault);
    host.vault.readNote = (path: string) => {
      reads.push(path);
      return readNote(path);
    };
    const index = new VaultIndex({ host, settings: () => settings, embedder: () => embedder, options: FAST });
    opened.push(index);
    return index.open(undefined, options).then(() => index);
  }

  beforeEach(async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`Folder ${i % 7}/Sub ${i % 3}/Note ${i}.md`] = `# Note ${i}\n\nSomething about topic ${i}.`;
    vault = await makeTempVault(files);
    reads = [];
  });
  afterEach(async () => {
    for (const index of opened.splice(0)) await index.close();
    await vault.cleanup();
  });

  it("reads every note to build, none on an unchanged reopen (writer or reader)", async () => {
    const first = await open();
    expect(first.status().notes).toBe(150);
    expect(reads).toHaveLength(150);
    await first.close();

    reads = [];
    const writer = await open();
    expect(writer.status().notes).toBe(150);
    expect(reads).toEqual([]);
    await writer.close();

    const reader = await open({ readOnly: true });
    expect((await reader.searchNotes("topic 42"))[0]?.path).toBe("Folder 0/Sub 0/Note 42.md");
    expect(reads).toEqual([]);
  });

  it("lists the vault once per open, while the saved index is being read, and still sees notes changed before the open", async () => {
    await (await open()).close();
    await vault.write("Folder 1/New.md", "# New\n\nA note about zeppelins.");
    await vault.write("Folder 2/Sub 2/Note 2.md", "# Note 2\n\nNow about submarines.");

    const events: string[] = [];
    const host = createNodeHost(vault.root, { logger: silentLogger });
    const listNotes = host.vault.listNotes.bind(host.vault);
    host.vault.listNotes = () => {
      events.push("list");
      return listNotes().then((notes) => (events.push("listed"), notes));
    };
    const read = host.data.read.bind(host.data);
    host.data.read = (...args: Parameters<typeof read>) => {
      if (args[0].includes("shard-")) events.push("shard");
      return read(...args);
    };
    const index = new VaultIndex({ host, settings: () => settings, embedder: () => embedder, options: FAST });
    opened.push(index);
    await index.open();
    expect(events.filter((e) => e === "list")).toHaveLength(1);
    expect(events.indexOf("list")).toBeLessThan(events.indexOf("shard"));
    expect((await index.searchNotes("zeppelins"))[0]?.path).toBe("Folder 1/New.md");
    expect((await index.searchNotes("submarines"))[0]?.path).toBe("Folder 2/Sub 2/Note 2.md");
    expect(index.status().notes).toBe(151);
  });

  it("reads a touched note once; the writer saves its new mtime so the next open reads nothing", async () => {
    await (await open()).close();
    const touched = join(vault.root, "Folder 3", "Sub 1", "Note 10.md");
    const later = new Date(Date.now() + 60_000);
    await fs.utimes(touched, later, later);

    reads = [];
    await (await open()).close();
    expect(reads).toEqual(["Folder 3/Sub 1/Note 10.md"]);

    reads = [];
    await open();
    expect(reads).toEqual([]);
  });
});

describe("statAll: synchronous slices from the cache, callback stats once slices are slow, in a worker for large vaults", () => {
  it("every way gives every file's mtime and size, and NaN for what is not a file", async () => {
    const { statAll, statInWorker } = await import("../../src/node/stat-all");
    const files: Record<string, string> = {};
    for (let i = 0; i < 700; i++) files[`n${i}.md`] = "x".repeat(i);
    const vault = await makeTempVault(files);
    try {
      await fs.mkdir(join(vault.root, "folder.md"));
      const paths = [...Object.keys(files), "folder.md", "missing.md"].map((p) => join(vault.root, p));
      const fast = await statAll(paths, { worker: false });
      // A threshold no slice can meet: after two slices (512 stats) the rest goes through the callbacks.
      const slow = await statAll(paths, { worker: false, slowSliceMs: -1 });
      // The worker itself (statAll would fall back to this thread if it could not run).
      const inWorker = await statInWorker(paths, 8);
      const slowInWorker = await statInWorker(paths, -1);
      for (const result of [fast, slow, inWorker, slowInWorker]) {
        for (let i = 0; i < 700; i++) expect(result.size[i]).toBe(i);
        expect(Number.isNaN(result.mtime[700])).toBe(true);
        expect(Number.isNaN(result.mtime[701])).toBe(true);
      }
      for (const result of [slow, inWorker, slowInWorker]) expect(Array.from(result.mtime)).toEqual(Array.from(fast.mtime));
    } finally {
      await vault.cleanup();
    }
  });
});
