import { type Clock, untilAborted } from "../ports/clock";
import type { Embedder, EmbeddingVector } from "../ports/embedder";
import { ProviderError } from "../providers/provider-error";
import { AbortedError, isAbortError } from "../util/errors";
import { timeoutSignal } from "../providers/request-guard";
import { withRetry } from "../providers/retry";
import { embeddingInput, type ChunkRecord } from "./index-records";
import type { IndexStore } from "./index-store";
import { vectorProblem } from "./vector-check";
import { countOf } from "../util/text";

/**
 * Gives vectors to the chunks that lack one: batches of embedder.batchSize, a few batches in flight,
 * retries with backoff on 429/5xx/unreachable, stops on the signal. Vectors land in the store as each
 * batch returns, and `checkpoint` is called every so often so a crash or restart loses little work.
 *
 * A dead embedder is given up on quickly: the first batch goes alone and must answer within
 * `firstAnswerTimeoutMs` (an embedder that accepts connections but never answers would otherwise hold
 * every run for the full request timeout, times every retry); a timeout is never retried; and the first
 * failure for good cancels the batches still in flight. The caller then goes on keyword-only.
 */
export interface EmbedQueueOptions {
  concurrency: number;
  retry: { attempts: number; baseDelayMs: number; maxDelayMs: number };
  /** Called between batches when saving is due (time or count); awaited. */
  checkpoint: () => Promise<void>;
  checkpointEveryMs: number;
  checkpointEveryChunks: number;
  onProgress: (done: number, total: number) => void;
  /** The chunks' texts (saved chunks keep theirs on disk); null for one that cannot be read: it stays pending. */
  textsOf: (records: readonly ChunkRecord[]) => Promise<(string | null)[]>;
  /** Called between batches: applies queued vault events so a long embedding run never hides edits. */
  between?: () => Promise<void>;
  /** Called often while listing the chunks to embed; yields to the host when its slice is used up (WorkSlicer.tick). */
  tick?: () => Promise<void>;
  clock: Clock;
  signal?: AbortSignal;
  /** The first batch of a run must answer within this (a loaded model embeds one batch in a second or two). */
  firstAnswerTimeoutMs?: number;
}

/** Default for EmbedQueueOptions.firstAnswerTimeoutMs: room for a model to load, short enough not to stall a search. */
export const FIRST_ANSWER_TIMEOUT_MS = 10_000;

/** Retried: rate limits, server errors, unreachable. Not a timeout: an embedder that said nothing for that long is not answering. */
export function isRetryableEmbedFailure(err: unknown): boolean {
  return err instanceof ProviderError && err.retryable && err.kind !== "timeout";
}

export interface EmbedOutcome {
  embedded: number;
  /** Set when the embedder failed for good (after retries): the rest stays pending. */
  error?: unknown;
}

