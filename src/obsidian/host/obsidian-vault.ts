import { normalizePath, TFile, TFolder, type App, type Plugin, type TAbstractFile } from "obsidian";
import { decodeNoteBytes, decodeWritableNote, hasByteOrderMark, NoteRefusedError, rewrittenNote, withoutByteOrderMark } from "../../core/notes/read-policy";
import { errorMessage } from "../../core/util/errors";
import { NoteExistsError, NoteNotFoundError, type NoteInfo, type Unsubscribe, type VaultEvent, type VaultPort } from "../../core/ports/vault";

/** Krypton's own data folder; never a note, never indexed. */
export const KRYPTON_DIR = ".krypton";

/**
 * VaultPort over Obsidian's Vault API. Reads go through readBinary and decodeNoteBytes, creation through
 * vault.create so the new note appears at once in the file explorer. Nothing here modifies or deletes a note;
 * the one removal is of an empty folder createNote made for a note it then failed to create.
 */
export class ObsidianVault implements VaultPort {
  constructor(
    private readonly app: App,
    private readonly plugin: Plugin,
    private readonly options: {
      /**
       * Throws when a vault-relative path really lives outside the vault. Obsidian desktop follows symbolic
       * links when it scans, so a linked file anywhere on disk shows up as a note; only the file system can
       * tell (desktop: the Node guard, src/node/path-symlink-guard.ts). Absent on mobile, which has no links.
       */
      assertInside?: (path: string) => Promise<void>;
    } = {},
  ) {}

  get configDir(): string {
    return this.app.vault.configDir;
  }

  /** A markdown file outside the config folder and .krypton. */
  isNotePath(path: string): boolean {
    return path.toLowerCase().endsWith(".md") && !this.isMachineState(path);
  }

  /** In the config folder or .krypton: never a note, nor a folder notes go in. */
  private isMachineState(path: string): boolean {
    return isInside(path, this.configDir) || isInside(path, KRYPTON_DIR);
  }

  listNotes(): Promise<NoteInfo[]> {
    const notes = this.app.vault
      .getMarkdownFiles()
      .filter((f) => this.isNotePath(f.path))
      .map((f) => ({ path: f.path, mtime: f.stat.mtime, size: f.stat.size }));
    return Promise.resolve(notes);
  }

  /**
   * From the vault's loaded file tree, which holds every folder Obsidian knows, empty ones too, in their exact
   * spelling (the tree is case-sensitive; on macOS the disk is not). Obsidian desktop follows symbolic links
   * into that tree, so a folder that really lies outside the vault (assertInside) is left out, as is every
   * folder in one.
   */
  async listFolders(parent: string): Promise<string[]> {
    const folder = parent ? this.app.vault.getAbstractFileByPath(normalizePath(parent)) : this.app.vault.getRoot();
    if (!(folder instanceof TFolder) || !(await this.liesInside(folder.path))) return [];
    const folders = folder.children.filter((c) => c instanceof TFolder && !this.isMachineState(c.path));
    const inside = await Promise.all(folders.map((c) => this.liesInside(c.path)));
    return folders.filter((_, i) => inside[i]).map((c) => c.name);
  }

  /** False when the path leads out of the vault through a link (or cannot be checked); true where there are no links (mobile). */
  private async liesInside(path: string): Promise<boolean> {
    if (!this.options.assertInside || path === "/") return true;
    return this.options.assertInside(path).then(
      () => true,
      () => false,
    );
  }

  async readNote(path: string): Promise<string> {
    const file = this.fileAt(path);
    if (!file || !this.isNotePath(file.path)) throw new NoteNotFoundError(path);
    return decodeNoteBytes(file.path, await this.bytesOf(file));
  }

  /** A note's bytes, refused when it is a symbolic link leading outside the vault. */
  private async bytesOf(file: TFile): Promise<Uint8Array> {
    if (this.options.assertInside) {
      await this.options.assertInside(file.path).catch((err: unknown) => {
        throw new NoteRefusedError(file.path, err instanceof Error && /symbolic link/.test(err.message) ? "it is a symbolic link leading outside the vault" : errorMessage(err));
      });
    }
    // Bytes, not cachedRead: cachedRead decodes as UTF-8 and turns a Latin-1 note or a binary file into
    // replacement characters; decodeNoteBytes is the same decoding the CLI uses.
    return new Uint8Array(await this.app.vault.readBinary(file));
  }

  async exists(path: string): Promise<boolean> {
    const p = normalizePath(path);
    if (this.app.vault.getAbstractFileByPath(p)) return true;
    // Dot-folders and files Obsidian does not track are still "taken" on disk.
    return this.app.vault.adapter.exists(p);
  }

  /**
   * Every note Krypton creates comes here. Obsidian has no exclusive create: vault.create refuses a path in its
   * file tree, but a file that reached the disk otherwise (a sync client) and is not in the tree yet would be
   * overwritten. So the disk is checked again as the very last step before vault.create, after the folders are
   * made; what remains is the moment between that check and Obsidian's write, which its API cannot close.
   */
  async createNote(path: string, content: string): Promise<void> {
    const p = normalizePath(path);
    if (!this.isNotePath(p)) throw new Error(`Not a note path: ${path}`);
    if (await this.exists(p)) throw new NoteExistsError(p);
    const made: string[] = [];
    try {
      await this.ensureFolder(parentOf(p), made);
      if (await this.exists(p)) throw new NoteExistsError(p);
      await this.app.vault.create(p, content);
    } catch (err) {
      await this.removeEmptyFolders(made);
      // Entered the file tree meanwhile: vault.create refused it.
      if (!(err instanceof NoteExistsError) && (await this.exists(p))) throw new NoteExistsError(p);
      throw err;
    }
  }

