import { promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { randomBytes } from "node:crypto";
import { decodeNoteBytes, decodeWritableNote, hasByteOrderMark, NoteRefusedError, rewrittenNote, withoutByteOrderMark } from "../core/notes/read-policy";
import { statAll } from "./stat-all";
import { inWordsIfDenied, isCode, isMissing, orMissing } from "./fs-errors";
import { SerialQueue } from "../core/util/serial-queue";
import { NoteChangedError, NoteExistsError, NoteNotFoundError, type NoteInfo, type SkippedFolder, type Unsubscribe, type VaultEvent, type VaultPort } from "../core/ports/vault";
import type { Logger } from "../core/ports/logger";

/**
 * The vault as a folder on disk (CLI, standalone MCP server, tests). Like Obsidian, it ignores
 * dot-folders and dot-files (so the config folder and .krypton are never listed), and it only
 * ever creates notes: there is no code path that writes over an existing file. The only files it
 * removes are its own temp files (see sweepLeftovers).
 */
export const DEFAULT_CONFIG_DIR = ".obsidian";

/**
 * The hidden temp file a note write goes through, beside the note: ".krypton-new-<12 hex>.tmp" (createNote)
 * or ".krypton-write-<12 hex>.tmp" (processNote). A process killed mid-write leaves it behind.
 */
function tempFileName(kind: "new" | "write"): string {
  return `.krypton-${kind}-${randomBytes(6).toString("hex")}.tmp`;
}

/** Exactly the names tempFileName makes: the sweep removes nothing else. */
export const TEMP_FILE_NAME = /^\.krypton-(?:new|write)-[0-9a-f]{12}\.tmp$/;

/**
 * How old a leftover temp file must be before the sweep removes it. A write holds its temp file for
 * milliseconds; the margin covers another Krypton process (a CLI run, `krypton mcp`) stopped mid-write and
 * clocks of machines sharing a network folder. A write whose temp file was removed fails and changes nothing.
 */
export const TEMP_FILE_MIN_AGE_MS = 60 * 60 * 1000;

/** Why a symbolic link to a folder is not gone into (entryKind), said beside the notes the index skipped. */
const LINKED_FOLDER_REASON = "a symbolic link to a folder, not followed (it could lead outside the vault or back into it)";

/** Why a note-named link that leads nowhere is not read (readReal); the index names it among the skipped notes. */
const BROKEN_LINK_REASON = "it is a symbolic link whose target is missing (moved or deleted); fix or remove the link";
const LOOPING_LINK_REASON = "it is a symbolic link that leads back to itself (a loop); fix or remove the link";

export interface FsVaultOptions {
  configDir?: string;
  /**
   * Sweep Krypton's leftover temp files (TEMP_FILE_NAME, older than TEMP_FILE_MIN_AGE_MS) during the first
   * listing, which walks every folder anyway; each removal is logged. The Node host opening a vault sets it.
   */
  sweepLeftovers?: { logger: Logger; now: () => number };
}

export class FsVault implements VaultPort {
  readonly root: string;
  readonly configDir: string;
  /** Note writes, one at a time (see processNote). */
  private readonly writing = new SerialQueue();
  /** Set until the first listing has swept. */
  private sweep: FsVaultOptions["sweepLeftovers"];
  /** The links to folders the last listing found (skippedFolders). */
  private linkedFolders: SkippedFolder[] = [];

  constructor(root: string, options: FsVaultOptions = {}) {
    this.root = resolve(root);
    // Outside Obsidian there is no Vault#configDir to ask: the default name, unless the caller knows better.
    this.configDir = options.configDir ?? DEFAULT_CONFIG_DIR;
    this.sweep = options.sweepLeftovers;
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
    const sweep = this.sweep;
    this.sweep = undefined;
    const temps: { full: string; rel: string }[] = [];
    // Links (named like a note or not): a link to a folder among them is not gone into, and said (skippedFolders).
    const links: { full: string; rel: string; note?: number }[] = [];
    let level: { dir: string; rel: string }[] = [{ dir: this.root, rel: "" }];
    while (level.length > 0) {
      const next: { dir: string; rel: string }[] = [];
      // Each folder's entries are taken as its read completes, not all of a level at once after the last:
      // 100,000 entries handled in one go held the thread for a quarter of a second.
      await Promise.all(
        level.map(async ({ dir, rel: prefix }) => {
          // An unreadable folder is skipped rather than fail the whole listing; an unreadable vault fails it: an
          // empty listing would take every note out of the index.
          const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
            if (dir === this.root) throw err;
            return null;
          });
          if (!entries) return;
          // (dir is absolute and normalized, name a single segment: concatenation is join without its cost.)
          const base = dir.endsWith(sep) ? dir : dir + sep;
          for (const entry of entries) {
            const name = entry.name;
            const kind = entryKind(name, entry);
            if (kind === "hidden") {
              // (isFile is false for a symbolic link: a link of that name is not ours.)
              if (sweep && entry.isFile() && TEMP_FILE_NAME.test(name)) temps.push({ full: base + name, rel: prefix + name });
            } else if (kind === "folder") next.push({ dir: base + name, rel: prefix + name + "/" });
            else if (kind === "note") {
              full.push(base + name);
              rel.push(prefix + name);
              // A link named like a note may lead to a folder ("Trip.md" -> ../Trip): not a note, said as the others.
              if (entry.isSymbolicLink()) links.push({ full: base + name, rel: prefix + name, note: full.length - 1 });
            } else if (entry.isSymbolicLink()) links.push({ full: base + name, rel: prefix + name });
          }
        }),
      );
      level = next;
    }
    const swept = sweep && temps.length ? removeLeftovers(temps, sweep) : null;
    const targets = Promise.all(links.map((link) => linkTarget(link.full)));
    const { mtime, size } = await statAll(full);
    await swept;
    const linked = await targets;
    this.linkedFolders = links
      .filter((_, i) => linked[i] === "folder")
      .map((link) => link.rel)
      .sort()
      .map((path) => ({ path, reason: LINKED_FOLDER_REASON }));
    const out: NoteInfo[] = [];
    // Missing (NaN): a broken symlink (listed below), a file removed meanwhile, or a link to a folder.
    for (let i = 0; i < full.length; i++) if (!Number.isNaN(mtime[i])) out.push({ path: rel[i], mtime: mtime[i], size: size[i] });
    // A note-named link that leads nowhere is listed by the link's own stat, so the index reads it, is refused
    // (readReal) and names it among the skipped notes instead of dropping it without a word.
    links.forEach(({ rel: path, note }, i) => {
      const target = linked[i];
      if (note !== undefined && Number.isNaN(mtime[note]) && typeof target === "object" && target !== null) out.push({ path, mtime: target.mtime, size: target.size });
    });
    out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return out;
  }

  skippedFolders(): readonly SkippedFolder[] {
    return this.linkedFolders;
  }

  /** One folder's entries, by the walk's rule (entryKind): the folders listNotes goes into, empty ones too. */
  async listFolders(parent: string): Promise<string[]> {
    this.resolveInside(parent);
    // Only a folder the walk reaches is listed: none under a hidden folder or a link (which may lead out of the vault).
    let dir = this.root;
    for (const name of parent ? parent.split("/") : []) {
      dir = join(dir, name);
      const stat = await fs.lstat(dir).catch(() => null);
      if (!stat || entryKind(name, stat) !== "folder") return [];
    }
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => null);
    return entries ? entries.filter((entry) => entryKind(entry.name, entry) === "folder").map((entry) => entry.name) : [];
  }

  async readNote(path: string): Promise<string> {
    return decodeNoteBytes(path, (await this.readReal(path)).bytes);
  }

  /** The file a note path really is (symbolic links resolved) and its bytes. */
  private async readReal(path: string): Promise<{ real: string; bytes: Buffer }> {
    const full = this.resolveInside(path);
    try {
      // The real path decides, not the name: a link inside the vault may point anywhere.
      const real = await fs.realpath(full);
      const realRoot = await this.realRoot();
      if (real !== realRoot && !real.startsWith(realRoot + sep)) {
        throw new NoteRefusedError(path, "it is a symbolic link leading outside the vault");
      }
      return { real, bytes: await fs.readFile(real) };
    } catch (err) {
      if (isMissing(err) || isCode(err, "ELOOP")) {
        const link = await fs.lstat(full).catch(() => null);
        if (link?.isSymbolicLink()) throw new NoteRefusedError(path, isCode(err, "ELOOP") ? LOOPING_LINK_REASON : BROKEN_LINK_REASON);
      }
      if (isMissing(err) || isCode(err, "EISDIR")) throw new NoteNotFoundError(path);
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
    try {
      await this.createNow(path, content);
    } catch (err) {
      throw inWordsIfDenied(err);
    }
  }

  private async createNow(path: string, content: string): Promise<void> {
    const full = this.resolveInside(path);
    const madeFolder = await fs.mkdir(dirname(full), { recursive: true });
    // Write a hidden temp file beside the target, then hard-link it into place: link() fails with
    // EEXIST instead of replacing, so the note appears complete or not at all and nothing is overwritten.
    const temp = join(dirname(full), tempFileName("new"));
    let created = false;
    try {
      await fs.writeFile(temp, content, { encoding: "utf8", flag: "wx" });
      try {
        await fs.link(temp, full);
      } catch (err) {
        if (isCode(err, "EEXIST")) throw new NoteExistsError(path);
        if (!isCode(err, "EPERM") && !isCode(err, "ENOTSUP") && !isCode(err, "EXDEV")) throw err;
        // File systems without hard links: exclusive create is still never an overwrite.
        await this.createWithoutLink(path, full, content);
      }
      created = true;
    } finally {
      // Also when the write failed halfway (a full disk): no half-written temp file stays in the vault.
      await fs.rm(temp, { force: true });
      if (!created && madeFolder) await removeEmptyFolders(dirname(full), madeFolder);
    }
  }

  private async createWithoutLink(path: string, full: string, content: string): Promise<void> {
    let file: FileHandle;
    try {
      file = await fs.open(full, "wx");
    } catch (err) {
      if (isCode(err, "EEXIST")) throw new NoteExistsError(path);
      throw err;
    }
    try {
      await file.writeFile(content, "utf8");
    } catch (err) {
      // The file is the one open() just created: a half-written note must not stay.
      await file.close();
      await fs.rm(full, { force: true });
      throw err;
    }
    await file.close();
  }

  async appendToNote(path: string, text: string, expected?: string): Promise<void> {
    return this.processNote(path, (current) => current + text, expected);
  }

  async processNote(path: string, fn: (current: string) => string, expected?: string): Promise<void> {
    // Writes to notes from this process run one after another: between the re-check and the rename below,
    // a second write would otherwise be lost (renamed over). One queue for all notes, because two names can
    // be one file (a link and its target; two spellings of a name on macOS). Other processes are re-checked.
    return this.writing.run(() => this.processNow(path, fn, expected)).catch((err: unknown) => {
      throw inWordsIfDenied(err);
    });
  }

  private async processNow(path: string, fn: (current: string) => string, expected: string | undefined): Promise<void> {
    // The real file is written, not the name asked for: renaming over a symbolic link would turn the link
    // into a copy and leave the note it points at unchanged (and on macOS, a name asked for in another case
    // would rename the note).
    const { real, bytes } = await this.readReal(path);
    // The text never holds a byte order mark (decodeNoteBytes drops it): the one the note had is put back.
    const next = rewrittenNote(path, decodeWritableNote(path, bytes), hasByteOrderMark(bytes), fn, expected);
    // The whole new note goes to a temp file that is renamed over the old one: readers see the old note or
    // the new one, never half of it. The file's mode is kept.
    const temp = join(dirname(real), tempFileName("write"));
    const { mode } = await fs.stat(real);
    try {
      await fs.writeFile(temp, next, { encoding: "utf8", flag: "wx", mode });
      // Checked again just before the swap: an editor that saved meanwhile wins, not us.
      if (!(await fs.readFile(real)).equals(bytes)) throw new NoteChangedError(path);
      await fs.rename(temp, real);
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  async readConfigFile(path: string): Promise<string | null> {
    // Missing is normal (the plugin is not installed); any other failure is told, not taken for missing.
    const text = await orMissing(fs.readFile(this.resolveInside(`${this.configDir}/${path}`), "utf8"));
    return text === null ? null : withoutByteOrderMark(text);
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

/**
 * What an entry of a vault folder is to Krypton, the one rule for listNotes's walk and listFolders: hidden (a
 * dot name, as Obsidian hides them: the config folder, .krypton, Krypton's temp files), a folder to go into, a
 * note (a ".md" file, or a link to one), or nothing. A link to a folder is no folder: it can loop or lead out of
 * the vault.
 */
function entryKind(name: string, type: Pick<Stats, "isDirectory" | "isFile" | "isSymbolicLink">): "hidden" | "folder" | "note" | "other" {
  if (name.startsWith(".")) return "hidden";
  if (type.isDirectory()) return "folder";
  return (type.isFile() || type.isSymbolicLink()) && name.toLowerCase().endsWith(".md") ? "note" : "other";
}

/**
 * Where a link found by the walk leads: a folder (not gone into), a file, or nowhere (its target missing, or a
 * loop), then with the link's own mtime and size, which is all there is to list it by.
 */
async function linkTarget(full: string): Promise<"folder" | "file" | { mtime: number; size: number } | null> {
  try {
    return (await fs.stat(full)).isDirectory() ? "folder" : "file";
  } catch (err) {
    if (!isMissing(err) && !isCode(err, "ELOOP")) return null;
    // Removed meanwhile: nothing to list.
    const link = await fs.lstat(full).catch(() => null);
    return link?.isSymbolicLink() ? { mtime: link.mtimeMs, size: link.size } : null;
  }
}

/**
 * Removes the temp files a killed write left (found by the listing's walk) once they are old enough that no
 * running write can own them; a young one, or one with a date in the future, stays. Never fails the listing.
 */
async function removeLeftovers(temps: { full: string; rel: string }[], sweep: NonNullable<FsVaultOptions["sweepLeftovers"]>): Promise<void> {
  const now = sweep.now();
  await Promise.all(
    temps.map(async ({ full, rel }) => {
      try {
        const info = await fs.lstat(full);
        if (!info.isFile() || now - info.mtimeMs < TEMP_FILE_MIN_AGE_MS) return;
        await fs.unlink(full);
        sweep.logger.warn(`removed ${rel}: a temp file of a Krypton write interrupted at ${new Date(info.mtimeMs).toISOString()}`);
      } catch (err) {
        if (!isCode(err, "ENOENT")) sweep.logger.warn(`could not remove ${rel}, a temp file of an interrupted Krypton write`, err);
      }
    }),
  );
}

/** Removes `folder` and its parents up to `top` (the first folder createNote made) while they are empty. */
async function removeEmptyFolders(folder: string, top: string): Promise<void> {
  for (let dir = folder; ; dir = dirname(dir)) {
    // rmdir refuses a folder that is not empty: one that got a file meanwhile stays.
    if (!(await fs.rmdir(dir).then(() => true, () => false)) || dir === top || dir.length <= top.length) return;
  }
}
