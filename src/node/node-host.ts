import type { Host } from "../core/ports/host";
import type { FetchLike } from "../core/ports/http";
import type { Logger } from "../core/ports/logger";
import { sameOriginRedirects } from "../core/providers/redirect-policy";
import { dataDirOf, FsDataDir } from "./fs-data-dir";
import { FsVault } from "./fs-vault";
import { nodeClock } from "./node-clock";
import { createNodeProcess } from "./node-process";
import { createStderrLogger } from "./node-logger";

export interface NodeHostOptions {
  logger?: Logger;
  fetch?: FetchLike;
  configDir?: string;
  /** What this process is, as named in the index lock it takes ("krypton index"). */
  processLabel?: string;
}

/** The core's ports on Node: the vault folder, <vault>/.krypton, global fetch, Node timers, stderr. */
export function createNodeHost(vaultRoot: string, options: NodeHostOptions = {}): Host & { vault: FsVault; data: FsDataDir } {
  const logger = options.logger ?? createStderrLogger("warn");
  return {
    // Opening a vault sweeps the temp files an earlier process left when it was killed mid-write.
    vault: new FsVault(vaultRoot, { configDir: options.configDir, sweepLeftovers: { logger, now: () => nodeClock.now() } }),
    data: new FsDataDir(dataDirOf(vaultRoot)),
    fetch: sameOriginRedirects(options.fetch ?? ((input, init) => fetch(input, init))),
    clock: nodeClock,
    logger,
    platform: { kind: "cli", mobile: false },
    process: createNodeProcess(dataDirOf(vaultRoot), options.processLabel ?? "krypton"),
  };
}
