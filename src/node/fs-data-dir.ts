import { accessSync, constants, promises as fs, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { randomBytes } from "node:crypto";
import { dataDirWriteError, FolderInTheWayError, type ByteRange, type DataDirPort } from "../core/ports/data-dir";
import { diskRanges } from "./file-ranges";
import { deniedWrite, isCode, orMissing } from "./fs-errors";

/** Krypton's machine-state folder (<vault>/.krypton) on disk. Writes are temp file + rename. */
export class FsDataDir implements DataDirPort {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    const full = this.full(path);
    if (range) return namingFolder(full, diskRanges.read(full, range));
    const buf = await namingFolder(full, orMissing(fs.readFile(full)));
    return buf && new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  readInto(path: string, offset: number, target: Uint8Array): Promise<number | null> {
    return diskRanges.readInto(this.full(path), offset, target);
  }

  async readText(path: string): Promise<string | null> {
    const full = this.full(path);
    return namingFolder(full, orMissing(fs.readFile(full, "utf8")));
  }

  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    const full = this.full(path);
    await this.makeParent(full);
    const temp = `${full}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    try {
      await fs.writeFile(temp, data);
      await renameOverEmptyFolder(temp, full);
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => undefined);
      throw await this.writeError(err, full);
    }
  }

  async createExclusive(path: string, data: string): Promise<boolean> {
    const full = this.full(path);
    await this.makeParent(full);
    try {
      await fs.writeFile(full, data, { flag: "wx" });
      return true;
    } catch (err) {
      if (isCode(err, "EEXIST")) return false;
      throw await this.writeError(err, full);
    }
  }

  async remove(path: string): Promise<void> {
    const full = this.full(path);
    try {
      await fs.rm(full, { force: true });
    } catch (err) {
      // Never recursive: only an empty folder (a damaged lock) goes this way.
      if (isCode(err, "ERR_FS_EISDIR") || isCode(err, "EISDIR")) await fs.rmdir(full);
      else throw err;
    }
  }

  async size(path: string): Promise<number | null> {
    return (await orMissing(fs.stat(this.full(path))))?.size ?? null;
  }

  async kind(path: string): Promise<"file" | "dir" | null> {
    try {
      const info = await fs.stat(this.full(path));
      return info.isDirectory() ? "dir" : "file";
    } catch {
      return null;
    }
  }

  async list(dir: string): Promise<string[]> {
    return (await orMissing(fs.readdir(this.full(dir))))?.sort() ?? [];
  }

  async mtime(path: string): Promise<number | null> {
    try {
      return (await fs.stat(this.full(path))).mtimeMs;
    } catch {
      return null;
    }
  }

  private async makeParent(full: string): Promise<void> {
    try {
      await fs.mkdir(dirname(full), { recursive: true });
    } catch (err) {
      throw await this.writeError(err, full);
    }
  }

  /**
   * A problem the user can fix, in their words and naming the folder: "cannot write /notes/.krypton
   * (permission denied)", or "(it is a file, not a folder: move or rename it)".
   */
  private async writeError(err: unknown, full: string): Promise<unknown> {
    if (err instanceof FolderInTheWayError) return err;
    let why: { fileInTheWay: string } | string | null = deniedWrite(err);
    // A file where a folder must be (say a note named ".krypton"): mkdir fails with ENOTDIR, or EEXIST when it is the parent itself.
    if (!why && (isCode(err, "ENOTDIR") || isCode(err, "EEXIST"))) {
      const file = await this.fileInTheWay(full);
      if (file) why = { fileInTheWay: file };
    }
    if (!why) return err;
    const wrapped = dataDirWriteError(this.dir, why) as Error & { code?: string };
    wrapped.code = (err as { code?: string }).code;
    return wrapped;
  }

  /** The first folder on the way from .krypton to `full` that is a file instead, or null. */
  private async fileInTheWay(full: string): Promise<string | null> {
    let dir = this.dir;
    for (const part of ["", ...relative(this.dir, dirname(full)).split(sep).filter(Boolean)]) {
      dir = join(dir, part);
      const info = await fs.stat(dir).catch(() => null);
      if (!info) return null;
      if (!info.isDirectory()) return dir;
    }
    return null;
  }

  private full(path: string): string {
    const full = resolve(this.dir, path);
    if (full !== this.dir && !full.startsWith(this.dir + sep)) throw new Error(`Path is outside .krypton: ${path}`);
    return full;
  }
}

/** A read of Krypton's file, with a folder at its path said as such (EISDIR names no path). */
async function namingFolder<T>(full: string, reading: Promise<T>): Promise<T> {
  try {
    return await reading;
  } catch (err) {
    throw isCode(err, "EISDIR") ? new FolderInTheWayError(full, false) : err;
  }
}

/**
 * rename(temp, full), also when a folder stands at `full`: an empty one holds nothing and is only in the way
 * (every save would fail on it forever), so it is removed and the rename done. One with files in it is never
 * removed (it is not Krypton's to judge): FolderInTheWayError says where it is.
 */
async function renameOverEmptyFolder(temp: string, full: string): Promise<void> {
  try {
    await fs.rename(temp, full);
    return;
  } catch (err) {
    if (!isCode(err, "EISDIR")) throw err;
  }
  try {
    await fs.rmdir(full);
  } catch (err) {
    if (isCode(err, "ENOTEMPTY") || isCode(err, "EEXIST")) throw new FolderInTheWayError(full, true);
    throw err;
  }
  await fs.rename(temp, full);
}

export function dataDirOf(vaultRoot: string): string {
  return join(resolve(vaultRoot), ".krypton");
}

/**
 * Why Krypton could not save an index in `dir` (the vault's .krypton), found without writing: it is a file,
 * or it (or the vault, when it does not exist yet) cannot be written. Null when a write may succeed. For
 * processes that never write (a search) and would otherwise send the user to `krypton index` for nothing.
 */
export function dataDirWriteProblem(dir: string): string | null {
  const full = resolve(dir);
  const info = statSync(full, { throwIfNoEntry: false });
  if (info && !info.isDirectory()) return dataDirWriteError(full, { fileInTheWay: full }).message;
  try {
    accessSync(info ? full : dirname(full), constants.W_OK);
    return null;
  } catch (err) {
    const why = deniedWrite(err);
    return why ? dataDirWriteError(full, why).message : null;
  }
}

