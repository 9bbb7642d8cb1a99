import { mkdtempSync, promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface TempVault {
  /** Absolute path of the vault folder. */
  root: string;
  write(path: string, content: string): Promise<void>;
  read(path: string): Promise<string>;
  exists(path: string): Promise<boolean>;
  remove(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** A real vault folder under the OS temp dir, filled with the given notes (vault-relative path → content). */
export async function makeTempVault(files: Record<string, string> = {}): Promise<TempVault> {
  const root = mkdtempSync(join(tmpdir(), "krypton-vault-"));
  const abs = (p: string) => join(root, ...p.split("/"));
  const vault: TempVault = {
    root,
    async write(path, content) {
      await fs.mkdir(dirname(abs(path)), { recursive: true });
      await fs.writeFile(abs(path), content, "utf8");
    },
    read: (path) => fs.readFile(abs(path), "utf8"),
    exists: (path) =>
      fs.access(abs(path)).then(
        () => true,
        () => false,
      ),
    remove: (path) => fs.rm(abs(path), { force: true, recursive: true }),
    async rename(from, to) {
      await fs.mkdir(dirname(abs(to)), { recursive: true });
      await fs.rename(abs(from), abs(to));
    },
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  };
  for (const [path, content] of Object.entries(files)) await vault.write(path, content);
  return vault;
}

/**
 * Every file under a vault folder except Krypton's own .krypton, vault-relative path → content, read byte
 * for byte (latin1): compare one taken before and one after to prove nothing else changed.
 */
export async function snapshotFiles(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string, prefix: string) => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      if (entry.name === ".krypton") continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(join(dir, entry.name), rel);
      else out[rel] = await fs.readFile(join(dir, entry.name), "latin1");
    }
  };
  await walk(root, "");
  return out;
}
