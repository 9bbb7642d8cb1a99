import type { Clock } from "./clock";
import type { DataDirPort } from "./data-dir";
import type { FetchLike } from "./http";
import type { Logger } from "./logger";
import type { ProcessPort } from "./process";
import type { VaultPort } from "./vault";

/** Everything the core needs from the world, supplied by a host (Obsidian plugin, CLI, tests). */
export interface Host {
  vault: VaultPort;
  data: DataDirPort;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  platform: { kind: "obsidian" | "cli"; mobile: boolean };
  /** This process and its neighbours, for honest index locks; absent where there are no processes (mobile). */
  process?: ProcessPort;
}
