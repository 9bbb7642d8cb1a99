import { FileSystemAdapter, Notice, Platform, requestUrl, type App, type Plugin } from "obsidian";
import type { Host } from "../../core/ports/host";
import type { Logger } from "../../core/ports/logger";
import type { VaultLocation } from "../../core/tools/tool";
import { createObsidianClock } from "./obsidian-clock";
import { ObsidianDataDir, type FileRanges } from "./obsidian-data-dir";
import { createObsidianHttp, ollamaCorsNotice } from "./obsidian-fetch";
import { ObsidianVault } from "./obsidian-vault";

export interface ObsidianHostOptions {
  logger: Logger;
  /** The configured Ollama URL: a CORS fallback for it earns the one-time "how to stream" notice. */
  ollamaUrl: () => string;
}

/** The core's Host inside Obsidian: vault, .krypton data folder, HTTP, clock and logger. */
export function createObsidianHost(plugin: Plugin, options: ObsidianHostOptions): Host {
  const { app } = plugin;
  const pageOrigin = window.location.origin;
  const fetch = createObsidianHttp({
    pageFetch: (input, init) => window.fetch(input, init),
    requestUrl: (request) => requestUrl(request),
    pageOrigin,
    onCorsFallback: (origin) => {
      if (origin === originOf(options.ollamaUrl())) new Notice(ollamaCorsNotice(origin, pageOrigin), 15_000);
      else options.logger.debug(`${origin} refused CORS; using requestUrl (no streaming)`);
    },
  });
  const host: Host = {
    vault: new ObsidianVault(app, plugin, { assertInside: desktopSymlinkGuard(app) }),
    data: new ObsidianDataDir(app.vault.adapter, undefined, desktopFileRanges(app)),
    fetch,
    clock: createObsidianClock(),
    logger: options.logger,
    platform: { kind: "obsidian", mobile: Platform.isMobile },
  };
  // On desktop the index lock records Obsidian's pid and checks a holder's, as the CLI does (Node's process
  // API exists there). Loaded on demand, like the MCP bridge; mobile keeps the heartbeat-only lock.
  const adapter = app.vault.adapter;
  if (Platform.isDesktopApp && adapter instanceof FileSystemAdapter) {
    void import("../../node/node-process")
      .then(({ createNodeProcess }) => {
        host.process = createNodeProcess(`${adapter.getBasePath()}/.krypton`, "Obsidian");
      })
      .catch((err) => options.logger.debug("Process checks for the index lock are unavailable", err));
  }
  return host;
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * On desktop the vault is a folder and may hold symbolic links leading out of it: the same Node check the
 * CLI and the tools use (loaded lazily, so mobile never touches Node). Undefined where there is no folder.
 */
function desktopSymlinkGuard(app: App): ((path: string) => Promise<void>) | undefined {
  const adapter = app.vault.adapter;
  if (!Platform.isDesktopApp || !(adapter instanceof FileSystemAdapter)) return undefined;
  let location: Promise<VaultLocation> | undefined;
  return async (path) => {
    location ??= import("../../node/path-symlink-guard").then((m) => m.nodeVaultLocation(adapter.getBasePath()));
    await (await location).assertInside?.(path);
  };
}

/**
 * On desktop the data folder is on disk: reads of part of a shard file (a hit's texts, a shard's search
 * part) go through Node's fs there, as in the CLI, instead of reading the whole file. Loaded on first use.
 */
function desktopFileRanges(app: App): FileRanges | undefined {
  const adapter = app.vault.adapter;
  if (!Platform.isDesktopApp || !(adapter instanceof FileSystemAdapter)) return undefined;
  let node: Promise<typeof import("../../node/file-ranges")> | undefined;
  const disk = async () => (await (node ??= import("../../node/file-ranges"))).diskRanges;
  return {
    read: async (path, range) => (await disk()).read(adapter.getFullPath(path), range),
    readInto: async (path, offset, target) => (await disk()).readInto(adapter.getFullPath(path), offset, target),
  };
}
