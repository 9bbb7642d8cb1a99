// An in-page Host for the real Krypton core: notes and .krypton/ state in memory, HTTP through the
// page's fetch (same origin as the page; the harness server forwards /api/* to the Ollama test server).
import type { DataDirPort } from "../../../src/core/ports/data-dir";
import type { Host } from "../../../src/core/ports/host";
import { clockFromTimers } from "../../../src/core/ports/clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { NoteExistsError, NoteNotFoundError, type NoteInfo, type VaultEvent, type VaultPort } from "../../../src/core/ports/vault";

export class MemoryVault implements VaultPort {
  readonly configDir = ".obsidian";
  private readonly files = new Map<string, { content: string; mtime: number }>();
  private readonly listeners = new Set<(e: VaultEvent) => void>();

  constructor(initial: Record<string, string>) {
    for (const [path, content] of Object.entries(initial)) this.files.set(path, { content, mtime: 1_700_000_000_000 });
  }
  async listNotes(): Promise<NoteInfo[]> {
    return [...this.files].filter(([p]) => p.endsWith(".md")).map(([path, f]) => ({ path, mtime: f.mtime, size: f.content.length }));
  }
  /** A memory vault has folders only as the paths of its files. */
  async listFolders(parent: string): Promise<string[]> {
    const prefix = parent ? `${parent}/` : "";
    const below = [...this.files.keys()].filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length).split("/"));
    return [...new Set(below.filter((levels) => levels.length > 1).map((levels) => levels[0]))];
  }
  async readNote(path: string): Promise<string> {
    const f = this.files.get(path);
    if (!f) throw new NoteNotFoundError(path);
    return f.content;
  }
  async exists(path: string): Promise<boolean> {
    return this.files.has(path);
  }
  async createNote(path: string, content: string): Promise<void> {
    if (this.files.has(path)) throw new NoteExistsError(path);
    this.files.set(path, { content, mtime: Date.now() });
    for (const l of this.listeners) l({ type: "create", path });
  }
  async appendToNote(path: string, text: string): Promise<void> {
    const file = this.files.get(path);
    if (!file) throw new NoteNotFoundError(path);
    this.files.set(path, { content: file.content + text, mtime: Date.now() });
  }
  async processNote(path: string, fn: (current: string) => string): Promise<void> {
    const file = this.files.get(path);
    if (!file) throw new NoteNotFoundError(path);
    this.files.set(path, { content: fn(file.content), mtime: Date.now() });
  }
  async readConfigFile(): Promise<string | null> {
    return null;
  }
  onChange(listener: (e: VaultEvent) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  paths(): string[] {
    return [...this.files.keys()];
  }
}

export class MemoryDataDir implements DataDirPort {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  async read(path: string, range?: { offset: number; length: number }): Promise<Uint8Array | null> {
    const data = this.files.get(path)?.data;
    if (!data) return null;
    return range ? data.slice(range.offset, range.offset + range.length) : data.slice();
  }
  async readText(path: string): Promise<string | null> {
    const f = this.files.get(path);
    return f ? new TextDecoder().decode(f.data) : null;
  }
  async writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
    this.files.set(path, { data: typeof data === "string" ? new TextEncoder().encode(data) : data.slice(), mtime: Date.now() });
  }
  async createExclusive(path: string, data: string): Promise<boolean> {
    if (this.files.has(path)) return false;
    await this.writeAtomic(path, data);
    return true;
  }
  async remove(path: string): Promise<void> {
    this.files.delete(path);
  }
  async list(dir: string): Promise<string[]> {
    const prefix = dir ? `${dir.replace(/\/$/, "")}/` : "";
    const names = new Set<string>();
    for (const p of this.files.keys()) if (p.startsWith(prefix) && !p.slice(prefix.length).includes("/")) names.add(p.slice(prefix.length));
    return [...names];
  }
  async mtime(path: string): Promise<number | null> {
    return this.files.get(path)?.mtime ?? null;
  }
  async size(path: string): Promise<number | null> {
    return this.files.get(path)?.data.length ?? null;
  }
}

export function createMemoryHost(notes: Record<string, string>): Host & { vault: MemoryVault } {
  return {
    vault: new MemoryVault(notes),
    data: new MemoryDataDir(),
    fetch: (input, init) => window.fetch(input, init),
    clock: clockFromTimers(
      () => Date.now(),
      (fn, ms) => {
        const id = window.setTimeout(fn, ms);
        return () => window.clearTimeout(id);
      },
    ),
    logger: silentLogger,
    platform: { kind: "obsidian", mobile: false },
  };
}
