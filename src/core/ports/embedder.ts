/**
 * One embedding as the provider's answer decoded it (a plain array from JSON; a typed array from a local
 * model). The index quantizes it at once and keeps no reference to it.
 */
export type EmbeddingVector = ArrayLike<number>;

/** Turns texts into vectors. One instance = one model; its id is recorded in the index manifest. */
export interface Embedder {
  /** Stable identity such as "ollama:nomic-embed-text"; a change of id means re-embedding. */
  readonly id: string;
  /** How many texts one embed() call should carry at most. */
  readonly batchSize: number;
  /**
   * One vector per input text, in order. Throws ProviderError on failure.
   *
   * Embedders hand back the arrays they decoded rather than copying them into typed arrays: V8 counts every
   * array buffer as external memory and starts a full collection (marking the whole heap, ~1 s of CPU at
   * 100,000 notes) each time 64 MB more of it is alive since the last one. A Float32Array per batch made
   * 1.6 GB of them while a 100,000-note vault embedded: a full collection about every second, and the
   * main thread's longest stalls. Plain arrays die young in the nursery, which costs nearly nothing.
   */
  embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingVector[]>;
}
