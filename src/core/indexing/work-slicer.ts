import type { Clock } from "../ports/clock";
import { throwIfAborted } from "../util/errors";

/**
 * Keeps long loops from freezing the UI: call `await slicer.tick()` often; it yields to the host once
 * `budgetMs` of work has run since the last yield, and throws an AbortError when the signal fired.
 */
export class WorkSlicer {
  private since: number;

  constructor(
    private readonly clock: Clock,
    private readonly signal?: AbortSignal,
    private readonly budgetMs = 12,
  ) {
    this.since = clock.now();
  }

  async tick(): Promise<void> {
    throwIfAborted(this.signal, "Aborted");
    if (this.clock.now() - this.since < this.budgetMs) return;
    await this.clock.yieldToHost();
    this.since = this.clock.now();
    throwIfAborted(this.signal, "Aborted");
  }

  /** Yields now (before a step known to be long). */
  async yieldNow(): Promise<void> {
    await this.clock.yieldToHost();
    this.since = this.clock.now();
    throwIfAborted(this.signal, "Aborted");
  }
}

/**
 * Long pure computations (chunking a huge note) are written as generators that `yield` every so often;
 * `runSteps` drains one at once, `runSliced` awaits `tick` (a WorkSlicer's) at each yield, so the same code
 * gives the same result either way.
 */
export type Steps<T> = Generator<void, T, void>;

export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export async function runSliced<T>(steps: Steps<T>, tick: () => Promise<void>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await tick();
  }
}
