import type { Clock } from "../ports/clock";
import { ProviderError, isAbortError } from "./provider-error";

export interface RetryOptions {
  /** Attempts in total, including the first. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  signal?: AbortSignal;
  clock: Clock;
  /** Which failures to retry; default: ProviderError.retryable. */
  shouldRetry?: (err: unknown) => boolean;
  /** Longest server-requested wait (ProviderError.retryAfterMs) honoured; a longer one fails at once. */
  maxRetryAfterMs?: number;
}

/** How a provider retries, injectable so tests use tiny backoffs. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest server-requested wait honoured (default MAX_RETRY_AFTER_MS). */
  maxRetryAfterMs?: number;
}

/**
 * A user waiting for an answer should not sit through a longer silent wait: when the service asks for
 * more (Gemini's per-minute quota often says 30-60 s), the call fails at once and the message says when
 * to try again.
 */
export const MAX_RETRY_AFTER_MS = 20_000;

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 3, baseDelayMs: 1000, maxDelayMs: 8000 };

/** One attempt: for answers a user is waiting on as a verdict (Test connection) or that may simply be absent. */
export const NO_RETRY: RetryPolicy = { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

/** "38 s", "2 min": a wait in words, rounded up. */
export function waitText(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

/**
 * A service's own Retry-After / retryDelay in words, for an error message: "Tavily asks to wait 60 s
 * before the next request". Worded as the service's request, never as a promise: Krypton waits for
 * such a hint only up to MAX_RETRY_AFTER_MS, and when the hint is longer the call fails at once.
 */
export function serviceWaitText(service: string, retryAfterMs: number | undefined): string | null {
  return retryAfterMs === undefined ? null : `${service} asks to wait ${waitText(retryAfterMs)} before the next request`;
}

/** The wait before retry number `attempt` (0 for the first): doubling from `baseDelayMs`, never above `maxDelayMs`. */
export function backoffMs(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
}

/** Rate limits and server errors: the request reached a server that may answer next time. */
export function isTransientServerError(err: unknown): boolean {
  return err instanceof ProviderError && (err.kind === "rate-limited" || err.kind === "server");
}

/** Retries an idempotent call on retryable ProviderErrors with exponential backoff and jitter. */
export async function withRetry<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  let lastError: unknown;
  for (let attempt = 0; attempt < options.attempts; attempt++) {
    if (options.signal?.aborted) throw new ProviderError("aborted", "Stopped");
    try {
      return await call();
    } catch (err) {
      if (isAbortError(err)) throw err;
      lastError = err;
      const retryable = options.shouldRetry ? options.shouldRetry(err) : err instanceof ProviderError && err.retryable;
      if (!retryable || attempt === options.attempts - 1) break;
      const backoff = backoffMs(attempt, options.baseDelayMs, options.maxDelayMs) * (0.75 + Math.random() * 0.5);
      // The server's own hint wins over our guess: retrying sooner only earns another 429.
      const hint = err instanceof ProviderError ? err.retryAfterMs : undefined;
      if (hint !== undefined && hint > (options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS)) break;
      const delay = hint !== undefined ? Math.max(backoff, hint) : backoff;
      await options.clock.sleep(delay, options.signal);
    }
  }
  throw lastError;
}
