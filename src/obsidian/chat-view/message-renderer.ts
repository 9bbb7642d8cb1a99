// One chat message in the DOM. Answers render through Obsidian's MarkdownRenderer (wikilinks, code,
// callouts and math look like the vault). While an answer streams, finished blocks are rendered once
// and only the unfinished tail is re-rendered per animation frame; the final answer is rendered whole.
import { type App, Component, MarkdownRenderer, setIcon } from "obsidian";
import type { Source } from "../../core/chat/chat-types";
import { renderAgentResult } from "./agent-result-blocks";
import { renderConfirm, renderSteps } from "./agent-step-blocks";
import type { ConfirmDecision } from "../../core/agent-loop/agent-types";
import type { MessageModel } from "./chat-controller";
import { domainOf, groupSources, linkifyCitations, passageLabel, sourceFor, webUrl } from "./citations";
import { errorHint, settingsCanFix } from "./states";
import { type FrameScheduler, TokenBatcher } from "./token-batcher";

export interface MessageActions {
  copy(message: MessageModel): void;
  insert(message: MessageModel): void;
  createNote(message: MessageModel): void;
  regenerate(): void;
  retry(): void;
  openSettings(): void;
  openSource(source: Source, newTab: boolean): void;
  /** line: 1-based, as the index and search results count lines. */
  openNote(path: string, line: number | undefined, newTab: boolean): void;
  openLinkText(linktext: string, newTab: boolean): void;
  /** Agent mode: the user answered a write confirmation. */
  decide(message: MessageModel, decision: ConfirmDecision): void;
}

export interface MessageRendererDeps {
  app: App;
  /** Parent of each message's render component: the chat view. */
  parent: Component;
  /** Resolves relative links in answers; "" = vault root. */
  sourcePath: string;
  schedule: FrameScheduler;
  actions: MessageActions;
  /** Called after the message's height may have changed (scroll following). */
  onResize(): void;
}

/** Index just past the last blank line that is outside a code fence: everything before it is finished blocks. */
export function stableBoundary(text: string): number {
  let boundary = 0;
  let inFence = false;
  let pos = 0;
  for (const line of text.split("\n")) {
    const end = pos + line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    else if (!inFence && line.trim() === "" && end <= text.length) boundary = end;
    pos = end;
  }
  return boundary;
}

export class MessageRenderer {
  readonly el: HTMLElement;
  private readonly component = new Component();
  private readonly noticesEl: HTMLElement;
  private readonly bodyEl: HTMLElement;
  private readonly agentEl: HTMLElement;
  private readonly stepsEl: HTMLElement;
  private readonly confirmEl: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly sourcesEl: HTMLElement;
  private readonly actionsEl: HTMLElement;
  private readonly batcher: TokenBatcher;
  private isLast = false;
  // Streaming render state.
  private stableEl: HTMLElement | null = null;
  private tailEl: HTMLElement | null = null;
  private tailComponent: Component | null = null;
  private stableLength = 0;
  private shownLength = 0;
  private rendering: Promise<void> | null = null;
  private dirty = false;
  private disposed = false;

  constructor(
    parentEl: HTMLElement,
    private message: MessageModel,
    private readonly deps: MessageRendererDeps,
  ) {
    deps.parent.addChild(this.component);
    this.el = parentEl.createDiv({ cls: ["krypton-message", `krypton-message-${message.role}`], attr: { "data-key": message.key } });
    this.noticesEl = this.el.createDiv({ cls: "krypton-message-notices" });
    this.bodyEl = this.el.createDiv({ cls: ["krypton-message-body", "markdown-rendered"] });
    this.agentEl = this.el.createDiv({ cls: "krypton-message-agent" });
    this.stepsEl = this.el.createDiv({ cls: "krypton-message-steps" });
    this.confirmEl = this.el.createDiv({ cls: "krypton-message-confirm" });
    this.statusEl = this.el.createDiv({ cls: "krypton-message-status" });
    this.sourcesEl = this.el.createDiv({ cls: "krypton-message-sources" });
    this.actionsEl = this.el.createDiv({ cls: "krypton-message-actions" });
    this.batcher = new TokenBatcher(deps.schedule, () => void this.renderStreaming());
    this.bodyEl.addEventListener("click", (ev) => this.onBodyClick(ev));
    this.update(message);
  }

