import type { Clock } from "../ports/clock";
import type { DataDirPort } from "../ports/data-dir";
import { INDEX_DIR } from "./index-persistence";

/**
 * One writer per index across processes (the plugin and the CLI may open the same vault at once).
 * The lock is a file created exclusively in .krypton/index/; its holder rewrites a timestamp in it every
 * few seconds. A lock whose timestamp is older than staleMs belongs to a crashed or frozen process and
 * may be taken over. Whoever cannot take the lock still loads and searches the index, but never writes it.
 */
export const LOCK_PATH = `${INDEX_DIR}/write.lock`;

export interface IndexLockOptions {
  staleMs?: number;
  heartbeatMs?: number;
}

interface LockContent {
  owner: string;
  at: number;
}

export class IndexLock {
  readonly owner = randomId();
  private holding = false;
  private cancelHeartbeat: (() => void) | null = null;
  private beating: Promise<void> = Promise.resolve();
  private readonly staleMs: number;
  private readonly heartbeatMs: number;

  constructor(
    private readonly data: DataDirPort,
    private readonly clock: Clock,
    options: IndexLockOptions = {},
  ) {
    this.staleMs = options.staleMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? 5_000;
  }

  get held(): boolean {
    return this.holding;
  }

  /** True when this instance holds the lock afterwards. Never throws for a lock held elsewhere. */
  async acquire(): Promise<boolean> {
    if (this.holding) return true;
    if (await this.data.createExclusive(LOCK_PATH, this.content())) return this.won();
    const current = await this.readLock();
    if (current && current.owner === this.owner) return this.won();
    if (!(await this.isStale(current))) return false;
    // Stale: take it over, then check nobody else did the same at the same moment.
    await this.data.remove(LOCK_PATH);
    if (!(await this.data.createExclusive(LOCK_PATH, this.content()))) return false;
    await this.clock.sleep(5);
    const after = await this.readLock();
    if (!after || after.owner !== this.owner) return false;
    return this.won();
  }

  /** Re-reads the lock file: false (and the lock is dropped) when another process took it over. */
  async verify(): Promise<boolean> {
    if (!this.holding) return false;
    const current = await this.readLock();
    if (current && current.owner === this.owner) return true;
    this.stopHeartbeat();
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
    if (current && current.owner === this.owner) await this.data.remove(LOCK_PATH);
  }

  private won(): boolean {
    this.holding = true;
    this.scheduleHeartbeat();
    return true;
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
    } catch {
      // A failed heartbeat is retried on the next beat; the lock only goes stale after staleMs.
    }
    if (this.holding) this.scheduleHeartbeat();
  }

  private stopHeartbeat(): void {
    this.cancelHeartbeat?.();
    this.cancelHeartbeat = null;
  }

  private content(): string {
    const body: LockContent = { owner: this.owner, at: this.clock.now() };
    return JSON.stringify(body);
  }

  private async readLock(): Promise<LockContent | null> {
    const text = await this.data.readText(LOCK_PATH);
    if (text === null) return null;
    try {
      const parsed = JSON.parse(text) as Partial<LockContent>;
      if (typeof parsed.owner === "string" && typeof parsed.at === "number") return { owner: parsed.owner, at: parsed.at };
    } catch {
      // Being written right now (createExclusive is not atomic) or damaged: judged by its mtime below.
    }
    return { owner: "", at: (await this.data.mtime(LOCK_PATH)) ?? 0 };
  }

  private async isStale(current: LockContent | null): Promise<boolean> {
    if (!current) return true;
    const mtime = (await this.data.mtime(LOCK_PATH)) ?? 0;
    // Either clock may be off between processes: trust the newer of content time and file time.
    return this.clock.now() - Math.max(current.at, mtime) > this.staleMs;
  }
}

function randomId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
