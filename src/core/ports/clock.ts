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

export function abortError(message = "Aborted"): Error {
  const err = new Error(message);
  err.name = "AbortError";
  return err;
}

/** Builds a full Clock from a host's timer and time source. */
export function clockFromTimers(now: () => number, setTimer: (fn: () => void, ms: number) => () => void): Clock {
  return {
    now,
    setTimer,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(abortError());
        const onAbort = () => {
          cancel();
          reject(abortError());
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
