/**
 * The synthetic vault as the baselines see it: the same chunks Krypton indexes (real chunker), each with
 * the 768-dim vector the benchmark's zero-latency embedder gives its embedding text.
 */
import { embeddingText, chunkNote } from "../src/core/indexing/markdown-chunker";
import type { Chunk } from "../src/core/indexing/chunk";
import { DEFAULT_SETTINGS } from "../src/core/settings";
import { DIM } from "./bench-kit";
import { denseEmbedding } from "./dense-embedding";
import type { SyntheticVault } from "./synthetic-vault";

export interface Corpus {
  chunks: Chunk[];
  /** chunks.length × DIM, row-major, unit length rows. */
  vectors: Float32Array;
  dim: number;
}

/** The vault's chunks as Krypton's chunker cuts them (no vectors). */
export function corpusChunks(vault: SyntheticVault, maxChunks = Infinity): Chunk[] {
  const chunks: Chunk[] = [];
  for (const note of vault.notes) {
    for (const chunk of chunkNote(note.path, note.content, { maxChars: DEFAULT_SETTINGS.chunkMaxChars }).chunks) {
      if (chunks.length >= maxChunks) break;
      chunks.push(chunk);
    }
  }
  return chunks;
}

export function buildCorpus(vault: SyntheticVault, maxChunks = Infinity): Corpus {
  const chunks = corpusChunks(vault, maxChunks);
  const vectors = new Float32Array(chunks.length * DIM);
  chunks.forEach((chunk, i) => vectors.set(denseEmbedding(embeddingText(chunk)), i * DIM));
  return { chunks, vectors, dim: DIM };
}
