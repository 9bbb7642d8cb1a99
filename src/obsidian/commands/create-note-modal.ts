import { Modal, Notice, Setting, type App } from "obsidian";
import { AgentError } from "../../core/notes/agent-error";
import type { NoteCreated } from "../../core/notes/note-operations";
import type { KryptonServices } from "../plugin-services";
import { errorMessage } from "../../core/util/errors";

/**
 * "Create note with AI…": asks for a topic, has the chat model write the note (never overwriting a file),
 * then opens it. Closing the dialog while it writes cancels the request.
 */
export class CreateNoteModal extends Modal {
  private topicEl!: HTMLInputElement;
  private messageEl!: HTMLElement;
  private createButton!: HTMLButtonElement;
  private aborter: AbortController | null = null;
  /** The last creation attempt (tests await it). */
  pending: Promise<NoteCreated | null> = Promise.resolve(null);

  constructor(
    app: App,
    private readonly services: KryptonServices,
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText("Create note with AI");
    const folder = this.services.settings().newNoteFolder || "the vault's root";
    this.contentEl.createEl("p", {
      cls: "setting-item-description",
      text: `Krypton writes a new note about the topic and saves it in ${folder}. No existing note is changed.`,
    });
    this.topicEl = this.contentEl.createEl("input", {
      cls: "krypton-topic-input",
      type: "text",
      placeholder: "Topic, e.g. the basics of machine learning",
      attr: { "aria-label": "Topic" },
    });
    this.topicEl.addEventListener("keydown", (evt) => {
      if (evt.key === "Enter") {
        evt.preventDefault();
        void this.submit();
      }
    });
    this.messageEl = this.contentEl.createDiv({ cls: "krypton-modal-message" });
    new Setting(this.contentEl)
      .addButton((b) => b.setButtonText("Cancel").onClick(() => this.close()))
      .addButton((b) => {
        this.createButton = b.buttonEl;
        b.setButtonText("Create note")
          .setCta()
          .onClick(() => void this.submit());
      });
    this.topicEl.focus();
  }

  onClose(): void {
    this.aborter?.abort();
    this.contentEl.empty();
  }

  /** Creates the note for the typed topic. */
  submit(topic = this.topicEl.value): Promise<NoteCreated | null> {
    if (this.aborter) return this.pending;
    const trimmed = topic.trim();
    if (!trimmed) {
      this.showMessage("Type a topic first.", true);
      return Promise.resolve(null);
    }
    this.topicEl.value = trimmed;
    this.pending = this.create(trimmed);
    return this.pending;
  }

  private async create(topic: string): Promise<NoteCreated | null> {
    const aborter = new AbortController();
    this.aborter = aborter;
    this.setBusy(true);
    this.showMessage(`Writing a note about "${topic}"…`);
    try {
      const created = await this.services.core.operations.createNote(topic, { signal: aborter.signal });
      new Notice(`Created ${created.path}`);
      this.close();
      if (this.services.settings().openCreatedNote) await this.services.openNote(created.path);
      return created;
    } catch (err) {
      if (aborter.signal.aborted) return null;
      this.showMessage(err instanceof AgentError ? err.message : `Could not create the note: ${errorMessage(err)}`, true);
      return null;
    } finally {
      this.aborter = null;
      this.setBusy(false);
    }
  }

  private setBusy(busy: boolean): void {
    this.topicEl.disabled = busy;
    this.createButton.disabled = busy;
  }

  private showMessage(text: string, isError = false): void {
    this.messageEl.setText(text);
    this.messageEl.toggleClass("mod-warning", isError);
  }
}
