import { Component, MarkdownRenderer, Modal, Notice, Setting, type App } from "obsidian";
import type { Summary } from "../../core/notes/note-operations";

export interface SummaryModalActions {
  /** Inserts at the cursor of the last active editor; false when there is none. */
  insertAtCursor(text: string): boolean;
}

/** A summary shown when the chat view is not open, with "Insert at cursor" and "Copy". */
export class SummaryModal extends Modal {
  private readonly renderer = new Component();

  constructor(
    app: App,
    private readonly summary: Summary,
    private readonly actions: SummaryModalActions,
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText(`Summary: ${this.summary.title}`);
    this.renderer.load();
    const body = this.contentEl.createDiv({ cls: "krypton-summary markdown-rendered" });
    void MarkdownRenderer.render(this.app, this.summary.summary, body, this.summary.sourceFiles[0] ?? "", this.renderer);
    if (this.summary.sourceFiles.length > 1) {
      const sources = this.contentEl.createDiv({ cls: "krypton-summary-sources" });
      sources.createSpan({ text: "Sources: " });
      sources.appendText(this.summary.sourceFiles.join(", "));
    }
    new Setting(this.contentEl)
      .addButton((b) =>
        b.setButtonText("Copy").onClick(async () => {
          try {
            await navigator.clipboard.writeText(this.summary.summary);
            new Notice("Summary copied");
          } catch {
            new Notice("Could not copy: the clipboard is not available");
          }
        }),
      )
      .addButton((b) =>
        b
          .setButtonText("Insert at cursor")
          .setCta()
          .onClick(() => {
            if (this.actions.insertAtCursor(this.summary.summary)) this.close();
            else new Notice("Open a note in the editor to insert the summary.");
          }),
      );
  }

  onClose(): void {
    this.renderer.unload();
    this.contentEl.empty();
  }
}
