// Stand-ins for Obsidian's App, Vault (on a REAL folder on disk), DataAdapter, Workspace, Plugin, Notice,
// Modal, SuggestModal, Setting, PluginSettingTab, requestUrl (real HTTP), Platform, normalizePath and
// debounce: the parts the plugin host uses. Semantics follow Obsidian where implemented (vault.create
// refuses an existing file, adapter.rename refuses an existing destination, dot-folders are not in the
// vault's file tree, events fire after the change). Test-only helpers are marked "stand-in only".
import { promises as fs, realpathSync, statSync, readdirSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import { join } from "node:path";
import { Component, FileView, MarkdownView, WorkspaceLeaf, type View, type ViewCreator } from "./workspace";

// ---------------------------------------------------------------------------------------------- events

export interface EventRef {
  e: Events;
  name: string;
  fn: (...args: unknown[]) => unknown;
  ctx?: unknown;
}

export class Events {
  private readonly handlers = new Map<string, EventRef[]>();

  on(name: string, callback: (...args: any[]) => any, ctx?: unknown): EventRef {
    const ref: EventRef = { e: this, name, fn: callback, ctx };
    const list = this.handlers.get(name) ?? [];
    list.push(ref);
    this.handlers.set(name, list);
    return ref;
  }
  off(name: string, callback: (...args: any[]) => any): void {
    const list = this.handlers.get(name);
    if (list) this.handlers.set(name, list.filter((r) => r.fn !== callback));
  }
  offref(ref: EventRef): void {
    const list = this.handlers.get(ref.name);
    if (list) this.handlers.set(ref.name, list.filter((r) => r !== ref));
  }
  trigger(name: string, ...data: unknown[]): void {
    for (const ref of [...(this.handlers.get(name) ?? [])]) ref.fn.apply(ref.ctx, data);
  }
  /** Stand-in only: how many handlers listen to an event (tests check clean-up). */
  listenerCount(name: string): number {
    return this.handlers.get(name)?.length ?? 0;
  }
}

// ---------------------------------------------------------------------------------------------- paths

/** Obsidian's normalizePath: '/' separators, no duplicate, leading or trailing slashes, NFC. */
export function normalizePath(path: string): string {
  let p = path.replace(/\u00A0|\u202F/g, " ").replace(/[\\/]+/g, "/").replace(/^\/+|\/+$/g, "");
  p = p.normalize("NFC");
  return p === "" ? "/" : p;
}

function parentPath(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

// ---------------------------------------------------------------------------------------------- files

export abstract class TAbstractFile {
  vault!: Vault;
  path = "";
  name = "";
  parent: TFolder | null = null;
}

export interface FileStats {
  ctime: number;
  mtime: number;
  size: number;
}

export class TFile extends TAbstractFile {
  stat: FileStats = { ctime: 0, mtime: 0, size: 0 };
  basename = "";
  extension = "";
}

export class TFolder extends TAbstractFile {
  children: TAbstractFile[] = [];
  isRoot(): boolean {
    return this.path === "/";
  }
}

// ---------------------------------------------------------------------------------------------- adapter

export interface Stat {
  type: "file" | "folder";
  ctime: number;
  mtime: number;
  size: number;
}

export interface ListedFiles {
  files: string[];
  folders: string[];
}

/** Obsidian's FileSystemAdapter over a real folder. Paths are vault-relative. */
export class FileSystemAdapter {
  /** Stand-in only: every rename(from, to) call, in order (tests check the atomic-write protocol). */
  readonly renames: [string, string][] = [];

  constructor(
    readonly basePath: string,
    /** Stand-in only: play a disk that ignores case (macOS, Windows) on this case-sensitive one. */
    private readonly options: { caseInsensitiveDisk?: boolean } = {},
  ) {}

  getName(): string {
    return baseName(this.basePath);
  }
  getBasePath(): string {
    return this.basePath;
  }
  getFullPath(path: string): string {
    const parts = normalizePath(path).split("/").filter((p) => p !== "/");
    if (!this.options.caseInsensitiveDisk) return join(this.basePath, ...parts);
    // As on APFS or NTFS: each name finds an entry that differs only in case ("tides.md" is "Tides.md").
    let full = this.basePath;
    for (const part of parts) {
      let names: string[] = [];
      try {
        names = readdirSync(full);
      } catch {
        // Not a folder (yet): the rest is taken as written.
      }
      full = join(full, names.includes(part) ? part : (names.find((n) => n.toLowerCase() === part.toLowerCase()) ?? part));
    }
    return full;
  }
  async exists(path: string): Promise<boolean> {
    return fs.stat(this.getFullPath(path)).then(
      () => true,
      () => false,
    );
  }
  async stat(path: string): Promise<Stat | null> {
    try {
      const s = await fs.stat(this.getFullPath(path));
      return { type: s.isDirectory() ? "folder" : "file", ctime: s.ctimeMs, mtime: s.mtimeMs, size: s.size };
    } catch {
      return null;
    }
  }
  async list(path: string): Promise<ListedFiles> {
    const dir = normalizePath(path);
    const entries = await fs.readdir(this.getFullPath(dir), { withFileTypes: true });
    const prefix = dir === "/" ? "" : `${dir}/`;
    return {
      files: entries.filter((e) => e.isFile()).map((e) => prefix + e.name),
      folders: entries.filter((e) => e.isDirectory()).map((e) => prefix + e.name),
    };
  }
  read(path: string): Promise<string> {
    return fs.readFile(this.getFullPath(path), "utf8");
  }
  async readBinary(path: string): Promise<ArrayBuffer> {
    const buf = await fs.readFile(this.getFullPath(path));
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  }
  write(path: string, data: string): Promise<void> {
    return fs.writeFile(this.getFullPath(path), data, "utf8");
  }
  writeBinary(path: string, data: ArrayBuffer): Promise<void> {
    return fs.writeFile(this.getFullPath(path), new Uint8Array(data));
  }
  async mkdir(path: string): Promise<void> {
    await fs.mkdir(this.getFullPath(path), { recursive: true });
  }
  async remove(path: string): Promise<void> {
    await fs.unlink(this.getFullPath(path));
    this.removed?.(normalizePath(path));
  }
  /** Like Obsidian's: not recursive, the folder must be empty (hidden files count). */
  async rmdir(path: string, recursive: boolean): Promise<void> {
    if (recursive) await fs.rm(this.getFullPath(path), { recursive: true });
    else await fs.rmdir(this.getFullPath(path));
    this.removed?.(normalizePath(path));
  }
  /**
   * Stand-in only: set by the Vault to play Obsidian desktop's file watcher, which takes what the adapter
   * removed out of the file tree (at once here; a moment later in Obsidian).
   */
  removed?: (path: string) => void;
  async rename(from: string, to: string): Promise<void> {
    this.renames.push([from, to]);
    if (await this.exists(to)) throw new Error("Destination file already exists!");
    await fs.mkdir(parentPath(this.getFullPath(to)) || this.basePath, { recursive: true });
    await fs.rename(this.getFullPath(from), this.getFullPath(to));
  }
}

// ---------------------------------------------------------------------------------------------- vault

/**
 * Obsidian's Vault over a real folder. The file tree is read once at construction (like Obsidian's
 * start-up scan) and then kept current by the Vault's own methods, which fire create/modify/delete/rename
 * events as Obsidian does. Dot-files and dot-folders are not part of the tree (Obsidian hides them).
 */
export class Vault extends Events {
  readonly adapter: FileSystemAdapter;
  configDir = ".obsidian";
  private readonly files = new Map<string, TAbstractFile>();
  private readonly root: TFolder;
  /** Stand-in only: how many times each path was read from disk by cachedRead/read. */
  readonly reads = new Map<string, number>();

  /**
   * Like Obsidian, the file tree (getAbstractFileByPath) is case-sensitive even when the disk is not: on a
   * case-insensitive disk adapter.exists("tides.md") is true for "Tides.md" while the tree knows only "Tides.md".
   */
  constructor(readonly basePath: string, options: { caseInsensitiveDisk?: boolean } = {}) {
    super();
    this.adapter = new FileSystemAdapter(basePath, options);
    this.root = new TFolder();
    this.root.vault = this;
    this.root.path = "/";
    this.scan(this.root, "");
    this.adapter.removed = (path) => this.forget(path);
  }

  /** What the watcher does when a file or folder is gone from disk: out of the tree, "delete" events. */
  private forget(path: string): void {
    const gone = [...this.files.values()].filter((f) => f.path === path || f.path.startsWith(path + "/"));
    for (const f of gone.reverse()) {
      this.unlink(f);
      this.trigger("delete", f);
    }
  }

  /** `seen`: the real paths of the folders being scanned, so a link back up one of them is not followed (a loop). */
  private scan(folder: TFolder, rel: string, seen: ReadonlySet<string> = new Set([realpathSync(this.basePath)])): void {
    for (const entry of readdirSync(rel ? join(this.basePath, ...rel.split("/")) : this.basePath, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(this.basePath, ...path.split("/"));
      if (entry.isDirectory()) this.scan(this.addFolder(path), path, new Set([...seen, realpathSync(full)]));
      else if (entry.isFile()) this.addFile(path);
      else if (entry.isSymbolicLink()) {
        // Obsidian desktop follows a symbolic link wherever it points (even out of the vault): a linked file
        // or folder appears in the vault like any other.
        const target = statSync(full, { throwIfNoEntry: false });
        if (target?.isFile()) this.addFile(path);
        else if (target?.isDirectory() && !seen.has(realpathSync(full))) this.scan(this.addFolder(path), path, new Set([...seen, realpathSync(full)]));
      }
    }
  }

  private addFolder(path: string): TFolder {
    const folder = new TFolder();
    folder.vault = this;
    folder.path = path;
    folder.name = baseName(path);
    this.link(folder);
    return folder;
  }

  private addFile(path: string): TFile {
    const file = new TFile();
    file.vault = this;
    this.setFilePath(file, path);
    this.refreshStat(file);
    this.link(file);
    return file;
  }

  private setFilePath(file: TFile, path: string): void {
    file.path = path;
    file.name = baseName(path);
    const dot = file.name.lastIndexOf(".");
    file.basename = dot > 0 ? file.name.slice(0, dot) : file.name;
    file.extension = dot > 0 ? file.name.slice(dot + 1) : "";
  }

  private refreshStat(file: TFile): void {
    const s = statSync(this.adapter.getFullPath(file.path));
    file.stat = { ctime: s.ctimeMs, mtime: s.mtimeMs, size: s.size };
  }

  private link(file: TAbstractFile): void {
    const parent = this.getAbstractFileByPath(parentPath(file.path) || "/");
    if (!(parent instanceof TFolder)) throw new Error(`Parent folder missing for ${file.path}`);
    file.parent = parent;
    parent.children.push(file);
    this.files.set(file.path, file);
  }

  private unlink(file: TAbstractFile): void {
    if (file.parent) file.parent.children = file.parent.children.filter((c) => c !== file);
    this.files.delete(file.path);
  }

  getName(): string {
    return this.adapter.getName();
  }
  getRoot(): TFolder {
    return this.root;
  }
  getAbstractFileByPath(path: string): TAbstractFile | null {
    const p = normalizePath(path);
    if (p === "/") return this.root;
    return this.files.get(p) ?? null;
  }
  getFileByPath(path: string): TFile | null {
    const f = this.getAbstractFileByPath(path);
    return f instanceof TFile ? f : null;
  }
  getFolderByPath(path: string): TFolder | null {
    const f = this.getAbstractFileByPath(path);
    return f instanceof TFolder ? f : null;
  }
  getFiles(): TFile[] {
    return [...this.files.values()].filter((f): f is TFile => f instanceof TFile);
  }
  getMarkdownFiles(): TFile[] {
    return this.getFiles().filter((f) => f.extension === "md");
  }
  getAllLoadedFiles(): TAbstractFile[] {
    return [this.root, ...this.files.values()];
  }

  /**
   * Like Obsidian: a leading byte order mark is dropped (Vault.read does; DataAdapter.read and the text
   * Vault.process hands to its callback keep it).
   */
  async read(file: TFile): Promise<string> {
    this.reads.set(file.path, (this.reads.get(file.path) ?? 0) + 1);
    const text = await this.adapter.read(file.path);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
  async readBinary(file: TFile): Promise<ArrayBuffer> {
    this.reads.set(file.path, (this.reads.get(file.path) ?? 0) + 1);
    return this.adapter.readBinary(file.path);
  }
  /** A read that may come from Obsidian's cache; filled by read, so it drops a byte order mark too. */
  cachedRead(file: TFile): Promise<string> {
    return this.read(file);
  }

  /**
   * Refuses a path in the file tree ("File already exists.") and a missing parent folder. Obsidian documents
   * no exclusive create, so the stand-in promises no more: a file that reached the disk behind the vault's
   * back (a sync client) and is not in the tree yet is overwritten. Callers must check the disk themselves.
   */
  async create(path: string, data: string): Promise<TFile> {
    const p = normalizePath(path);
    if (this.getAbstractFileByPath(p)) throw new Error("File already exists.");
    if (!(this.getAbstractFileByPath(parentPath(p) || "/") instanceof TFolder)) {
      throw new Error(`ENOENT: no such file or directory, open '${p}'`);
    }
    await fs.writeFile(this.adapter.getFullPath(p), data, "utf8");
    const file = this.addFile(p);
    this.trigger("create", file);
    return file;
  }

  async createFolder(path: string): Promise<TFolder> {
    const p = normalizePath(path);
    if (this.getAbstractFileByPath(p) || (await this.adapter.exists(p))) throw new Error("Folder already exists.");
    await fs.mkdir(this.adapter.getFullPath(p));
    const folder = this.addFolder(p);
    this.trigger("create", folder);
    return folder;
  }

  async modify(file: TFile, data: string): Promise<void> {
    await fs.writeFile(this.adapter.getFullPath(file.path), data, "utf8");
    this.refreshStat(file);
    this.trigger("modify", file);
  }

  /** Like Obsidian: read, transform, write as one step; a throwing fn writes nothing. */
  async process(file: TFile, fn: (data: string) => string): Promise<string> {
    const next = fn(await this.adapter.read(file.path));
    await this.modify(file, next);
    return next;
  }

  async delete(file: TAbstractFile): Promise<void> {
    await fs.rm(this.adapter.getFullPath(file.path), { recursive: true });
    this.forget(file.path);
  }

  async rename(file: TAbstractFile, newPath: string): Promise<void> {
    const to = normalizePath(newPath);
    if (this.getAbstractFileByPath(to)) throw new Error("Destination file already exists!");
    const oldPath = file.path;
    await fs.rename(this.adapter.getFullPath(oldPath), this.adapter.getFullPath(to));
    // Like Obsidian: what is inside a renamed folder moves with it, and each file and folder fires its own
    // "rename" with its old path, breadth-first from the folder itself.
    const moved: [TAbstractFile, string][] = [];
    for (const queue: TAbstractFile[] = [file]; queue.length > 0; ) {
      const f = queue.shift() as TAbstractFile;
      moved.push([f, f.path]);
      if (f instanceof TFolder) queue.push(...f.children);
    }
    this.unlink(file);
    for (const [f, was] of moved) {
      this.files.delete(was);
      const path = to + was.slice(oldPath.length);
      if (f instanceof TFile) this.setFilePath(f, path);
      else {
        f.path = path;
        f.name = baseName(path);
      }
      if (f !== file) this.files.set(path, f);
    }
    this.link(file);
    for (const [f, was] of moved) this.trigger("rename", f, was);
  }
}

// ---------------------------------------------------------------------------------------------- metadata

/** Minimal: Krypton parses markdown itself, so the cache only needs to exist and carry events. */
export class MetadataCache extends Events {
  getFileCache(_file: TFile): null {
    return null;
  }
  getFirstLinkpathDest(linkpath: string, _sourcePath: string): TFile | null {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------- workspace

export interface OpenViewState {
  state?: Record<string, unknown>;
  eState?: Record<string, unknown>;
  active?: boolean;
}

/**
 * A leaf that opens a file, recording the eState (line) it was opened with: a note in a MarkdownView, any
 * other file (a PDF, an image) in a FileView of its own type, as Obsidian does.
 */
export class StubFileLeaf extends WorkspaceLeaf {
  openedFile: TFile | null = null;
  openState: OpenViewState | undefined;
  async openFile(file: TFile, openState?: OpenViewState): Promise<void> {
    this.openedFile = file;
    this.openState = openState;
    const view = file.extension === "md" ? new MarkdownView(this) : new FileView(this);
    view.file = file;
    await this.open(view);
    (this.app as App).workspace.setActiveLeaf(this);
  }
}

export class Workspace extends Events {
  layoutReady = false;
  private readyCallbacks: (() => unknown)[] = [];
  /** Every leaf created, in order. */
  readonly leaves: StubFileLeaf[] = [];
  activeLeaf: StubFileLeaf | null = null;

  constructor(private readonly app: App) {
    super();
  }

  onLayoutReady(callback: () => unknown): void {
    if (this.layoutReady) callback();
    else this.readyCallbacks.push(callback);
  }
  /** Stand-in only: Obsidian finishes restoring the layout. */
  triggerLayoutReady(): void {
    this.layoutReady = true;
    for (const cb of this.readyCallbacks.splice(0)) cb();
    this.trigger("layout-ready");
  }

  private newLeaf(): StubFileLeaf {
    const leaf = new StubFileLeaf(this.app, this.app.viewRegistry);
    this.leaves.push(leaf);
    return leaf;
  }
  getLeaf(newLeaf?: boolean | "tab" | "split" | "window"): StubFileLeaf {
    if (!newLeaf && this.activeLeaf) return this.activeLeaf;
    const leaf = this.newLeaf();
    this.activeLeaf = leaf;
    return leaf;
  }
  getRightLeaf(_split: boolean): StubFileLeaf {
    return this.newLeaf();
  }
  getLeftLeaf(_split: boolean): StubFileLeaf {
    return this.newLeaf();
  }
  getLeavesOfType(viewType: string): StubFileLeaf[] {
    return this.leaves.filter((l) => l.view?.getViewType() === viewType);
  }
  async revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
    if (leaf instanceof StubFileLeaf) this.activeLeaf = leaf;
  }
  detachLeavesOfType(viewType: string): void {
    for (const leaf of this.getLeavesOfType(viewType)) {
      void leaf.detach();
      this.leaves.splice(this.leaves.indexOf(leaf), 1);
      if (this.activeLeaf === leaf) this.activeLeaf = null;
    }
  }
  setActiveLeaf(leaf: StubFileLeaf): void {
    this.activeLeaf = leaf;
    this.trigger("active-leaf-change", leaf);
    if (leaf.view instanceof FileView) this.trigger("file-open", leaf.view.file); // any file, as in Obsidian
  }
  getActiveViewOfType<T extends View>(type: abstract new (...args: any[]) => T): T | null {
    const view = this.activeLeaf?.view;
    return view instanceof type ? view : null;
  }
  getActiveFile(): TFile | null {
    const view = this.getActiveViewOfType(MarkdownView);
    return (view?.file as TFile | null | undefined) ?? null;
  }
  get activeEditor(): MarkdownView | null {
    return this.getActiveViewOfType(MarkdownView);
  }
}

// ---------------------------------------------------------------------------------------------- app

/** Obsidian's keychain (1.11.4+): ids are lowercase letters, digits and dashes. */
export class SecretStorage {
  private readonly secrets = new Map<string, string>();
  setSecret(id: string, secret: string): void {
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id)) throw new Error(`Invalid secret id: ${id}`);
    this.secrets.set(id, secret);
  }
  getSecret(id: string): string | null {
    return this.secrets.get(id) ?? null;
  }
  listSecrets(): string[] {
    return [...this.secrets.keys()];
  }
}

export interface Command {
  id: string;
  name: string;
  icon?: string;
  hotkeys?: unknown[];
  callback?: () => unknown;
  checkCallback?: (checking: boolean) => boolean | void;
  editorCallback?: (editor: any, ctx: any) => unknown;
  editorCheckCallback?: (checking: boolean, editor: any, ctx: any) => boolean | void;
}

export interface AppOptions {
  /** Give the app Obsidian 1.11.4's secretStorage (default true); false plays an older Obsidian. */
  secretStorage?: boolean;
  /** The vault on a disk that ignores case (macOS, Windows); default false, like this Linux one. */
  caseInsensitiveDisk?: boolean;
}

export class App {
  readonly vault: Vault;
  readonly workspace: Workspace;
  readonly metadataCache = new MetadataCache();
  readonly secretStorage?: SecretStorage;
  /** Obsidian's view registry (plugin.registerView fills it). */
  readonly viewRegistry = new Map<string, ViewCreator>();
  /** Obsidian keeps commands in app.commands (internal); the stand-in records them the same way. */
  readonly commands = {
    commands: {} as Record<string, Command>,
    executeCommandById: (id: string): boolean => {
      const cmd = this.commands.commands[id];
      if (!cmd) return false;
      if (cmd.callback) void cmd.callback();
      else if (cmd.checkCallback) cmd.checkCallback(false);
      else return false;
      return true;
    },
  };

  constructor(vaultRoot: string, options: AppOptions = {}) {
    this.vault = new Vault(vaultRoot, { caseInsensitiveDisk: options.caseInsensitiveDisk });
    this.workspace = new Workspace(this);
    if (options.secretStorage !== false) this.secretStorage = new SecretStorage();
  }
}

// ---------------------------------------------------------------------------------------------- plugin

export interface PluginManifest {
  id: string;
  name: string;
  version: string;
  minAppVersion?: string;
  description?: string;
  author?: string;
  isDesktopOnly?: boolean;
  dir?: string;
}

export type CodeBlockProcessor = (
  source: string,
  el: HTMLElement,
  ctx: { sourcePath: string; docId: string; frontmatter: unknown; addChild(child: Component): void; getSectionInfo(el: HTMLElement): null },
) => Promise<unknown> | void;

export abstract class Plugin extends Component {
  /** Stand-in only: what the plugin added, for tests to inspect. */
  readonly ribbonIcons: { icon: string; title: string; el: HTMLElement; callback: (evt: MouseEvent) => unknown }[] = [];
  readonly statusBarItems: HTMLElement[] = [];
  readonly settingTabs: PluginSettingTab[] = [];
  readonly registeredViews: string[] = [];

  constructor(
    readonly app: App,
    readonly manifest: PluginManifest,
  ) {
    super();
  }

  /**
   * Stand-in only: loads the plugin and waits for an async onload, as Obsidian's plugin manager does
   * (Component.load itself does not wait).
   */
  async loadAndWait(): Promise<void> {
    let result: unknown;
    const onload = this.onload;
    this.onload = () => {
      result = onload.call(this);
    };
    try {
      this.load();
    } finally {
      this.onload = onload;
    }
    await result;
  }

  /** Obsidian 1.5.7+ calls this when data.json changed on disk from outside Obsidian (a sync tool). Optional. */
  onExternalSettingsChange?(): unknown;

  /**
   * Stand-in only: Obsidian noticed data.json change on disk (not through saveData) and tells the plugin, if it
   * implements the hook; waits for what the hook returns.
   */
  async externalSettingsChanged(): Promise<void> {
    await this.onExternalSettingsChange?.();
  }

  private dataPath(): string {
    return `${this.app.vault.configDir}/plugins/${this.manifest.id}/data.json`;
  }
  async loadData(): Promise<any> {
    const adapter = this.app.vault.adapter;
    if (!(await adapter.exists(this.dataPath()))) return null;
    return JSON.parse(await adapter.read(this.dataPath()));
  }
  async saveData(data: unknown): Promise<void> {
    await this.app.vault.adapter.mkdir(parentPath(this.dataPath()));
    await this.app.vault.adapter.write(this.dataPath(), JSON.stringify(data, null, 2));
  }

  addCommand(command: Command): Command {
    const full = { ...command, id: `${this.manifest.id}:${command.id}` };
    this.app.commands.commands[full.id] = full;
    this.register(() => delete this.app.commands.commands[full.id]);
    return full;
  }
  removeCommand(commandId: string): void {
    delete this.app.commands.commands[`${this.manifest.id}:${commandId}`];
  }

  addRibbonIcon(icon: string, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
    const el = document.createElement("div");
    el.addClass("side-dock-ribbon-action");
    el.setAttr("aria-label", title);
    el.addEventListener("click", (evt) => callback(evt));
    this.ribbonIcons.push({ icon, title, el, callback });
    this.register(() => el.remove());
    return el;
  }

  addStatusBarItem(): HTMLElement {
    let bar = document.body.querySelector<HTMLElement>(".status-bar");
    if (!bar) bar = document.body.createDiv({ cls: "status-bar" });
    const el = bar.createDiv({ cls: "status-bar-item" });
    this.statusBarItems.push(el);
    this.register(() => el.remove());
    return el;
  }

  addSettingTab(tab: PluginSettingTab): void {
    this.settingTabs.push(tab);
  }

  /** Stand-in only: code block processors by language (Obsidian calls them when it renders a fenced block). */
  readonly codeBlockProcessors = new Map<string, CodeBlockProcessor>();

  registerMarkdownCodeBlockProcessor(language: string, handler: CodeBlockProcessor): void {
    this.codeBlockProcessors.set(language, handler);
    this.register(() => this.codeBlockProcessors.delete(language));
  }

  /**
   * Stand-in only: renders a fenced block the way Obsidian's reading view does: a fresh element, a context
   * whose children unload with the returned component. Returns the element.
   */
  async renderCodeBlock(language: string, source: string, sourcePath: string): Promise<{ el: HTMLElement; component: Component }> {
    const handler = this.codeBlockProcessors.get(language);
    if (!handler) throw new Error(`no code block processor for ${language}`);
    const el = document.body.createDiv({ cls: "markdown-preview-section" });
    const component = new Component();
    component.load();
    const ctx = { sourcePath, docId: "stub", frontmatter: undefined, addChild: (child: Component) => component.addChild(child), getSectionInfo: () => null };
    await handler(source, el, ctx);
    return { el, component };
  }

  registerView(type: string, creator: ViewCreator): void {
    this.app.viewRegistry.set(type, creator);
    this.registeredViews.push(type);
    this.register(() => this.app.viewRegistry.delete(type));
  }
}

// ---------------------------------------------------------------------------------------------- notices

const notices: string[] = [];

/** Records every message; the element is real when a DOM exists. */
export class Notice {
  noticeEl: HTMLElement | null = null;
  message: string;
  hidden = false;

  constructor(message: string | DocumentFragment, readonly duration?: number) {
    this.message = typeof message === "string" ? message : (message.textContent ?? "");
    notices.push(this.message);
    if (typeof document !== "undefined") {
      this.noticeEl = document.createElement("div");
      this.noticeEl.addClass("notice");
      this.noticeEl.setText(this.message);
    }
  }
  setMessage(message: string | DocumentFragment): this {
    this.message = typeof message === "string" ? message : (message.textContent ?? "");
    notices.push(this.message);
    this.noticeEl?.setText(this.message);
    return this;
  }
  hide(): void {
    this.hidden = true;
  }
}

/** Stand-in only: every notice message shown so far. */
export function noticeMessages(): string[] {
  return [...notices];
}
/** Stand-in only. */
export function clearNotices(): void {
  notices.length = 0;
}

// ---------------------------------------------------------------------------------------------- modals

export class Scope {
  readonly keys: { modifiers: string[] | null; key: string | null; func: (evt: KeyboardEvent) => unknown }[] = [];
  register(modifiers: string[] | null, key: string | null, func: (evt: KeyboardEvent) => unknown) {
    const handler = { modifiers, key, func };
    this.keys.push(handler);
    return handler;
  }
  unregister(handler: unknown): void {
    const i = this.keys.indexOf(handler as (typeof this.keys)[number]);
    if (i >= 0) this.keys.splice(i, 1);
  }
}

export class Modal {
  readonly scope = new Scope();
  readonly containerEl: HTMLElement;
  readonly modalEl: HTMLElement;
  readonly titleEl: HTMLElement;
  readonly contentEl: HTMLElement;
  /** Stand-in only. */
  isOpen = false;
  private closeCallback: (() => unknown) | null = null;

  constructor(readonly app: App) {
    this.containerEl = document.createElement("div");
    this.containerEl.addClass("modal-container");
    this.modalEl = this.containerEl.createDiv({ cls: "modal" });
    this.titleEl = this.modalEl.createDiv({ cls: "modal-title" });
    this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
  }
  open(): void {
    document.body.appendChild(this.containerEl);
    this.isOpen = true;
    void this.onOpen();
  }
  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.containerEl.remove();
    this.onClose();
    this.closeCallback?.();
  }
  onOpen(): Promise<void> | void {}
  onClose(): void {}
  setTitle(title: string): this {
    this.titleEl.setText(title);
    return this;
  }
  setContent(content: string | DocumentFragment): this {
    this.contentEl.empty();
    if (typeof content === "string") this.contentEl.setText(content);
    else this.contentEl.appendChild(content);
    return this;
  }
  setCloseCallback(callback: () => unknown): this {
    this.closeCallback = callback;
    return this;
  }
}

/** Renders getSuggestions(query) as the user types; Enter or a click chooses one. */
export abstract class SuggestModal<T> extends Modal {
  limit = 100;
  emptyStateText = "No results found.";
  readonly inputEl: HTMLInputElement;
  readonly resultContainerEl: HTMLElement;
  /** Stand-in only: the suggestions currently shown. */
  suggestions: T[] = [];

  constructor(app: App) {
    super(app);
    this.inputEl = this.modalEl.createEl("input", { cls: "prompt-input", type: "text" }) as HTMLInputElement;
    this.resultContainerEl = this.modalEl.createDiv({ cls: "prompt-results" });
    this.inputEl.addEventListener("input", () => void this.updateSuggestions());
    this.inputEl.addEventListener("keydown", (evt) => {
      if (evt.key === "Enter" && this.suggestions[0] !== undefined) this.choose(0, evt);
    });
  }
  setPlaceholder(placeholder: string): void {
    this.inputEl.setAttribute("placeholder", placeholder);
  }
  setInstructions(_instructions: { command: string; purpose: string }[]): void {}
  open(): void {
    super.open();
    void this.updateSuggestions();
  }
  /** Stand-in only (Obsidian does this on input): recompute and render the suggestions. */
  async updateSuggestions(): Promise<void> {
    const items = (await this.getSuggestions(this.inputEl.value)).slice(0, this.limit);
    this.suggestions = items;
    this.resultContainerEl.empty();
    if (items.length === 0) this.resultContainerEl.createDiv({ cls: "suggestion-empty", text: this.emptyStateText });
    items.forEach((item, i) => {
      const el = this.resultContainerEl.createDiv({ cls: "suggestion-item" });
      this.renderSuggestion(item, el);
      el.addEventListener("click", (evt) => this.choose(i, evt));
    });
  }
  private choose(index: number, evt: MouseEvent | KeyboardEvent): void {
    const item = this.suggestions[index];
    this.close();
    void this.onChooseSuggestion(item, evt);
  }
  abstract getSuggestions(query: string): T[] | Promise<T[]>;
  abstract renderSuggestion(value: T, el: HTMLElement): unknown;
  abstract onChooseSuggestion(item: T, evt: MouseEvent | KeyboardEvent): unknown;
}

// ---------------------------------------------------------------------------------------------- settings

abstract class BaseComponent {
  disabled = false;
  setDisabled(disabled: boolean): this {
    this.disabled = disabled;
    return this;
  }
}

abstract class ValueComponent<T> extends BaseComponent {
  abstract getValue(): T;
  abstract setValue(value: T): this;
}

export class TextComponent extends ValueComponent<string> {
  readonly inputEl: HTMLInputElement;
  private changeCallback: ((value: string) => unknown) | null = null;
  constructor(containerEl: HTMLElement, tag: "input" | "textarea" = "input") {
    super();
    this.inputEl = containerEl.createEl(tag, tag === "input" ? { type: "text" } : {}) as HTMLInputElement;
    this.inputEl.addEventListener("input", () => void this.changeCallback?.(this.inputEl.value));
  }
  getValue(): string {
    return this.inputEl.value;
  }
  setValue(value: string): this {
    this.inputEl.value = value;
    return this;
  }
  setPlaceholder(placeholder: string): this {
    this.inputEl.setAttribute("placeholder", placeholder);
    return this;
  }
  onChange(callback: (value: string) => unknown): this {
    this.changeCallback = callback;
    return this;
  }
  /** Stand-in only: the user types a new value (fires the input event like a keystroke would). */
  simulateInput(value: string): unknown {
    this.inputEl.value = value;
    return this.changeCallback?.(value);
  }
  override setDisabled(disabled: boolean): this {
    this.inputEl.disabled = disabled;
    return super.setDisabled(disabled);
  }
}

export class TextAreaComponent extends TextComponent {
  constructor(containerEl: HTMLElement) {
    super(containerEl, "textarea");
  }
}

export class ToggleComponent extends ValueComponent<boolean> {
  readonly toggleEl: HTMLElement;
  private value = false;
  private changeCallback: ((value: boolean) => unknown) | null = null;
  constructor(containerEl: HTMLElement) {
    super();
    this.toggleEl = containerEl.createDiv({ cls: "checkbox-container" });
    this.toggleEl.addEventListener("click", () => void this.simulateInput(!this.value));
  }
  getValue(): boolean {
    return this.value;
  }
  setValue(on: boolean): this {
    this.value = on;
    this.toggleEl.toggleClass("is-enabled", on);
    return this;
  }
  onChange(callback: (value: boolean) => unknown): this {
    this.changeCallback = callback;
    return this;
  }
  setTooltip(_tooltip: string): this {
    return this;
  }
  /** Stand-in only: the user flips the toggle. */
  simulateInput(on: boolean): unknown {
    this.setValue(on);
    return this.changeCallback?.(on);
  }
}

export class DropdownComponent extends ValueComponent<string> {
  readonly selectEl: HTMLSelectElement;
  private changeCallback: ((value: string) => unknown) | null = null;
  constructor(containerEl: HTMLElement) {
    super();
    this.selectEl = containerEl.createEl("select", { cls: "dropdown" }) as HTMLSelectElement;
    this.selectEl.addEventListener("change", () => void this.changeCallback?.(this.selectEl.value));
  }
  addOption(value: string, display: string): this {
    this.selectEl.createEl("option", { value, text: display });
    return this;
  }
  addOptions(options: Record<string, string>): this {
    for (const [value, display] of Object.entries(options)) this.addOption(value, display);
    return this;
  }
  /** Stand-in only: the option values, in order. */
  options(): string[] {
    return Array.from(this.selectEl.options, (o) => o.value);
  }
  getValue(): string {
    return this.selectEl.value;
  }
  setValue(value: string): this {
    this.selectEl.value = value;
    return this;
  }
  onChange(callback: (value: string) => unknown): this {
    this.changeCallback = callback;
    return this;
  }
  /** Stand-in only. */
  simulateInput(value: string): unknown {
    this.selectEl.value = value;
    return this.changeCallback?.(value);
  }
}

export class SliderComponent extends ValueComponent<number> {
  readonly sliderEl: HTMLInputElement;
  private changeCallback: ((value: number) => unknown) | null = null;
  constructor(containerEl: HTMLElement) {
    super();
    this.sliderEl = containerEl.createEl("input", { type: "range" }) as HTMLInputElement;
  }
  setLimits(min: number | null, max: number | null, step: number | "any"): this {
    this.sliderEl.min = String(min ?? "");
    this.sliderEl.max = String(max ?? "");
    this.sliderEl.step = String(step);
    return this;
  }
  setDynamicTooltip(): this {
    return this;
  }
  getValue(): number {
    return Number(this.sliderEl.value);
  }
  setValue(value: number): this {
    this.sliderEl.value = String(value);
    return this;
  }
  onChange(callback: (value: number) => unknown): this {
    this.changeCallback = callback;
    return this;
  }
  simulateInput(value: number): unknown {
    this.setValue(value);
    return this.changeCallback?.(value);
  }
}

export class ButtonComponent extends BaseComponent {
  readonly buttonEl: HTMLButtonElement;
  private clickCallback: ((evt: MouseEvent) => unknown) | null = null;
  constructor(containerEl: HTMLElement) {
    super();
    this.buttonEl = containerEl.createEl("button") as HTMLButtonElement;
    this.buttonEl.addEventListener("click", (evt) => void this.clickCallback?.(evt));
  }
  setButtonText(name: string): this {
    this.buttonEl.setText(name);
    return this;
  }
  setIcon(icon: string): this {
    this.buttonEl.setAttr("data-icon", icon);
    return this;
  }
  setTooltip(tooltip: string): this {
    this.buttonEl.setAttr("aria-label", tooltip);
    return this;
  }
  setCta(): this {
    this.buttonEl.addClass("mod-cta");
    return this;
  }
  setWarning(): this {
    this.buttonEl.addClass("mod-warning");
    return this;
  }
  override setDisabled(disabled: boolean): this {
    this.buttonEl.disabled = disabled;
    return super.setDisabled(disabled);
  }
  onClick(callback: (evt: MouseEvent) => unknown): this {
    this.clickCallback = callback;
    return this;
  }
  /** Stand-in only: click (ignored while disabled, like a real button) and wait for an async handler. */
  async simulateClick(): Promise<void> {
    if (!this.buttonEl.disabled) await this.clickCallback?.(new MouseEvent("click"));
  }
}

/** A small icon button (Obsidian's ExtraButtonComponent is not a ButtonComponent). */
export class ExtraButtonComponent extends BaseComponent {
  readonly extraSettingsEl: HTMLElement;
  private clickCallback: (() => unknown) | null = null;
  constructor(containerEl: HTMLElement) {
    super();
    this.extraSettingsEl = containerEl.createDiv({ cls: "clickable-icon extra-setting-button" });
    this.extraSettingsEl.addEventListener("click", () => {
      if (!this.disabled) void this.clickCallback?.();
    });
  }
  setIcon(icon: string): this {
    this.extraSettingsEl.setAttr("data-icon", icon);
    return this;
  }
  setTooltip(tooltip: string): this {
    this.extraSettingsEl.setAttr("aria-label", tooltip);
    return this;
  }
  override setDisabled(disabled: boolean): this {
    this.extraSettingsEl.toggleClass("is-disabled", disabled);
    return super.setDisabled(disabled);
  }
  onClick(callback: () => unknown): this {
    this.clickCallback = callback;
    return this;
  }
  /** Stand-in only. */
  async simulateClick(): Promise<void> {
    if (!this.disabled) await this.clickCallback?.();
  }
}

export type SettingComponent =
  | TextComponent
  | ToggleComponent
  | DropdownComponent
  | SliderComponent
  | ButtonComponent
  | ExtraButtonComponent;

const settingsByEl = new WeakMap<HTMLElement, Setting>();

/** One row of a settings tab. Records its controls (`components`) for tests. */
export class Setting {
  readonly settingEl: HTMLElement;
  readonly infoEl: HTMLElement;
  readonly nameEl: HTMLElement;
  readonly descEl: HTMLElement;
  readonly controlEl: HTMLElement;
  readonly components: SettingComponent[] = [];
  isHeading = false;

  constructor(containerEl: HTMLElement) {
    this.settingEl = containerEl.createDiv({ cls: "setting-item" });
    this.infoEl = this.settingEl.createDiv({ cls: "setting-item-info" });
    this.nameEl = this.infoEl.createDiv({ cls: "setting-item-name" });
    this.descEl = this.infoEl.createDiv({ cls: "setting-item-description" });
    this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
    settingsByEl.set(this.settingEl, this);
  }
  setName(name: string | DocumentFragment): this {
    this.nameEl.empty();
    if (typeof name === "string") this.nameEl.setText(name);
    else this.nameEl.appendChild(name);
    return this;
  }
  setDesc(desc: string | DocumentFragment): this {
    this.descEl.empty();
    if (typeof desc === "string") this.descEl.setText(desc);
    else this.descEl.appendChild(desc);
    return this;
  }
  setClass(cls: string): this {
    this.settingEl.addClass(cls);
    return this;
  }
  setHeading(): this {
    this.isHeading = true;
    this.settingEl.addClass("setting-item-heading");
    return this;
  }
  setDisabled(disabled: boolean): this {
    this.settingEl.toggleClass("is-disabled", disabled);
    for (const c of this.components) c.setDisabled(disabled);
    return this;
  }
  setTooltip(_tooltip: string): this {
    return this;
  }
  private add<C extends SettingComponent>(component: C, cb: (component: C) => unknown): this {
    this.components.push(component);
    cb(component);
    return this;
  }
  addText(cb: (c: TextComponent) => unknown): this {
    return this.add(new TextComponent(this.controlEl), cb);
  }
  addTextArea(cb: (c: TextAreaComponent) => unknown): this {
    return this.add(new TextAreaComponent(this.controlEl), cb);
  }
  addToggle(cb: (c: ToggleComponent) => unknown): this {
    return this.add(new ToggleComponent(this.controlEl), cb);
  }
  addDropdown(cb: (c: DropdownComponent) => unknown): this {
    return this.add(new DropdownComponent(this.controlEl), cb);
  }
  addSlider(cb: (c: SliderComponent) => unknown): this {
    return this.add(new SliderComponent(this.controlEl), cb);
  }
  addButton(cb: (c: ButtonComponent) => unknown): this {
    return this.add(new ButtonComponent(this.controlEl), cb);
  }
  addExtraButton(cb: (c: ExtraButtonComponent) => unknown): this {
    return this.add(new ExtraButtonComponent(this.controlEl), cb);
  }
  then(cb: (setting: this) => unknown): this {
    cb(this);
    return this;
  }
  clear(): this {
    this.controlEl.empty();
    this.components.length = 0;
    return this;
  }
}

/** Stand-in only: the Setting rows rendered inside an element, in document order. */
export function settingsIn(containerEl: HTMLElement): Setting[] {
  return Array.from(containerEl.querySelectorAll<HTMLElement>(".setting-item"))
    .map((el) => settingsByEl.get(el))
    .filter((s): s is Setting => s !== undefined);
}

export abstract class PluginSettingTab {
  readonly containerEl: HTMLElement;
  constructor(
    readonly app: App,
    readonly plugin: Plugin,
  ) {
    this.containerEl = document.createElement("div");
    this.containerEl.addClass("vertical-tab-content");
  }
  abstract display(): void;
  hide(): void {
    this.containerEl.empty();
  }
}

// ---------------------------------------------------------------------------------------------- network, platform

export interface RequestUrlParam {
  url: string;
  method?: string;
  contentType?: string;
  body?: string | ArrayBuffer;
  headers?: Record<string, string>;
  throw?: boolean;
}

export interface RequestUrlResponse {
  status: number;
  headers: Record<string, string>;
  arrayBuffer: ArrayBuffer;
  json: any;
  text: string;
}

/** Stand-in only: every requestUrl call's URL, in order. */
export const requestUrlLog: string[] = [];

/**
 * Obsidian's requestUrl: real HTTP from Node (not subject to CORS), the whole body at once, and by
 * default an error for status >= 400 (`throw: false` returns it instead). Like Obsidian's, it follows
 * redirects itself, to other origins too, and the answer does not say where it came from. Which headers
 * Obsidian keeps across origins is not documented: the stand-in keeps them all, promising the least.
 */
export function requestUrl(request: RequestUrlParam | string): Promise<RequestUrlResponse> {
  const req = typeof request === "string" ? { url: request } : request;
  requestUrlLog.push(req.url);
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.contentType) headers["content-type"] = req.contentType;
  const body = req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body) : Buffer.from(req.body);
  return sendFollowing(new URL(req.url), (req.method ?? "GET").toUpperCase(), headers, body, 0).then((out) => {
    if (out.status >= 400 && req.throw !== false) {
      throw Object.assign(new Error(`Request failed, status ${out.status}`), { status: out.status, headers: out.headers });
    }
    return out;
  });
}

