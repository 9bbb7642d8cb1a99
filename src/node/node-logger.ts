import type { Logger } from "../core/ports/logger";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

/** Logs to stderr (stdout is for results, so `--json` output stays pipeable). */
export function createStderrLogger(level: LogLevel = "warn"): Logger {
  const write = (at: LogLevel, message: string, data?: unknown) => {
    if (order[at] < order[level]) return;
    const detail = data === undefined ? "" : ` ${data instanceof Error ? data.message : safeJson(data)}`;
    process.stderr.write(`krypton ${at}: ${message}${detail}\n`);
  };
  return {
    debug: (m, d) => write("debug", m, d),
    info: (m, d) => write("info", m, d),
    warn: (m, d) => write("warn", m, d),
    error: (m, d) => write("error", m, d),
  };
}

function safeJson(data: unknown): string {
  try {
    return JSON.stringify(data);
  } catch {
    return String(data);
  }
}
