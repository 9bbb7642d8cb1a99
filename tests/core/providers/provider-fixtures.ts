import { silentLogger } from "../../../src/core/ports/logger";
import type { Host } from "../../../src/core/ports/host";
import type { FetchLike } from "../../../src/core/ports/http";
import type { RetryPolicy } from "../../../src/core/providers/retry";
import { nodeClock } from "../../../src/node/node-clock";

/** Tiny backoffs: failure paths run in milliseconds. */
export const FAST_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

export const nodeFetch: FetchLike = (input, init) => fetch(input, init);

/** A Host for provider calls only (no vault or data dir behind it). */
export function networkHost(fetchImpl: FetchLike = nodeFetch): Host {
  const none = () => {
    throw new Error("not used by provider tests");
  };
  return {
    vault: { listNotes: none, listFolders: none, readNote: none, exists: none, createNote: none, appendToNote: none, processNote: none, readConfigFile: none, onChange: none, configDir: ".obsidian" },
    data: { read: none, readText: none, writeAtomic: none, createExclusive: none, remove: none, list: none, mtime: none, size: none },
    fetch: fetchImpl,
    clock: nodeClock,
    logger: silentLogger,
    platform: { kind: "cli", mobile: false },
  };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** What a stream yielded before it failed, and the failure. */
export async function collectUntilError<T>(iterable: AsyncIterable<T>): Promise<{ tokens: T[]; error: unknown }> {
  const tokens: T[] = [];
  try {
    for await (const item of iterable) tokens.push(item);
  } catch (error) {
    return { tokens, error };
  }
  return { tokens, error: undefined };
}

/** Polls a condition (for effects that land on the server side a moment later); fails after ~2 s. */
export async function waitFor(condition: () => boolean, what = "condition"): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`Timed out waiting for ${what}`);
}
