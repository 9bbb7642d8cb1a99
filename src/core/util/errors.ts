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

/**
 * Krypton itself stopping (the plugin unloading, `krypton mcp` interrupted, the MCP bridge closed): an abort
 * reason hosts give their signal, so every call it ends is answered in the same words on every host.
 */
export class ShuttingDownError extends AbortedError {
  constructor() {
    super("Krypton is shutting down");
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
