import type { Embedder } from "../../src/core/ports/embedder";

/**
 * A deterministic stand-in for an embedding model: a hashed bag of words, L2-normalized.
 * Texts that share words get similar vectors, so ranking tests mean something. Used by the
 * loopback Ollama server's /api/embed and by the benchmark (768 dimensions, zero latency).
 */
export function hashEmbedding(text: string, dim: number): Float32Array {
  const v = new Float32Array(dim);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) {
      h ^= word.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    const slot = (h >>> 0) % dim;
    v[slot] += (h & 0x80000000) === 0 ? 1 : -1;
  }
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += v[i] * v[i];
  if (norm === 0) {
    v[0] = 1;
    return v;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < dim; i++) v[i] *= inv;
  return v;
}

export interface HashEmbedderOptions {
  dim?: number;
  /** Delay per embed() call, to exercise cancellation and progress. */
  delayMs?: number;
  /** Make a call fail: return an error to throw, or null to succeed. Called once per embed(). */
  failWith?: (callIndex: number, texts: string[]) => Error | null;
  /** Defaults to "hash:<dim>". */
  id?: string;
  batchSize?: number;
}

/** An Embedder over hashEmbedding that counts what it was asked to embed. */
export class HashEmbedder implements Embedder {
  readonly id: string;
  readonly batchSize: number;
  readonly dim: number;
  calls = 0;
  /** Every text embedded, in order. */
  readonly texts: string[] = [];

  constructor(private readonly options: HashEmbedderOptions = {}) {
    this.dim = options.dim ?? 64;
    this.id = options.id ?? `hash:${this.dim}`;
    this.batchSize = options.batchSize ?? 64;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const callIndex = this.calls++;
    if (this.options.delayMs) await new Promise((r) => setTimeout(r, this.options.delayMs));
    if (signal?.aborted) {
      const err = new Error("Aborted");
      err.name = "AbortError";
      throw err;
    }
    const failure = this.options.failWith?.(callIndex, texts);
    if (failure) throw failure;
    this.texts.push(...texts);
    return texts.map((t) => hashEmbedding(t, this.dim));
  }

  reset(): void {
    this.calls = 0;
    this.texts.length = 0;
  }
}
