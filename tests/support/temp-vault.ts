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
