import { promises as fs } from "node:fs";
import { join } from "node:path";
import { IndexLock, LOCK_PATH } from "../../../src/core/indexing/index-lock";
import { FsDataDir } from "../../../src/node/fs-data-dir";
import { nodeClock } from "../../../src/node/node-clock";
import { makeHarness, type Harness } from "./index-harness";

describe("IndexLock", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it("lets one holder in, refuses a second, and frees on release", async () => {
    h = await makeHarness({});
    const data = new FsDataDir(join(h.vault.root, ".krypton"));
    const a = new IndexLock(data, nodeClock, { heartbeatMs: 60_000 });
    const b = new IndexLock(data, nodeClock, { heartbeatMs: 60_000 });
    expect(await a.acquire()).toBe(true);
    expect(await b.acquire()).toBe(false);
    await a.release();
    expect(await b.acquire()).toBe(true);
    await b.release();
  });

  it("takes over a stale lock left by a crashed process, and the old holder notices", async () => {
    h = await makeHarness({});
    const data = new FsDataDir(join(h.vault.root, ".krypton"));
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "crashed", at: Date.now() - 120_000 }));
    const old = new Date(Date.now() - 120_000);
    await fs.utimes(join(h.vault.root, ".krypton", LOCK_PATH), old, old);
    const fresh = new IndexLock(data, nodeClock, { staleMs: 30_000, heartbeatMs: 60_000 });
    expect(await fresh.acquire()).toBe(true);
    await fresh.release();

    // A live holder whose heartbeat is recent is not stale.
    const live = new IndexLock(data, nodeClock, { staleMs: 30_000, heartbeatMs: 60_000 });
    expect(await live.acquire()).toBe(true);
    const other = new IndexLock(data, nodeClock, { staleMs: 30_000 });
    expect(await other.acquire()).toBe(false);
    // Someone else overwrote the lock (took it over): verify() drops it.
    await data.writeAtomic(LOCK_PATH, JSON.stringify({ owner: "someone-else", at: Date.now() }));
    expect(await live.verify()).toBe(false);
    expect(live.held).toBe(false);
  });

  it("keeps a held lock fresh with heartbeats", async () => {
    h = await makeHarness({});
    const data = new FsDataDir(join(h.vault.root, ".krypton"));
    const a = new IndexLock(data, nodeClock, { heartbeatMs: 10 });
    expect(await a.acquire()).toBe(true);
    const before = JSON.parse((await data.readText(LOCK_PATH)) as string).at;
    await new Promise((r) => setTimeout(r, 60));
    const after = JSON.parse((await data.readText(LOCK_PATH)) as string).at;
    expect(after).toBeGreaterThan(before);
    await a.release();
    expect(await data.readText(LOCK_PATH)).toBeNull();
  });
});

describe("VaultIndex: two processes on one vault", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it("lets a second instance read and search while the first writes; only the lock holder saves", async () => {
    h = await makeHarness({ "A.md": "# A\n\nAardvarks dig burrows.", "B.md": "# B\n\nBadgers dig too." });
    const writer = h.open();
    await writer.open();
    const manifestPath = join(h.vault.root, ".krypton", "index", "manifest.json");
    const manifestBefore = await fs.readFile(manifestPath, "utf8");

    const reader = h.open();
    const status = await reader.open();
    expect(status.readOnly).toBe(true);
    expect(status.chunks).toBe(writer.status().chunks);
    expect((await reader.searchNotes("aardvarks"))[0].path).toBe("A.md");

    // The reader sees a new note in memory, but neither embeds nor writes it.
    await h.vault.write("C.md", "# C\n\nCapybaras swim.");
    h.embedder.reset();
    await reader.sync();
    expect((await reader.searchNotes("capybaras"))[0].path).toBe("C.md");
    expect(h.embedder.texts.filter((t) => t.includes("Capybaras"))).toEqual([]);
    expect(await fs.readFile(manifestPath, "utf8")).toBe(manifestBefore);

    // The writer picks the note up, embeds and saves it.
    await writer.sync();
    expect(await fs.readFile(manifestPath, "utf8")).not.toBe(manifestBefore);

    // When the writer goes away, the reader becomes the writer on its next sync.
    await writer.close();
    const promoted = await reader.sync();
    expect(promoted.readOnly).toBeUndefined();
    expect(promoted.embedded).toBe(promoted.chunks);
    await h.vault.write("D.md", "# D\n\nDingos howl.");
    await reader.sync();
    await reader.close();
    h.embedder.reset();
    const third = h.open();
    const last = await third.open();
    expect(last.notes).toBe(4);
    expect(h.embedder.calls).toBe(0);
  });

  it("readers loading while a writer keeps saving never see a broken index", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`N${i}.md`] = `# Note ${i}\n\nword${i} shared text number ${i}.`;
    h = await makeHarness(files);
    const writer = h.open();
    await writer.open();
    let stop = false;
    const writing = (async () => {
      for (let round = 0; !stop && round < 40; round++) {
        await h.vault.write(`N${round % 30}.md`, `# Note ${round % 30}\n\nedited ${round} word${round % 30}.`);
        await writer.sync();
      }
    })();
    for (let i = 0; i < 6; i++) {
      const reader = h.open();
      const status = await reader.open();
      expect(status.rebuiltReason).toBeUndefined();
      expect(status.notes).toBe(30);
      await reader.close();
    }
    stop = true;
    await writing;
  });
});
