// The input area: a multi-line box (Enter sends, Shift+Enter new line, Up on an empty box edits the last
// question, Escape cancels editing), the retrieval-mode selector, "Use current note", the model
// switcher, and Send, which becomes Stop while an answer streams. On phones and tablets Enter adds a
// line and the Send button sends, as in mobile messengers (an on-screen keyboard has no Shift+Enter).
import { setIcon } from "obsidian";
import type { KryptonSettings, RetrievalMode } from "../../core/settings";

export const MODE_LABELS: Record<RetrievalMode, string> = { none: "None", rag: "Notes", web: "Web", hybrid: "Hybrid" };
const MODE_HINTS: Record<RetrievalMode, string> = {
  none: "Conversation only, no notes or web",
  rag: "Answer from your notes",
  web: "Answer from a web search",
  hybrid: "Answer from your notes and the web",
};

/** Modes the settings can serve: web and hybrid need a Tavily key. */
export function availableModes(settings: KryptonSettings): RetrievalMode[] {
  return settings.tavilyApiKey.trim() ? ["none", "rag", "web", "hybrid"] : ["none", "rag"];
}

export interface ComposerCallbacks {
  send(text: string): boolean;
  stop(): void;
  editLast(): string | null;
  cancelEdit(): void;
  setMode(mode: RetrievalMode): void;
  setUseActiveNote(on: boolean): void;
  /** Agent mode on or off (the tool loop answers what the note agents do not recognise). */
  setAgentMode(on: boolean): void;
  listModels(): Promise<string[]>;
  switchModel(model: string): Promise<void>;
}

