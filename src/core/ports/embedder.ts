/** Turns texts into vectors. One instance = one model; its id is recorded in the index manifest. */
export interface Embedder {
  /** Stable identity such as "ollama:nomic-embed-text"; a change of id means re-embedding. */
  readonly id: string;
  /** How many texts one embed() call should carry at most. */
  readonly batchSize: number;
  /** One vector per input text, in order. Throws ProviderError on failure. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/**
 * Equal-length vectors as views of one Float32Array: one backing store for a whole batch. V8 counts every
 * array buffer as external memory and, once that is over its limit, makes each new buffer advance the
 * collector's marking on the thread that allocates it; a buffer per vector kept the main thread marking
 * (stalls of 100+ ms) while a 100,000-note vault embedded. Embedders return their batches this way.
 */
export function vectorsInOneBuffer(rows: readonly ArrayLike<number>[], dim: number): Float32Array[] {
  const all = new Float32Array(rows.length * dim);
  const out = new Array<Float32Array>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const view = all.subarray(r * dim, (r + 1) * dim);
    view.set(rows[r]);
    out[r] = view;
  }
  return out;
}
