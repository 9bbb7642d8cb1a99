export type IndexState = "empty" | "loading" | "indexing" | "ready" | "error";

export interface IndexFailure {
  path: string;
  error: string;
}

export interface IndexStatus {
  state: IndexState;
  notes: number;
  chunks: number;
  /** Chunks that have a vector. */
  embedded: number;
  /** True when there is no usable embedder: search falls back to keywords only. */
  keywordOnly: boolean;
  /** Embedder id the vectors belong to, or null. */
  embedder: string | null;
  /** Present while indexing: notes done / notes to do. */
  progress?: { done: number; total: number; phase: "scanning" | "chunking" | "embedding" | "saving" };
  /** Why the last embedding attempt failed, in plain words, if it did. */
  embedderError?: string;
  /** Why the last search query could not be embedded (timeout, server error, unusable data), while searches go keyword-only because of it. */
  queryEmbedError?: string;
  /** Notes that could not be read or chunked in the last run. */
  failures: IndexFailure[];
  /** Set when a corrupt or incompatible index was discarded and rebuilt. */
  rebuiltReason?: string;
  /** True when another process (plugin or CLI) holds the index's writer lock: this one searches but saves nothing. */
  readOnly?: boolean;
}
