import { spawnSync } from "node:child_process";
import { promises as fs } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describeHolder, IndexLock, LOCK_PATH } from "../../../src/core/indexing/index-lock";
import { FsDataDir } from "../../../src/node/fs-data-dir";
import { nodeClock } from "../../../src/node/node-clock";
import { createNodeProcess, isProcessAlive } from "../../../src/node/node-process";
import { makeHarness, type Harness } from "./index-harness";

/** The pid of a real process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("IndexLock: a lock tells the truth about its holder", () => {
  let h: Harness;
  let data: FsDataDir;
  const lockFile = () => join(h.vault.root, ".krypton", LOCK_PATH);
  const newLock = (label = "krypton index") => new IndexLock(data, nodeClock, { staleMs: 30_000, heartbeatMs: 60_000 }, () => createNodeProcess(data.dir, label));

  beforeEach(async () => {
    h = await makeHarness({});
    data = new FsDataDir(join(h.vault.root, ".krypton"));
  });
  afterEach(async () => {
    await h.cleanup();
  });

  it("isProcessAlive: this process runs, an exited one does not", () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(deadPid())).toBe(false);
    expect(isProcessAlive(-1)).toBeNull();
  });

  it("records pid, machine, label and start time in the lock", async () => {
    const lock = newLock("krypton mcp");
    expect(await lock.acquire()).toBe(true);
    const content = JSON.parse(await fs.readFile(lockFile(), "utf8"));
    expect(content).toMatchObject({ owner: lock.owner, pid: process.pid, host: hostname(), label: "krypton mcp" });
    expect(typeof content.since).toBe("number");
    await lock.release();
  });

  it("takes over at once the fresh lock of a process that no longer runs, and says so", async () => {
    const pid = deadPid();
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "crashed", at: Date.now(), pid, host: hostname(), label: "krypton index", since: Date.now() }));
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    expect(lock.tookOver).toMatch(new RegExp(`krypton index, pid ${pid}.*no longer running`));
    await lock.release();
  });

  it("names a live holder: label, pid and since when", async () => {
    const since = new Date(2026, 0, 5, 10, 2).getTime();
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "mcp", at: Date.now(), pid: process.ppid, host: hostname(), label: "krypton mcp", since }));
    const lock = newLock();
    expect(await lock.acquire()).toBe(false);
    expect(lock.holder).toEqual({ label: "krypton mcp", pid: process.ppid, host: hostname(), since });
    expect(describeHolder(lock.holder!, hostname())).toBe(`krypton mcp, pid ${process.ppid}, since 10:02`);
    expect(describeHolder({ label: "Obsidian", pid: 7, host: "laptop" }, "desktop")).toBe("Obsidian, pid 7 on laptop");
  });

  it("a lock of another machine is judged by its heartbeat, not by a local pid", async () => {
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "far", at: Date.now(), pid: deadPid(), host: "another-machine", label: "Obsidian" }));
    expect(await newLock().acquire()).toBe(false);
  });

  it("a lock stamped a day in the future is taken over, not waited for", async () => {
    const tomorrow = Date.now() + 86_400_000;
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "future", at: tomorrow }));
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    expect(lock.tookOver).toMatch(/timestamp in the future/);
    await lock.release();
  });

  it("a lock that is a folder is removed and replaced", async () => {
    await fs.mkdir(lockFile(), { recursive: true });
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    expect(lock.tookOver).toMatch(/lock was a folder/);
    expect((await fs.stat(lockFile())).isFile()).toBe(true);
    await lock.release();
  });

  it("a damaged (unreadable) lock file older than a moment is replaced", async () => {
    await data.createExclusive(LOCK_PATH, "{ not json");
    const old = new Date(Date.now() - 10_000);
    await fs.utimes(lockFile(), old, old);
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    expect(lock.tookOver).toMatch(/damaged/);
    await lock.release();
  });

  it(".krypton/index being a file is removed so the index can live there, and said", async () => {
    await fs.mkdir(join(h.vault.root, ".krypton"), { recursive: true });
    await fs.writeFile(join(h.vault.root, ".krypton", "index"), "not a folder");
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    expect(lock.tookOver).toMatch(/\.krypton\/index was a file/);
    await lock.release();
  });

  it("a lock naming this process's pid but no lock this process holds is a dead predecessor's (pids are reused)", async () => {
    await data.createExclusive(LOCK_PATH, JSON.stringify({ owner: "predecessor", at: Date.now(), pid: process.pid, host: hostname(), label: "krypton index" }));
    const lock = newLock();
    expect(await lock.acquire()).toBe(true);
    // While it is held, another instance in this process sees a live holder.
    expect(await newLock().acquire()).toBe(false);
    await lock.release();
  });
});

describe("VaultIndex status names the lock holder", () => {
  let h: Harness;
  afterEach(async () => {
    await h.cleanup();
  });

  it("a reader reports who writes; a reader by choice never touches the lock", async () => {
    h = await makeHarness({ "A.md": "# A\n\nAardvarks." });
    const writer = h.open();
    await writer.open();
    const reader = h.open();
    const status = await reader.open();
    expect(status.readOnly).toBe(true);
    expect(status.heldBy).toMatch(/^krypton, pid \d+, since \d\d:\d\d$/);

    await writer.close();
    const byChoice = h.open();
    const quiet = await byChoice.open(undefined, { readOnly: true });
    expect(quiet.readOnlyByChoice).toBe(true);
    expect(quiet.heldBy).toBeUndefined();
    expect(quiet.chunks).toBe(1);
    expect(await fs.readdir(join(h.vault.root, ".krypton", "index"))).not.toContain("write.lock");
  });
});