  get key(): string {
    return this.message.key;
  }

  /** Streamed text arrived (already appended to message.content); rendered on the next frame. */
  token(message: MessageModel, text: string): void {
    this.message = message;
    this.batcher.push(text);
  }

  setIsLast(isLast: boolean): void {
    if (isLast === this.isLast) return;
    this.isLast = isLast;
    this.renderActions();
  }

  /** Re-renders everything but a streaming body (sources, notices, agent block, status, actions). */
  update(message: MessageModel): void {
    this.message = message;
    this.el.toggleClass("is-streaming", message.status === "streaming");
    // Screen readers announce the answer once it is complete, not every frame of it.
    this.el.setAttr("aria-busy", message.status === "streaming" ? "true" : null);
    this.el.toggleClass("is-stopped", message.status === "stopped");
    this.el.toggleClass("is-error", message.status === "error");
    this.renderNotices();
    this.renderAgent();
    this.renderAgentSteps();
    this.renderStatus();
    this.renderSources();
    this.renderActions();
    if (message.role === "user") {
      this.bodyEl.setText(message.content);
    } else if (message.status === "streaming") {
      // The answer shrank (agent mode took back text the model wrote before a tool call): render afresh.
      if (message.content.length < this.shownLength) this.resetStreaming();
      if (message.content.length !== this.shownLength) this.batcher.push("");
    } else {
      this.batcher.flush();
      void this.renderFinal();
    }
    this.deps.onResize();
  }

  /** Resolves when no render is in flight (tests, screenshots). */
  async settled(): Promise<void> {
    while (this.rendering) await this.rendering;
  }

  destroy(): void {
    this.disposed = true;
    this.batcher.dispose();
    this.deps.parent.removeChild(this.component);
    this.el.remove();
  }

  private renderMarkdown(markdown: string, el: HTMLElement, component: Component): Promise<void> {
    return MarkdownRenderer.render(this.deps.app, markdown, el, this.deps.sourcePath, component);
  }

  private async serialized(work: () => Promise<void>): Promise<void> {
    while (this.rendering) await this.rendering;
    const run = work().finally(() => {
      if (this.rendering === run) this.rendering = null;
    });
    this.rendering = run;
    await run;
  }

  /** Renders newly finished blocks once (append-only) and re-renders the unfinished tail. */
  private async renderStreaming(): Promise<void> {
    if (this.rendering) {
      this.dirty = true;
      return;
    }
    do {
      this.dirty = false;
      await this.serialized(() => this.renderStreamingOnce());
    } while (this.dirty && !this.disposed && this.message.status === "streaming");
  }

  private async renderStreamingOnce(): Promise<void> {
    if (this.disposed || this.message.status !== "streaming") return;
    const text = this.message.content;
    if (!this.stableEl || !this.tailEl) {
      this.bodyEl.empty();
      this.stableEl = this.bodyEl.createDiv({ cls: "krypton-stream-stable" });
      this.tailEl = this.bodyEl.createDiv({ cls: "krypton-stream-tail" });
    }
    const boundary = stableBoundary(text);
    // Render off-DOM, then swap in one go: the user never sees a block twice or a gap between renders.
    let newBlock: HTMLElement | null = null;
    if (boundary > this.stableLength) {
      newBlock = createDiv();
      await this.renderMarkdown(text.slice(this.stableLength, boundary), newBlock, this.component);
      this.linkify(newBlock);
    }
    const oldTailComponent = this.tailComponent;
    this.tailComponent = this.component.addChild(new Component());
    const fresh = createDiv({ cls: "krypton-stream-tail" });
    await this.renderMarkdown(text.slice(boundary), fresh, this.tailComponent);
    this.linkify(fresh);
    if (this.disposed || this.message.status !== "streaming") return;
    if (newBlock) this.stableEl.appendChild(newBlock);
    this.stableLength = boundary;
    this.tailEl.replaceWith(fresh);
    this.tailEl = fresh;
    if (oldTailComponent) this.component.removeChild(oldTailComponent);
    this.shownLength = text.length;
    this.deps.onResize();
  }

