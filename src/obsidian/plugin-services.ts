import { FileSystemAdapter, FileView, MarkdownView, normalizePath, Notice, Platform, TFile, type App, type Plugin } from "obsidian";
import { createKrypton, type KryptonCore } from "../core/krypton";
import type { StdioTransportFactory } from "../core/mcp-client/transports";
import type { ChatEvent, ChatServiceApi } from "../core/chat/chat-types";
import type { NoteRename } from "../core/chat/citation-renames";
import type { IndexStatus } from "../core/indexing/index-status";
import { generateMcpToken } from "../core/mcp/mcp-token";
import type { Host } from "../core/ports/host";
import { listModels } from "../core/providers/connection-test";
import { DEFAULT_INDEX_WAIT_MS, gateOnIndex } from "../core/tools/index-freshness";
import { normalizeSettings, settingsSecrets, type KryptonSettings } from "../core/settings";
import type { ChatViewContext } from "./chat-view/chat-view-context";
import { createObsidianHost } from "./host/obsidian-host";
import { createObsidianLogger, debugFlagOn } from "./host/obsidian-logger";
import { detectSecretStorage, SecretStore } from "./host/secret-store";
import { McpBridge } from "./mcp/mcp-bridge";
import { failureNoticeText, notSavedNoticeText, rebuiltNoticeText } from "./status/index-status-text";
import { errorMessage } from "../core/util/errors";
import { SerialQueue } from "../core/util/serial-queue";

/** Changing these re-scans the vault (the index decides what actually changed). */
const INDEX_FIELDS: (keyof KryptonSettings)[] = ["embeddingProvider", "embeddingModel", "excludePatterns", "chunkMaxChars"];
const BRIDGE_FIELDS: (keyof KryptonSettings)[] = ["mcpEnabled", "mcpPort", "mcpToken", "mcpAllowedOrigins"];

/**
 * Everything the plugin runs, built once in onload: settings (data.json + secret storage), the Obsidian
 * host, Krypton's core, the index lifecycle, the MCP bridge, and the context the chat view uses.
 * UI modules (settings tab, commands, search, status bar) receive this object and nothing else.
 */
export class KryptonServices {
  readonly core: KryptonCore;
  readonly host: Host;
  readonly bridge: McpBridge;
  private current: KryptonSettings;
  private readonly settingsListeners = new Set<() => void>();
  private readonly reloadListeners = new Set<() => void>();
  /** Open chat views, which take a renamed note's new path in the answers they show (onNoteRenamed). */
  private readonly renameListeners = new Set<(rename: NoteRename) => void>();
  private readonly aborter = new AbortController();
  /** One index job at a time; a later one waits for the earlier. */
  private readonly indexJobs = new SerialQueue();
  private unsubscribeVault: (() => void) | null = null;
  /** The saved conversations' citations following the latest note rename (see followNoteRename). */
  private citationRenames: Promise<void> = Promise.resolve();
  /** The text each kind of outcome notice last said ("" once it cleared): a notice is shown again only when it changes. */
  private readonly lastReports = new Map<string, string>();
  private lastMarkdownPath: string | undefined;
  /** The rebuild asked for and not finished yet (see rebuildIndex). */
  private rebuilding: Promise<unknown> | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;
  /**
   * Every settings change, from the tab or from disk, whole and one at a time (data.json's read and write
   * included): each starts from the settings the previous one left, so neither can drop the other's change.
   */
  private readonly settingsChanges = new SerialQueue();

  private constructor(
    readonly plugin: Plugin,
    private readonly secrets: SecretStore,
    settings: KryptonSettings,
  ) {
    this.current = settings;
    const logger = createObsidianLogger({ debugEnabled: debugFlagOn, secrets: () => settingsSecrets(this.current) });
    this.host = createObsidianHost(plugin, { logger, ollamaUrl: () => this.current.ollamaUrl });
    const adapter = this.app.vault.adapter;
    this.core = createKrypton(this.host, settings, {
      mcpStdio: Platform.isDesktopApp ? lazyStdioFactory(() => (adapter instanceof FileSystemAdapter ? adapter.getBasePath() : undefined)) : undefined,
    });
    // As under `krypton mcp`: a search through the tools (the MCP bridge's, agent mode's, a workflow step's)
    // waits for an index that is still loading, up to the same bound. No re-scan before it: vault events
    // keep the index current here. Unload aborts the wait.
    gateOnIndex(this.core.tools, { index: this.core.index, maxWaitMs: DEFAULT_INDEX_WAIT_MS, clock: this.host.clock, signal: this.aborter.signal });
    this.bridge = new McpBridge({
      registry: () => this.core.tools,
      settings: () => this.current,
      vaultRoot: () => (adapter instanceof FileSystemAdapter ? adapter.getBasePath() : undefined),
      logger,
      isDesktop: () => Platform.isDesktopApp,
    });
  }

