import { promises as fs } from "node:fs";
import * as path from "node:path";
import type { VaultLocation } from "../core/tools/tool";
import { VaultPathError } from "../core/notes/vault-path-policy";
import { isMissing } from "./fs-errors";

/**
 * The served vault for the tools on Node hosts (CLI, desktop plugin): the pure path policy in core
 * refuses `..` and friends, and this adds what only the file system knows: a symlink inside the vault
 * that points outside it. Paths that do not exist yet (a note about to be created) are judged by their
 * nearest existing folder. A link swapped in between check and use is not covered (no O_NOFOLLOW here).
 */
export function nodeVaultLocation(vaultRoot: string): VaultLocation {
  const root = path.resolve(vaultRoot);
  let realRoot: Promise<string> | undefined;
  return {
    root,
    resolve: (absolutePath) => fs.realpath(path.resolve(absolutePath)).catch(() => path.resolve(absolutePath)),
    async assertInside(relativePath) {
      realRoot ??= fs.realpath(root).catch(() => root);
      await assertNoSymlinkEscape(root, await realRoot, relativePath);
    },
  };
}

async function assertNoSymlinkEscape(root: string, realRoot: string, relativePath: string): Promise<void> {
  let candidate = path.join(root, ...relativePath.split("/"));
  for (;;) {
    if (candidate === root || !candidate.startsWith(root + path.sep)) return;
    try {
      const real = await fs.realpath(candidate);
      if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
        throw new VaultPathError(`The path leads outside the vault through a symbolic link: ${JSON.stringify(relativePath)}`);
      }
      return;
    } catch (err) {
      if (err instanceof VaultPathError) throw err;
      if (!isMissing(err)) throw new VaultPathError(`The path cannot be checked: ${JSON.stringify(relativePath)}`);
      // A dangling link could be followed by a later create: refuse it rather than judge its parent.
      const isLink = await fs.lstat(candidate).then(
        (s) => s.isSymbolicLink(),
        () => false,
      );
      if (isLink) throw new VaultPathError(`The path goes through a broken symbolic link: ${JSON.stringify(relativePath)}`);
      candidate = path.dirname(candidate);
    }
  }
}