  private async renderFinal(): Promise<void> {
    await this.serialized(async () => {
      if (this.disposed) return;
      const m = this.message;
      this.stableEl = this.tailEl = null;
      this.stableLength = 0;
      if (this.tailComponent) this.component.removeChild(this.tailComponent);
      this.tailComponent = null;
      const fresh = createDiv({ cls: ["krypton-message-body", "markdown-rendered"] });
      // An agent block says it all; its text is only the fallback for copying.
      const text = m.agent && m.agent.kind !== "message" ? "" : m.content;
      if (text) await this.renderMarkdown(text, fresh, this.component);
      this.linkify(fresh);
      this.bodyEl.empty();
      while (fresh.firstChild) this.bodyEl.appendChild(fresh.firstChild);
      this.bodyEl.toggleClass("is-empty", !text);
      this.shownLength = m.content.length;
      this.deps.onResize();
    });
  }

  private linkify(el: HTMLElement): void {
    // The source as the message has it at the click: a renamed note's new path reaches blocks rendered while streaming.
    linkifyCitations(el, this.message.sources, (source, newTab) => this.deps.actions.openSource(sourceFor(this.message.sources, source.n) ?? source, newTab));
  }

  private onBodyClick(ev: MouseEvent): void {
    const link = (ev.target as HTMLElement | null)?.closest("a.internal-link");
    if (!link) return;
    ev.preventDefault();
    const target = link.getAttribute("data-href") ?? link.getAttribute("href") ?? "";
    if (target) this.deps.actions.openLinkText(target, ev.ctrlKey || ev.metaKey);
  }

  private renderNotices(): void {
    this.noticesEl.empty();
    for (const notice of this.message.notices) {
      const row = this.noticesEl.createDiv({ cls: "krypton-notice", attr: { role: "status" } });
      setIcon(row.createSpan({ cls: "krypton-notice-icon" }), "info");
      row.createSpan({ text: notice });
    }
  }

  private renderAgent(): void {
    this.agentEl.empty();
    const result = this.message.agent;
    if (!result || result.kind === "message") return;
    renderAgentResult(this.agentEl, result, {
      openNote: (path, line, newTab) => this.deps.actions.openNote(path, line, newTab),
      renderMarkdown: (markdown, el) => void this.renderMarkdown(markdown, el, this.component),
    });
  }

  private renderAgentSteps(): void {
    const m = this.message;
    // Kept open while the user looks at it: a re-render after each step must not fold it away.
    const open = this.stepsEl.querySelector("details")?.open ?? false;
    renderSteps(this.stepsEl, m.steps ?? [], m.usage, open);
    renderConfirm(this.confirmEl, m.status === "streaming" || m.confirm?.decision ? m.confirm : undefined, (decision) => this.deps.actions.decide(m, decision));
  }

  private resetStreaming(): void {
    this.stableEl = this.tailEl = null;
    this.stableLength = 0;
    this.shownLength = 0;
    if (this.tailComponent) this.component.removeChild(this.tailComponent);
    this.tailComponent = null;
  }

  private renderStatus(): void {
    this.statusEl.empty();
    const m = this.message;
    if (m.status === "streaming" && m.content === "" && !m.agent) {
      const thinking = this.statusEl.createDiv({ cls: "krypton-thinking", attr: { role: "status", "aria-label": "Waiting for the answer" } });
      for (let i = 0; i < 3; i++) thinking.createSpan({ cls: "krypton-thinking-dot" });
    }
    if (m.status === "stopped") {
      this.statusEl.createSpan({ cls: "krypton-badge krypton-badge-stopped", text: "Stopped", attr: { title: "You stopped this answer; it is incomplete." } });
    }
    if (m.status === "error" && m.error) {
      const box = this.statusEl.createDiv({ cls: "krypton-error", attr: { role: "alert" } });
      box.createDiv({ cls: "krypton-error-message", text: m.error.message });
      const hint = errorHint(m.error.code);
      if (hint) box.createDiv({ cls: "krypton-error-hint", text: hint });
      const buttons = box.createDiv({ cls: "krypton-error-actions" });
      // Only what asking again can fix gets a Retry (a failed workflow run is not asked of the chat model).
      if (m.error.retryable) {
        const retry = buttons.createEl("button", { cls: "mod-cta", text: "Retry" });
        retry.addEventListener("click", () => this.deps.actions.retry());
      }
      if (settingsCanFix(m.error.code)) {
        const settings = buttons.createEl("button", { text: "Open settings" });
        settings.addEventListener("click", () => this.deps.actions.openSettings());
      }
    }
  }