  /** Reads data.json (and secret storage), normalizes it and builds the core. Never throws on bad data. */
  static async load(plugin: Plugin): Promise<KryptonServices> {
    const secrets = new SecretStore(detectSecretStorage(plugin.app));
    let raw: unknown = null;
    try {
      raw = await plugin.loadData();
    } catch {
      new Notice("Krypton: the settings file could not be read; using defaults.");
    }
    const { settings, migrated } = secrets.hydrate(normalizeSettings(raw));
    const services = new KryptonServices(plugin, secrets, settings);
    if (migrated) await services.settingsChanges.run(() => services.writeSettings());
    return services;
  }

  get app(): App {
    return this.plugin.app;
  }

  settings(): KryptonSettings {
    return this.current;
  }

  /** True when API keys and the MCP token are kept in Obsidian's keychain rather than data.json. */
  get usesSecretStorage(): boolean {
    return this.secrets.inSecretStorage;
  }

  /**
   * Saves a change, applies it to the core, and re-indexes or restarts the bridge when it matters. A change to
   * part of a list (one preset, one MCP server) is a function of the settings: it is worked out when its turn
   * comes, so a change queued before it (a reload from disk) is not undone by a list copied earlier.
   */
  saveSettings(patch: Partial<KryptonSettings> | ((current: KryptonSettings) => Partial<KryptonSettings>)): Promise<void> {
    // The patch goes onto the settings as the changes queued before it leave them, not as they are now.
    return this.settingsChanges.run(() => this.applyPatch(patch));
  }

  /** saveSettings' change at its turn; only inside settingsChanges. */
  private applyPatch(patch: Partial<KryptonSettings> | ((current: KryptonSettings) => Partial<KryptonSettings>)): Promise<void> {
    const change = typeof patch === "function" ? patch(this.current) : patch;
    return this.adopt(normalizeSettings({ ...this.current, ...change }), true);
  }

  /**
   * data.json changed on disk from outside Obsidian (a sync tool): what it says now is applied as saveSettings
   * applies a change, without writing it back (unless secrets had to move out of it, as at load). A file that
   * cannot be read (caught mid-write) or is gone keeps the current settings.
   */
  reloadSettings(): Promise<void> {
    // The read too: a file read before a tab change was applied must not be adopted after it.
    return this.settingsChanges.run(() => this.adoptSettingsOnDisk());
  }

  private async adoptSettingsOnDisk(): Promise<void> {
    let raw: unknown;
    try {
      raw = await this.plugin.loadData();
    } catch {
      new Notice("Krypton: the settings file changed on disk but could not be read; the current settings stay.");
      return;
    }
    if (raw === null || raw === undefined) return;
    const { settings, migrated } = this.secrets.hydrate(normalizeSettings(raw));
    if (!migrated && JSON.stringify(settings) === JSON.stringify(this.current)) return;
    await this.adopt(settings, migrated);
    // A copy: a listener that redraws the tab replaces itself in the set, and a Set visits what is added meanwhile.
    for (const listener of [...this.reloadListeners]) listener();
  }

  /**
   * Called after settings were reloaded from disk, not after the tab's own saves: an open settings tab then
   * shows the new values (redrawing it on its own saves would take the focus out of the field being typed in).
   */
  onSettingsReloaded(listener: () => void): () => void {
    this.reloadListeners.add(listener);
    return () => this.reloadListeners.delete(listener);
  }

