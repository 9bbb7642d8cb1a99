// Loads the real plugin (src/main.ts) into the Obsidian stand-in on a real temp vault.
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { App, type Plugin as StubPlugin, type PluginManifest } from "../support/obsidian-stub";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { tempDirForFile } from "../support/temp-dirs";
import KryptonPlugin from "../../src/main";
import type { KryptonServices } from "../../src/obsidian/plugin-services";
import type { KryptonSettings } from "../../src/core/settings";

export const MANIFEST: PluginManifest = { id: "krypton", name: "Krypton", version: "0.1.0", minAppVersion: "1.5.0" };

/** The real plugin, seen with the stand-in's extras (what it added: status bar items, ribbon icons, tabs). */
export type PluginUnderTest = KryptonPlugin & Pick<StubPlugin, "statusBarItems" | "ribbonIcons" | "settingTabs" | "unload">;

export interface LoadedPlugin {
  temp: TempVault;
  app: App;
  plugin: PluginUnderTest;
  services: KryptonServices;
  /** Obsidian finishes restoring the workspace; waits until the index is open and idle. */
  layoutReady(): Promise<void>;
  /** Waits for queued vault events and embedding to be applied. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export interface LoadOptions {
  /** Written to data.json before loading, as a previous session would have left it. */
  data?: Partial<KryptonSettings>;
  /** false plays an Obsidian older than 1.11.4 (no app.secretStorage). */
  secretStorage?: boolean;
  /** Secrets already in Obsidian's keychain (id → value). */
  secrets?: Record<string, string>;
  /** Files written (under the vault) before Obsidian opens it. */
  extraFiles?: Record<string, string>;
  /** Runs on the vault folder before Obsidian opens (scans) it: symlinks, binary files. */
  beforeOpen?: (root: string) => Promise<void>;
  /** A .krypton folder from indexInEarlierSession, put in the vault first: the index loads what was saved. */
  savedIndex?: string;
  /** Play a disk that ignores case (macOS, Windows): see the stand-in's FileSystemAdapter. */
  caseInsensitiveDisk?: boolean;
}

export async function loadPlugin(notes: Record<string, string>, options: LoadOptions = {}): Promise<LoadedPlugin> {
  const temp = await makeTempVault({ ...notes, ...(options.extraFiles ?? {}) });
  const settings: Partial<KryptonSettings> = { embeddingProvider: "none", ...options.data };
  await temp.write(".obsidian/plugins/krypton/data.json", JSON.stringify(settings));
  if (options.savedIndex) await fs.cp(options.savedIndex, join(temp.root, ".krypton"), { recursive: true });
  await options.beforeOpen?.(temp.root);
  const app = new App(temp.root, { secretStorage: options.secretStorage, caseInsensitiveDisk: options.caseInsensitiveDisk });
  for (const [id, value] of Object.entries(options.secrets ?? {})) app.secretStorage?.setSecret(id, value);
  const plugin = new KryptonPlugin(app as never, MANIFEST as never) as PluginUnderTest;
  await (plugin as unknown as { loadAndWait(): Promise<void> }).loadAndWait();
  const services = (plugin as unknown as { services: KryptonServices }).services;
  const settle = async () => {
    await services.indexSettled();
    await services.core.index.idle();
  };
  return {
    temp,
    app,
    plugin,
    services,
    async layoutReady() {
      app.workspace.triggerLayoutReady();
      await settle();
    },
    settle,
    async close() {
      plugin.unload();
      await services.close();
      await temp.cleanup();
    },
  };
}

/**
 * Indexes `notes` in a first plugin session and keeps the .krypton folder it saved (until the test file
 * ends): `loadPlugin(notes, { savedIndex })` then starts on a vault indexed in an earlier session.
 */
export async function indexInEarlierSession(notes: Record<string, string>): Promise<string> {
  const first = await loadPlugin(notes);
  try {
    await first.layoutReady();
    const saved = join(tempDirForFile("krypton-saved-index-"), ".krypton");
    await fs.cp(join(first.temp.root, ".krypton"), saved, { recursive: true });
    return saved;
  } finally {
    await first.close();
  }
}

/** What `find` returns once it returns something (polled every 10 ms, `ms` at most): work the plugin does in the background. */
export async function waitFor<T>(find: () => T | null | undefined | false, what = "condition", ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    const found = find();
    if (found) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  const found = find();
  if (found) return found;
  throw new Error(`not found in time: ${what}`);
}
