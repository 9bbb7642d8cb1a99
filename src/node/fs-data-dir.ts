import { promises as fs } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { randomBytes } from "node:crypto";
import type { DataDirPort } from "../core/ports/data-dir";
import { isCode } from "./fs-vault";

/** Krypton's machine-state folder (<vault>/.krypton) on disk. Writes are temp file + rename. */
export class FsDataDir implements DataDirPort {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  async read(path: string): Promise<Uint8Array | null> {
    try {
      const buf = await fs.readFile(this.full(path));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if (isCode(err, "ENOENT")) return null;
      throw err;
    }
  }

  async readText(path: string): Promise<string | null> {
    try {
      return await fs.readFile(this.full(path), "utf8");
    } catch (err) {
      if (isCode(err, "ENOENT")) return null;
      throw err;
    }
  }

  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    const full = this.full(path);
    await fs.mkdir(dirname(full), { recursive: true });
    const temp = `${full}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
    try {
      await fs.writeFile(temp, data);
      await fs.rename(temp, full);
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
  }

  async createExclusive(path: string, data: string): Promise<boolean> {
    const full = this.full(path);
    await fs.mkdir(dirname(full), { recursive: true });
    try {
      await fs.writeFile(full, data, { flag: "wx" });
      return true;
    } catch (err) {
      if (isCode(err, "EEXIST")) return false;
      throw err;
    }
  }

  async remove(path: string): Promise<void> {
    await fs.rm(this.full(path), { force: true });
  }

  async list(dir: string): Promise<string[]> {
    try {
      return (await fs.readdir(this.full(dir))).sort();
    } catch (err) {
      if (isCode(err, "ENOENT") || isCode(err, "ENOTDIR")) return [];
      throw err;
    }
  }

  async mtime(path: string): Promise<number | null> {
    try {
      return (await fs.stat(this.full(path))).mtimeMs;
    } catch {
      return null;
    }
  }

  private full(path: string): string {
    const full = resolve(this.dir, path);
    if (full !== this.dir && !full.startsWith(this.dir + sep)) throw new Error(`Path is outside .krypton: ${path}`);
    return full;
  }
}

export function dataDirOf(vaultRoot: string): string {
  return join(resolve(vaultRoot), ".krypton");
}
