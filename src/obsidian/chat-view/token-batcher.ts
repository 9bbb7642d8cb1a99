/**
 * Collects streamed tokens and hands them over at most once per animation frame, so a fast model
 * (hundreds of tokens a second) costs one render per frame instead of one per token.
 */
export type FrameScheduler = (callback: () => void) => () => void;

/** requestAnimationFrame of the window the element lives in (popout-safe). */
export function animationFrameScheduler(win: Window): FrameScheduler {
  return (callback) => {
    const id = win.requestAnimationFrame(() => callback());
    return () => win.cancelAnimationFrame(id);
  };
}

export class TokenBatcher {
  private pending = "";
  private dirty = false;
  private cancel: (() => void) | null = null;

  constructor(
    private readonly schedule: FrameScheduler,
    private readonly flushTo: (text: string) => void,
  ) {}

  /** Queues text; an empty string still asks for a render (e.g. content replaced). */
  push(text: string): void {
    this.pending += text;
    this.dirty = true;
    if (!this.cancel) this.cancel = this.schedule(() => this.flush());
  }

  /** Delivers what is pending now (end of stream) and cancels the scheduled frame. */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    if (!this.dirty) return;
    this.dirty = false;
    const text = this.pending;
    this.pending = "";
    this.flushTo(text);
  }

  /** Drops pending text (the message went away). */
  dispose(): void {
    this.cancel?.();
    this.cancel = null;
    this.pending = "";
    this.dirty = false;
  }
}
