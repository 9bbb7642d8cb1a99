// The sidebar chat: an ItemView that wires the controller (state) to the composer, the message list,
// the history panel and the state banners. Commands find it by type (see chat-commands.ts); nothing
// keeps a reference to it.
import { ItemView, Platform, setIcon, type ViewStateResult, type WorkspaceLeaf } from "obsidian";
import type { AgentResult } from "../../core/agents/agent";
import type { Source } from "../../core/chat/chat-types";
import { ChatController, type ControllerEvent, type MessageModel } from "./chat-controller";
import type { ChatViewContext } from "./chat-view-context";
import { availableModes, Composer } from "./composer";
import { type HistoryDelay, HistoryPanel } from "./history-panel";
import { webUrl } from "./citations";
import { MessageList } from "./message-list";
import { saveAnswerAsNote } from "./note-from-answer";
import { renderEmptyChatState, renderIndexBanner, renderNoModelState } from "./states";
import { animationFrameScheduler, type FrameScheduler } from "./token-batcher";
import { errorMessage } from "../../core/util/errors";

export const VIEW_TYPE_KRYPTON_CHAT = "krypton-chat";

const EXAMPLES = [
  { label: "What did I write about this topic?", text: "What did I write about " },
  { label: "Summarize my notes on a subject", text: "Summarize my notes on " },
  { label: "Create a note about…", text: "Create a note about " },
];

/** Index lines are 1-based (Chunk.startLine); the editor's are 0-based (ChatViewContext.openNote). */
export function editorLine(indexLine: number | undefined): number | undefined {
  return indexLine === undefined ? undefined : Math.max(0, indexLine - 1);
}

export interface ChatViewOptions {
  /** Frame scheduler for token batching (tests pass a manual one). */
  schedule?: FrameScheduler;
  /** Mobile keyboard behaviour (Enter = new line, Send button sends); defaults to Platform.isMobile. */
  mobile?: boolean;
  /** Wait before a history search runs while the user types (ms, or a scheduler for tests). */
  historySearchDelay?: number | HistoryDelay;
}

const DESKTOP_HINT = "Answers cite the notes they come from. Enter sends, Shift+Enter adds a line, Up edits your last question.";
const MOBILE_HINT = "Answers cite the notes they come from. Tap Send to ask; Enter adds a line.";

