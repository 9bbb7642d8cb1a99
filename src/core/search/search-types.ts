import type { Chunk } from "../indexing/chunk";

export interface SearchOptions {
  /** How many results (chunks, or notes when grouping by note). Default 10. */
  limit?: number;
  /** Drop results whose combined score is below this (0..1). */
  minScore?: number;
  /** Only notes whose path starts with this prefix. */
  pathPrefix?: string;
  signal?: AbortSignal;
}

export interface ChunkHit {
  chunk: Chunk;
  /** Combined, normalized to 0..1: 0.7 × vector + 0.3 × keyword (+ title boost), keyword-only without vectors. */
  score: number;
  keywordScore: number;
  /** Cosine similarity mapped to 0..1, or 0 without vectors. */
  vectorScore: number;
  /** A short excerpt showing why it matched. */
  snippet: string;
}

export interface NoteHit {
  path: string;
  title: string;
  /** Parent folder ("" for the vault root). */
  folder: string;
  score: number;
  snippet: string;
  /** Where the best-matching chunk is, to open the note there. */
  headings: string[];
  startLine: number;
  endLine: number;
  /** The note's matching chunks, best first. */
  chunks: ChunkHit[];
}

/** The one search API: used by the ribbon search, chat retrieval, agents, the CLI and MCP. */
export interface SearchApi {
  searchChunks(query: string, options?: SearchOptions): Promise<ChunkHit[]>;
  /** One entry per note, best first. */
  searchNotes(query: string, options?: SearchOptions): Promise<NoteHit[]>;
}
