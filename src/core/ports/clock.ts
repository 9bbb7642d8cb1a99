import { AbortedError } from "../util/errors";

/**
 * Time, through the host: Obsidian's host uses window timers (popout-safe), Node uses its own.
 * Core code never calls setTimeout directly.
 */
export interface Clock {
  now(): number;
  /** Runs fn once after ms; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
  /** Resolves after ms; rejects with an AbortError when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Gives the host's event loop a turn, so long work never holds the UI thread for long. */
  yieldToHost(): Promise<void>;
}

/**
 * Settles like `work`, or rejects with an AbortError as soon as the signal aborts, for work that cannot be
 * cancelled itself (a stalled embedder, Obsidian's requestUrl). The late result of `work` is dropped.
 */
export function untilAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(new AbortedError("Aborted"));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new AbortedError("Aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** Builds a full Clock from a host's timer and time source. */
export function clockFromTimers(now: () => number, setTimer: (fn: () => void, ms: number) => () => void): Clock {
  return {
    now,
    setTimer,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(new AbortedError("Aborted"));
        const onAbort = () => {
          cancel();
          reject(new AbortedError("Aborted"));
        };
        const cancel = setTimer(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, ms);
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
    yieldToHost: () => new Promise<void>((resolve) => void setTimer(resolve, 0)),
  };
}
