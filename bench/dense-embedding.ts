/**
 * The benchmark's stand-in vectors: HashEmbedder's (tests/support/hash-embedder.ts) with a small
 * deterministic dense component added, as real embeddings are dense. Imported by the benchmark and by the
 * embedding worker (embed-worker.ts), whose bundle must stay small: nothing else belongs here.
 */
import { hashEmbedding } from "../tests/support/hash-embedder";
import { DIM } from "./bench-kit";
import { seededRandom } from "../tests/support/seeded-random";

export function denseEmbedding(text: string): Float32Array {
  return densify(hashEmbedding(text, DIM), text);
}

export function densify(v: Float32Array, text: string): Float32Array {
  const random = seededRandom(hashSeed(text));
  let norm = 0;
  for (let i = 0; i < v.length; i++) {
    v[i] += (random() * 2 - 1) * 0.02;
    norm += v[i] * v[i];
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < v.length; i++) v[i] *= inv;
  return v;
}

function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
