import type { VaultIndexApi } from "../indexing/vault-index-api";
import type { Clock } from "../ports/clock";
import type { Logger } from "../ports/logger";
import type { ToolContext, ToolDefinition } from "./tool";
import type { ToolRegistry } from "./tool-registry";
import { AbortedError, errorMessage, ShuttingDownError } from "../util/errors";

export interface IndexFreshnessOptions {
  /** Re-scan before a search when the last scan finished longer ago than this. */
  maxAgeMs: number;
  clock: Clock;
  logger?: Logger;
  /** Aborts a running scan when the server shuts down. */
  signal?: AbortSignal;
}

/** Defaults for the standalone server: a scan costs one directory walk plus stat calls. */
export const DEFAULT_INDEX_FRESHNESS = { maxAgeMs: 2_000 } as const;

/** Longest a tool call waits for the index to load (or for a re-scan); then it answers from what is indexed. */
export const DEFAULT_INDEX_WAIT_MS = 2_500;

/**
 * A scan is due only after this many times its own last duration: on a 100,000-note vault a scan takes
 * seconds, and re-scanning before every search would make every search wait for one.
 */
const SCAN_COST_FACTOR = 10;

/** Work a call may wait for: its promise never rejects, and the wait is counted from its start. */
interface IndexWork {
  done: Promise<void>;
  startedAt: number;
}

/**
 * Keeps a long-running server's index in step with a vault that someone else edits (the standalone
 * `krypton mcp` while Obsidian has the vault open): no file watcher, just a sync before a search when the
 * last one is older than maxAgeMs. VaultIndex.sync is incremental (mtime/size, then content hashes), never
 * takes a lock another process holds (a reader re-loads what the writer saved and applies the rest in
 * memory), and one scan serves all the calls that arrive while it runs. Before the index is open, the sync
 * is the open itself, so waiting for it is waiting for the load.
 */
export class IndexFreshness {
  private lastDone = -Infinity;
  private lastDuration = 0;
  private running: IndexWork | null = null;

  constructor(
    private readonly sync: (signal?: AbortSignal) => Promise<unknown>,
    private readonly options: IndexFreshnessOptions,
  ) {}

  /** The scan under way, started now if one is due; null when the index is fresh enough. */
  scanIfDue(): IndexWork | null {
    const { clock } = this.options;
    if (this.options.signal?.aborted) return null;
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
    return this.running;
  }

  /** The vault changed under our own hands (a note was created): scan before the next search. */
  invalidate(): void {
    this.lastDone = -Infinity;
  }
}

export interface IndexGateOptions {
  /** The index the tools read: a call that arrives while it is still loading waits for the load. */
  index: Pick<VaultIndexApi, "status" | "onStatus">;
  /** Longest a call waits (for a scan: counted from the scan's start); then it answers from what is indexed, or says the index is not ready yet. */
  maxWaitMs: number;
  clock: Clock;
  /** Aborted when the host shuts down (the server stops, the plugin unloads): a waiting call ends with a clear error. */
  signal?: AbortSignal;
  /**
   * A re-scan before searches, for a host that has no vault events (the standalone server). Obsidian has
   * none: its vault events keep the index current, so there a call waits for the load only.
   */
  freshness?: IndexFreshness;
}

/**
 * Gates the registry's calls: before the tools that read the index (needsIndex "reads"; a tool that runs
 * other tools, run_workflow, does not wait itself: its tools' calls do), a bounded wait for the index to load
 * (and, where the host asks for it, a re-scan); after one that changes the vault (ToolDefinition.changesVault),
 * the index marked behind.
 * On the registry itself rather than a copy of it, so a search a tool makes for its caller (a workflow
 * step inside run_workflow) waits exactly as a client's own search_notes does. Arguments are still
 * validated first (ToolRegistry.call), so a bad call never waits. The wait ends early when the caller
 * cancels or the host shuts down. Returns the gate's removal.
 */
export function gateOnIndex(registry: ToolRegistry, options: IndexGateOptions): () => void {
  return registry.setGate(async (tool, input, run, context) => {
    if (tool.needsIndex === "reads") await untilIndexAnswers(options, context);
    try {
      return await run();
    } finally {
      if (callChangesVault(tool, input)) options.freshness?.invalidate();
    }
  });
}

/** ToolDefinition.changesVault for this call: always, never, or as the tool decides from its arguments. */
function callChangesVault(tool: ToolDefinition, input: Record<string, unknown>): boolean {
  return typeof tool.changesVault === "function" ? tool.changesVault(input) : tool.changesVault === true;
}

async function untilIndexAnswers(options: IndexGateOptions, context: ToolContext): Promise<void> {
  const { clock } = options;
  const stop = new AbortController();
  try {
    const work = options.freshness?.scanIfDue() ?? loadUnderWay(options.index, clock, stop.signal);
    if (!work) return;
    const left = work.startedAt + options.maxWaitMs - clock.now();
    if (left <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const onHost = () => reject(new ShuttingDownError());
      const onCall = () => reject(new AbortedError());
      if (options.signal?.aborted) return onHost();
      if (context.signal?.aborted) return onCall();
      options.signal?.addEventListener("abort", onHost, { once: true, signal: stop.signal });
      context.signal?.addEventListener("abort", onCall, { once: true, signal: stop.signal });
      void work.done.then(resolve);
      // Past the bound the call goes on: the tool answers from what is indexed or says it is not ready.
      clock.sleep(left, stop.signal).then(resolve, () => undefined);
    });
  } finally {
    stop.abort();
  }
}

/** The index's load, when one is under way: done once the index leaves "loading" (or `stop` fires). */
function loadUnderWay(index: IndexGateOptions["index"], clock: Clock, stop: AbortSignal): IndexWork | null {
  if (index.status().state !== "loading") return null;
  const done = new Promise<void>((resolve) => {
    const off = index.onStatus((status) => {
      if (status.state !== "loading") resolve();
    });
    stop.addEventListener("abort", () => off(), { once: true });
    // A state change between the check above and the subscription is not missed.
    if (index.status().state !== "loading") resolve();
  });
  return { done, startedAt: clock.now() };
}

function describe(err: unknown): string {
  return errorMessage(err).split("\n")[0];
}
