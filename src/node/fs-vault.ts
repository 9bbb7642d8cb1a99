import { promises as fs } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { randomBytes } from "node:crypto";
import { decodeNoteBytes, isUtf8, NoteRefusedError } from "../core/notes/read-policy";
import { statAll } from "./stat-all";
import { isCode } from "./fs-errors";
import { NoteChangedError, NoteExistsError, NoteNotFoundError, type NoteInfo, type Unsubscribe, type VaultEvent, type VaultPort } from "../core/ports/vault";

/**
 * The vault as a folder on disk (CLI, standalone MCP server, tests). Like Obsidian, it ignores
 * dot-folders and dot-files (so the config folder and .krypton are never listed), and it only
 * ever creates notes: there is no code path that writes over an existing file.
 */
export const DEFAULT_CONFIG_DIR = ".obsidian";

export class FsVault implements VaultPort {
  readonly root: string;
  readonly configDir: string;
  /** The last pending write per absolute path (see processNote). */
  private readonly writing = new Map<string, Promise<void>>();

  constructor(root: string, options: { configDir?: string } = {}) {
    this.root = resolve(root);
    // Outside Obsidian there is no Vault#configDir to ask: the default name, unless the caller knows better.
    this.configDir = options.configDir ?? DEFAULT_CONFIG_DIR;
  }