  private renderSources(): void {
    this.sourcesEl.empty();
    const sources = this.message.sources;
    // A failed answer with no text cites nothing: its sources would only be noise.
    const failedEmpty = this.message.status === "error" && !this.message.content.trim();
    if (this.message.role !== "assistant" || sources.length === 0 || failedEmpty) return;
    // One entry per note (several retrieved passages of one note are listed under it), one per web page.
    const groups = groupSources(sources);
    const details = this.sourcesEl.createEl("details", { cls: "krypton-sources" });
    details.createEl("summary", { text: `Sources (${groups.length})` });
    const list = details.createEl("ul", { cls: "krypton-source-list" });
    for (const group of groups) this.renderSourceGroup(list, group);
  }

  private renderSourceGroup(list: HTMLElement, group: Source[]): void {
    const first = group[0];
    const item = list.createEl("li", { cls: ["krypton-source", `krypton-source-${first.kind}`] });
    const head = item.createDiv({ cls: "krypton-source-head" });
    head.createSpan({ cls: "krypton-source-nums", text: group.map((s) => s.n).join(", "), attr: { "aria-hidden": "true" } });
    const link = head.createEl("a", {
      cls: "krypton-source-link",
      text: first.title,
      href: first.kind === "web" ? (webUrl(first.url) ?? "#") : "#",
      attr: { "aria-label": `${group.length === 1 ? "Source" : "Sources"} ${group.map((s) => s.n).join(", ")}: ${first.title}` },
    });
    this.onSourceClick(link, first);
    if (first.kind === "web") {
      item.createDiv({ cls: "krypton-source-detail", text: domainOf(first.url) });
      return;
    }
    if (group.length === 1) {
      item.createDiv({ cls: "krypton-source-detail", text: [first.path, ...first.headings.slice(-1)].join(" › ") });
      return;
    }
    item.createDiv({ cls: "krypton-source-detail", text: first.path });
    const passages = item.createEl("ul", { cls: "krypton-source-passages" });
    for (const s of group) {
      if (s.kind !== "note") continue;
      const row = passages.createEl("li");
      const a = row.createEl("a", { cls: "krypton-source-passage", href: "#", attr: { "aria-label": `Source ${s.n}: ${s.title}, ${passageLabel(s)}` } });
      a.createSpan({ cls: "krypton-source-num", text: String(s.n) });
      a.createSpan({ text: passageLabel(s) });
      this.onSourceClick(a, s);
    }
  }

  private onSourceClick(el: HTMLElement, source: Source): void {
    el.addEventListener("click", (ev) => {
      ev.preventDefault();
      this.deps.actions.openSource(source, ev.ctrlKey || ev.metaKey);
    });
  }

  private renderActions(): void {
    this.actionsEl.empty();
    const m = this.message;
    if (m.role !== "assistant" || m.status === "streaming" || (m.local && !m.workflowResult)) return;
    const button = (icon: string, label: string, onClick: () => void, cls?: string) => {
      const b = this.actionsEl.createEl("button", { cls: ["clickable-icon", "krypton-action", cls ?? ""], attr: { "aria-label": label, title: label } });
      setIcon(b, icon);
      b.addEventListener("click", onClick);
      return b;
    };
    if (m.content.trim()) {
      button("copy", "Copy", () => this.deps.actions.copy(m), "krypton-action-copy");
      button("text-cursor-input", "Insert at cursor", () => this.deps.actions.insert(m), "krypton-action-insert");
      button("file-plus", "Create note from answer", () => this.deps.actions.createNote(m), "krypton-action-note");
    }
    if (this.isLast && m.status !== "error" && !m.local) button("refresh-cw", "Regenerate", () => this.deps.actions.regenerate(), "krypton-action-regenerate");
  }
}
