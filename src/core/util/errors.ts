/**
 * The one abort error and the one way to turn any thrown value into a message a user can read.
 * Every stop (the user's Stop, Ctrl+C, a closed MCP request) surfaces as AbortedError so callers test it
 * with one function; `isAbortError` also accepts the platform's DOMException("AbortError") that fetch throws.
 */
export class AbortedError extends Error {
  constructor(message = "Stopped") {
    super(message);
    this.name = "AbortError";
  }
}

/** Why Krypton ended calls it was serving, in the words every host answers them with. */
export const STOP_REASONS = {
  /** The plugin unloading, `krypton mcp` interrupted. */
  "shutting-down": "Krypton is shutting down",
  /** The MCP bridge turned off in settings (or by its command) while Obsidian keeps running. */
  "bridge-off": "the MCP bridge was turned off",
  /** The MCP bridge restarting for new settings (a new token or port). */
  "bridge-restart": "the MCP bridge restarted with new settings",
} as const;
export type StopReason = keyof typeof STOP_REASONS;

/**
 * Krypton itself stopping what it serves: an abort reason hosts give their signal, so every call it ends is
 * answered "… was cancelled: <why>" in the same words on every host. Still an AbortedError: one abort mechanism.
 */
export class ShuttingDownError extends AbortedError {
  constructor(readonly reason: StopReason = "shutting-down") {
    super(STOP_REASONS[reason]);
  }
}

export function isAbortError(err: unknown): boolean {
  if (err instanceof AbortedError) return true;
  if (typeof err !== "object" || err === null) return false;
  const e = err as { name?: string; kind?: string };
  // ProviderError("aborted") predates AbortedError; it is recognised by its kind so no import cycle is needed.
  return e.name === "AbortError" || (e.name === "ProviderError" && e.kind === "aborted");
}

/** Throws AbortedError when the signal has fired; call between steps of long work. */
export function throwIfAborted(signal: AbortSignal | undefined, message?: string): void {
  if (signal?.aborted) throw new AbortedError(message);
}

/** A readable one-line message for any thrown value (never "[object Object]", never a stack). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  if (typeof err === "object" && err !== null) {
    const message = (err as { message?: unknown }).message;
    if (typeof message === "string" && message) return message;
    try {
      return JSON.stringify(err);
    } catch {
      return "unknown error";
    }
  }
  return String(err);
}
