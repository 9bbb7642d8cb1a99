import type { VaultEvent, Unsubscribe } from "../ports/vault";
import type { NoteHit, SearchApi, SearchOptions, SearchResult } from "../search/search-types";
import type { Chunk } from "./chunk";
import type { IndexStatus } from "./index-status";

/** The vault index as the hosts see it. Implemented by core/indexing/vault-index.ts. */
export interface VaultIndexApi extends SearchApi {
  /**
   * Loads the persisted index (rebuilding a corrupt one), then brings it up to date with the vault.
   * `readOnly`: never take the writer lock; changes since the last save are applied in memory only.
   */
  open(signal?: AbortSignal, options?: { readOnly?: boolean }): Promise<IndexStatus>;
  /**
   * Instead of open() then searchNotes() for one search in a fresh process: searches the saved index where it
   * lies, reading only what the query needs. Null when the saved index does not match the vault as it is
   * now (or is damaged): then open() and search. `status`: the saved index's, as this search found it.
   */
  searchSavedNotes(query: string, options?: SearchOptions): Promise<(SearchResult<NoteHit> & { status: IndexStatus }) | null>;
  /** Re-scans the vault and applies only what changed (content hashes); embeds what lacks a vector. */
  sync(signal?: AbortSignal): Promise<IndexStatus>;
  /**
   * While another process holds the writer lock: asks it to sync and save (or takes over if it goes away),
   * then reloads; null when that did not happen within timeoutMs.
   */
  syncViaHolder(signal: AbortSignal | undefined, timeoutMs: number): Promise<IndexStatus | null>;
  /**
   * Checks the saved chunk texts, the one part a load does not check; a writer indexes the notes of a
   * damaged shard again in the background (idle() waits for it; the status lists it under `repaired`).
   */
  checkSavedTexts(signal?: AbortSignal): Promise<IndexStatus>;
  /** Throws everything away and indexes from scratch. */
  rebuild(signal?: AbortSignal): Promise<IndexStatus>;
  /** Queues one vault event; changes are applied shortly after, in the background. */
  handleEvent(event: VaultEvent): void;
  /** Waits until queued events and embedding have been applied (tests, CLI). */
  idle(): Promise<void>;
  status(): IndexStatus;
  onStatus(listener: (status: IndexStatus) => void): Unsubscribe;
  /** Chunks of one note, in order (summaries, "use current note"). */
  chunksOf(path: string): Promise<Chunk[]>;
  /** Saves pending changes and releases the lock. */
  close(): Promise<void>;
}