export class KryptonChatView extends ItemView {
  readonly controller: ChatController;
  private composer!: Composer;
  private list!: MessageList;
  private history!: HistoryPanel;
  private titleEl!: HTMLElement;
  private bannerEl!: HTMLElement;
  private historyButton!: HTMLButtonElement;
  private pendingConversation: string | undefined;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly context: ChatViewContext,
    private readonly options: ChatViewOptions = {},
  ) {
    super(leaf);
    const core = context.core;
    this.controller = new ChatController({
      chat: core.chat,
      conversations: core.conversations,
      activeNotePath: () => context.activeNotePath(),
      initialMode: core.settings().defaultMode,
      agent: core.agent,
      initialAgentMode: core.settings().agentMode,
      workflows: core.workflows,
      activeNoteText: async () => {
        const path = context.activeNotePath();
        if (!path) return undefined;
        // The core's vault applies the one read policy (exclusions, symlinks, binary files).
        return core.host.vault.readNote(path).catch(() => undefined);
      },
    });
  }

  getViewType(): string {
    return VIEW_TYPE_KRYPTON_CHAT;
  }

  getDisplayText(): string {
    return "Krypton chat";
  }

  getIcon(): string {
    return "messages-square";
  }

  /** Remembered across restarts by Obsidian's workspace layout. */
  getState(): Record<string, unknown> {
    return { ...super.getState(), conversationId: this.controller.conversationId ?? null };
  }

  async setState(state: unknown, result: ViewStateResult): Promise<void> {
    const id = (state as { conversationId?: unknown } | null)?.conversationId;
    if (typeof id === "string" && id !== this.controller.conversationId) {
      if (this.list) await this.controller.open(id);
      else this.pendingConversation = id;
    }
    await super.setState(state, result);
  }

  protected async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("krypton-chat");

    const header = root.createDiv({ cls: "krypton-chat-header" });
    this.titleEl = header.createDiv({ cls: "krypton-chat-title", text: "New chat" });
    const newButton = header.createEl("button", { cls: ["clickable-icon", "krypton-new-chat"], attr: { "aria-label": "New chat" } });
    setIcon(newButton, "square-pen");
    newButton.addEventListener("click", () => this.newChat());
    this.historyButton = header.createEl("button", {
      cls: ["clickable-icon", "krypton-history-toggle"],
      attr: { "aria-label": "Chat history", "aria-expanded": "false" },
    });
    setIcon(this.historyButton, "history");
    this.historyButton.addEventListener("click", () => this.toggleHistory());

    this.bannerEl = root.createDiv({ cls: "krypton-banner is-hidden", attr: { role: "status" } });

    this.history = new HistoryPanel(root, this.context.core.conversations, {
      open: (id) => {
        void this.controller.open(id);
        this.toggleHistory(false);
      },
      changed: (id, change) => void this.controller.conversationChanged(id, change),
      close: () => {
        this.toggleHistory(false);
        this.historyButton.focus();
      },
      currentId: () => this.controller.conversationId,
    }, this.options.historySearchDelay);

    this.list = new MessageList(root, {
      app: this.app,
      parent: this,
      sourcePath: "",
      schedule: this.options.schedule ?? animationFrameScheduler(root.win),
      actions: {
        copy: (m) => void this.copy(m),
        insert: (m) => this.insert(m),
        createNote: (m) => void this.createNote(m),
        regenerate: () => this.controller.regenerate(),
        retry: () => this.controller.retry(),
        openSettings: () => this.context.openSettings(),
        openSource: (s, newTab) => this.openSource(s, newTab),
        openNote: (path, line, newTab) => void this.context.openNote(path, editorLine(line), newTab),
        openLinkText: (link, newTab) => void this.context.openLinkText(link, "", newTab),
        decide: (m, decision) => this.controller.decide(m.key, decision),
      },
    });

    this.composer = new Composer(root, {
      send: (text) => this.controller.send(text),
      stop: () => this.controller.stop(),
      editLast: () => this.controller.editLast(),
      cancelEdit: () => this.controller.cancelEdit(),
      setMode: (mode) => (this.controller.mode = mode),
      setUseActiveNote: (on) => (this.controller.useActiveNote = on),
      setAgentMode: (on) => void this.setAgentMode(on),
      listModels: () => this.context.listChatModels(),
      switchModel: (model) => this.switchModel(model),
    }, { enterSends: !this.isMobile });

    this.register(() => this.list.destroy());
    this.register(() => this.history.destroy());
    this.register(this.controller.subscribe((e) => this.onControllerEvent(e)));
    this.register(this.context.onSettingsChange(() => this.applySettings()));
    // The store rewrites saved answers on disk; the answers shown here take the new path too.
    this.register(this.context.onNoteRenamed((rename) => this.controller.followNoteRename(rename)));
    const index = this.context.core.index;
    this.register(index.onStatus((status) => renderIndexBanner(this.bannerEl, status)));
    renderIndexBanner(this.bannerEl, index.status());
    this.applySettings();

    if (this.pendingConversation) {
      const id = this.pendingConversation;
      this.pendingConversation = undefined;
      await this.controller.open(id);
    } else {
      this.list.reset(this.controller.messages);
      this.renderState();
    }
  }

  protected async onClose(): Promise<void> {
    this.controller.stop();
  }

  // --- API for commands (looked up by view type, never stored) ---

  get isStreaming(): boolean {
    return this.controller.streaming;
  }

  newChat(): void {
    this.controller.newChat();
    this.composer.focus();
  }

  stop(): void {
    this.controller.stop();
  }

  /** "Ask about current note": turns on the note as context and focuses the box. */
  askAboutNote(): void {
    this.controller.useActiveNote = true;
    this.composer.setUseActiveNote(true);
    this.composer.focus();
  }

  focusInput(): void {
    this.composer.focus();
  }

  async showAgentResult(result: AgentResult): Promise<void> {
    await this.controller.showAgentResult(result);
  }

  /** Resolves when pending rendering is finished; a streaming answer may still go on (tests, screenshots). */
  async settled(): Promise<void> {
    await this.history.loaded();
    await this.list.settled();
  }

  // --- internals ---

  private get isMobile(): boolean {
    return this.options.mobile ?? Platform.isMobile;
  }

  private toggleHistory(open?: boolean): void {
    this.history.toggle(open);
    this.historyButton.setAttr("aria-expanded", String(this.history.isOpen));
    this.historyButton.toggleClass("is-active", this.history.isOpen);
  }

  private onControllerEvent(event: ControllerEvent): void {
    switch (event.type) {
      case "reset":
        this.list.reset(this.controller.messages);
        this.composer.setEditing(null);
        this.renderState();
        if (this.history.isOpen) void this.history.refresh();
        break;
      case "streaming":
        this.composer.setStreaming(event.streaming);
        break;
      case "editing":
        this.composer.setEditing(event.text);
        break;
      case "history":
        this.renderTitle();
        if (this.history.isOpen) void this.history.refresh();
        break;
      default:
        this.list.apply(event);
        if (event.type === "added" || event.type === "removed") this.renderState();
    }
  }

  private applySettings(): void {
    const settings = this.context.core.settings();
    const modes = availableModes(settings);
    if (!modes.includes(this.controller.mode)) this.controller.mode = modes.includes(settings.defaultMode) ? settings.defaultMode : "rag";
    this.composer.setModes(modes, this.controller.mode);
    this.controller.mode = this.composer.mode;
    this.composer.setModel(this.context.core.chatModel() ? settings.chatModel : "");
    this.controller.agentMode = settings.agentMode;
    this.composer.setAgentMode(settings.agentMode);
    this.renderState();
  }

  private renderTitle(): void {
    this.titleEl.setText(this.controller.title || (this.controller.conversationId ? "Untitled" : "New chat"));
  }

  private renderState(): void {
    this.renderTitle();
    const stateEl = this.list.stateEl;
    stateEl.empty();
    const noModel = this.context.core.chatModel() === null;
    this.composer.setEnabled(!noModel || this.controller.streaming);
    if (noModel) renderNoModelState(stateEl, this.context.core.settings(), () => this.context.openSettings());
    else if (this.list.isEmpty) renderEmptyChatState(stateEl, EXAMPLES, this.isMobile ? MOBILE_HINT : DESKTOP_HINT, (text) => this.composer.setText(text));
    stateEl.toggleClass("is-hidden", stateEl.childElementCount === 0);
  }

  /** The "Agent" toggle; remembered in settings (agentMode) so the next chat starts the same way. */
  private async setAgentMode(on: boolean): Promise<void> {
    this.controller.agentMode = on;
    if (this.context.core.settings().agentMode !== on) await this.context.saveSettings({ agentMode: on });
  }

  private async switchModel(model: string): Promise<void> {
    if (!model || model === this.context.core.settings().chatModel) return;
    await this.context.saveSettings({ chatModel: model });
    this.context.notify(`Chat model: ${model}`);
  }

  private openSource(source: Source, newTab: boolean): void {
    if (source.kind === "note") return void this.context.openNote(source.path, editorLine(source.startLine), newTab);
    const url = webUrl(source.url);
    if (url) this.context.openUrl(url);
    else this.context.notify(`Not opened: "${source.url}" is not a web address.`);
  }

  private async copy(m: MessageModel): Promise<void> {
    try {
      await navigator.clipboard.writeText(m.content);
      this.context.notify("Copied to the clipboard");
    } catch {
      this.context.notify("Could not copy: the clipboard is not available");
    }
  }

  private insert(m: MessageModel): void {
    if (!this.context.insertAtCursor(m.content)) this.context.notify("Open a note in the editor first, then insert.");
  }

  private async createNote(m: MessageModel): Promise<void> {
    const index = this.controller.messages.indexOf(m);
    const question = [...this.controller.messages.slice(0, index)].reverse().find((x) => x.role === "user")?.content ?? "";
    try {
      const path = await saveAnswerAsNote(this.context.core, question, m);
      this.context.notify(`Created ${path}`);
      if (this.context.core.settings().openCreatedNote) await this.context.openNote(path, undefined, false);
    } catch (err) {
      this.context.notify(`Could not create the note: ${errorMessage(err)}`);
    }
  }
}
