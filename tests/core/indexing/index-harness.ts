import { join } from "node:path";
import { silentLogger } from "../../../src/core/ports/logger";
import type { Embedder } from "../../../src/core/ports/embedder";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { VaultIndex, type VaultIndexOptions } from "../../../src/core/indexing/vault-index";
import { createNodeHost } from "../../../src/node/node-host";
import { HashEmbedder } from "../../support/hash-embedder";
import { makeTempVault, type TempVault } from "../../support/temp-vault";

/** Tiny waits so failure paths run fast. */
export const FAST: VaultIndexOptions = {
  debounceMs: 5,
  retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
  embedRetryAfterMs: 0,
  queryTimeoutMs: 2_000,
  lock: { staleMs: 60_000, heartbeatMs: 60_000 },
};

export interface Harness {
  vault: TempVault;
  embedder: HashEmbedder;
  settings: KryptonSettings;
  /** A fresh VaultIndex on the vault (a "restart"), with the given embedder (default: the harness's). */
  open(options?: { embedder?: Embedder | null; settings?: Partial<KryptonSettings>; index?: VaultIndexOptions }): VaultIndex;
  cleanup(): Promise<void>;
}

/** A temp vault plus VaultIndex instances on it; every index opened here is closed by cleanup(). */
export async function makeHarness(files: Record<string, string>, embedder = new HashEmbedder({ dim: 32, batchSize: 4 })): Promise<Harness> {
  const vault = await makeTempVault(files);
  const opened: VaultIndex[] = [];
  const settings: KryptonSettings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [] };
  return {
    vault,
    embedder,
    settings,
    open(options = {}) {
      const host = createNodeHost(vault.root, { logger: silentLogger });
      const chosen = options.embedder === undefined ? embedder : options.embedder;
      const merged = { ...settings, ...options.settings };
      const index = new VaultIndex({ host, settings: () => merged, embedder: () => chosen, options: { ...FAST, ...options.index } });
      opened.push(index);
      return index;
    },
    async cleanup() {
      for (const index of opened) await index.close();
      await vault.cleanup();
    },
  };
}

/** A long note: `paragraphs` distinct paragraphs under a few headings, each about 1,000 characters: a chunk of its own at maxChars 1500. */
export function longNote(title: string, paragraphs: number, seed = "topic"): string {
  const out = [`# ${title}`, ""];
  for (let i = 0; i < paragraphs; i++) {
    if (i % 4 === 0) out.push(`## Section ${i / 4 + 1}`, "");
    out.push(`Paragraph ${i} about ${seed} ${i}: ` + `${seed}${i} word${i} alpha${i % 7} beta${i % 5} `.repeat(36).trim(), "");
  }
  return out.join("\n");
}

/** Two short notes and a long one (several chunks): the vault whose saved index the recovery and structure tests damage. */
export const SMALL_VAULT: Record<string, string> = {
  "A.md": "# Alpha\n\nApples grow on trees in the orchard.",
  "B.md": "# Bravo\n\nBananas ripen in the sun.",
  "Long.md": longNote("Long", 8),
};

/** The vault's index folder (manifest, shards, lock). */
export const indexDir = (h: Harness): string => join(h.vault.root, ".krypton", "index");

/** Indexes the vault, saves and closes the index, and clears the embedder's log: what the next start finds. Returns the chunk count. */
export async function indexAndClose(h: Harness): Promise<number> {
  const index = h.open();
  const { chunks } = await index.open();
  await index.close();
  h.embedder.reset();
  return chunks;
}
