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
  return vectorViews(packedVectors(rows, dim), dim);
}

/** Equal-length vectors copied back to back into one Float32Array (`dim` values each). */
export function packedVectors(rows: readonly ArrayLike<number>[], dim: number): Float32Array<ArrayBuffer> {
  const all = new Float32Array(rows.length * dim);
  for (let r = 0; r < rows.length; r++) all.set(rows[r], r * dim);
  return all;
}

/** The vectors lying back to back in `all`, `dim` values each, as views of it (nothing copied). */
export function vectorViews(all: Float32Array, dim: number): Float32Array[] {
  const count = dim > 0 ? Math.floor(all.length / dim) : 0;
  const out = new Array<Float32Array>(count);
  for (let r = 0; r < count; r++) out[r] = all.subarray(r * dim, (r + 1) * dim);
  return out;
}
