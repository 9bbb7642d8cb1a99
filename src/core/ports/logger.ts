import { redact, redactValue } from "../util/redact";

/** Never pass API keys or tokens to a logger. */
export interface Logger {
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that passes every message and its data through redact() with the secrets known at that moment. */
export function redactingLogger(logger: Logger, secrets: () => readonly (string | undefined)[]): Logger {
  const clean = (message: string, data: unknown): [string, unknown] => {
    const known = secrets();
    return [redact(message, known), redactValue(data, known)];
  };
  return {
    debug: (m, d) => logger.debug(...clean(m, d)),
    info: (m, d) => logger.info(...clean(m, d)),
    warn: (m, d) => logger.warn(...clean(m, d)),
    error: (m, d) => logger.error(...clean(m, d)),
  };
}
