import type { Clock } from "../ports/clock";
import type { Logger } from "../ports/logger";
import type { ToolRegistry } from "./tool-registry";
import { errorMessage } from "../util/errors";

export interface IndexFreshnessOptions {
  /** Re-scan before a search when the last scan finished longer ago than this. */
  maxAgeMs: number;
  /** Longest a tool call waits for that scan; past it the call answers from what is indexed so far. */
  maxWaitMs: number;
  clock: Clock;
  logger?: Logger;
  /** Aborts a running scan when the server shuts down. */
  signal?: AbortSignal;
}

/** Defaults for the standalone server: a scan costs one directory walk plus stat calls. */
export const DEFAULT_INDEX_FRESHNESS = { maxAgeMs: 2_000, maxWaitMs: 2_500 } as const;

/**
 * A scan is due only after this many times its own last duration: on a 100,000-note vault a scan takes
 * seconds, and re-scanning before every search would make every search wait for one.
 */
const SCAN_COST_FACTOR = 10;

/** Tools that answer from the index, and tools after which the index is known to be behind the vault. */
const READS_INDEX = new Set(["search_notes", "summarize_notes"]);
const CHANGES_VAULT = new Set(["create_note"]);

/**
 * Keeps a long-running server's index in step with a vault that someone else edits (the standalone
 * `krypton mcp` while Obsidian has the vault open): no file watcher, just a sync before a search when the
 * last one is older than maxAgeMs. VaultIndex.sync is incremental (mtime/size, then content hashes), never
 * takes a lock another process holds (a reader re-loads what the writer saved and applies the rest in
 * memory), and one scan serves all the calls that arrive while it runs.
 */
export class IndexFreshness {
  private lastDone = -Infinity;
  private lastDuration = 0;
  private running: { done: Promise<void>; startedAt: number } | null = null;

  constructor(
    private readonly sync: (signal?: AbortSignal) => Promise<unknown>,
    private readonly options: IndexFreshnessOptions,
  ) {}

  /** Starts a scan when due and waits for it, at most maxWaitMs counted from the scan's start. */
  async ensureFresh(): Promise<void> {
    const { clock } = this.options;
    if (this.options.signal?.aborted) return;
    const maxAge = Math.max(this.options.maxAgeMs, SCAN_COST_FACTOR * this.lastDuration);
    if (!this.running && clock.now() - this.lastDone >= maxAge) {
      const startedAt = clock.now();
      const done = this.sync(this.options.signal).then(
        () => {
          this.lastDone = clock.now();
          this.lastDuration = this.lastDone - startedAt;
        },
        (err: unknown) => {
          // Searching what is indexed beats failing the call; the next call tries again.
          this.lastDone = clock.now();
          this.lastDuration = this.lastDone - startedAt;
          if (!this.options.signal?.aborted) this.options.logger?.warn(`Index sync before a tool call failed: ${describe(err)}`);
        },
      );
      const run = { done, startedAt };
      this.running = run;
      void done.finally(() => {
        if (this.running === run) this.running = null;
      });
    }
    const run = this.running;
    if (!run) return;
    const left = run.startedAt + this.options.maxWaitMs - clock.now();
    if (left <= 0) return;
    const stopTimer = new AbortController();
    await Promise.race([run.done, clock.sleep(left, stopTimer.signal).catch(() => undefined)]);
    stopTimer.abort();
  }

  /** The vault changed under our own hands (a note was created): scan before the next search. */
  invalidate(): void {
    this.lastDone = -Infinity;
  }
}

/**
 * Gates the registry's calls: a freshness check before the tools that read the index, and the index marked
 * behind after one that changes the vault. On the registry itself rather than a copy of it, so a search a
 * tool makes for its caller (a workflow step inside run_workflow) waits exactly as a client's own
 * search_notes does. Arguments are still validated first (ToolRegistry.call), so a bad call never costs a
 * scan. Returns the gate's removal.
 */
export function gateOnFreshIndex(registry: ToolRegistry, freshness: IndexFreshness): () => void {
  return registry.setGate(async (tool, run) => {
    if (READS_INDEX.has(tool.name)) await freshness.ensureFresh();
    try {
      return await run();
    } finally {
      if (CHANGES_VAULT.has(tool.name)) freshness.invalidate();
    }
  });
}

function describe(err: unknown): string {
  return errorMessage(err).split("\n")[0];
}
