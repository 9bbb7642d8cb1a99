/**
 * Keeps a scroll container pinned to the bottom while an answer streams, unless the user scrolled up
 * to read something; scrolling back down (or "Jump to latest") re-pins it.
 */
export class ScrollFollow {
  /** Within this many pixels of the bottom counts as "at the bottom". */
  static readonly SLACK_PX = 24;
  private pinned = true;
  private listeners = new Set<(pinned: boolean) => void>();

  constructor(private readonly el: HTMLElement) {}

  get isPinned(): boolean {
    return this.pinned;
  }

  /** Call from the container's scroll event. */
  onScroll(): void {
    const distance = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight;
    this.setPinned(distance <= ScrollFollow.SLACK_PX);
  }

  /** Call after content grew: scrolls down when pinned. */
  follow(): void {
    if (this.pinned) this.el.scrollTop = this.el.scrollHeight;
  }

  /** Scrolls to the bottom and pins (new question sent, conversation opened, "Jump to latest"). */
  jumpToBottom(): void {
    this.el.scrollTop = this.el.scrollHeight;
    this.setPinned(true);
  }

  onChange(listener: (pinned: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setPinned(pinned: boolean): void {
    if (pinned === this.pinned) return;
    this.pinned = pinned;
    for (const l of this.listeners) l(pinned);
  }
}