export interface ComposerOptions {
  /** True on desktop: Enter sends. False on mobile: Enter is a new line, only the button sends. */
  enterSends: boolean;
}

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly editingEl: HTMLElement;
  private readonly modeSelect: HTMLSelectElement;
  private readonly noteToggle: HTMLInputElement;
  private readonly noteLabel: HTMLElement;
  private readonly agentToggle: HTMLInputElement;
  private readonly modelSelect: HTMLSelectElement;
  private readonly sendButton: HTMLButtonElement;
  private streaming = false;
  private modelsLoaded = false;

  constructor(
    parent: HTMLElement,
    private readonly cb: ComposerCallbacks,
    private readonly options: ComposerOptions = { enterSends: true },
  ) {
    this.el = parent.createDiv({ cls: "krypton-composer" });
    this.editingEl = this.el.createDiv({ cls: "krypton-editing is-hidden" });
    this.editingEl.createSpan({ text: "Editing your last question" });
    const cancel = this.editingEl.createEl("button", { cls: "krypton-link-button", text: "Cancel" });
    cancel.addEventListener("click", () => {
      this.cb.cancelEdit();
      this.input.value = "";
      this.input.focus();
    });

    this.input = this.el.createEl("textarea", {
      cls: "krypton-input",
      attr: { rows: 2, placeholder: "Ask about your notes…", "aria-label": "Message", enterkeyhint: options.enterSends ? "send" : "enter" },
    });
    this.input.addEventListener("keydown", (ev) => this.onKeyDown(ev));

    const bar = this.el.createDiv({ cls: "krypton-composer-bar" });
    this.modeSelect = bar.createEl("select", { cls: ["dropdown", "krypton-mode-select"], attr: { "aria-label": "Retrieval mode" } });
    this.modeSelect.addEventListener("change", () => this.cb.setMode(this.modeSelect.value as RetrievalMode));

    this.noteLabel = bar.createEl("label", { cls: "krypton-use-note", attr: { title: "Add the active note to the question's context" } });
    this.noteToggle = this.noteLabel.createEl("input", { type: "checkbox", attr: { "aria-label": "Use current note" } });
    this.noteLabel.createSpan({ text: "Use current note" });
    this.noteToggle.addEventListener("change", () => this.cb.setUseActiveNote(this.noteToggle.checked));

    const agentLabel = bar.createEl("label", {
      cls: "krypton-agent-toggle",
      attr: { title: "Agent mode: the model uses tools (search, read and list notes, web search…) and asks before writing. /tools, /steps, /log, /config" },
    });
    this.agentToggle = agentLabel.createEl("input", { type: "checkbox", attr: { "aria-label": "Agent mode" } });
    agentLabel.createSpan({ text: "Agent" });
    this.agentToggle.addEventListener("change", () => this.cb.setAgentMode(this.agentToggle.checked));

    this.modelSelect = bar.createEl("select", { cls: ["dropdown", "krypton-model-select"], attr: { "aria-label": "Chat model" } });
    this.modelSelect.addEventListener("focus", () => void this.loadModels());
    this.modelSelect.addEventListener("pointerdown", () => void this.loadModels());
    this.modelSelect.addEventListener("change", () => void this.cb.switchModel(this.modelSelect.value));

    this.sendButton = bar.createEl("button", { cls: ["krypton-send", "mod-cta"] });
    this.sendButton.addEventListener("click", () => this.onSendClick());
    this.renderSendButton();
  }

  get value(): string {
    return this.input.value;
  }

  setText(text: string): void {
    this.input.value = text;
    this.input.focus();
    this.input.setSelectionRange(text.length, text.length);
  }

  focus(): void {
    this.input.focus();
  }

  setStreaming(streaming: boolean): void {
    this.streaming = streaming;
    this.renderSendButton();
  }

  setEditing(text: string | null): void {
    this.editingEl.toggleClass("is-hidden", text === null);
    this.el.toggleClass("is-editing", text !== null);
  }

  setEnabled(enabled: boolean): void {
    this.input.disabled = !enabled;
    this.sendButton.disabled = !enabled && !this.streaming;
  }

  setModes(modes: RetrievalMode[], current: RetrievalMode): void {
    this.modeSelect.empty();
    for (const mode of modes) {
      this.modeSelect.createEl("option", { text: MODE_LABELS[mode], value: mode, attr: { title: MODE_HINTS[mode] } });
    }
    this.modeSelect.value = modes.includes(current) ? current : modes[modes.length > 1 ? 1 : 0];
  }

  get mode(): RetrievalMode {
    return this.modeSelect.value as RetrievalMode;
  }

  setUseActiveNote(on: boolean): void {
    this.noteToggle.checked = on;
  }

  setAgentMode(on: boolean): void {
    this.agentToggle.checked = on;
  }

  /** Shows the current model; the full list loads when the user opens the selector. */
  setModel(model: string): void {
    this.modelsLoaded = false;
    this.modelSelect.empty();
    this.modelSelect.createEl("option", { text: model || "No model", value: model });
    this.modelSelect.value = model;
    this.modelSelect.setAttr("title", model ? `Chat model: ${model}` : "No chat model configured");
  }

  async loadModels(): Promise<void> {
    if (this.modelsLoaded) return;
    this.modelsLoaded = true;
    const current = this.modelSelect.value;
    const models = await this.cb.listModels().catch(() => [] as string[]);
    if (models.length === 0) return;
    this.modelSelect.empty();
    for (const m of models.includes(current) || !current ? models : [current, ...models]) {
      this.modelSelect.createEl("option", { text: m, value: m });
    }
    this.modelSelect.value = current;
  }

  private renderSendButton(): void {
    const label = this.streaming ? "Stop generating" : "Send";
    setIcon(this.sendButton, this.streaming ? "square" : "send");
    this.sendButton.setAttrs({ "aria-label": label, title: label });
    this.sendButton.toggleClass("is-stop", this.streaming);
    this.sendButton.disabled = false;
  }

  private onSendClick(): void {
    if (this.streaming) this.cb.stop();
    else this.submit();
  }

  private submit(): void {
    if (this.cb.send(this.input.value)) this.input.value = "";
  }

  private onKeyDown(ev: KeyboardEvent): void {
    if (ev.isComposing) return;
    if (ev.key === "Enter" && !ev.shiftKey && this.options.enterSends) {
      ev.preventDefault();
      if (!this.streaming) this.submit();
      return;
    }
    if (ev.key === "ArrowUp" && this.input.value === "") {
      const text = this.cb.editLast();
      if (text !== null) {
        ev.preventDefault();
        this.setText(text);
      }
      return;
    }
    if (ev.key === "Escape" && this.el.hasClass("is-editing")) {
      ev.preventDefault();
      this.cb.cancelEdit();
      this.input.value = "";
    }
  }
}
