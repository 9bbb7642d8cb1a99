/** Turns texts into vectors. One instance = one model; its id is recorded in the index manifest. */
export interface Embedder {
  /** Stable identity such as "ollama:nomic-embed-text"; a change of id means re-embedding. */
  readonly id: string;
  /** How many texts one embed() call should carry at most. */
  readonly batchSize: number;
  /** One vector per input text, in order. Throws ProviderError on failure. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}
