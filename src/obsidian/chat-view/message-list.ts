// The scrolling list of messages. Applies the controller's events to one message at a time (a token
// never re-renders the list) and keeps the view at the bottom unless the user scrolled up.
import { setIcon } from "obsidian";
import type { ControllerEvent, MessageModel } from "./chat-controller";
import { MessageRenderer, type MessageRendererDeps } from "./message-renderer";
import { ScrollFollow } from "./scroll-follow";

export class MessageList {
  readonly el: HTMLElement;
  /** Shown instead of messages when there are none (welcome, no model). */
  readonly stateEl: HTMLElement;
  private readonly itemsEl: HTMLElement;
  private readonly jumpButton: HTMLButtonElement;
  private readonly scroll: ScrollFollow;
  private renderers: MessageRenderer[] = [];
  private readonly resizeObserver: ResizeObserver | null = null;

  constructor(
    parent: HTMLElement,
    private readonly deps: Omit<MessageRendererDeps, "onResize">,
  ) {
    const wrap = parent.createDiv({ cls: "krypton-messages-wrap" });
    this.el = wrap.createDiv({ cls: "krypton-messages", attr: { role: "log", "aria-live": "polite", "aria-label": "Conversation" } });
    this.stateEl = this.el.createDiv({ cls: "krypton-messages-state" });
    this.itemsEl = this.el.createDiv({ cls: "krypton-messages-items" });
    this.scroll = new ScrollFollow(this.el);
    this.el.addEventListener("scroll", () => this.scroll.onScroll(), { passive: true });
    this.jumpButton = wrap.createEl("button", { cls: ["krypton-jump", "is-hidden"], attr: { "aria-label": "Jump to latest" } });
    setIcon(this.jumpButton, "arrow-down");
    this.jumpButton.addEventListener("click", () => this.scroll.jumpToBottom());
    this.scroll.onChange((pinned) => this.jumpButton.toggleClass("is-hidden", pinned));
    // The list also changes size without new content (sidebar resized, composer grew): stay at the
    // bottom if the user was there. (No ResizeObserver under jsdom.)
    const Observer = (this.el.win as Window & { ResizeObserver?: typeof ResizeObserver }).ResizeObserver;
    if (Observer) {
      this.resizeObserver = new Observer(() => this.scroll.follow());
      this.resizeObserver.observe(this.el);
    }
  }

  /** The view closed: stops observing and drops each message's pending frame. */
  destroy(): void {
    this.resizeObserver?.disconnect();
    for (const r of this.renderers) r.destroy();
    this.renderers = [];
  }

  get isEmpty(): boolean {
    return this.renderers.length === 0;
  }

  get followsBottom(): boolean {
    return this.scroll.isPinned;
  }

  reset(messages: readonly MessageModel[]): void {
    for (const r of this.renderers) r.destroy();
    this.renderers = [];
    for (const m of messages) this.add(m);
    this.scroll.jumpToBottom();
  }

  apply(event: ControllerEvent): void {
    switch (event.type) {
      case "added":
        this.add(event.message);
        if (event.message.role === "user") this.scroll.jumpToBottom();
        break;
      case "removed": {
        const r = this.find(event.key);
        if (r) {
          r.destroy();
          this.renderers = this.renderers.filter((x) => x !== r);
          this.markLast();
        }
        break;
      }
      case "token":
        this.find(event.message.key)?.token(event.message, event.text);
        break;
      case "updated":
        this.find(event.message.key)?.update(event.message);
        break;
      default:
        break;
    }
  }

  /** Resolves when every message has finished rendering (tests, screenshots). */
  async settled(): Promise<void> {
    for (const r of this.renderers) await r.settled();
  }

  private add(message: MessageModel): void {
    const renderer = new MessageRenderer(this.itemsEl, message, { ...this.deps, onResize: () => this.scroll.follow() });
    this.renderers.push(renderer);
    this.markLast();
    this.scroll.follow();
  }

  private markLast(): void {
    const lastAssistant = [...this.renderers].reverse().find((r) => r.el.hasClass("krypton-message-assistant"));
    const last = this.renderers[this.renderers.length - 1];
    for (const r of this.renderers) r.setIsLast(r === last && r === lastAssistant);
  }

  private find(key: string): MessageRenderer | undefined {
    return this.renderers.find((r) => r.key === key);
  }
}