/** A bound, as every client has (Chromium stops at 20 too). */
const MAX_REQUEST_URL_REDIRECTS = 20;

function sendFollowing(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, hops: number): Promise<RequestUrlResponse> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? https : http;
    const sent = body ? { ...headers, "content-length": String(body.length) } : headers;
    const r = client.request(url, { method, headers: sent }, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location) {
        res.resume();
        if (hops >= MAX_REQUEST_URL_REDIRECTS) return reject(new Error("net::ERR_TOO_MANY_REDIRECTS"));
        // As fetch does: 303 (and 301/302 after a POST) continue as a GET without a body.
        const toGet = (status === 303 && method !== "GET" && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST");
        const { "content-type": _type, ...rest } = headers;
        sendFollowing(new URL(location, url), toGet ? "GET" : method, toGet ? rest : headers, toGet ? undefined : body, hops + 1).then(resolve, reject);
        return;
      }
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const buf = Buffer.concat(parts);
        const text = buf.toString("utf8");
        resolve({
          status,
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")])),
          arrayBuffer: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer,
          text,
          get json() {
            return JSON.parse(text);
          },
        });
      });
    });
    r.on("error", reject);
    if (body) r.write(body);
    r.end();
  });
}

/** Mutable so a test can play mobile: `Platform.isDesktopApp = false`. */
export const Platform = {
  isDesktop: true,
  isMobile: false,
  isDesktopApp: true,
  isMobileApp: false,
  isIosApp: false,
  isAndroidApp: false,
  isPhone: false,
  isTablet: false,
  isMacOS: false,
  isWin: false,
  isLinux: true,
  isSafari: false,
};

export interface Debouncer<T extends unknown[], V> {
  (...args: [...T]): this;
  cancel(): this;
  run(): V | void;
}

/** Obsidian's debounce: runs cb once after `timeout` ms of quiet (resetTimer: each call restarts the wait). */
export function debounce<T extends unknown[], V>(cb: (...args: [...T]) => V, timeout = 0, resetTimer = false): Debouncer<T, V> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastArgs: T | null = null;
  const fire = (): V | void => {
    timer = null;
    if (!lastArgs) return;
    const args = lastArgs;
    lastArgs = null;
    return cb(...args);
  };
  const debounced = function (this: unknown, ...args: [...T]) {
    lastArgs = args as T;
    if (timer && resetTimer) {
      clearTimeout(timer);
      timer = null;
    }
    if (!timer) timer = setTimeout(fire, timeout);
    return debounced;
  } as Debouncer<T, V>;
  debounced.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    lastArgs = null;
    return debounced;
  };
  debounced.run = () => {
    if (timer) clearTimeout(timer);
    return fire();
  };
  return debounced;
}
