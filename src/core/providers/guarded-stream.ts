import type { Clock } from "../ports/clock";
import type { FetchLike } from "../ports/http";
import { ProviderError, isAbortError } from "./provider-error";
import { createRequestGuard, type RequestGuard } from "./request-guard";
import { DEFAULT_RETRY_POLICY, isTransientServerError, withRetry, type RetryPolicy } from "./retry";

/** How a provider talks to its service; every provider's options have these fields, so they are passed whole. */
export interface GuardedConnection {
  clock: Clock;
  fetch: FetchLike;
  /** Longest silence allowed: before the first item and between items. */
  timeoutMs: number;
  /** Default DEFAULT_RETRY_POLICY. */
  retry?: RetryPolicy;
}

export interface GuardedStreamParams<T = string> {
  signal?: AbortSignal;
  /** Starts one attempt; yields items (an item without content still counts as progress). Use guard.fetch / guard.signal. */
  open: (guard: RequestGuard) => Promise<AsyncIterable<T>>;
  /** Maps any failure of an attempt (HTTP status, transport, parse) to a ProviderError. */
  mapError: (err: unknown, guard: RequestGuard) => ProviderError;
}

interface Opened<T> {
  guard: RequestGuard;
  iterator: AsyncIterator<T | null>;
  first: T | null;
}

/**
 * Streams from a provider with one policy for every provider: the silence timeout covers the first item
 * and each gap after it, Stop aborts the HTTP request, and 429/5xx are retried with backoff only until
 * the first item with content (before that a retry is invisible; after it, it would repeat output).
 * `open` yields null for progress without content (a model thinking silently, an empty chunk).
 */
export async function* guardedStream<T>(connection: GuardedConnection, params: GuardedStreamParams<T | null>): AsyncGenerator<T> {
  const attempt = async (): Promise<Opened<T>> => {
    const guard = createRequestGuard({ clock: connection.clock, fetch: connection.fetch, timeoutMs: connection.timeoutMs, signal: params.signal });
    try {
      const iterator = (await params.open(guard))[Symbol.asyncIterator]();
      for (;;) {
        const step = await iterator.next();
        guard.touch();
        if (step.done) return { guard, iterator, first: null };
        if (step.value !== null) return { guard, iterator, first: step.value };
      }
    } catch (err) {
      const mapped = params.mapError(err, guard);
      guard.close();
      throw mapped;
    }
  };

  let opened: Opened<T>;
  try {
    opened = await withRetry(attempt, { ...(connection.retry ?? DEFAULT_RETRY_POLICY), clock: connection.clock, signal: params.signal, shouldRetry: isTransientServerError });
  } catch (err) {
    throw isAbortError(err) ? new ProviderError("aborted", "Stopped") : err;
  }

  const { guard, iterator, first } = opened;
  try {
    if (first === null) return;
    yield first;
    for (;;) {
      let step: IteratorResult<T | null>;
      try {
        step = await iterator.next();
      } catch (err) {
        throw params.mapError(err, guard);
      }
      if (step.done) return;
      guard.touch();
      if (step.value !== null) yield step.value;
    }
  } finally {
    guard.close();
    // Lets the SDK release its reader; errors here are about a request we already gave up on.
    await iterator.return?.().catch(() => undefined);
  }
}

/** A unary call (list models, embeddings) with the same guard and retry policy. */
export async function guardedCall<T>(
  connection: GuardedConnection,
  params: Omit<GuardedStreamParams<unknown>, "open"> & { call: (guard: RequestGuard) => Promise<T>; retryWhen?: (err: unknown) => boolean },
): Promise<T> {
  const attempt = async (): Promise<T> => {
    const guard = createRequestGuard({ clock: connection.clock, fetch: connection.fetch, timeoutMs: connection.timeoutMs, signal: params.signal });
    try {
      return await params.call(guard);
    } catch (err) {
      throw params.mapError(err, guard);
    } finally {
      guard.close();
    }
  };
  try {
    return await withRetry(attempt, {
      ...(connection.retry ?? DEFAULT_RETRY_POLICY),
      clock: connection.clock,
      signal: params.signal,
      shouldRetry: params.retryWhen ?? isTransientServerError,
    });
  } catch (err) {
    throw isAbortError(err) ? new ProviderError("aborted", "Stopped") : err;
  }
}