export async function embedPending(store: IndexStore, embedder: Embedder, options: EmbedQueueOptions): Promise<EmbedOutcome> {
  const pending = await store.pendingChunks(options.tick ?? (() => Promise.resolve()));
  const total = pending.length;
  if (total === 0) return { embedded: 0 };
  const batchSize = Math.max(1, Math.floor(embedder.batchSize) || 1);
  const { clock } = options;
  // Aborted by the caller, or by the first failure for good: batches still in flight stop too.
  const stopAll = new AbortController();
  const onCallerAbort = () => stopAll.abort();
  if (options.signal?.aborted) stopAll.abort();
  else options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  const signal = stopAll.signal;
  // The first batch goes alone: the other workers start once it answered (or failed).
  let firstTaken = false;
  let releaseFirst: () => void = () => undefined;
  const firstAnswered = new Promise<void>((resolve) => (releaseFirst = resolve));

  let cursor = 0;
  let done = 0;
  let embedded = 0;
  let sinceCheckpoint = 0;
  let lastCheckpoint = clock.now();
  let failure: unknown = null;
  let checkpointing: Promise<void> | null = null;

  const nextBatch = (): ChunkRecord[] => {
    const batch: ChunkRecord[] = [];
    while (cursor < total && batch.length < batchSize) {
      const rec = pending[cursor++];
      // Skip chunks replaced or given a vector since the list was taken.
      if (store.isCurrent(rec) && rec.slot < 0) batch.push(rec);
      else done++;
    }
    return batch;
  };

  /**
   * Embeds one batch and stores its vectors; false when the run must stop. Its own function so the batch's
   * texts and vectors are garbage the moment it returns: kept in scope across the checkpoint's file I/O,
   * they outlived two young-generation collections and were promoted, ~7% of all the vectors of a large
   * vault turning into old-generation garbage that only a full collection frees.
   */
  const embedBatch = async (taken: ChunkRecord[]): Promise<boolean> => {
    const found = await options.textsOf(taken);
    const batch: ChunkRecord[] = [];
    const texts: string[] = [];
    for (let i = 0; i < taken.length; i++) {
      const text = found[i];
      if (text === null) continue;
      batch.push(taken[i]);
      texts.push(embeddingInput(taken[i], text));
    }
    // Unreadable texts stay pending (the next scan reads their notes again).
    done += taken.length - batch.length;
    if (batch.length === 0) return true;
    let vectors: EmbeddingVector[];
    try {
      if (!firstTaken) {
        // The first batch of the run, with a short deadline: is anybody answering?
        firstTaken = true;
        try {
          vectors = await firstBatch(embedder, texts, options.firstAnswerTimeoutMs ?? FIRST_ANSWER_TIMEOUT_MS, clock, signal);
        } finally {
          releaseFirst();
        }
      } else {
        vectors = await withRetry(() => untilAborted(embedder.embed(texts, signal), signal), { ...options.retry, clock, signal, shouldRetry: isRetryableEmbedFailure });
      }
      if (!Array.isArray(vectors) || vectors.length !== batch.length) {
        throw new ProviderError("bad-response", `The embedder returned ${Array.isArray(vectors) ? countOf(vectors.length, "vector") : "no vectors"} for ${countOf(batch.length, "text")}`);
      }
      checkBatch(vectors);
    } catch (err) {
      if (failure === null) failure = err;
      stopAll.abort();
      return false;
    }
    for (let i = 0; i < batch.length; i++) {
      try {
        if (store.setVector(batch[i], vectors[i])) embedded++;
      } catch (err) {
        // A vector of another dimension than the index: the model changed under the same name.
        if (failure === null) failure = err;
        return false;
      }
    }
    done += batch.length;
    sinceCheckpoint += batch.length;
    options.onProgress(Math.min(done, total), total);
    return true;
  };

  const worker = async (): Promise<void> => {
    while (failure === null && !signal?.aborted) {
      if (options.between) await options.between();
      const taken = nextBatch();
      if (taken.length === 0) return;
      if (!(await embedBatch(taken))) return;
      const due = sinceCheckpoint >= options.checkpointEveryChunks || clock.now() - lastCheckpoint >= options.checkpointEveryMs;
      if (due && !checkpointing) {
        sinceCheckpoint = 0;
        lastCheckpoint = clock.now();
        checkpointing = options.checkpoint().finally(() => {
          checkpointing = null;
        });
        await checkpointing;
      }
    }
  };

  const workers = Array.from({ length: Math.max(1, options.concurrency) }, async (_, i) => {
    if (i === 0) return worker().finally(releaseFirst);
    await firstAnswered;
    return worker();
  });
  // Each worker awaits the checkpoint it started, so none is pending once all have returned.
  await Promise.all(workers);
  options.signal?.removeEventListener("abort", onCallerAbort);
  if (failure !== null && !isAbortError(failure)) return { embedded, error: failure };
  if (options.signal?.aborted || (failure !== null && isAbortError(failure))) {
    return { embedded, error: new AbortedError("Aborted") };
  }
  return { embedded };
}

/**
 * A batch is stored whole or not at all: one NaN, out-of-range or all-zero vector makes the whole batch an
 * embedding failure (retried on a later pass), so a misbehaving server never poisons the index.
 * The dimension against the index is checked by the store (a change there means another model).
 */
function checkBatch(vectors: ArrayLike<number>[]): void {
  const dim = vectors[0]?.length ?? 0;
  for (let i = 0; i < vectors.length; i++) {
    const problem = vectorProblem(vectors[i], dim);
    if (problem) throw new ProviderError("bad-response", `the embedding server returned an unusable vector (${problem}); nothing from that batch was stored`);
  }
}

/**
 * One batch with a deadline for the first answer; retried (within the same deadline) only on failures
 * that come back fast, such as a 503 while the model loads.
 */
async function firstBatch(embedder: Embedder, texts: string[], timeoutMs: number, clock: Clock, signal: AbortSignal): Promise<EmbeddingVector[]> {
  const deadline = timeoutSignal(clock, timeoutMs, signal);
  try {
    return await withRetry(() => untilAborted(embedder.embed(texts, deadline.signal), deadline.signal), {
      attempts: 3,
      baseDelayMs: 500,
      maxDelayMs: 2_000,
      clock,
      signal: deadline.signal,
      shouldRetry: isRetryableEmbedFailure,
    });
  } catch (err) {
    if (deadline.timedOut() && !signal.aborted) {
      const seconds = Math.max(1, Math.round(timeoutMs / 1000));
      throw new ProviderError("timeout", `The embedding model did not answer within ${seconds} s.`);
    }
    if (isAbortError(err) && signal.aborted) throw new AbortedError("Aborted");
    throw err;
  } finally {
    deadline.dispose();
  }
}
