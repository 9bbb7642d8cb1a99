import { Modal, Setting, type App } from "obsidian";
import type { KryptonServices } from "../plugin-services";
import { statusDetails } from "./index-status-text";
import { formatCount } from "../../core/util/text";

const SHOWN_FAILURES = 100;

/** "Show index status": what is indexed, with which model, what failed, and a rebuild button. */
export class IndexStatusModal extends Modal {
  private unsubscribe: (() => void) | null = null;

  constructor(
    app: App,
    private readonly services: KryptonServices,
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText("Index status");
    this.render();
    this.unsubscribe = this.services.core.index.onStatus(() => this.render());
  }

  onClose(): void {
    this.unsubscribe?.();
    this.contentEl.empty();
  }

  private render(): void {
    const status = this.services.core.index.status();
    const el = this.contentEl;
    el.empty();
    el.addClass("krypton-index-status");
    const table = el.createEl("table", { cls: "krypton-status-table" });
    for (const row of statusDetails(status)) {
      const tr = table.createEl("tr");
      tr.createEl("th", { text: row.label });
      tr.createEl("td", { text: row.value });
    }
    if (status.failures.length > 0) {
      el.createEl("p", { text: `Notes that could not be indexed (${status.failures.length}):`, cls: "krypton-status-failures-title" });
      const list = el.createEl("ul", { cls: "krypton-status-failures" });
      for (const f of status.failures.slice(0, SHOWN_FAILURES)) list.createEl("li", { text: `${f.path}: ${f.error}` });
      // The title counts them all: say that the list stops short rather than let it look complete.
      const more = status.failures.length - SHOWN_FAILURES;
      if (more > 0) list.createEl("li", { cls: "krypton-status-failures-more", text: `…and ${formatCount(more)} more.` });
    }
    el.createEl("p", { cls: "setting-item-description", text: "The index lives in the .krypton folder of this vault." });
    new Setting(el).addButton((b) =>
      b
        .setButtonText("Rebuild index")
        .setDisabled(status.state === "indexing" || status.state === "loading")
        .onClick(() => {
          void this.services.rebuildIndex();
        }),
    );
  }
}
