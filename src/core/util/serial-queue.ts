/**
 * Runs async tasks one at a time, in the order they were queued. A failing task rejects only its own
 * promise; the queue carries on with the next. `idle()` resolves when everything queued so far is done.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  run<T>(task: () => Promise<T> | T): Promise<T> {
    this.pending++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  /** Tasks queued or running. */
  get size(): number {
    return this.pending;
  }

  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