  /** Vault.process: Obsidian's atomic read-modify-write, so an edit in an open editor is never lost. */
  async appendToNote(path: string, text: string, expected?: string): Promise<void> {
    return this.processNote(path, (current) => current + text, expected);
  }

  /**
   * Vault.process rather than FileManager.processFrontMatter: the goal-note change also appends a session
   * line to the body, and processFrontMatter would re-serialise the whole frontmatter (losing comments/order).
   */
  async processNote(path: string, fn: (current: string) => string, expected?: string): Promise<void> {
    const file = this.fileAt(path);
    if (!file || !this.isNotePath(file.path)) throw new NoteNotFoundError(path);
    // What readNote refuses is not written either (a link out of the vault, a binary file), nor a Latin-1
    // note: Vault.process hands it over decoded as UTF-8, and writing it back would replace every accent.
    const bytes = await this.bytesOf(file);
    decodeWritableNote(file.path, bytes);
    await this.app.vault.process(file, (raw) => {
      // Vault.process hands over the note's byte order mark (Vault.read drops it): the text is compared and
      // changed without it, as readNote gives it, and the note keeps it, once. The bytes read just before
      // also count, in case an Obsidian version drops it here too.
      const current = withoutByteOrderMark(raw);
      return rewrittenNote(path, current, current !== raw || hasByteOrderMark(bytes), fn, expected);
    });
  }

  async readConfigFile(path: string): Promise<string | null> {
    const p = normalizePath(`${this.configDir}/${path}`);
    // Missing is normal (the plugin is not installed); a read that fails is told, not taken for missing.
    if (!(await this.app.vault.adapter.exists(p))) return null;
    // DataAdapter.read keeps a byte order mark (Vault.read drops it): the shared rule drops it.
    return withoutByteOrderMark(await this.app.vault.adapter.read(p));
  }

  onChange(listener: (event: VaultEvent) => void): Unsubscribe {
    let active = true;
    const emit = (event: VaultEvent) => {
      if (active) listener(event);
    };
    const isNote = (file: TAbstractFile) => file instanceof TFile && this.isNotePath(file.path);
    const refs = [
      this.app.vault.on("create", (file) => {
        if (isNote(file)) emit({ type: "create", path: file.path });
      }),
      this.app.vault.on("modify", (file) => {
        if (isNote(file)) emit({ type: "modify", path: file.path });
      }),
      this.app.vault.on("delete", (file) => {
        if (isNote(file)) emit({ type: "delete", path: file.path });
      }),
      this.app.vault.on("rename", (file, oldPath) => {
        if (!(file instanceof TFile)) return;
        const was = this.isNotePath(oldPath);
        const is = this.isNotePath(file.path);
        // A rename across the note boundary (into an excluded folder, ".md" to ".txt") is a delete or a create.
        if (was && is) emit({ type: "rename", path: file.path, oldPath });
        else if (was) emit({ type: "delete", path: oldPath });
        else if (is) emit({ type: "create", path: file.path });
      }),
    ];
    // Registered with the plugin too, so unloading the plugin detaches them even if nobody unsubscribes.
    for (const ref of refs) this.plugin.registerEvent(ref);
    return () => {
      active = false;
      for (const ref of refs) this.app.vault.offref(ref);
    };
  }

  private fileAt(path: string): TFile | null {
    const file = this.app.vault.getAbstractFileByPath(normalizePath(path));
    return file instanceof TFile ? file : null;
  }

  /** Creates the folder and its missing parents; each one this call created is added to `made`, outermost first. */
  private async ensureFolder(folder: string, made: string[]): Promise<void> {
    if (!folder) return;
    const existing = this.app.vault.getAbstractFileByPath(folder);
    if (existing instanceof TFolder) return;
    if (existing) throw new Error(`A file is in the way of folder ${folder}`);
    await this.ensureFolder(parentOf(folder), made);
    try {
      await this.app.vault.createFolder(folder);
      made.push(folder);
    } catch (err) {
      // Created meanwhile (another plugin, a sync): fine, and not ours to remove.
      if (!(this.app.vault.getAbstractFileByPath(folder) instanceof TFolder)) throw err;
    }
  }

  /**
   * After a failed creation: the folders made for the note go again, innermost first, while they are empty.
   * adapter.rmdir without recursion is refused by the disk for a folder that holds anything, hidden files
   * included, so nothing put there meanwhile is ever removed (Vault.delete would delete a folder's contents).
   */
  private async removeEmptyFolders(made: readonly string[]): Promise<void> {
    for (const folder of [...made].reverse()) {
      try {
        await this.app.vault.adapter.rmdir(folder, false);
      } catch {
        return; // not empty (or already gone): it and its parents stay
      }
    }
  }
}

function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder + "/");
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}
