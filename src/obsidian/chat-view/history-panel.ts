// Past conversations from the .krypton/chat/ store (the CLI's chats too): search by text, switch,
// rename in place, delete after an in-place confirmation. Typing in the search box waits for a short
// pause before searching, and one search runs at a time (a query typed meanwhile runs after it), so a fast
// typist does not start a search of every conversation per key.
import { setIcon } from "obsidian";
import type { ConversationStoreApi, ConversationSummary } from "../../core/chat/conversation-types";
import { errorMessage } from "../../core/util/errors";
import { countOf } from "../../core/util/text";

export interface HistoryCallbacks {
  open(id: string): void;
  /** After a rename or delete, so the open conversation can follow. */
  changed(id: string, change: "renamed" | "deleted"): void;
  /** Escape in the panel: close it (the view moves focus back). */
  close(): void;
  currentId(): string | undefined;
}

/** Runs fn after ms and returns a function that cancels it. */
export type HistoryDelay = (fn: () => void, ms: number) => () => void;

const ROW_BUTTONS = ["krypton-history-open", "krypton-history-rename", "krypton-history-delete"];

/** Quiet time after the last keystroke before the history is searched. */
export const HISTORY_SEARCH_DELAY_MS = 150;

export function formatWhen(ms: number, now: number = Date.now()): string {
  const d = new Date(ms);
  const today = new Date(now);
  const sameDay = d.toDateString() === today.toDateString();
  if (sameDay) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const yesterday = new Date(now - 86_400_000);
  if (d.toDateString() === yesterday.toDateString()) return "Yesterday";
  return d.toLocaleDateString(undefined, { year: d.getFullYear() === today.getFullYear() ? undefined : "numeric", month: "short", day: "numeric" });
}

export class HistoryPanel {
  readonly el: HTMLElement;
  private readonly searchInput: HTMLInputElement;
  private readonly listEl: HTMLElement;
  private readonly problemsEl: HTMLElement;
  private query = "";
  /** Whether a refresh was ever asked for: the first search lists even with an empty query. */
  private listedOnce = false;
  /** The list or search under way, and whether one was asked for since it began (then its answer is not shown). */
  private loading: Promise<void> | null = null;
  private stale = false;
  private readonly delay: HistoryDelay;
  private readonly delayMs: number;
  private cancelPendingSearch: (() => void) | null = null;
  /** Where the focus goes at the next redraw: the button of the row that started a rename or delete. */
  private pendingFocus: { id: string; button: string } | null = null;
  /** Why the last rename or delete failed, shown above the list until the next one or until the panel closes. */
  private failure: string | null = null;

