import type { Clock } from "../ports/clock";
import type { Embedder } from "../ports/embedder";
import type { Logger } from "../ports/logger";
import { timeoutSignal } from "../providers/retry";
import { AbortedError, errorMessage, isAbortError } from "../util/errors";

/**
 * Search queries as vectors: embedded with a short timeout (a slow or absent embedder must not hold a
 * search up; the caller then ranks by keywords only), and the last few kept, because the search modal
 * and chat ask for the same query more than once.
 */
export class QueryVectors {
  private readonly cache = new Map<string, Float32Array>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    private readonly size = 16,
  ) {}

  /** The query's vector, or null when it cannot be had in time or has another dimension than `dim`. */
  async get(embedder: Embedder, query: string, dim: number, signal?: AbortSignal): Promise<Float32Array | null> {
    const key = `${embedder.id}\u0000${query}`;
    const cached = this.cache.get(key);
    if (cached) {
      // Refresh its place: the cache drops the least recently used query.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached.length === dim ? cached : null;
    }
    const timeout = timeoutSignal(this.clock, this.timeoutMs, signal);
    try {
      // Not every embedder honours the signal promptly: race it.
      const stop = new Promise<never>((_, reject) => {
        if (timeout.signal.aborted) reject(new AbortedError("Aborted"));
        timeout.signal.addEventListener("abort", () => reject(new AbortedError("Aborted")), { once: true });
      });
      const [vector] = await Promise.race([embedder.embed([query], timeout.signal), stop]);
      if (!vector || vector.length !== dim) return null;
      this.cache.set(key, vector);
      if (this.cache.size > this.size) this.cache.delete(this.cache.keys().next().value as string);
      return vector;
    } catch (err) {
      if (!isAbortError(err) || timeout.timedOut()) {
        this.logger.debug("Query embedding failed; keyword search only", errorMessage(err));
      }
      return null;
    } finally {
      timeout.dispose();
    }
  }

  clear(): void {
    this.cache.clear();
  }
}
