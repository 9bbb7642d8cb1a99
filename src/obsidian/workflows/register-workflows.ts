import { MarkdownRenderer, MarkdownRenderChild, Notice, SuggestModal, TFile, type App, type MarkdownPostProcessorContext, type Plugin } from "obsidian";
import { FLOW_BLOCK_LANGUAGE, flowBlocksIn } from "../../core/workflows/flow-block";
import { flowToMermaid } from "../../core/workflows/flow-graph";
import type { Flow } from "../../core/workflows/flow-schema";
import type { KryptonServices } from "../plugin-services";
import { WorkflowRunModal, type WorkflowInputSources } from "./workflow-run-modal";
import { countOf } from "../../core/util/text";

/**
 * Workflows in Obsidian: a ```krypton-flow block renders as a diagram (Obsidian's own Mermaid), its
 * validation status and a Run button; "Run workflow…" picks a flow note and runs it on the selection,
 * the active note or a typed prompt.
 */
export function registerWorkflows(plugin: Plugin, services: KryptonServices): void {
  plugin.registerMarkdownCodeBlockProcessor(FLOW_BLOCK_LANGUAGE, (source, el, ctx) => renderFlowBlock(services, source, el, ctx));

  plugin.addCommand({
    id: "run-workflow",
    name: "Run workflow…",
    callback: () => new WorkflowPicker(plugin.app, services).open(),
  });
}

/** The selection and the active note, offered as inputs (the flow's own note is not offered as its input). */
async function inputSources(services: KryptonServices, flowNotePath: string | null): Promise<WorkflowInputSources> {
  const view = services.lastMarkdownView();
  const selection = view?.editor?.getSelection() ?? "";
  const file = view?.file;
  // Through the core's vault, so the read policy applies: an excluded or binary note is not offered.
  const text = file instanceof TFile && file.path !== flowNotePath ? await services.core.host.vault.readNote(file.path).catch(() => undefined) : undefined;
  const activeNote = file instanceof TFile && text !== undefined ? { name: file.basename, text } : undefined;
  return { selection: selection.trim() ? selection : undefined, activeNote };
}

function renderFlowBlock(services: KryptonServices, source: string, el: HTMLElement, ctx: MarkdownPostProcessorContext): void {
  const container = el.createDiv({ cls: "krypton-flow-block" });
  const parsed = services.core.workflows.parseSource(source, "block.json");
  const status = container.createDiv({ cls: "krypton-flow-validation" });
  if (parsed.error) {
    status.addClass("is-invalid");
    status.setText(parsed.error.replace(/^block\.json: /, ""));
    return;
  }
  const validation = services.core.workflows.validateStructure(parsed.json);
  const flow = validation.flow;
  if (!flow || validation.errors.length > 0) {
    status.addClass("is-invalid");
    status.setText(`${countOf(validation.errors.length, "problem")}: this workflow cannot run`);
    const list = container.createEl("ul", { cls: "krypton-flow-issues" });
    for (const issue of validation.errors) list.createEl("li", { text: `${issue.pointer}: ${issue.message}` });
  } else {
    status.addClass("is-valid");
    status.setText(`Valid workflow: ${countOf(flow.agents.length, "agent")}${validation.warnings.length ? `, ${countOf(validation.warnings.length, "warning")}` : ""}`);
    if (validation.warnings.length > 0) {
      const list = container.createEl("ul", { cls: "krypton-flow-issues is-warning" });
      for (const issue of validation.warnings) list.createEl("li", { text: `${issue.pointer}: ${issue.message}` });
    }
  }
  if (flow) {
    const diagram = container.createDiv({ cls: "krypton-flow-diagram" });
    const child = new MarkdownRenderChild(diagram);
    ctx.addChild(child);
    void MarkdownRenderer.render(services.app, "```mermaid\n" + flowToMermaid(flow) + "\n```", diagram, ctx.sourcePath, child);
  }
  if (flow && validation.errors.length === 0) {
    const run = container.createEl("button", { text: "Run", cls: "mod-cta krypton-flow-run" });
    run.addEventListener("click", () => void openRun(services, flow, ctx.sourcePath));
  }
}

async function openRun(services: KryptonServices, flow: Flow, flowNotePath: string | null): Promise<void> {
  new WorkflowRunModal(services.app, services, flow, await inputSources(services, flowNotePath)).open();
}

interface FlowNote {
  file: TFile;
  flow: Flow | null;
  problem: string | null;
  /** Why the note's flow could not be read at all (invalid JSON, two blocks), in `flow validate`'s words. */
  unreadable: string | null;
}

/**
 * Notes that hold a ```krypton-flow block, runnable or not: a broken one is listed with its problem, so it
 * does not just go missing. Only notes with a code block (from the metadata cache) are read.
 */
async function flowNotes(app: App, services: KryptonServices): Promise<FlowNote[]> {
  const notes: FlowNote[] = [];
  for (const file of app.vault.getMarkdownFiles()) {
    const sections = app.metadataCache.getFileCache(file)?.sections;
    if (sections && !sections.some((s) => s.type === "code")) continue;
    const text = await services.core.host.vault.readNote(file.path).catch(() => "");
    // A note that only mentions the word holds no flow.
    if (!text.includes(FLOW_BLOCK_LANGUAGE) || flowBlocksIn(text).length === 0) continue;
    const parsed = services.core.workflows.parseSource(text, file.name);
    if (parsed.error) {
      notes.push({ file, flow: null, problem: null, unreadable: parsed.error });
      continue;
    }
    const validation = services.core.workflows.validateStructure(parsed.json);
    const problem = validation.errors.length > 0 ? countOf(validation.errors.length, "problem") : null;
    notes.push({ file, flow: validation.flow, problem, unreadable: null });
  }
  return notes;
}

class WorkflowPicker extends SuggestModal<FlowNote> {
  private notes: Promise<FlowNote[]>;

  constructor(
    app: App,
    private readonly services: KryptonServices,
  ) {
    super(app);
    this.notes = flowNotes(app, services);
    this.setPlaceholder("Pick a workflow note");
    this.emptyStateText = "No notes with a krypton-flow block";
  }

  async getSuggestions(query: string): Promise<FlowNote[]> {
    const q = query.toLowerCase();
    return (await this.notes).filter((n) => n.file.path.toLowerCase().includes(q) || (n.flow?.id.toLowerCase().includes(q) ?? false));
  }

  renderSuggestion(note: FlowNote, el: HTMLElement): void {
    el.createDiv({ text: note.file.basename });
    const detail = note.unreadable ? `not runnable: ${note.unreadable}` : (note.problem ?? note.flow?.description ?? note.flow?.id ?? "");
    el.createEl("small", { text: `${note.file.path} · ${detail}` });
  }

  onChooseSuggestion(note: FlowNote): void {
    if (note.unreadable) {
      new Notice(`${note.file.basename} cannot run: ${note.unreadable}`);
      return;
    }
    if (!note.flow || note.problem) {
      new Notice(`${note.file.basename} cannot run: open it to see the problems.`);
      return;
    }
    void openRun(this.services, note.flow, note.file.path);
  }
}
