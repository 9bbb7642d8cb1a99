import type { Clock } from "./clock";
import type { DataDirPort } from "./data-dir";
import type { FetchLike } from "./http";
import type { Logger } from "./logger";
import type { VaultPort } from "./vault";

/** Everything the core needs from the world, supplied by a host (Obsidian plugin, CLI, tests). */
export interface Host {
  vault: VaultPort;
  data: DataDirPort;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  platform: { kind: "obsidian" | "cli"; mobile: boolean };
}
