import type { Chunk, ChunkMeta } from "./chunk";
import { embeddingText } from "./markdown-chunker";

/** What the index knows about one note: enough to tell whether it changed, and its chunks. */
export interface NoteRecord {
  path: string;
  /** hashText of the whole note. */
  hash: string;
  mtime: number;
  size: number;
  title: string;
  aliases: string[];
  tags: string[];
  chunks: ChunkRecord[];
  /** Persistence partition the note lives in. */
  shard: number;
  /** Set when the note is over a per-note limit and only its beginning is indexed: what was left out. */
  limited?: string;
  /** Vectors of this note's chunks saved on disk but not loaded (a reader without an embedder never uses them). */
  vectorsOnDisk?: number;
}

/**
 * A chunk as the index keeps it in memory: its text only until the chunk is saved in its shard file, then
 * read back on demand (IndexStore.textsOf), so a 100k-note vault does not hold half a gigabyte of text.
 */
export type IndexedChunk = ChunkMeta & { text?: string };

export interface ChunkRecord {
  chunk: IndexedChunk;
  /** VectorStore slot, or -1 while the chunk has no vector yet. */
  slot: number;
  /** Position of the chunk in its saved shard file, or -1 while it is not saved. */
  at: number;
  /** Its document slot in the text index, or -1 before it is added. */
  textSlot: number;
  /** Set when the chunk left the index (its note was removed or changed). */
  detached?: true;
}

/** The text sent to the embedder for a chunk (Chunk.textHash covers it: same hash, same vector). */
export function embeddingInput(chunk: Chunk): string {
  return embeddingText(chunk);
}