  /**
   * Every note's path, mtime and size, from one directory walk and one stat per note; no note is read
   * (the index compares mtime and size and reads only notes that differ). Folders of a level are read
   * together, then every note is stat'ed (statAll): awaiting a promise per note, or per folder, made a
   * 100,000-note scan take seconds.
   */
  async listNotes(): Promise<NoteInfo[]> {
    const full: string[] = [];
    const rel: string[] = [];
    let level: { dir: string; rel: string }[] = [{ dir: this.root, rel: "" }];
    while (level.length > 0) {
      const next: { dir: string; rel: string }[] = [];
      // Each folder's entries are taken as its read completes, not all of a level at once after the last:
      // 100,000 entries handled in one go held the thread for a quarter of a second.
      await Promise.all(
        level.map(async ({ dir, rel: prefix }) => {
          const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null); // unreadable folder: skip it rather than fail the whole listing
          if (!entries) return;
          // (dir is absolute and normalized, name a single segment: concatenation is join without its cost.)
          const base = dir.endsWith(sep) ? dir : dir + sep;
          for (const entry of entries) {
            const name = entry.name;
            if (name.startsWith(".")) continue;
            // Symlinked folders are not followed: they can loop or lead out of the vault.
            if (entry.isDirectory()) next.push({ dir: base + name, rel: prefix + name + "/" });
            else if ((entry.isFile() || entry.isSymbolicLink()) && name.toLowerCase().endsWith(".md")) {
              full.push(base + name);
              rel.push(prefix + name);
            }
          }
        }),
      );
      level = next;
    }
    const { mtime, size } = await statAll(full);
    const out: NoteInfo[] = [];
    // Missing (NaN): a broken symlink, a file removed meanwhile, or a link to a folder.
    for (let i = 0; i < full.length; i++) if (!Number.isNaN(mtime[i])) out.push({ path: rel[i], mtime: mtime[i], size: size[i] });
    out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return out;
  }

  async readNote(path: string): Promise<string> {
    const full = this.resolveInside(path);
    try {
      // The real path decides, not the name: a link inside the vault may point anywhere.
      const real = await fs.realpath(full);
      const realRoot = await this.realRoot();
      if (real !== realRoot && !real.startsWith(realRoot + sep)) {
        throw new NoteRefusedError(path, "it is a symbolic link leading outside the vault");
      }
      return decodeNoteBytes(path, await fs.readFile(real));
    } catch (err) {
      if (isCode(err, "ENOENT") || isCode(err, "EISDIR") || isCode(err, "ENOTDIR")) throw new NoteNotFoundError(path);
      throw err;
    }
  }

  private realRootPromise: Promise<string> | undefined;
  private realRoot(): Promise<string> {
    this.realRootPromise ??= fs.realpath(this.root).catch(() => this.root);
    return this.realRootPromise;
  }

  async exists(path: string): Promise<boolean> {
    try {
      await fs.lstat(this.resolveInside(path));
      return true;
    } catch {
      return false;
    }
  }

  async createNote(path: string, content: string): Promise<void> {
    const full = this.resolveInside(path);
    await fs.mkdir(dirname(full), { recursive: true });
    // Write a hidden temp file beside the target, then hard-link it into place: link() fails with
    // EEXIST instead of replacing, so the note appears complete or not at all and nothing is overwritten.
    const temp = join(dirname(full), `.krypton-new-${randomBytes(6).toString("hex")}.tmp`);
    await fs.writeFile(temp, content, { encoding: "utf8", flag: "wx" });
    try {
      await fs.link(temp, full);
    } catch (err) {
      if (isCode(err, "EEXIST")) throw new NoteExistsError(path);
      if (!isCode(err, "EPERM") && !isCode(err, "ENOTSUP") && !isCode(err, "EXDEV")) throw err;
      // File systems without hard links: exclusive create is still never an overwrite.
      try {
        await fs.writeFile(full, content, { encoding: "utf8", flag: "wx" });
      } catch (inner) {
        if (isCode(inner, "EEXIST")) throw new NoteExistsError(path);
        throw inner;
      }
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  async appendToNote(path: string, text: string, expected?: string): Promise<void> {
    return this.processNote(path, (current) => current + text, expected);
  }

  async processNote(path: string, fn: (current: string) => string, expected?: string): Promise<void> {
    const full = this.resolveInside(path);
    // Writes to one note from this process run one after another: between the re-check and the rename
    // below, a second write would otherwise be lost (renamed over). Other processes are still re-checked.
    const previous = this.writing.get(full) ?? Promise.resolve();
    const run = previous.then(() => this.processNow(path, full, fn, expected));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.writing.set(full, settled);
    void settled.then(() => {
      if (this.writing.get(full) === settled) this.writing.delete(full);
    });
    return run;
  }

  private async processNow(path: string, full: string, fn: (current: string) => string, expected: string | undefined): Promise<void> {
    const current = await this.readNote(path);
    // A Latin-1 note is read through the fallback; appending UTF-8 to it would re-encode the whole note.
    if (!isUtf8(await fs.readFile(full))) {
      throw new NoteRefusedError(path, "it is not UTF-8 text (Latin-1/Windows-1252), and Krypton does not re-encode a note to append to it");
    }
    if (expected !== undefined && current !== expected) throw new NoteChangedError(path);
    const next = fn(current);
    // The whole new note goes to a temp file that is renamed over the old one: readers see the old note or
    // the new one, never half of it. The file's mode is kept.
    const temp = join(dirname(full), `.krypton-write-${randomBytes(6).toString("hex")}.tmp`);
    const { mode } = await fs.stat(full);
    try {
      await fs.writeFile(temp, next, { encoding: "utf8", flag: "wx", mode });
      // Checked again just before the swap: an editor that saved meanwhile wins, not us.
      if ((await fs.readFile(full, "utf8")) !== current) throw new NoteChangedError(path);
      await fs.rename(temp, full);
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  async readConfigFile(path: string): Promise<string | null> {
    try {
      return await fs.readFile(this.resolveInside(`${this.configDir}/${path}`), "utf8");
    } catch {
      return null;
    }
  }

  onChange(_listener: (event: VaultEvent) => void): Unsubscribe {
    // The CLI reads the vault on demand (index sync); it does not watch the folder. Notes the agents
    // create here reach the index through NoteOperations (see indexNewNote), not through events.
    return () => {};
  }

  /** Absolute path for a vault-relative one; refuses anything that would land outside the vault. */
  resolveInside(path: string): string {
    const full = resolve(this.root, path);
    if (full !== this.root && !full.startsWith(this.root + sep)) throw new Error(`Path is outside the vault: ${path}`);
    return full;
  }
}
