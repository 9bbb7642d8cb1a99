import type { Logger } from "../../core/ports/logger";
import { redact as redactWith } from "../../core/util/redact";

/** Set `localStorage["krypton:debug"] = "1"` in the developer console to see Krypton's debug output. */
export const DEBUG_FLAG_KEY = "krypton:debug";

export interface ObsidianLoggerOptions {
  /** Debug, info and warn reach the console only while this returns true. */
  debugEnabled: () => boolean;
  /** Values that must never reach the console (API keys, the MCP token); replaced by "***". */
  secrets: () => string[];
  /** The console, injectable for tests. */
  sink?: Pick<Console, "debug" | "info" | "warn" | "error">;
}

/**
 * Quiet by default (Obsidian's guidelines: no console noise): only errors are printed unless the debug
 * flag is on. Everything printed passes through a redaction of the known secrets first.
 */
export function createObsidianLogger(options: ObsidianLoggerOptions): Logger {
  const sink = options.sink ?? console;
  const redact = (text: string): string => redactWith(text, options.secrets());
  const format = (message: string, data: unknown): string => {
    if (data === undefined) return redact(`[Krypton] ${message}`);
    return redact(`[Krypton] ${message} ${describe(data)}`);
  };
  return {
    debug: (m, d) => {
      if (options.debugEnabled()) sink.debug(format(m, d));
    },
    info: (m, d) => {
      if (options.debugEnabled()) sink.info(format(m, d));
    },
    warn: (m, d) => {
      if (options.debugEnabled()) sink.warn(format(m, d));
    },
    error: (m, d) => sink.error(format(m, d)),
  };
}

/** Reads the developer flag; false where localStorage is unavailable. */
export function debugFlagOn(): boolean {
  try {
    return window.localStorage.getItem(DEBUG_FLAG_KEY) === "1";
  } catch {
    return false;
  }
}

function describe(data: unknown): string {
  if (data instanceof Error) return `${data.name}: ${data.message}`;
  if (typeof data === "string") return data;
  try {
    return JSON.stringify(data);
  } catch {
    return String(data);
  }
}
