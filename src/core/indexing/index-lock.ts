import type { Clock } from "../ports/clock";
import type { DataDirPort } from "../ports/data-dir";
import type { ProcessPort } from "../ports/process";
import { INDEX_DIR } from "./index-persistence";

/**
 * One writer per index across processes (the plugin and the CLI may open the same vault at once).
 * The lock is a file created exclusively in .krypton/index/ that records who holds it (owner id, pid,
 * machine, what it is, since when); its holder rewrites the timestamp every few seconds.
 *
 * A lock is taken over at once when its holder is gone: a pid on this machine that no longer runs, a
 * timestamp in the future, a lock that is a folder or unreadable. Without a way to check the pid
 * (another machine, mobile) a lock whose heartbeat is older than staleMs is taken over. A live holder is
 * named (`holder`). Whoever cannot take the lock still loads and searches the index, but never writes it.
 * A process that dies releases its lock through the host (ProcessPort.releaseOnExit).
 */
export const LOCK_PATH = `${INDEX_DIR}/write.lock`;
/**
 * A process that wants the index updated while another holds the lock leaves this file; the holder sees it
 * at its next heartbeat, syncs, saves and removes it (see VaultIndex.syncViaHolder).
 */
export const SYNC_REQUEST_PATH = `${INDEX_DIR}/sync.request`;

export interface IndexLockOptions {
  staleMs?: number;
  heartbeatMs?: number;
}

interface LockContent {
  owner: string;
  at: number;
  pid?: number;
  host?: string;
  label?: string;
  since?: number;
}

/** Who holds the lock, for messages: "krypton mcp, pid 1234, since 10:02". */
export interface LockHolder {
  label: string;
  pid?: number;
  host?: string;
  since?: number;
}

/** Owner ids of the locks this process (this JavaScript realm) holds: a lock naming our own pid but none of these is a dead predecessor's (pids get reused). */
const ownersHere = new Set<string>();

/** A lock file can be unreadable for a moment while its creator writes it; after this it is damage. */
const UNREADABLE_GRACE_MS = 2_000;

export class IndexLock {
  readonly owner = randomId();
  private holding = false;
  private cancelHeartbeat: (() => void) | null = null;
  private cancelExitRelease: (() => void) | null = null;
  private beating: Promise<void> = Promise.resolve();
  private readonly staleMs: number;
  private readonly heartbeatMs: number;
  private readonly since: number;
  /** The live holder found by the last acquire() that failed. */
  holder: LockHolder | null = null;
  /** What the last acquire() cleared away to take the lock (a dead holder, a damaged lock), in words. */
  tookOver: string | null = null;
  /** Called by the heartbeat (not awaited) when another process asked the holder to sync. */
  onSyncRequest: (() => void) | null = null;

  constructor(
    private readonly data: DataDirPort,
    private readonly clock: Clock,
    options: IndexLockOptions = {},
    /** Read at each use: a host may supply its process port after start-up. */
    private readonly processPort: () => ProcessPort | undefined = () => undefined,
  ) {
    this.staleMs = options.staleMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
    this.since = clock.now();
  }

  get held(): boolean {
    return this.holding;
  }

  /** True when this instance holds the lock afterwards. Never throws for a lock held elsewhere. */
  async acquire(): Promise<boolean> {
    if (this.holding) return true;
    this.holder = null;
    this.tookOver = null;
    await this.clearDamagedFolder();
    if (await this.data.createExclusive(LOCK_PATH, this.content())) return this.won();
    const current = await this.readLock();
    if (current.kind === "ok" && current.lock.owner === this.owner) return this.won();
    const stale = await this.staleReason(current);
    if (stale === null) {
      this.holder = current.kind === "ok" ? holderOf(current.lock) : { label: "another Krypton process" };
      return false;
    }
    // Stale: take it over, then check nobody else did the same at the same moment.
    await this.data.remove(LOCK_PATH);
    if (!(await this.data.createExclusive(LOCK_PATH, this.content()))) return this.lostRace();
    await this.clock.sleep(5);
    const after = await this.readLock();
    if (after.kind !== "ok" || after.lock.owner !== this.owner) return this.lostRace();
    this.tookOver = stale;
    return this.won();
  }

  /** Who holds the lock right now (a live holder), without taking it: for read-only openers that still report it. */
  async peek(): Promise<LockHolder | null> {
    if (this.holding) return null;
    const current = await this.readLock().catch(() => null);
    if (!current || current.kind !== "ok") return null;
    return (await this.staleReason(current)) === null ? holderOf(current.lock) : null;
  }

  /** Re-reads the lock file: false (and the lock is dropped) when another process took it over. */
  async verify(): Promise<boolean> {
    if (!this.holding) return false;
    const current = await this.readLock();
    if (current.kind === "ok" && current.lock.owner === this.owner) return true;
    this.stopHeartbeat();
    this.stopExitRelease();
    this.holding = false;
    return false;
  }

  async release(): Promise<void> {
    this.stopHeartbeat();
    if (!this.holding) return;
    this.holding = false;
    // A heartbeat already under way must not re-create the file after we removed it.
    await this.beating;
    const current = await this.readLock();
    if (current.kind === "ok" && current.lock.owner === this.owner) await this.data.remove(LOCK_PATH);
    this.stopExitRelease();
  }

  private async lostRace(): Promise<boolean> {
    const current = await this.readLock();
    this.holder = current.kind === "ok" ? holderOf(current.lock) : { label: "another Krypton process" };
    return false;
  }

