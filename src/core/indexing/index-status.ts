export type IndexState = "empty" | "loading" | "indexing" | "ready" | "error";

/** IndexStatus.foldersInTheWay in words, for every host: what was found, that the index was saved, what to do. */
export function folderInTheWayText(folder: string): string {
  return `${folder} is a folder with files in it, where Krypton would have saved part of its index: it was left alone and the index saved under another file name; move that folder out of .krypton`;
}

/** IndexStatus.everyNoteExcludedBy in words, for every host (and the settings field on save): which patterns take every note. */
export function everyNoteExcludedText(patterns: readonly string[]): string {
  const named = patterns.map((p) => `"${p}"`);
  const list = named.length > 1 ? `${named.slice(0, -1).join(", ")} or ${named[named.length - 1]}` : named[0] ?? "the exclude patterns";
  return `The exclude patterns leave no note to index: every note matches ${list}`;
}

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
  /** Why the state is "error", as a sentence without its full stop: "The vault's notes could not be listed (…); Krypton tries again in 5 s or when a note changes". */
  error?: string;
  /** The vault has notes but the user's exclude patterns leave none to index: the patterns that take them. */
  everyNoteExcludedBy?: string[];
  /** Present while indexing: notes done / notes to do. */
  progress?: { done: number; total: number; phase: "scanning" | "chunking" | "embedding" | "saving" };
  /** Why the last embedding attempt failed, in plain words, if it did. */
  embedderError?: string;
  /** Why the last search query could not be embedded (timeout, server error, unusable data), while searches go keyword-only because of it. */
  queryEmbedError?: string;
  /** Notes that could not be read or chunked in the last run. */
  failures: IndexFailure[];
  /** Folders the last scan did not go into, and why (VaultPort.skippedFolders: on Node, links to folders); path without a trailing slash. */
  skippedFolders?: IndexFailure[];
  /** Notes indexed only in part because they exceed a per-note limit (chunks or characters), with what was left out. */
  partial?: IndexFailure[];
  /** Set when a corrupt or incompatible index was discarded and rebuilt. */
  rebuiltReason?: string;
  /** Damaged parts this process found in the saved index and indexed again (the notes are unchanged). */
  repaired?: string[];
  /** True when this process does not write the index (it searches, but saves nothing): see the fields below for why. */
  readOnly?: boolean;
  /** Opened read-only on purpose (search, status): the writer lock was never asked for. */
  readOnlyByChoice?: boolean;
  /** Who holds the writer lock: "krypton mcp, pid 1234, since 10:02". */
  heldBy?: string;
  /** Why the index cannot be written at all: "cannot write /vault/.krypton (permission denied)". */
  writeError?: string;
  /** What had to be cleared to take the lock (a dead holder's lock, a damaged lock), in words. */
  lockNotice?: string;
  /**
   * Folders with files in them that stood where this process would have saved a shard file (FolderInTheWayError):
   * left alone, and the shard saved under the next file name, so the index was saved all the same.
   */
  foldersInTheWay?: string[];
}
