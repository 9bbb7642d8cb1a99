import type { Chunk } from "../indexing/chunk";

/**
 * calibrated: both signals put on a 0..1 scale that means the same for every query (the default);
 * minmax: cosines min-max normalised over the candidates (per-query normalisation of both lists);
 * rrf: reciprocal rank fusion (ranks only); raw: the first version's 0.7 × raw cosine + 0.3 × keywords.
 * The alternatives are kept for `npm run bench`, which measures them side by side.
 */
export type FusionMethod = "calibrated" | "minmax" | "rrf" | "raw";

export interface SearchOptions {
  /** How many results (chunks, or notes when grouping by note). Default 10. */
  limit?: number;
  /** Drop results whose combined score is below this (0..1). */
  minScore?: number;
  /** Only notes whose path starts with this prefix. */
  pathPrefix?: string;
  /** Meaning against keywords, 0..1; the index passes the `semanticWeight` setting when this is not given. */
  semanticWeight?: number;
  /** How the two ranked lists are combined (see hybrid-search.ts); the default is "calibrated". */
  fusion?: FusionMethod;
  /**
   * searchNotes: share of a note's second-best keyword chunk added to its best (default NOTE_KEYWORD_SHARE
   * in hybrid-search.ts; 0 = the best chunk only). For the benchmark's cross-validation.
   */
  noteKeywordShare?: number;
  signal?: AbortSignal;
}

export interface ChunkHit {
  chunk: Chunk;
  /** Combined relevance 0..1, comparable across queries (see hybrid-search.ts); keyword-only without vectors. */
  score: number;
  keywordScore: number;
  /** The meaning signal, 0..1 (cosine calibrated against the query's cosine to the whole vault), or 0 without vectors. */
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

/**
 * A search's hits and, when it matched by keywords only though it should have used meaning, why
 * (keywordOnlyReason). The reason belongs to the search, not to its hits: a search that finds nothing is
 * when the user most needs to know that meaning was not used.
 */
export interface SearchResult<T> {
  hits: T[];
  keywordOnly?: string;
}

/** The one search API: used by the ribbon search, chat retrieval, agents, the CLI and MCP. */
export interface SearchApi {
  searchChunks(query: string, options?: SearchOptions): Promise<ChunkHit[]>;
  /** One entry per note, best first. */
  searchNotes(query: string, options?: SearchOptions): Promise<NoteHit[]>;
  /** searchChunks with the search's keyword-only reason: for every result shown to a person. */
  searchChunksWithReason(query: string, options?: SearchOptions): Promise<SearchResult<ChunkHit>>;
  /** searchNotes with the search's keyword-only reason: for every result shown to a person. */
  searchNotesWithReason(query: string, options?: SearchOptions): Promise<SearchResult<NoteHit>>;
}