  /** The one path a settings change takes, from the settings tab or from disk; only inside settingsChanges. */
  private async adopt(settings: KryptonSettings, persist: boolean): Promise<void> {
    const before = this.current;
    const next = { ...settings };
    if (next.mcpEnabled && !before.mcpEnabled && !next.mcpToken) next.mcpToken = generateMcpToken();
    this.current = next;
    if (persist || next.mcpToken !== settings.mcpToken) await this.writeSettings();
    this.core.applySettings(next);
    for (const listener of this.settingsListeners) listener();
    if (changed(before, next, INDEX_FIELDS) && this.unsubscribeVault) void this.runIndex((signal) => this.core.index.sync(signal));
    if (changed(before, next, BRIDGE_FIELDS)) await this.applyBridgeSettings(before, next);
    if (changed(before, next, ["mcpServers"]) && this.unsubscribeVault) void this.core.mcp.apply(next.mcpServers);
  }

  onSettingsChange(listener: () => void): () => void {
    this.settingsListeners.add(listener);
    return () => this.settingsListeners.delete(listener);
  }

  // ------------------------------------------------------------------------------------------ index

  /**
   * Called once the workspace layout is ready: listens to vault events (registering earlier would replay
   * Obsidian's start-up "create" flood) and opens the index in the background, never blocking start-up.
   */
  startIndexing(): void {
    if (this.closed || this.unsubscribeVault) return;
    this.unsubscribeVault = this.host.vault.onChange((event) => {
      this.core.index.handleEvent(event);
      if (event.type === "rename") this.followNoteRename(event.oldPath, event.path);
    });
    // Vault events are applied in the background: report what they broke when the index settles again.
    const stopReporting = this.core.index.onStatus((status) => {
      if (status.state === "ready") this.reportOutcome(status);
    });
    this.plugin.register(stopReporting);
    void this.runIndex((signal) => this.core.index.open(signal));
    if (this.current.mcpEnabled) void this.bridge.start();
    // The user's MCP servers connect in the background; their tools join the registry as they come.
    if (this.current.mcpServers.some((server) => server.enabled)) void this.core.mcp.apply(this.current.mcpServers);
  }

  /**
   * Saved answers keep citing a note after it is renamed or moved: the conversation store rewrites their
   * paths (a renamed folder fires one rename per note inside it).
   */
  private followNoteRename(from: string, to: string): void {
    for (const listener of this.renameListeners) listener({ from, to });
    this.citationRenames = this.core.conversations.followNoteRename({ from, to }, this.aborter.signal).catch((err: unknown) => {
      this.host.logger.warn(`Saved conversations could not follow the rename of ${from}: ${errorMessage(err)}`);
    });
  }

  /** Calls the listener on each note rename the saved conversations follow; returns a function that unsubscribes. */
  onNoteRenamed(listener: (rename: NoteRename) => void): () => void {
    this.renameListeners.add(listener);
    return () => this.renameListeners.delete(listener);
  }

  /** Resolves when the saved conversations follow every note rename so far (tests). */
  citationsFollowed(): Promise<void> {
    return this.citationRenames;
  }

  rebuildIndex(): Promise<unknown> {
    // A second press while a rebuild waits or runs joins it: queued, it would embed the whole vault again.
    this.rebuilding ??= this.runIndex((signal) => this.core.index.rebuild(signal)).finally(() => {
      this.rebuilding = null;
    });
    return this.rebuilding;
  }

  /** Resolves when the current open/sync/rebuild has finished (tests, commands). */
  indexSettled(): Promise<unknown> {
    return this.indexJobs.idle();
  }

  private runIndex(job: (signal: AbortSignal) => Promise<IndexStatus>): Promise<unknown> {
    return this.indexJobs.run(async () => {
      if (this.closed) return;
      try {
        this.reportOutcome(await job(this.aborter.signal));
      } catch (err) {
        if (this.closed) return;
        const message = errorMessage(err);
        this.host.logger.error("Indexing failed", err);
        new Notice(`Krypton: indexing failed: ${message}`);
      }
    });
  }

  /** A notice for notes that failed (named by file), one when a broken index was rebuilt, one when it cannot be saved; each once. */
  private reportOutcome(status: IndexStatus): void {
    this.noticeOnChange("rebuilt", rebuiltNoticeText(status), 10_000);
    this.noticeOnChange("not-saved", notSavedNoticeText(status), 15_000);
    this.noticeOnChange("failures", failureNoticeText(status), 15_000);
  }