  constructor(
    parent: HTMLElement,
    private readonly store: ConversationStoreApi,
    private readonly cb: HistoryCallbacks,
    /** Search delay in ms, or a timer (tests pass a manual one). */
    searchDelay: number | HistoryDelay = HISTORY_SEARCH_DELAY_MS,
  ) {
    this.el = parent.createDiv({ cls: "krypton-history is-hidden", attr: { role: "region", "aria-label": "Chat history" } });
    this.searchInput = this.el.createEl("input", {
      type: "search",
      cls: "krypton-history-search",
      placeholder: "Search conversations…",
      attr: { "aria-label": "Search conversations" },
    });
    this.delayMs = typeof searchDelay === "number" ? searchDelay : HISTORY_SEARCH_DELAY_MS;
    this.delay =
      typeof searchDelay === "function"
        ? searchDelay
        : (fn, ms) => {
            const win = this.el.win; // the sidebar may live in a popout window
            const id = win.setTimeout(fn, ms);
            return () => win.clearTimeout(id);
          };
    this.searchInput.addEventListener("input", () => this.onSearchInput());
    this.searchInput.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        this.runSearch(); // no need to wait for the pause
      }
    });
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape" || ev.defaultPrevented) return;
      ev.preventDefault();
      this.cb.close();
    });
    this.problemsEl = this.el.createDiv({ cls: "krypton-history-problems" });
    this.listEl = this.el.createEl("ul", { cls: "krypton-history-list" });
  }

  get isOpen(): boolean {
    return !this.el.hasClass("is-hidden");
  }

  toggle(open: boolean = !this.isOpen): void {
    this.el.toggleClass("is-hidden", !open);
    if (!open) this.cancelSearch();
    if (!open) this.failure = null;
    if (open) {
      void this.refresh();
      this.searchInput.focus();
    }
  }

  /** The view closed: a search still waiting for the typing pause does not run. */
  destroy(): void {
    this.cancelSearch();
  }

  /** Resolves when the latest refresh has rendered (tests). */
  loaded(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private onSearchInput(): void {
    this.cancelSearch();
    // Clearing the box lists everything at once (no search to wait for); text waits for a pause.
    if (this.searchInput.value.trim() === "") this.runSearch();
    else this.cancelPendingSearch = this.delay(() => this.runSearch(), this.delayMs);
  }

  private runSearch(): void {
    this.cancelSearch();
    const query = this.searchInput.value.trim();
    if (query === this.query && this.listedOnce) return;
    this.query = query;
    void this.refresh();
  }

  private cancelSearch(): void {
    this.cancelPendingSearch?.();
    this.cancelPendingSearch = null;
  }

  /** Lists or searches again; while one runs, the next starts when it ends (only the latest is shown). */
  refresh(): Promise<void> {
    this.listedOnce = true;
    this.stale = true;
    this.loading ??= this.loadUntilCurrent().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async loadUntilCurrent(): Promise<void> {
    while (this.stale) {
      this.stale = false;
      await this.load();
    }
  }

  private async load(): Promise<void> {
    let items: ConversationSummary[];
    try {
      items = this.query ? await this.store.search(this.query) : await this.store.list();
    } catch (err) {
      if (this.stale) return;
      this.listEl.empty();
      this.listEl.createEl("li", { cls: "krypton-history-empty", text: `Could not read the chat history: ${errorMessage(err)}` });
      return;
    }
    if (this.stale) return;
    this.render([...items].sort((a, b) => b.updatedAt - a.updatedAt));
  }

  private render(items: ConversationSummary[]): void {
    // A redraw removes the focused button, which would drop a keyboard user at the top of the window; a change
    // to the open conversation redraws twice (here and for the view), so each redraw gives the focus back.
    const focus = this.pendingFocus ?? this.focusedButton();
    this.pendingFocus = null;
    this.renderItems(items);
    if (!focus) return;
    const row = Array.from(this.listEl.children).find((li) => li.getAttribute("data-id") === focus.id);
    (row?.querySelector<HTMLElement>(focus.button) ?? this.searchInput).focus();
  }

  private renderItems(items: ConversationSummary[]): void {
    this.problemsEl.empty();
    const problems = this.store.problems();
    if (problems.length > 0) {
      this.problemsEl.createDiv({ text: `Skipped ${countOf(problems.length, "unreadable conversation file")} in .krypton/chat.` });
    }
    if (this.failure) this.problemsEl.createDiv({ cls: "mod-warning", text: this.failure, attr: { role: "alert" } });
    this.listEl.empty();
    if (items.length === 0) {
      this.listEl.createEl("li", {
        cls: "krypton-history-empty",
        text: this.query ? `No conversation mentions "${this.query}".` : "No conversations yet. Your chats will be listed here.",
      });
      return;
    }
    for (const item of items) this.renderItem(item);
  }

  private renderItem(item: ConversationSummary): void {
    const li = this.listEl.createEl("li", { cls: "krypton-history-item", attr: { "data-id": item.id } });
    li.toggleClass("is-active", item.id === this.cb.currentId());
    const main = li.createEl("button", { cls: "krypton-history-open", attr: { "aria-label": `Open conversation: ${item.title}` } });
    main.createDiv({ cls: "krypton-history-title", text: item.title || "Untitled" });
    const meta = main.createDiv({ cls: "krypton-history-meta" });
    meta.createSpan({ text: formatWhen(item.updatedAt) });
    if (item.summary && item.summary !== item.title) meta.createSpan({ cls: "krypton-history-summary", text: item.summary });
    main.addEventListener("click", () => this.cb.open(item.id));

    const tools = li.createDiv({ cls: "krypton-history-tools" });
    const rename = tools.createEl("button", { cls: ["clickable-icon", "krypton-history-rename"], attr: { "aria-label": `Rename ${item.title}` } });
    setIcon(rename, "pencil");
    rename.addEventListener("click", () => this.startRename(li, item));
    const del = tools.createEl("button", { cls: ["clickable-icon", "krypton-history-delete"], attr: { "aria-label": `Delete ${item.title}` } });
    setIcon(del, "trash-2");
    del.addEventListener("click", () => this.confirmDelete(li, item));
  }

  private startRename(li: HTMLElement, item: ConversationSummary): void {
    li.empty();
    li.addClass("is-editing");
    const input = li.createEl("input", { type: "text", cls: "krypton-history-rename-input", value: item.title, attr: { "aria-label": "New title" } });
    const save = li.createEl("button", { cls: "mod-cta", text: "Save" });
    const cancel = li.createEl("button", { text: "Cancel" });
    const commit = () =>
      this.change(item.id, ".krypton-history-rename", `rename "${item.title}"`, async () => {
        const title = input.value.trim();
        if (title && title !== item.title) {
          await this.store.rename(item.id, title);
          this.cb.changed(item.id, "renamed");
        }
      });
    save.addEventListener("click", () => void commit());
    cancel.addEventListener("click", () => void this.backTo(item.id, ".krypton-history-rename"));
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") {
        ev.preventDefault();
        void commit();
      } else if (ev.key === "Escape") {
        ev.preventDefault();
        void this.backTo(item.id, ".krypton-history-rename");
      }
    });
    input.focus();
    input.select();
  }

  private confirmDelete(li: HTMLElement, item: ConversationSummary): void {
    li.empty();
    li.addClass("is-confirming");
    li.createDiv({ cls: "krypton-history-confirm-text", text: `Delete "${item.title}"? This cannot be undone.` });
    const yes = li.createEl("button", { cls: ["mod-warning", "krypton-history-confirm-delete"], text: "Delete" });
    const no = li.createEl("button", { cls: "krypton-history-confirm-cancel", text: "Cancel" });
    yes.addEventListener("click", () => {
      // Once deleted its row is gone: the focus goes to the search box.
      void this.change(item.id, ".krypton-history-delete", `delete "${item.title}"`, async () => {
        await this.store.delete(item.id);
        this.cb.changed(item.id, "deleted");
      });
    });
    no.addEventListener("click", () => void this.backTo(item.id, ".krypton-history-delete"));
    no.focus();
  }

  /**
   * A rename or delete, then the redrawn list. One that fails (the conversation was deleted or damaged by
   * another process, a file the disk refuses) says why above the list instead of leaving the row as it was.
   */
  private async change(id: string, button: string, what: string, run: () => Promise<void>): Promise<void> {
    this.failure = null;
    try {
      await run();
    } catch (err) {
      this.failure = `Could not ${what}: ${errorMessage(err)}`;
    }
    await this.backTo(id, button);
  }

  /** Redraws the list with the focus on the row's button that started a rename or delete (see render). */
  private backTo(id: string, button: string): Promise<void> {
    this.pendingFocus = { id, button };
    return this.refresh();
  }

  /** The row button that has the focus, to give it back after a redraw. */
  private focusedButton(): { id: string; button: string } | null {
    const active = this.el.ownerDocument.activeElement;
    if (!active || !this.listEl.contains(active)) return null;
    const button = ROW_BUTTONS.find((cls) => active.classList.contains(cls));
    const id = active.closest("li")?.getAttribute("data-id");
    return button && id ? { id, button: `.${button}` } : null;
  }
}
