import type { Clock } from "../ports/clock";
import type { Embedder } from "../ports/embedder";
import type { Logger } from "../ports/logger";
import { ProviderError } from "../providers/provider-error";
import { timeoutSignal } from "../providers/request-guard";
import { AbortedError, errorMessage, isAbortError } from "../util/errors";
import { vectorProblem } from "../indexing/vector-check";

/**
 * Search queries as vectors: embedded with a short timeout (a slow or absent embedder must not hold a
 * search up; the caller then ranks by keywords only), and the last few kept, because the search modal
 * and chat ask for the same query more than once.
 *
 * After a failure, no query is embedded for `retryAfterMs`: a dead embedder costs one short wait per
 * process (a CLI run), not one per query. `failure()` says what happened, in plain words, for the
 * "matched by keywords only" notice: a timeout, a server error and unusable data are different problems.
 */
export class QueryVectors {
  private readonly cache = new Map<string, Float32Array>();
  private failed: { at: number; why: string } | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    private readonly retryAfterMs = 60_000,
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
    if (this.holdingBack()) return null; // failed a moment ago: do not wait again
    const timeout = timeoutSignal(this.clock, this.timeoutMs, signal);
    try {
      // Not every embedder honours the signal promptly: race it.
      const stop = new Promise<never>((_, reject) => {
        if (timeout.signal.aborted) reject(new AbortedError("Aborted"));
        timeout.signal.addEventListener("abort", () => reject(new AbortedError("Aborted")), { once: true });
      });
      const [vector] = await Promise.race([embedder.embed([query], timeout.signal), stop]);
      if (!vector || vector.length !== dim) {
        this.fail(`the embedding model returned unusable data (a vector of ${vector?.length ?? 0} numbers, the index has ${dim})`);
        return null;
      }
      const problem = vectorProblem(vector, dim);
      if (problem) {
        this.fail(`the embedding model returned unusable data (${problem})`);
        return null;
      }
      this.failed = null;
      // Kept (the cache): its own typed copy, not the decoded answer.
      const kept = Float32Array.from(vector);
      this.cache.set(key, kept);
      if (this.cache.size > this.size) this.cache.delete(this.cache.keys().next().value as string);
      return kept;
    } catch (err) {
      if (timeout.timedOut()) {
        this.fail(`the embedding model did not answer within ${Math.max(1, Math.round(this.timeoutMs / 1000))} s`);
      } else if (!isAbortError(err) || !signal?.aborted) {
        this.fail(describeFailure(err));
      }
      return null;
    } finally {
      timeout.dispose();
    }
  }

  /** What went wrong with the last query embedding, until one succeeds. */
  failure(): string | undefined {
    return this.failed?.why;
  }

  private holdingBack(): boolean {
    return this.failed !== null && this.clock.now() - this.failed.at < this.retryAfterMs;
  }

  clear(): void {
    this.cache.clear();
    this.failed = null;
  }

  private fail(why: string): void {
    this.failed = { at: this.clock.now(), why };
    this.logger.debug("Query embedding failed; keyword search only", why);
  }
}

function describeFailure(err: unknown): string {
  const detail = errorMessage(err).replace(/\.$/, "");
  if (err instanceof ProviderError) {
    switch (err.kind) {
      case "timeout":
        return `the embedding model did not answer in time (${detail})`;
      case "server":
        return `the embedding server failed (${detail})`;
      case "bad-response":
        return `the embedding model returned unusable data (${detail})`;
      case "rate-limited":
        return `the embedding service is rate-limiting requests (${detail})`;
      default:
        return detail;
    }
  }
  return `the query could not be embedded (${detail})`;
}
