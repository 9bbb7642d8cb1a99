import { type Clock, untilAborted } from "../ports/clock";
import type { Embedder } from "../ports/embedder";
import { ProviderError } from "../providers/provider-error";
import { AbortedError, isAbortError } from "../util/errors";
import { withRetry } from "../providers/retry";
import { embeddingInput, type ChunkRecord } from "./index-records";
import type { IndexStore } from "./index-store";

/**
 * Gives vectors to the chunks that lack one: batches of embedder.batchSize, a few batches in flight,
 * retries with backoff on 429/5xx/unreachable, stops on the signal. Vectors land in the store as each
 * batch returns, and `checkpoint` is called every so often so a crash or restart loses little work.
 */
export interface EmbedQueueOptions {
  concurrency: number;
  retry: { attempts: number; baseDelayMs: number; maxDelayMs: number };
  /** Called between batches when saving is due (time or count); awaited. */
  checkpoint: () => Promise<void>;
  checkpointEveryMs: number;
  checkpointEveryChunks: number;
  onProgress: (done: number, total: number) => void;
  /** Called between batches: applies queued vault events so a long embedding run never hides edits. */
  between?: () => Promise<void>;
  clock: Clock;
  signal?: AbortSignal;
}

export interface EmbedOutcome {
  embedded: number;
  /** Set when the embedder failed for good (after retries): the rest stays pending. */
  error?: unknown;
}

export async function embedPending(store: IndexStore, embedder: Embedder, options: EmbedQueueOptions): Promise<EmbedOutcome> {
  const pending = store.pendingChunks();
  const total = pending.length;
  if (total === 0) return { embedded: 0 };
  const batchSize = Math.max(1, Math.floor(embedder.batchSize) || 1);
  const { clock, signal } = options;

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

  const worker = async (): Promise<void> => {
    while (failure === null && !signal?.aborted) {
      if (options.between) await options.between();
      const batch = nextBatch();
      if (batch.length === 0) return;
      const texts = batch.map((rec) => embeddingInput(rec.chunk));
      let vectors: Float32Array[];
      try {
        vectors = await withRetry(() => untilAborted(embedder.embed(texts, signal), signal), { ...options.retry, clock, signal });
        if (!Array.isArray(vectors) || vectors.length !== batch.length) {
          throw new ProviderError("bad-response", `The embedder returned ${Array.isArray(vectors) ? vectors.length : "no"} vectors for ${batch.length} texts`);
        }
      } catch (err) {
        if (failure === null) failure = err;
        return;
      }
      for (let i = 0; i < batch.length; i++) {
        try {
          if (store.setVector(batch[i], vectors[i])) embedded++;
        } catch (err) {
          // A vector of another dimension than the index: the model changed under the same name.
          if (failure === null) failure = err;
          return;
        }
      }
      done += batch.length;
      sinceCheckpoint += batch.length;
      options.onProgress(Math.min(done, total), total);
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

  const workers = Array.from({ length: Math.max(1, options.concurrency) }, () => worker());
  // Each worker awaits the checkpoint it started, so none is pending once all have returned.
  await Promise.all(workers);
  if (failure !== null && !isAbortError(failure)) return { embedded, error: failure };
  if (signal?.aborted || (failure !== null && isAbortError(failure))) {
    return { embedded, error: new AbortedError("Aborted") };
  }
  return { embedded };
}
