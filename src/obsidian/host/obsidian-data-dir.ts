import { normalizePath, type DataAdapter } from "obsidian";
import { dataDirWriteError, FolderInTheWayError, type ByteRange, type DataDirPort } from "../../core/ports/data-dir";
import { KRYPTON_DIR } from "./obsidian-vault";

const TEMP_SUFFIX = ".tmp";

/**
 * Reads of part of a file, by its vault path; null when the file does not exist. Obsidian's adapter reads
 * whole files only, so without these every search hit's text and every shard loaded read its whole shard
 * file. The desktop host provides them through Node's fs (obsidian-host.ts); mobile has none. No file cache
 * stands in for them on mobile: core asks for each shard's texts once per use and holds the last few
 * (ShardTextBuffers), and whole files kept here would weigh vectors and postings too.
 */
export interface FileRanges {
  read(path: string, range: ByteRange): Promise<Uint8Array | null>;
  readInto(path: string, offset: number, target: Uint8Array): Promise<number | null>;
}

/**
 * DataDirPort over Obsidian's DataAdapter for "<vault>/.krypton/". The Vault API does not list
 * dot-folders, so this goes through app.vault.adapter, which works on desktop and mobile alike.
 *
 * Atomic write = write a temp file, then adapter.rename onto the target. Obsidian's rename refuses an
 * existing destination ("Destination file already exists!"), so replacing a file is remove + rename:
 * a crash in that instant leaves the target missing (the complete temp file stays beside it). Readers
 * then see "no file", which the index treats like any missing or corrupt partition (rebuild with a
 * notice), so the tradeoff costs a rebuild in the worst case and never a half-written file.
 */
export class ObsidianDataDir implements DataDirPort {
  /** Present when the host can read part of a file in place (desktop): see FileRanges. */
  readonly readInto?: (path: string, offset: number, target: Uint8Array) => Promise<number | null>;

  constructor(
    private readonly adapter: DataAdapter,
    private readonly root: string = KRYPTON_DIR,
    private readonly ranges?: FileRanges,
  ) {
    if (ranges) this.readInto = async (path, offset, target) => ranges.readInto(this.resolve(path), offset, target);
  }

  async read(path: string, range?: ByteRange): Promise<Uint8Array | null> {
    const full = this.resolve(path);
    if (range && this.ranges) {
      const ranges = this.ranges;
      return this.namingFolder(full, () => ranges.read(full, range));
    }
    if (!(await this.adapter.exists(full))) return null;
    try {
      const bytes = new Uint8Array(await this.adapter.readBinary(full));
      // Obsidian's adapter reads whole files only.
      return range ? bytes.slice(range.offset, range.offset + range.length) : bytes;
    } catch (err) {
      const there = await this.adapter.stat(full);
      if (!there) return null; // removed meanwhile
      // A folder at its path said as such (EISDIR names no path).
      throw there.type === "folder" ? new FolderInTheWayError(full, false) : err;
    }
  }

