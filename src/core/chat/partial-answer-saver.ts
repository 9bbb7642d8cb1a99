import type { Clock } from "../ports/clock";

/** At most one save of a growing answer per this many ms... */
export const PARTIAL_SAVE_EVERY_MS = 500;
/** ...unless this many characters arrived since the last save (a fast model on a slow disk still loses little). */
export const PARTIAL_SAVE_EVERY_CHARS = 2_000;

/**
 * Saves an answer while it streams, so a process killed mid-answer (kill -9, a crash, Obsidian closed)
 * keeps what the user already saw. The write rate is bounded (time or size since the last save), saves
 * never overlap, and a failed save is only logged: the stream goes on, and the final save says more.
 *
 *   const saver = new PartialAnswerSaver(clock, (text) => store.put(id, { ...answer, content: text, partial: true }));
 *   for await (const piece of stream) { text += piece; saver.update(text); }
 *   await saver.settle(); // before the final save, so a late partial save never overwrites it
 */
export class PartialAnswerSaver {
  private lastSavedAt: number;
  private lastSavedLength = 0;
  private writing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly save: (text: string) => Promise<unknown>,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.lastSavedAt = clock.now();
  }

  /** Call with the whole answer so far after each piece; saves when due and no save is running. */
  update(text: string): void {
    if (this.closed || this.writing || text.length === this.lastSavedLength) return;
    const due = this.clock.now() - this.lastSavedAt >= PARTIAL_SAVE_EVERY_MS || text.length - this.lastSavedLength >= PARTIAL_SAVE_EVERY_CHARS;
    if (!due) return;
    this.lastSavedAt = this.clock.now();
    this.lastSavedLength = text.length;
    this.writing = this.save(text)
      .then(
        () => undefined,
        (err: unknown) => this.onError(err),
      )
      .finally(() => {
        this.writing = null;
      });
  }

  /** Stops saving and waits for a save under way. */
  async settle(): Promise<void> {
    this.closed = true;
    await this.writing;
  }
}
