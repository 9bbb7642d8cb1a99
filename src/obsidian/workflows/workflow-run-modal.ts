import { Component, MarkdownRenderer, Modal, Notice, Setting, type App } from "obsidian";
import type { ConfirmDecision, ConfirmRequest } from "../../core/agent-loop/agent-types";
import type { FlowRunResult } from "../../core/workflows/flow-engine";
import { resultText, stepLine, traceMarkdown } from "../../core/workflows/flow-report";
import type { Flow } from "../../core/workflows/flow-schema";
import { saveAsNewNote } from "../chat-view/note-from-answer";
import type { KryptonServices } from "../plugin-services";

/** Where a run's input can come from; the modal offers each one that exists, plus a typed prompt. */
export interface WorkflowInputSources {
  selection?: string;
  activeNote?: { name: string; text: string };
}

function preview(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 120 ? `${one.slice(0, 117)}…` : one;
}

/**
 * Runs one flow: asks where the input comes from, shows each step as it runs (Stop cancels the
 * running step), then the result (with why, when a step's search matched by keywords only) with Copy,
 * Insert at cursor, Save as note and Save trace.
 */
export class WorkflowRunModal extends Modal {
  private readonly renderer = new Component();
  private controller: AbortController | null = null;

  constructor(
    app: App,
    private readonly services: KryptonServices,
    private readonly flow: Flow,
    private readonly sources: WorkflowInputSources,
  ) {
    super(app);
  }

  onOpen(): void {
    this.titleEl.setText(`Run workflow: ${this.flow.id}`);
    this.renderer.load();
    this.askForInput();
  }

  onClose(): void {
    this.controller?.abort();
    this.renderer.unload();
    this.contentEl.empty();
  }

  private askForInput(): void {
    const { contentEl } = this;
    contentEl.empty();
    if (this.flow.description) contentEl.createEl("p", { text: this.flow.description, cls: "krypton-flow-description" });
    const { selection, activeNote } = this.sources;
    if (selection?.trim()) new Setting(contentEl).setName("Run on the selection").setDesc(preview(selection)).addButton((b) => b.setButtonText("Run").setCta().onClick(() => void this.run(selection)));
    if (activeNote) new Setting(contentEl).setName(`Run on ${activeNote.name}`).setDesc(preview(activeNote.text)).addButton((b) => b.setButtonText("Run").onClick(() => void this.run(activeNote.text)));
    const area = contentEl.createEl("textarea", { cls: "krypton-flow-input", attr: { rows: "5", placeholder: "Or write the text the workflow starts from" } });
    new Setting(contentEl).addButton((b) =>
      b.setButtonText("Run on this text").onClick(() => {
        if (area.value.trim() === "") new Notice("Write the input first.");
        else void this.run(area.value);
      }),
    );
    if (!selection?.trim() && !activeNote) area.focus();
  }

  private async run(input: string): Promise<void> {
    const { contentEl } = this;
    contentEl.empty();
    const list = contentEl.createEl("ol", { cls: "krypton-flow-steps" });
    const controls = new Setting(contentEl).addButton((b) => b.setButtonText("Stop").onClick(() => this.controller?.abort()));
    this.controller = new AbortController();
    const rows = new Map<number, HTMLElement>();
    let count = 0;
    const result = await this.services.core.workflows.run(this.flow, input, {
      signal: this.controller.signal,
      confirm: (request, signal) => this.confirm(list, request, signal),
      onStep: (step, phase) => {
        if (phase === "start") {
          const row = list.createEl("li", { text: `${step.agent} (${step.type})…`, cls: "krypton-flow-step is-running" });
          rows.set(count, row);
        } else {
          const row = rows.get(count);
          row?.setText(stepLine(step, count).replace(/^\d+\. /, ""));
          row?.removeClass("is-running");
          if (step.error) row?.addClass("is-error");
          else if (step.limit) row?.addClass("is-limited");
          count++;
        }
      },
    });
    this.controller = null;
    controls.settingEl.remove();
    this.showResult(input, result);
  }

  /** A write tool asks first: the change is shown, nothing is written unless allowed. Stop or closing denies. */
  private confirm(container: HTMLElement, request: ConfirmRequest, signal?: AbortSignal): Promise<ConfirmDecision> {
    return new Promise((resolve) => {
      const box = container.createDiv({ cls: "krypton-flow-confirm" });
      box.createEl("p", { text: `The workflow wants to: ${request.title}` });
      box.createEl("pre", { text: request.preview, cls: "krypton-flow-confirm-preview" });
      const done = (decision: ConfirmDecision) => {
        signal?.removeEventListener("abort", onAbort);
        box.remove();
        resolve(decision);
      };
      const onAbort = () => done("deny");
      signal?.addEventListener("abort", onAbort, { once: true });
      new Setting(box)
        .addButton((b) => b.setButtonText("Allow once").setCta().onClick(() => done("once")))
        .addButton((b) => b.setButtonText("Allow for this step").onClick(() => done("conversation")))
        .addButton((b) => b.setButtonText("Deny").onClick(() => done("deny")));
    });
  }

  private showResult(input: string, result: FlowRunResult): void {
    const { contentEl } = this;
    const text = resultText(result);
    contentEl.createEl("p", { text: `${result.status}: ${result.message}`, cls: `krypton-flow-status is-${result.status.replace(/\s+/g, "-")}` });
    // Steps' searches matched by keywords only: each reason once, in the words of the search dialog and the chat.
    for (const remark of result.keywordOnlyRemarks ?? []) contentEl.createDiv({ cls: "krypton-search-keyword-only", text: remark });
    if (text) {
      const body = contentEl.createDiv({ cls: "krypton-flow-result markdown-rendered" });
      void MarkdownRenderer.render(this.app, text, body, "", this.renderer);
    }
    const actions = new Setting(contentEl);
    if (text) {
      actions.addButton((b) =>
        b.setButtonText("Copy").onClick(async () => {
          try {
            await navigator.clipboard.writeText(text);
            new Notice("Result copied");
          } catch {
            new Notice("Could not copy: the clipboard is not available");
          }
        }),
      );
      actions.addButton((b) =>
        b.setButtonText("Insert at cursor").onClick(() => {
          const editor = this.services.lastMarkdownView()?.editor;
          if (!editor) return void new Notice("Open a note in the editor to insert the result.");
          editor.replaceSelection(text);
          this.close();
        }),
      );
      actions.addButton((b) => b.setButtonText("Save as note").onClick(() => void this.save(`${this.flow.id} result`, text)));
    }
    actions.addButton((b) => b.setButtonText("Save trace").onClick(() => void this.save(`${this.flow.id} trace`, traceMarkdown(this.flow, input, result, new Date().toISOString()))));
  }

  /** A new note in the configured folder; an existing note is never replaced. */
  private async save(name: string, content: string): Promise<void> {
    try {
      const path = await saveAsNewNote(this.services.core, name, content.endsWith("\n") ? content : `${content}\n`);
      new Notice(`Saved ${path}`);
    } catch (err) {
      new Notice(`Could not save: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