  private noticeOnChange(kind: string, text: string | null, durationMs: number): void {
    if (text && text !== this.lastReports.get(kind)) new Notice(text, durationMs);
    this.lastReports.set(kind, text ?? "");
  }

  // ------------------------------------------------------------------------------------------ MCP bridge

  private async applyBridgeSettings(before: KryptonSettings, next: KryptonSettings): Promise<void> {
    if (!next.mcpEnabled) {
      if (before.mcpEnabled || this.bridge.isRunning()) await this.bridge.stop("bridge-off");
      return;
    }
    if (!this.unsubscribeVault) return; // starts with the index once the layout is ready
    // Also retry after a failed start ("port N is in use"): a new port or token should just work.
    if (!before.mcpEnabled || this.bridge.current().kind !== "off") await this.bridge.restart();
  }

  /**
   * The command "Start/stop MCP bridge": turns the setting on or off, which starts or stops the bridge. On or
   * off is worked out at its turn on the settings queue, from the bridge as the changes before it left it: two
   * quick toggles, or one behind a reload from disk, end where the user meant. The retry of a failed start is
   * part of that turn too: the toggle after it must see the bridge the retry left.
   */
  toggleBridge(): Promise<void> {
    return this.settingsChanges.run(async () => {
      await this.applyPatch(() => ({ mcpEnabled: !this.bridge.isRunning() }));
      // On yet not running (its start failed, or the index has not started it yet): the command starts it.
      if (this.current.mcpEnabled && !this.bridge.isRunning()) await this.bridge.start();
    });
  }

  async regenerateMcpToken(): Promise<void> {
    await this.saveSettings({ mcpToken: generateMcpToken() });
  }

  // ------------------------------------------------------------------------------------------ navigation

  /** Opens a note, scrolled to a 0-based line when given. */
  async openNote(path: string, line?: number, newTab = false): Promise<void> {
    const file = this.app.vault.getAbstractFileByPath(path);
    if (!(file instanceof TFile)) {
      new Notice(`Note not found: ${path}`);
      return;
    }
    await this.openFile(file, line, newTab);
  }

  /**
   * Opens a note a chat answer named (a citation, a note a tool found or wrote). Saved answers keep the path
   * the note had then: when it is gone, the one note with the same file name is that note moved, and opens;
   * with none or several, the user is told what happened instead of "not found".
   */
  async openNoteFromAnswer(path: string, line?: number, newTab = false): Promise<void> {
    const at = this.app.vault.getAbstractFileByPath(normalizePath(path));
    if (at instanceof TFile) return this.openFile(at, line, newTab);
    const name = path.slice(path.lastIndexOf("/") + 1);
    const namesakes = this.app.vault.getFiles().filter((file) => file.name === name);
    if (namesakes.length === 1) return this.openFile(namesakes[0], line, newTab);
    const gone = `${path} was renamed, moved or deleted since this answer`;
    new Notice(namesakes.length > 1 ? `${gone}; ${namesakes.length} notes are now named ${name}: open the one you mean from the file explorer.` : `${gone}.`);
  }

  private async openFile(file: TFile, line: number | undefined, newTab: boolean): Promise<void> {
    const leaf = this.app.workspace.getLeaf(newTab ? "tab" : false);
    await leaf.openFile(file, line === undefined ? { active: true } : { active: true, eState: { line } });
  }

  /** Remembers the last Markdown note the user worked in (the chat sidebar takes focus away from it). */
  trackActiveNote(): void {
    const remember = () => {
      const view = this.app.workspace.getActiveViewOfType(MarkdownView);
      if (view?.file) this.lastMarkdownPath = view.file.path;
      // Another file in front (a PDF, a canvas): "the current note" is not the Markdown note hidden behind it.
      else if (this.app.workspace.getActiveViewOfType(FileView)?.file) this.lastMarkdownPath = undefined;
    };
    this.plugin.registerEvent(this.app.workspace.on("active-leaf-change", remember));
    this.plugin.registerEvent(this.app.workspace.on("file-open", remember));
    // While the chat has the focus, a rename or delete of that note must not leave commands on a path that is gone.
    this.plugin.registerEvent(
      this.app.vault.on("rename", (file, oldPath) => {
        if (oldPath === this.lastMarkdownPath) this.lastMarkdownPath = file.path;
      }),
    );
    this.plugin.registerEvent(
      this.app.vault.on("delete", (file) => {
        if (file.path === this.lastMarkdownPath) this.lastMarkdownPath = undefined;
      }),
    );
    remember();
  }

