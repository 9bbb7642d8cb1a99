import { Modal, type App } from "obsidian";
import { everyNoteExcludedText, type IndexStatus } from "../../core/indexing/index-status";
import type { NoteHit } from "../../core/search/search-types";
import { unsearchableQueryText } from "../../core/search/unsearchable-query";
import type { KryptonServices } from "../plugin-services";
import { errorMessage } from "../../core/util/errors";
import { countOf, formatCount, oneLine } from "../../core/util/text";

let dialogs = 0;

export interface SearchModalOptions {
  /** Quiet time after the last keystroke before searching. */
  debounceMs?: number;
  limit?: number;
}

/**
 * "Search vault": results as you type (debounced), each with title, folder, snippet and score; arrow keys
 * move, Enter opens the note at the matched lines (Ctrl/Cmd+Enter in a new tab). Uses the one SearchApi.
 */
export class SearchModal extends Modal {
  private inputEl!: HTMLInputElement;
  private stateEl!: HTMLElement;
  private resultsEl!: HTMLElement;
  private hits: NoteHit[] = [];
  /** Why the last search matched by keywords only (SearchResult.keywordOnly), found or not. */
  private keywordOnly: string | undefined;
  private selected = 0;
  private cancelTimer: (() => void) | null = null;
  private seq = 0;
  private inFlight: Promise<void> = Promise.resolve();
  private waiters: (() => void)[] = [];
  private unsubscribeStatus: (() => void) | null = null;
  /** The index state the dialog last saw: a change to a finished index searches again. */
  private indexState: IndexStatus["state"] | null = null;
  private readonly debounceMs: number;
  /** Ids for the results (aria-activedescendant), unique in the document. */
  private readonly idPrefix = `krypton-search-${++dialogs}`;
  private readonly limit: number;

  constructor(
    app: App,
    private readonly services: KryptonServices,
    options: SearchModalOptions = {},
  ) {
    super(app);
    this.debounceMs = options.debounceMs ?? 150;
    this.limit = options.limit ?? 20;
  }

  onOpen(): void {
    this.modalEl.addClass("krypton-search-modal");
    this.titleEl.setText("Search vault");
    this.inputEl = this.contentEl.createEl("input", {
      cls: "krypton-search-input",
      type: "text",
      placeholder: "Search your notes…",
      attr: { "aria-label": "Search your notes", spellcheck: "false" },
    });
    this.stateEl = this.contentEl.createDiv({ cls: "krypton-search-state", attr: { role: "status" } }); // "No notes match" is read out
    this.resultsEl = this.contentEl.createDiv({ cls: "krypton-search-results", attr: { role: "listbox", id: `${this.idPrefix}-list`, "aria-label": "Results" } });
    this.inputEl.setAttrs({ role: "combobox", "aria-controls": `${this.idPrefix}-list`, "aria-expanded": "true", "aria-autocomplete": "list" });
    this.inputEl.addEventListener("input", () => this.schedule(this.inputEl.value));
    this.inputEl.addEventListener("keydown", (evt) => this.onKey(evt));
    this.renderIdle();
    this.inputEl.focus();
    this.indexState = this.services.core.index.status().state;
    this.unsubscribeStatus = this.services.core.index.onStatus((status) => this.followIndex(status));
  }

  onClose(): void {
    this.unsubscribeStatus?.();
    this.unsubscribeStatus = null;
    this.cancelTimer?.();
    this.seq++;
    this.resolveWaiters();
    this.contentEl.empty();
  }

  /** Resolves once the latest typed query has been searched and rendered. */
  settled(): Promise<void> {
    if (!this.cancelTimer) return this.inFlight;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Searches now, skipping the debounce (used on Enter before results arrived, and by tests). */
  search(query: string): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.inputEl.value = query;
    this.inFlight = this.run(query);
    return this.inFlight;
  }

  /** The results currently shown. */
  results(): readonly NoteHit[] {
    return this.hits;
  }

  private schedule(query: string): void {
    this.cancelTimer?.();
    this.cancelTimer = this.services.host.clock.setTimer(() => {
      this.cancelTimer = null;
      this.inFlight = this.run(query).finally(() => this.resolveWaiters());
    }, this.debounceMs);
  }

  /**
   * Opened while Obsidian starts or the index is built, the dialog would keep saying "No notes are indexed
   * yet" or "Indexing 12 / 900 notes" after that is over: progress is shown as it goes, and the query runs
   * again once the index is ready.
   */
  private followIndex(status: IndexStatus): void {
    const was = this.indexState;
    this.indexState = status.state;
    const building = buildingText(status);
    if (status.state === "indexing" || status.state === "loading") {
      if (building) this.showState(building);
    } else if (status.state !== was) {
      this.inFlight = this.run(this.inputEl.value);
    }
  }