  async readText(path: string): Promise<string | null> {
    const full = this.resolve(path);
    if (!(await this.adapter.exists(full))) return null;
    try {
      return await this.adapter.read(full);
    } catch (err) {
      const there = await this.adapter.stat(full);
      if (!there) return null; // removed meanwhile
      // A folder at its path said as such (EISDIR names no path).
      throw there.type === "folder" ? new FolderInTheWayError(full, false) : err;
    }
  }

  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    const full = this.resolve(path);
    await this.ensureParent(full);
    const temp = `${full}.${randomTag()}${TEMP_SUFFIX}`;
    if (typeof data === "string") await this.adapter.write(temp, data);
    else await this.adapter.writeBinary(temp, toArrayBuffer(data));
    try {
      await this.adapter.rename(temp, full);
    } catch (err) {
      const there = await this.adapter.stat(full);
      if (!there) {
        await this.removeQuietly(temp);
        throw err;
      }
      // Only when the target exists (see the class comment for the tradeoff).
      try {
        if (there.type === "folder") await this.removeEmptyFolder(full);
        else await this.adapter.remove(full);
      } catch (removeErr) {
        await this.removeQuietly(temp);
        throw removeErr;
      }
      await this.adapter.rename(temp, full);
    }
  }

  /**
   * A folder where Krypton keeps a file: an empty one holds nothing and is only in the way (every save would
   * fail on it forever), so it goes (never recursively); one with files in it is left alone and named (the
   * rule FsDataDir follows, FolderInTheWayError).
   */
  private async removeEmptyFolder(full: string): Promise<void> {
    try {
      await this.adapter.rmdir(full, false);
    } catch (err) {
      const listed = await this.adapter.list(full).catch(() => null);
      if (listed && listed.files.length + listed.folders.length > 0) throw new FolderInTheWayError(full, true);
      throw err;
    }
  }

  /** A ranged read (Node's fs on desktop), with a folder at its path said as such. */
  private async namingFolder<T>(full: string, reading: () => Promise<T>): Promise<T> {
    try {
      return await reading();
    } catch (err) {
      if ((await this.adapter.stat(full))?.type === "folder") throw new FolderInTheWayError(full, false);
      throw err;
    }
  }

  /**
   * exists + write: the adapter offers no exclusive create. Another writer could slip in between; this
   * is only used for advisory locks, which also carry a timestamp and expire.
   */
  async createExclusive(path: string, data: string): Promise<boolean> {
    const full = this.resolve(path);
    if (await this.adapter.exists(full)) return false;
    await this.ensureParent(full);
    await this.adapter.write(full, data);
    return true;
  }

  async remove(path: string): Promise<void> {
    await this.removeQuietly(this.resolve(path));
  }

  async list(dir: string): Promise<string[]> {
    const full = dir === "" || dir === "." ? this.root : this.resolve(dir);
    if (!(await this.adapter.exists(full))) return [];
    const listed = await this.adapter.list(full);
    // Temp files left by a crash are listed too, so the index can clean them up (as FsDataDir does).
    return listed.files.map((f) => f.slice(f.lastIndexOf("/") + 1)).sort();
  }

  async mtime(path: string): Promise<number | null> {
    const stat = await this.adapter.stat(this.resolve(path));
    return stat && stat.type === "file" ? stat.mtime : null;
  }

  async size(path: string): Promise<number | null> {
    const stat = await this.adapter.stat(this.resolve(path));
    return stat && stat.type === "file" ? stat.size : null;
  }

  async kind(path: string): Promise<"file" | "dir" | null> {
    const stat = await this.adapter.stat(this.resolve(path));
    return stat ? (stat.type === "folder" ? "dir" : "file") : null;
  }

  private resolve(path: string): string {
    const parts = path.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.length === 0 || parts.includes("..")) throw new Error(`Invalid data path: ${path}`);
    return normalizePath(`${this.root}/${parts.join("/")}`);
  }

  private async ensureParent(full: string): Promise<void> {
    const parts = full.split("/").slice(0, -1);
    let current = "";
    for (const part of parts) {
      current = current ? `${current}/${part}` : part;
      const stat = await this.adapter.stat(current);
      // A file where a folder must be (a note named ".krypton"): said plainly, not as the adapter's ENOTDIR.
      if (stat?.type === "file") throw dataDirWriteError(this.root, { fileInTheWay: current });
      if (!stat) await this.adapter.mkdir(current);
    }
  }

  private async removeQuietly(full: string): Promise<void> {
    try {
      const stat = await this.adapter.stat(full);
      // Never recursive: only an empty folder (a damaged lock) goes this way.
      if (stat?.type === "folder") await this.adapter.rmdir(full, false);
      else if (stat) await this.adapter.remove(full);
    } catch (err) {
      if (await this.adapter.exists(full)) throw err;
    }
  }
}

function toArrayBuffer(data: Uint8Array): ArrayBuffer {
  return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
}

function randomTag(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