  activeNotePath(): string | undefined {
    return this.app.workspace.getActiveViewOfType(MarkdownView)?.file?.path ?? this.lastMarkdownPath;
  }

  /** The Markdown view showing the last active note, looked up fresh each time (no stored view references). */
  lastMarkdownView(): MarkdownView | null {
    const active = this.app.workspace.getActiveViewOfType(MarkdownView);
    if (active) return active;
    for (const leaf of this.app.workspace.getLeavesOfType("markdown")) {
      const view = leaf.view;
      if (view instanceof MarkdownView && view.file?.path === this.lastMarkdownPath) return view;
    }
    return null;
  }

  /** What the chat view needs from the host. */
  chatViewContext(openSettings: () => void): ChatViewContext {
    return {
      core: { ...this.core, chat: this.chatOpeningCreatedNotes() },
      openSettings,
      openNote: (path, line, newTab) => this.openNoteFromAnswer(path, line, newTab),
      openLinkText: (linktext, sourcePath, newTab) => this.app.workspace.openLinkText(linktext, sourcePath, newTab),
      openUrl: (url) => void window.open(url),
      insertAtCursor: (text) => {
        const editor = this.lastMarkdownView()?.editor;
        if (!editor) return false;
        editor.replaceSelection(text);
        return true;
      },
      activeNotePath: () => this.activeNotePath(),
      notify: (message) => void new Notice(message),
      saveSettings: (patch) => this.saveSettings(patch),
      listChatModels: async () => {
        const s = this.current;
        const result = await listModels(s, this.host, s.chatProvider, "chat");
        return result.ok ? result.models : [];
      },
      onSettingsChange: (listener) => this.onSettingsChange(listener),
      onNoteRenamed: (listener) => this.onNoteRenamed(listener),
    };
  }

  /**
   * The chat pipeline as the chat view uses it, plus one host duty: a note the create agent wrote
   * ("create a note on X") opens when "Open created notes" is on, like one from "Create note with AI…".
   */
  private chatOpeningCreatedNotes(): ChatServiceApi {
    const chat = this.core.chat;
    return {
      send: (message, options) => this.openCreatedNotes(chat.send(message, options)),
    };
  }

  private async *openCreatedNotes(events: AsyncIterable<ChatEvent>): AsyncGenerator<ChatEvent> {
    for await (const event of events) {
      yield event;
      if (event.type === "agent" && event.result.kind === "note-created" && this.current.openCreatedNote && !this.closed) {
        await this.openNote(event.result.path).catch((err: unknown) => this.host.logger.warn("Could not open the created note", err));
      }
    }
  }

  // ------------------------------------------------------------------------------------------ shutdown

  /** Stops indexing, the bridge and vault listeners; saves the index and releases its lock. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.aborter.abort();
    this.unsubscribeVault?.();
    this.unsubscribeVault = null;
    // A change still being written lands before the plugin is gone: a reload of the plugin reads data.json next.
    await this.settingsChanges.idle();
    await this.bridge.stop();
    await this.citationRenames; // stopped by the abort above before its next conversation
    await this.indexJobs.idle();
    await this.core.close();
  }

  /** Writes the current settings (secrets to secret storage); only inside settingsChanges, so a slow earlier write never lands last. */
  private writeSettings(): Promise<void> {
    return this.plugin.saveData(this.secrets.persist(this.current));
  }
}

/**
 * Stdio MCP servers on desktop: the Node module (child_process) is loaded at the first start, never on
 * mobile, where the plugin must load without Node builtins. Relative paths resolve in the vault folder.
 */
function lazyStdioFactory(vaultRoot: () => string | undefined): StdioTransportFactory {
  return async (server) => {
    const mod = await import("../node/mcp-stdio-transport");
    return mod.createStdioTransportFactory({ cwd: vaultRoot() })(server);
  };
}

function changed(a: KryptonSettings, b: KryptonSettings, fields: (keyof KryptonSettings)[]): boolean {
  return fields.some((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
}