  private resolveWaiters(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private async run(query: string): Promise<void> {
    const mine = ++this.seq;
    const q = query.trim();
    if (!q) {
      this.hits = [];
      this.renderIdle();
      return;
    }
    const status = this.services.core.index.status();
    if (status.notes === 0 && (status.state === "ready" || status.state === "empty")) {
      this.hits = [];
      // Exclusions that take every note are the reason, not an index yet to build.
      this.showState(everyNoteExcluded(status) ?? "No notes are indexed yet. Run \"Rebuild index\" if your vault has notes.");
      this.clearResults();
      return;
    }
    try {
      const found = await this.services.core.index.searchNotesWithReason(q, { limit: this.limit });
      if (mine !== this.seq) return; // a newer query is on its way
      this.hits = found.hits;
      this.keywordOnly = found.keywordOnly;
      this.selected = 0;
      this.renderResults(q, status);
    } catch (err) {
      if (mine !== this.seq) return;
      this.hits = [];
      this.clearResults();
      this.showState(`Search failed: ${errorMessage(err)}`, true);
    }
  }

  private renderIdle(): void {
    this.clearResults();
    const status = this.services.core.index.status();
    // Before typing too: "Type to search 0 notes." would hide that the exclusions took them all.
    this.showState(buildingText(status) ?? everyNoteExcluded(status) ?? keywordOnlyText(status) ?? `Type to search ${countOf(status.notes, "note")}.`);
  }

  private renderResults(query: string, status: IndexStatus): void {
    this.clearResults();
    const building = buildingText(status);
    // The search's own reason, in the same words as chat's; with no match too (a paraphrase finds nothing by keywords).
    const keywordOnly = this.keywordOnly;
    if (this.hits.length === 0) {
      // A pasted page of text would fill the dialog with itself: the query is named on one short line.
      // A query the analyser dropped whole ("the and of") says why rather than only that nothing matched.
      const noMatch = unsearchableQueryText(query) ?? `No notes match "${oneLine(query, 60)}".`;
      this.showState(building ?? `${noMatch}${keywordOnly ? ` ${keywordOnly}` : ""}`);
      return;
    }
    this.showState(building ?? keywordOnly ?? keywordOnlyText(status) ?? "");
    this.hits.forEach((hit, i) => {
      const item = this.resultsEl.createDiv({ cls: "krypton-search-result suggestion-item", attr: { role: "option", id: `${this.idPrefix}-${i}` } });
      const head = item.createDiv({ cls: "krypton-search-result-head" });
      head.createSpan({ cls: "krypton-search-result-title", text: hit.title });
      // The option's name is read from its text: an aria-label on a plain span replaced the number (Chromium read "Score" alone).
      const score = head.createSpan({ cls: "krypton-search-result-score" });
      score.createSpan({ cls: "krypton-visually-hidden", text: "Score " });
      score.appendText(hit.score.toFixed(2));
      if (hit.folder) item.createDiv({ cls: "krypton-search-result-folder", text: hit.folder });
      item.createDiv({ cls: "krypton-search-result-snippet", text: hit.snippet });
      item.addEventListener("click", (evt) => void this.openHit(i, evt.ctrlKey || evt.metaKey));
      item.addEventListener("mousemove", () => this.select(i));
    });
    this.select(0);
  }

  private clearResults(): void {
    this.resultsEl.empty();
    this.inputEl.removeAttribute("aria-activedescendant");
  }

  private showState(text: string, isError = false): void {
    this.stateEl.setText(text);
    this.stateEl.toggleClass("mod-warning", isError);
    this.stateEl.toggle(text.length > 0);
  }

  private select(index: number): void {
    const items = Array.from(this.resultsEl.querySelectorAll<HTMLElement>(".krypton-search-result"));
    if (items.length === 0) return;
    this.selected = (index + items.length) % items.length;
    // Focus stays in the box: screen readers learn the chosen result from aria-selected and aria-activedescendant.
    items.forEach((el, i) => {
      el.toggleClass("is-selected", i === this.selected);
      el.setAttr("aria-selected", String(i === this.selected));
    });
    this.inputEl.setAttr("aria-activedescendant", items[this.selected].id);
    items[this.selected].scrollIntoView?.({ block: "nearest" });
  }

  private onKey(evt: KeyboardEvent): void {
    if (evt.key === "ArrowDown") {
      evt.preventDefault();
      this.select(this.selected + 1);
    } else if (evt.key === "ArrowUp") {
      evt.preventDefault();
      this.select(this.selected - 1);
    } else if (evt.key === "Enter") {
      evt.preventDefault();
      const newTab = evt.ctrlKey || evt.metaKey;
      // Enter before the debounce fired: search now, then open the best result. While the typed query is
      // still being searched (a query vector can take seconds), wait for its results, not the previous query's.
      if (this.cancelTimer) void this.search(this.inputEl.value).then(() => this.openHit(0, newTab));
      else void this.inFlight.then(() => this.openHit(this.selected, newTab));
    }
  }

  /** Opens the note scrolled to the matched lines (Obsidian's eState line is 0-based). */
  async openHit(index: number, newTab = false): Promise<void> {
    const hit = this.hits[index];
    if (!hit) return;
    this.close();
    await this.services.openNote(hit.path, Math.max(0, hit.startLine - 1), newTab);
  }
}

function buildingText(status: IndexStatus): string | null {
  if (status.state === "loading") return "Loading the index… results appear in a moment.";
  if (status.state === "indexing") {
    const p = status.progress;
    return p
      ? `Indexing ${formatCount(p.done)} / ${countOf(p.total, "note")}: results may be incomplete.`
      : "Indexing: results may be incomplete.";
  }
  if (status.state === "error") {
    // The index in memory still answers: what was indexed before the failure.
    const why = status.error ?? "The index could not be brought up to date";
    return status.notes > 0 ? `${why}. Results come from the notes indexed before.` : `${why}.`;
  }
  return null;
}

/** The exclude patterns took every note: the index status's words, before typing and after. */
function everyNoteExcluded(status: IndexStatus): string | null {
  return status.everyNoteExcludedBy ? `${everyNoteExcludedText(status.everyNoteExcludedBy)}.` : null;
}

function keywordOnlyText(status: IndexStatus): string | null {
  if (!status.keywordOnly || status.notes === 0) return null;
  return "Keyword search only (no embedding model available).";
}