  private won(): boolean {
    this.holding = true;
    this.stopExitRelease();
    ownersHere.add(this.owner);
    this.cancelExitRelease = this.processPort()?.releaseOnExit(LOCK_PATH, this.owner) ?? null;
    this.scheduleHeartbeat();
    return true;
  }

  /** `.krypton/index` being a file (not a folder) is damage no lock can be created in: remove it and say so. */
  private async clearDamagedFolder(): Promise<void> {
    if (!this.data.kind) return;
    if ((await this.data.kind(INDEX_DIR)) === "file") {
      await this.data.remove(INDEX_DIR);
      this.tookOver = ".krypton/index was a file, not a folder; it was removed";
    }
  }

  private scheduleHeartbeat(): void {
    this.stopHeartbeat();
    this.cancelHeartbeat = this.clock.setTimer(() => {
      this.cancelHeartbeat = null;
      this.beating = this.beat().finally(() => {
        this.beating = Promise.resolve();
      });
    }, this.heartbeatMs);
  }

  private async beat(): Promise<void> {
    if (!this.holding) return;
    try {
      if (!(await this.verify()) || !this.holding) return;
      await this.data.writeAtomic(LOCK_PATH, this.content());
      if (this.onSyncRequest && (await this.data.readText(SYNC_REQUEST_PATH)) !== null) this.onSyncRequest();
    } catch {
      // A failed heartbeat is retried on the next beat; the lock only goes stale after staleMs.
    }
    if (this.holding) this.scheduleHeartbeat();
  }

  private stopHeartbeat(): void {
    this.cancelHeartbeat?.();
    this.cancelHeartbeat = null;
  }

  private stopExitRelease(): void {
    ownersHere.delete(this.owner);
    this.cancelExitRelease?.();
    this.cancelExitRelease = null;
  }

  private content(): string {
    const body: LockContent = { owner: this.owner, at: this.clock.now(), since: this.since };
    const proc = this.processPort();
    if (proc) {
      body.pid = proc.pid;
      body.host = proc.hostName;
      body.label = proc.label;
    }
    return JSON.stringify(body);
  }

  private async readLock(): Promise<
    { kind: "ok"; lock: LockContent } | { kind: "missing" } | { kind: "folder" } | { kind: "unreadable"; mtime: number }
  > {
    let text: string | null;
    try {
      text = await this.data.readText(LOCK_PATH);
    } catch (err) {
      if (this.data.kind && (await this.data.kind(LOCK_PATH).catch(() => null)) === "dir") return { kind: "folder" };
      throw err;
    }
    if (text === null) return { kind: "missing" };
    try {
      const parsed = JSON.parse(text) as Partial<LockContent>;
      if (typeof parsed.owner === "string" && typeof parsed.at === "number") return { kind: "ok", lock: parsed as LockContent };
    } catch {
      // Being written right now (createExclusive is not atomic) or damaged: judged by its age below.
    }
    return { kind: "unreadable", mtime: (await this.data.mtime(LOCK_PATH)) ?? 0 };
  }

  /** Why the lock may be taken over, in words; null while its holder is alive. */
  private async staleReason(current: Awaited<ReturnType<IndexLock["readLock"]>>): Promise<string | null> {
    const now = this.clock.now();
    if (current.kind === "missing") return "the lock was just released";
    if (current.kind === "folder") return "the index lock was a folder, not a file; it was removed";
    if (current.kind === "unreadable") return now - current.mtime > UNREADABLE_GRACE_MS ? "the index lock file was damaged; it was replaced" : null;
    const lock = current.lock;
    const who = describeHolder(holderOf(lock));
    // Same machine, another process: its pid says at once whether it still runs.
    const proc = this.processPort();
    if (proc && lock.host === proc.hostName && typeof lock.pid === "number") {
      const alive = lock.pid === proc.pid ? ownersHere.has(lock.owner) : proc.isAlive(lock.pid);
      if (alive === false) return `the index lock of ${who} was left behind (that process is no longer running); it was taken over`;
    }
    // A heartbeat stamped in the future is nobody's: a clock that jumped, or a hand-made file.
    if (lock.at > now + this.staleMs) return `the index lock had a timestamp in the future; it was taken over`;
    const mtime = (await this.data.mtime(LOCK_PATH)) ?? 0;
    // Either clock may be off between machines: trust the newer of content time and file time.
    if (now - Math.max(lock.at, mtime > now + this.staleMs ? 0 : mtime) > this.staleMs) return `the index lock of ${who} went stale (no sign of life for ${Math.round(this.staleMs / 1000)} s); it was taken over`;
    return null;
  }
}

function holderOf(lock: LockContent): LockHolder {
  const holder: LockHolder = { label: typeof lock.label === "string" && lock.label ? lock.label : "another Krypton process" };
  if (typeof lock.pid === "number") holder.pid = lock.pid;
  if (typeof lock.host === "string") holder.host = lock.host;
  if (typeof lock.since === "number") holder.since = lock.since;
  return holder;
}

/** "krypton mcp, pid 1234, since 10:02" (and "on <host>" when it is another machine's). */
export function describeHolder(holder: LockHolder, thisHost?: string): string {
  const parts = [holder.label];
  if (holder.pid !== undefined) parts.push(`pid ${holder.pid}${holder.host && thisHost && holder.host !== thisHost ? ` on ${holder.host}` : ""}`);
  if (holder.since !== undefined && Number.isFinite(holder.since)) {
    const d = new Date(holder.since);
    parts.push(`since ${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`);
  }
  return parts.join(", ");
}

function randomId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
