import type { Embedder } from "../ports/embedder";
import type { Host } from "../ports/host";
import type { NoteInfo, Unsubscribe, VaultEvent } from "../ports/vault";
import { isAbortError, ProviderError } from "../providers/provider-error";
import { searchChunks, searchNotes, type Ranking, type SearchSource } from "../search/hybrid-search";
import { keywordOnlyReason } from "../search/keyword-only";
import { QueryVectors } from "../search/query-vectors";
import type { ChunkHit, NoteHit, SearchOptions, SearchResult } from "../search/search-types";
import type { KryptonSettings } from "../settings";
import type { Chunk, ChunkMeta } from "./chunk";
import { type ChunkRecord, chunkId, chunkMetaOf, chunkOf } from "./index-records";
import { backoffMs, waitText } from "../providers/retry";
import { embedPending, FIRST_ANSWER_TIMEOUT_MS, type EmbedOutcome } from "./embedding-queue";
import { createReadPolicy, isNoteRefusedError, type ReadPolicy } from "../notes/read-policy";
import { hashTextSliced } from "./hash";
import type { IndexFailure, IndexStatus } from "./index-status";
import { describeHolder, IndexLock, type IndexLockOptions, SYNC_REQUEST_PATH } from "./index-lock";
import {
  INDEX_DIR,
  INDEX_FORMAT,
  READABLE_FORMATS,
  IndexLoadError,
  type Manifest,
  NewerIndexError,
  readManifest,
  readShard,
  removeUnreferenced,
  writeManifest,
} from "./index-persistence";
import { AbortedError, errorMessage } from "../util/errors";
import { FolderInTheWayError } from "../ports/data-dir";
import { SerialQueue } from "../util/serial-queue";
import { countOf, formatCount } from "../util/text";
import { IndexStore } from "./index-store";
import { SavedIndex } from "./saved-index";
import { ANALYZER_VERSION } from "./text-analyzer";
import { CHUNKER_VERSION, chunkNoteSliced } from "./markdown-chunker";
import { DimensionMismatchError } from "./vector-store";
import type { VaultIndexApi } from "./vault-index-api";
import { WorkSlicer } from "./work-slicer";

/** Knobs with production defaults; tests shorten the waits. */
export interface VaultIndexOptions {
  /** Quiet time after the last vault event before changes are applied. */
  debounceMs?: number;
  /** Save embedding progress at least this often... */
  checkpointEveryMs?: number;
  /** ...or after this many new vectors. */
  checkpointEveryChunks?: number;
  embedConcurrency?: number;
  retry?: { attempts: number; baseDelayMs: number; maxDelayMs: number };
  /** After the embedder failed, background passes wait this long before trying it again (sync() always tries). */
  embedRetryAfterMs?: number;
  /** After the vault's notes could not be listed, the index lists them again after this back-off (doubling), or at the next vault event. */
  listRetry?: { baseDelayMs: number; maxDelayMs: number };
  /** Longest wait for a search query's vector before answering with keywords only. */
  queryTimeoutMs?: number;
  /** The first embedding batch of a run must answer within this, or the run goes keyword-only. */
  embedFirstAnswerMs?: number;
  lock?: IndexLockOptions;
  /** Work per slice before yielding to the host. */
  sliceMs?: number;
  /** Chunks one note may make; the rest of a longer note is not indexed (and the note is named in the status). */
  maxChunksPerNote?: number;
  /** Characters of one note that are read into the index; the rest is not indexed (named in the status). */
  maxNoteChars?: number;
  /**
   * Chunk text (characters) a scan may hold in memory before it saves what it has: saved chunks keep their
   * text on disk only, so indexing a large vault never holds every note's text at once.
   */
  unsavedTextBudget?: number;
}

/** Per-note limits: ~3 MB of ordinary prose fits; a note with 100,000 headings does not make 100,000 chunks. */
export const DEFAULT_MAX_CHUNKS_PER_NOTE = 2_000;
export const DEFAULT_MAX_NOTE_CHARS = 5_000_000;

export interface VaultIndexDeps {
  host: Host;
  settings: () => KryptonSettings;
  embedder: () => Embedder | null;
  /**
   * Why there is no embedder although one is configured: the host found its server unreachable (the CLI's
   * probe, KryptonCore.runWithoutEmbedder). Reported as embedderError, as a failure the index met itself would be.
   */
  embedderUnreachable?: () => string | undefined;
  options?: VaultIndexOptions;
}

const STATUS_THROTTLE_MS = 100;
/** Items (notes of a listing, chunks) a loop handles between two WorkSlicer ticks. */
const STEP_ITEMS = 512;
/** Postings a scan adds before they are worth sealing into a block (about 2,000 chunks' words). */
const SEAL_MIN_POSTINGS = 100_000;
/** Shard file names one save tries past folders in their way (persist) before it fails on the next one. */
const MAX_SHARD_NAMES_TRIED = 8;

/**
 * The vault index: where indexing happens. Loads the persisted index, keeps it in step with the vault
 * (content hashes: only changed notes are re-chunked, only changed chunks re-embedded), embeds in the
 * background, saves as it goes, and answers searches (hybrid ranking in core/search/hybrid-search.ts).
 * All changes run one at a time through `exclusive`; searches read the in-memory state at any time.
 */
export class VaultIndex implements VaultIndexApi {
  private readonly store = new IndexStore();
  private readonly host: Host;
  private readonly options: Required<Omit<VaultIndexOptions, "lock">> & { lock: IndexLockOptions };
  private readonly lock: IndexLock;
  private writable = false;
  /** Opened with { readOnly: true }: this instance never takes the writer lock (search, status). */
  private readOnlyByChoice = false;
  /** Why this instance could not take the writer lock: held by whom, or a write error. */
  private lockProblem: { heldBy?: string; writeError?: string } = {};
  private lockNotice: string | undefined;
  /** The saved index is a newer Krypton's: why, and what to do (newerIndexText). This process never writes it. */
  private newerIndex: string | undefined;
  private opened = false;
  private closed = false;
  private generation = 0;
  /** open/sync/rebuild/apply one at a time. */
  private readonly jobs = new SerialQueue();
  private opening: Promise<IndexStatus> | null = null;
  /** Resolves once the persisted index is in memory (searches wait for it, not for the whole sync). */
  private loaded: Promise<void> = Promise.resolve();

  // Vault events waiting to be applied: path → latest intent.
  private readonly queued = new Map<string, "check" | "delete">();
  private cancelDebounce: (() => void) | null = null;
  private background: Promise<void> | null = null;
  /** Aborted by close(): stops background passes and every open/sync/rebuild under way. */
  private backgroundAbort = new AbortController();

  private state: IndexStatus["state"] = "empty";
  /** IndexStatus.error: set with the "error" state, gone with it. */
  private stateError: string | undefined;
  /** Listings failed in a row: how long the next retry waits. */
  private listFailures = 0;
  private progress: IndexStatus["progress"];
  private embedderError: string | undefined;
  private embedFailedAt = -Infinity;
  private failures = new Map<string, string>();
  /** IndexStatus.everyNoteExcludedBy, from the last scan's listing (VaultPort.everyNoteExcludedBy). */
  private everyNoteExcludedBy: readonly string[] | null = null;
  /** Folders the last scan's listing did not go into (VaultPort.skippedFolders). */
  private skippedFolders: IndexFailure[] = [];
  /** Notes indexed only in part (over a per-note limit): path → what was left out. */
  private partial = new Map<string, string>();
  private rebuiltReason: string | undefined;
  /** Folders with files in them found where a save would have put a shard file (IndexStatus.foldersInTheWay). */
  private readonly foldersInTheWay = new Set<string>();
  private readonly listeners = new Set<(status: IndexStatus) => void>();
  private lastEmit = 0;
  private readonly queryVectors: QueryVectors;

  constructor(private readonly deps: VaultIndexDeps) {
    this.host = deps.host;
    const o = deps.options ?? {};
    this.options = {
      debounceMs: o.debounceMs ?? 750,
      checkpointEveryMs: o.checkpointEveryMs ?? 5_000,
      checkpointEveryChunks: o.checkpointEveryChunks ?? 2_000,
      embedConcurrency: o.embedConcurrency ?? 2,
      retry: o.retry ?? { attempts: 4, baseDelayMs: 1_000, maxDelayMs: 15_000 },
      embedRetryAfterMs: o.embedRetryAfterMs ?? 60_000,
      listRetry: o.listRetry ?? { baseDelayMs: 5_000, maxDelayMs: 300_000 },
      queryTimeoutMs: o.queryTimeoutMs ?? 4_000,
      embedFirstAnswerMs: o.embedFirstAnswerMs ?? FIRST_ANSWER_TIMEOUT_MS,
      lock: o.lock ?? {},
      sliceMs: o.sliceMs ?? 12,
      maxChunksPerNote: o.maxChunksPerNote ?? DEFAULT_MAX_CHUNKS_PER_NOTE,
      maxNoteChars: o.maxNoteChars ?? DEFAULT_MAX_NOTE_CHARS,
      unsavedTextBudget: o.unsavedTextBudget ?? 32_000_000,
    };
    this.lock = new IndexLock(this.host.data, this.host.clock, this.options.lock, () => this.host.process);
    this.queryVectors = new QueryVectors(this.host.clock, this.host.logger, this.options.queryTimeoutMs, this.options.embedRetryAfterMs);
    this.lock.onSyncRequest = () => void this.serveSyncRequest();
  }

  // ---------------------------------------------------------------- lifecycle

  open(signal?: AbortSignal, options: { readOnly?: boolean } = {}): Promise<IndexStatus> {
    if (this.opening) return this.opening;
    this.readOnlyByChoice = options.readOnly === true;
    this.closed = false;
    this.backgroundAbort = new AbortController();
    const run = this.untilClose(signal);
    signal = run.signal;
    let markLoaded: () => void = () => undefined;
    this.loaded = new Promise<void>((resolve) => (markLoaded = resolve));
    this.opening = this.exclusive(async () => {
      // The vault listing (on disk: a stat per note, in the I/O threads) runs while the saved index loads on
      // this thread; the first sync compares against it. A note changed after the listing is picked up by
      // the next sync (or its vault event), as one changed during the scan always was.
      let listing: Promise<NoteInfo[]> | undefined;
      try {
        this.setState("loading");
        this.writable = this.readOnlyByChoice ? false : await this.tryLock();
        if (this.readOnlyByChoice) await this.noteHolder();
        listing = this.host.vault.listNotes();
        // Awaited by syncNow; a load that fails first must not leave it rejected and unobserved.
        listing.catch(() => undefined);
        await this.loadFromDisk(signal);
        this.opened = true;
      } finally {
        markLoaded();
      }
      await this.syncNow(signal, this.rechunkAll, listing);
      return this.status();
    });
    // A failed open may be retried.
    this.opening.catch(() => {
      this.opening = null;
    });
    this.opening.then(run.dispose, run.dispose);
    return this.opening;
  }

  sync(callerSignal?: AbortSignal): Promise<IndexStatus> {
    if (!this.opened) return this.open(callerSignal);
    const run = this.untilClose(callerSignal);
    const signal = run.signal;
    return this.whileLinked(run, () => this.syncPass(signal));
  }

  /** sync()'s work, inside `exclusive`: also a background pass's after a failed listing. */
  private async syncPass(signal: AbortSignal | undefined): Promise<IndexStatus> {
    if (!this.writable && !this.readOnlyByChoice) {
      this.writable = await this.tryLock();
      // We just became the writer: start from what the previous writer saved.
      if (this.writable) await this.loadFromDisk(signal);
    }
    if (!this.writable) {
      // Still a reader: pick up what the writer saved since (vectors included), then apply local changes.
      const onDisk = await readManifest(this.host.data).catch(() => null);
      if (onDisk && onDisk.generation !== this.generation) await this.loadFromDisk(signal);
    }
    await this.syncNow(signal, this.rechunkAll || this.chunkSizeChanged());
    return this.status();
  }

  rebuild(callerSignal?: AbortSignal): Promise<IndexStatus> {
    if (this.closed) {
      // A rebuild after close() starts a new lifetime (close aborted the old one).
      this.closed = false;
      this.backgroundAbort = new AbortController();
    }
    const run = this.untilClose(callerSignal);
    const signal = run.signal;
    return this.whileLinked(run, async () => {
      if (!this.writable && !this.readOnlyByChoice) this.writable = await this.tryLock();
      this.store.clear();
      this.generation++;
      this.sweepAfterSave = true;
      // Until the rebuild completes, checkpoints write new shard files but not the manifest: the old index
      // stays whole and readable, and a killed rebuild leaves only unreferenced files (removed later).
      this.rebuilding = this.writable;
      this.rebuiltReason = undefined;
      this.opened = true;
      await this.syncNow(signal, true);
      return this.status();
    });
  }

  /**
   * Gets the index updated while another process holds the writer lock: asks the holder (it syncs and
   * saves at its next heartbeat, then removes the request), or takes the lock itself if the holder goes
   * away meanwhile. Resolves to the status once done, or null when nothing happened within `timeoutMs`.
   */
  async syncViaHolder(signal: AbortSignal | undefined, timeoutMs: number): Promise<IndexStatus | null> {
    const clock = this.host.clock;
    const deadline = clock.now() + timeoutMs;
    await this.host.data.writeAtomic(SYNC_REQUEST_PATH, JSON.stringify({ at: clock.now(), by: this.lock.owner }));
    while (clock.now() < deadline) {
      await clock.sleep(Math.min(500, Math.max(1, deadline - clock.now())), signal);
      if (await this.lock.acquire()) {
        // The holder is gone: this process is the writer now, and does the work itself.
        await this.host.data.remove(SYNC_REQUEST_PATH).catch(() => undefined);
        return this.sync(signal);
      }
      if ((await this.host.data.readText(SYNC_REQUEST_PATH)) === null) return this.sync(signal);
    }
    return null;
  }

  private servingRequest = false;

  /** Another process asked (through the request file) for a sync: do it, save, then remove the request. */
  private async serveSyncRequest(): Promise<void> {
    if (this.servingRequest || this.closed || !this.opened) return;
    this.servingRequest = true;
    try {
      await this.sync();
    } catch (err) {
      if (!isAbortError(err)) this.host.logger.warn("A sync another process asked for failed", errorText(err));
    } finally {
      await this.host.data.remove(SYNC_REQUEST_PATH).catch(() => undefined);
      this.servingRequest = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelDebounce?.();
    this.cancelDebounce = null;
    this.backgroundAbort.abort();
    try {
      await this.jobs.idle();
      if (this.writable && this.store.hasDirty) await this.persist(new WorkSlicer(this.host.clock, undefined, this.options.sliceMs));
    } catch (err) {
      this.host.logger.warn("Could not save the index on close", errorText(err));
    } finally {
      if (this.writable) await this.removeUnsavedShards();
      await this.lock.release().catch(() => undefined);
      this.writable = false;
      this.opening = null;
      this.opened = false;
    }
  }

  // ---------------------------------------------------------------- vault events

  handleEvent(event: VaultEvent): void {
    if (this.closed) return;
    if (event.type === "rename") {
      this.queued.set(event.oldPath, "delete");
      this.queued.set(event.path, "check");
    } else {
      this.queued.set(event.path, event.type === "delete" ? "delete" : "check");
    }
    this.startBackgroundAfter(this.options.debounceMs);
  }

  /** The one timer for background passes: the debounce of vault events, and the retry of a failed listing. */
  private startBackgroundAfter(ms: number): void {
    this.cancelDebounce?.();
    this.cancelDebounce = this.host.clock.setTimer(() => {
      this.cancelDebounce = null;
      this.startBackground();
    }, ms);
  }

  async idle(): Promise<void> {
    // Waiting for idle means "now": skip the rest of the debounce.
    if (this.cancelDebounce) {
      this.cancelDebounce();
      this.cancelDebounce = null;
      this.startBackground();
    }
    for (;;) {
      const running = this.background;
      await this.jobs.idle();
      if (running) await running.catch(() => undefined);
      if (this.background === running && (this.queued.size === 0 || !this.opened)) return;
    }
  }

  private startBackground(): void {
    if (this.closed || this.background) return;
    const run = this.exclusive(async () => {
      if (!this.opened) return;
      // The listing failed (the only error state): list again, as sync() would; its failure re-arms the retry.
      if (this.state === "error") {
        await this.syncPass(this.backgroundAbort.signal);
        return;
      }
      const slicer = this.slicer(this.backgroundAbort.signal);
      await this.applyQueued(slicer);
      if (this.store.text.needsCompaction) await this.store.text.compact(() => slicer.tick());
      const retryDue = this.host.clock.now() - this.embedFailedAt >= this.options.embedRetryAfterMs;
      if (retryDue) await this.embed(this.backgroundAbort.signal);
      if (this.writable && this.store.hasDirty) await this.persist(slicer);
      this.setState("ready");
    })
      .catch((err) => {
        if (!isAbortError(err)) this.host.logger.warn("Applying vault changes failed", errorText(err));
      })
      .finally(() => {
        this.background = null;
        // Events that arrived meanwhile (before open(), the queue waits for open's own sync).
        if (this.opened && this.queued.size > 0 && !this.cancelDebounce) this.startBackground();
      });
    this.background = run;
  }

  /**
   * A shard whose chunk texts turned out damaged when a search read them (its search part was fine at
   * load): said once, and a writer indexes its notes again (vectors reused by text hash). Meanwhile the
   * texts come from the notes themselves.
   */
  private readonly reportedDamage = new Set<string>();
  /** What reindexUnreadableShards repaired in this process, for the status. */
  private readonly repairs: string[] = [];

  /**
   * Checks the saved chunk texts of every shard against their checksums (IndexStore.checkSavedTexts); a
   * writer indexes the notes of damaged shards again in the background (await idle() for it). For
   * `krypton index`: without it, damage there was only ever found by a search, which in the CLI is a
   * reader and cannot repair it, so every later search loaded the whole index.
   */
  checkSavedTexts(callerSignal?: AbortSignal): Promise<IndexStatus> {
    const run = this.untilClose(callerSignal);
    const signal = run.signal;
    return this.whileLinked(run, async () => {
      if (!this.opened || !this.writable) return this.status();
      const slicer = this.slicer(signal);
      await this.store.checkSavedTexts(this.host.data, () => slicer.tick());
      this.reindexUnreadableShards();
      return this.status();
    });
  }

  private reindexUnreadableShards(): void {
    for (const [id, why] of this.store.unreadableTexts) {
      this.store.unreadableTexts.delete(id);
      if (this.reportedDamage.has(why)) continue;
      this.reportedDamage.add(why);
      this.host.logger.warn(`Index damaged: ${why}; ${this.writable ? "its notes are indexed again" : "chunk texts are read from the notes"}`);
      if (!this.writable) continue;
      this.repairs.push(`${why}; its notes were indexed again`);
      for (const path of this.store.notesInShard(id)) {
        this.store.removeNote(path);
        this.queued.set(path, "check");
      }
      this.startBackground();
    }
    // Dropped by a save that needed their damaged texts: read now, while their vectors are still claimable.
    if (this.writable && this.store.droppedNotes.size > 0) {
      for (const path of this.store.droppedNotes) this.queued.set(path, "check");
      this.store.droppedNotes.clear();
      this.startBackground();
    }
  }

  // ---------------------------------------------------------------- status

  status(): IndexStatus {
    const embedder = this.deps.embedder();
    const s: IndexStatus = {
      state: this.state,
      notes: this.store.notes.size,
      chunks: this.store.chunkCount,
      embedded: this.store.vectors.size + this.store.vectorsOnDisk,
      // An index with no chunks lacks no vector: it is keyword-only only for want of a working embedder.
      keywordOnly: embedder === null || this.embedderError !== undefined || (this.store.chunkCount > 0 && !this.vectorsUsable(embedder)),
      embedder: this.store.vectorsOf ?? (this.store.vectorsOnDisk > 0 ? this.vectorsOnDiskOf : null),
      failures: [...this.failures].map(([path, error]): IndexFailure => ({ path, error })),
    };
    if (this.state === "error" && this.stateError) s.error = this.stateError;
    if (this.skippedFolders.length > 0) s.skippedFolders = [...this.skippedFolders];
    if (this.everyNoteExcludedBy && this.store.notes.size === 0) s.everyNoteExcludedBy = [...this.everyNoteExcludedBy];
    // Only notes still in the index (a note removed or failed since is no longer "indexed in part").
    const partial = [...this.partial].filter(([path]) => this.store.notes.has(path));
    if (partial.length > 0) s.partial = partial.map(([path, error]): IndexFailure => ({ path, error }));
    if (this.progress) s.progress = { ...this.progress };
    const embedderProblem = this.embedderProblem(embedder);
    if (embedderProblem) s.embedderError = embedderProblem;
    const queryFailure = this.queryVectors.failure();
    if (queryFailure) s.queryEmbedError = queryFailure;
    if (this.rebuiltReason) s.rebuiltReason = this.rebuiltReason;
    if (this.repairs.length > 0) s.repaired = [...this.repairs];
    if (this.opened && !this.writable) {
      s.readOnly = true;
      if (this.readOnlyByChoice) s.readOnlyByChoice = true;
      if (this.lockProblem.heldBy) s.heldBy = this.lockProblem.heldBy;
      // A newer Krypton's index cannot be written by this version, whether it asked for the lock or not.
      const writeError = this.lockProblem.writeError ?? this.newerIndex;
      if (writeError) s.writeError = writeError;
    }
    if (this.lockNotice) s.lockNotice = this.lockNotice;
    if (this.foldersInTheWay.size > 0) s.foldersInTheWay = [...this.foldersInTheWay];
    return s;
  }

  onStatus(listener: (status: IndexStatus) => void): Unsubscribe {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async chunksOf(path: string): Promise<Chunk[]> {
    await this.untilLoaded();
    const records = this.store.notes.get(path)?.chunks ?? [];
    const texts = await this.textsOf(records);
    return records.map((rec, i) => chunkOf(rec, texts[i] ?? ""));
  }

  /**
   * The texts of chunks: in memory until saved, then from their shard file. When a file was replaced by
   * another process since this one loaded it, or the chunk has no record any more (`undefined`: its note
   * changed since a search handed it out), the chunk's lines are read from the note itself.
   */
  private async textsOf(records: readonly (ChunkRecord | undefined)[], spans?: readonly Pick<ChunkMeta, "path" | "startLine" | "endLine">[]): Promise<(string | null)[]> {
    const known = records.filter((r): r is ChunkRecord => r !== undefined);
    const stored = await this.store.textsOf(this.host.data, known);
    let j = 0;
    const texts = records.map((r) => (r ? stored[j++] : null));
    this.reindexUnreadableShards();
    const notes = new Map<string, string[] | null>();
    for (let i = 0; i < records.length; i++) {
      if (texts[i] !== null) continue;
      const rec = records[i];
      const span = spans?.[i] ?? (rec ? { path: rec.note.path, startLine: rec.startLine, endLine: rec.endLine } : null);
      if (!span) continue;
      const { path, startLine, endLine } = span;
      if (!notes.has(path)) notes.set(path, await this.host.vault.readNote(path).then((t) => t.split(/\r?\n/), () => null));
      const lines = notes.get(path);
      if (lines) texts[i] = lines.slice(startLine - 1, endLine).join("\n");
    }
    return texts;
  }

  // ---------------------------------------------------------------- search

  async searchChunks(query: string, options?: SearchOptions): Promise<ChunkHit[]> {
    return (await this.searchChunksWithReason(query, options)).hits;
  }

  async searchNotes(query: string, options?: SearchOptions): Promise<NoteHit[]> {
    return (await this.searchNotesWithReason(query, options)).hits;
  }

  async searchChunksWithReason(query: string, options?: SearchOptions): Promise<SearchResult<ChunkHit>> {
    await this.untilLoaded();
    return withReason(await searchChunks(this.searchSource, query, this.withFusion(options)), () => this.status());
  }

  async searchNotesWithReason(query: string, options?: SearchOptions): Promise<SearchResult<NoteHit>> {
    await this.untilLoaded();
    return withReason(await searchNotes(this.searchSource, query, this.withFusion(options)), () => this.status());
  }

  /**
   * One search straight from the saved index, without loading it (a one-shot `krypton search`): only the
   * parts the query needs are read (saved-index.ts), ranked by the same code as a loaded index. Null when
   * the saved index cannot answer for the vault as it is now: a note was added, changed or removed since it
   * was saved, or it was saved in another format, chunk size, analyser or by another embedder, or a part of
   * it is damaged. Then open() (which reports and repairs what it finds) and search. Never writes anything.
   */
  async searchSavedNotes(query: string, options?: SearchOptions): Promise<(SearchResult<NoteHit> & { status: IndexStatus }) | null> {
    if (this.opening) return null;
    const listing = this.host.vault.listNotes();
    listing.catch(() => undefined);
    const [, manifest] = await Promise.all([this.noteHolder(), readManifest(this.host.data).catch(() => null)]);
    const embedder = this.deps.embedder();
    const settings = this.deps.settings();
    if (
      !manifest ||
      manifest.repairs !== undefined ||
      manifest.format !== INDEX_FORMAT ||
      manifest.chunkerVersion !== CHUNKER_VERSION ||
      (manifest.analyzerVersion ?? 1) !== ANALYZER_VERSION ||
      manifest.chunkMaxChars !== settings.chunkMaxChars ||
      (embedder !== null && manifest.embedder !== null && manifest.embedder.id !== embedder.id) ||
      (embedder !== null && manifest.embedder === null && manifest.shards.length > 0)
    ) {
      return null;
    }
    try {
      const saved = await SavedIndex.open(this.host.data, manifest);
      const usable = embedder !== null && manifest.embedder !== null && saved.vectorCount > 0;
      // The vectors are read while the notes are stat'ed (nothing changed is the common case), and let go if something did.
      if (usable) saved.loadVectors().catch(() => undefined);
      const partial = await this.savedIsCurrent(saved, await listing);
      if (!partial) {
        saved.abandon();
        return null;
      }
      const policy = this.readPolicy();
      const source: SearchSource = {
        textSearch: async (q, limit) => (await saved.textSearch(q, limit)).filter((h) => policy.mayRead(h.chunk.path)),
        withTexts: (chunks) => saved.withTexts(chunks),
        // The vectors are read while the query is embedded.
        queryVector: async (q, signal) => {
          if (!usable || embedder === null) return null;
          const [vector] = await Promise.all([this.queryVectors.get(embedder, q, manifest.embedder?.dim ?? 0, signal), saved.loadVectors()]);
          return vector;
        },
        vectorSearch: (vector, k, accept) => saved.vectorSearch(vector, k, (path) => policy.mayRead(path) && accept(path)),
        cosineOf: (chunk, vector) => saved.cosineOf(chunk, vector),
      };
      const ranking = await searchNotes(source, query, this.withFusion(options));
      this.host.logger.debug(`Searched the saved index in place (${manifest.shards.length} shards, ${saved.chunkCount} chunks)`);
      const status: IndexStatus = {
        state: "ready",
        notes: partial.notes,
        chunks: saved.chunkCount,
        embedded: saved.vectorCount,
        keywordOnly: !usable,
        embedder: manifest.embedder?.id ?? null,
        failures: [],
        readOnly: true,
        readOnlyByChoice: true,
      };
      if (partial.limited.length > 0) status.partial = partial.limited;
      const embedderProblem = this.embedderProblem(embedder);
      if (embedderProblem) status.embedderError = embedderProblem;
      if (this.lockProblem.heldBy) status.heldBy = this.lockProblem.heldBy;
      const queryFailure = this.queryVectors.failure();
      if (queryFailure) status.queryEmbedError = queryFailure;
      return { ...withReason(ranking, () => status), status };
    } catch (err) {
      if (err instanceof IndexLoadError) {
        this.host.logger.info("The saved index cannot answer on its own; loading it", errorText(err));
        return null;
      }
      throw err;
    }
  }

  /**
   * Whether the saved index holds exactly the notes the vault has now, under the same read policy, unchanged
   * (same mtime and size, the test the scan uses): then its notes count and those indexed in part, else null.
   */
  private async savedIsCurrent(saved: SavedIndex, listed: NoteInfo[]): Promise<{ notes: number; limited: IndexFailure[] } | null> {
    const present = await this.notesToIndex(listed);
    let notes = 0;
    const current = saved.everyNote((path, mtime, size) => {
      notes++;
      const info = present.get(path);
      if (info && info.mtime === mtime && info.size === size) return true;
      this.host.logger.debug(`The saved index is not current: ${path} changed or is gone`);
      return false;
    });
    if (!current) return null;
    if (notes !== present.size) {
      this.host.logger.debug(`The saved index is not current: the vault has ${present.size - notes} notes it does not`);
      return null;
    }
    return { notes, limited: saved.limitedNotes() };
  }

  /** The semantic weight setting, unless the caller chose one. */
  private withFusion(options: SearchOptions = {}): SearchOptions {
    return options.semanticWeight === undefined ? { ...options, semanticWeight: this.deps.settings().semanticWeight } : options;
  }

  private readonly searchSource: SearchSource = {
    // Search answers only with notes the read policy allows today (exclusions edited since the last sync).
    textSearch: async (query, limit) => {
      const policy = this.readPolicy();
      const hits = await this.store.text.search(query, limit);
      return hits.filter((h) => policy.mayRead(h.owner.note.path)).map((h) => ({ chunk: chunkMetaOf(h.owner), score: h.score, matched: h.matched, coverage: h.coverage }));
    },
    withTexts: async (chunks) => {
      const texts = await this.textsOf(chunks.map((c) => this.recordOf(c)), chunks);
      return chunks.map((c, i) => ({ ...c, text: texts[i] ?? "" }));
    },
    queryVector: (query, signal) => this.queryVector(query, signal),
    vectorSearch: async (query, k, accept) => {
      const policy = this.readPolicy();
      const hits = this.store.vectors.search(query, k, (slot) => {
        const rec = this.store.chunkOfSlot(slot);
        return rec !== undefined && policy.mayRead(rec.note.path) && accept(rec.note.path);
      });
      const out: { chunk: ChunkMeta; cosine: number }[] = [];
      hits.slots.forEach((slot, i) => {
        const rec = this.store.chunkOfSlot(slot);
        if (rec) out.push({ chunk: chunkMetaOf(rec), cosine: hits.scores[i] });
      });
      return { hits: out, mean: hits.mean, std: hits.std, count: hits.count };
    },
    cosineOf: (chunk, query) => {
      const rec = this.recordOf(chunk);
      if (!rec || rec.slot < 0) return null;
      return this.store.vectors.cosine(rec.slot, query);
    },
  };

  /**
   * The record of a chunk handed out by the search source, through its note and its position in the id (no
   * map of every chunk id); undefined once the note was chunked anew and that position holds other text.
   */
  private recordOf(chunk: ChunkMeta): ChunkRecord | undefined {
    const records = this.store.notes.get(chunk.path)?.chunks;
    const k = Number(chunk.id.slice(chunk.path.length + 1));
    const rec = records && Number.isInteger(k) ? records[k] : undefined;
    return rec && chunkId(rec) === chunk.id && rec.textHash === chunk.textHash ? rec : undefined;
  }

  /** The query's vector, or null (keyword-only) when there are no usable vectors or the embedder fails. */
  private async queryVector(query: string, signal?: AbortSignal): Promise<Float32Array | null> {
    const embedder = this.deps.embedder();
    if (!embedder || !this.vectorsUsable(embedder)) return null;
    // The embedder failed a moment ago (indexing said so): keyword-only without another wait.
    if (this.embedderError !== undefined && this.host.clock.now() - this.embedFailedAt < this.options.embedRetryAfterMs) return null;
    return this.queryVectors.get(embedder, query, this.store.vectors.dim, signal);
  }

  /** Why the embedder is down: its last failure, or the host's reason for starting without it. */
  private embedderProblem(embedder: Embedder | null): string | undefined {
    return this.embedderError ?? (embedder === null ? this.deps.embedderUnreachable?.() : undefined);
  }

  private vectorsUsable(embedder: Embedder | null): boolean {
    // vectorsOnDisk > 0 only without an embedder (loadShards): never usable then.
    return embedder !== null && this.store.vectorsOf === embedder.id && this.store.vectors.size > 0;
  }

  private async untilLoaded(): Promise<void> {
    await this.loaded;
  }

  // ---------------------------------------------------------------- loading

  /** Reads the persisted index; anything unusable is dropped (and re-indexed by the sync that follows). */
  private async loadFromDisk(signal?: AbortSignal): Promise<void> {
    const slicer = this.slicer(signal);
    this.store.clear();
    this.partial.clear();
    this.rebuiltReason = undefined;
    this.rebuilding = false;
    this.newerIndex = undefined;
    // A writer in another process may switch files under us: re-read the manifest and retry a few times.
    for (let attempt = 0; ; attempt++) {
      let manifest: Manifest | null;
      try {
        manifest = await readManifest(this.host.data);
      } catch (err) {
        if (err instanceof NewerIndexError) {
          // Not discarded (nothing to sweep, no "rebuilt"): the notes are indexed in memory, by keywords only (a
          // reader embeds nothing), and the saved index stays the newer Krypton's. tryLock let go of the lock.
          this.newerIndex = this.newerIndexText(err);
          this.host.logger.warn(this.newerIndex);
          return;
        }
        if (attempt < 2 && !this.writable) {
          await this.host.clock.sleep(50 * (attempt + 1), signal);
          continue;
        }
        this.discard(errorText(err));
        return;
      }
      if (!manifest) {
        const files = await this.host.data.list(INDEX_DIR).catch(() => [] as string[]);
        if (files.some((f) => f.startsWith("shard-"))) this.discard("the index manifest was missing");
        return;
      }
      const incompatible = this.incompatibility(manifest);
      if (incompatible) {
        this.discard(incompatible);
        return;
      }
      // Another chunk size: keep everything, re-chunk on the sync that follows (unchanged chunk texts keep their vectors).
      this.rechunkAll = manifest.chunkMaxChars !== undefined && manifest.chunkMaxChars !== this.deps.settings().chunkMaxChars;
      // Words saved by another analyser: re-analyse the chunk texts (vectors stay) and save the shards again.
      const reanalyze = (manifest.analyzerVersion ?? 1) !== ANALYZER_VERSION;
      const damaged = [...(manifest.repairs ?? []), ...(await this.strayShards(manifest)), ...(await this.loadShards(manifest, slicer, reanalyze))];
      if (reanalyze) {
        this.host.logger.info("The text analyser changed: re-analysing note words (embeddings are kept)");
        this.store.markAllDirty();
      } else if (manifest.format !== INDEX_FORMAT) {
        // An older file format (float32 vectors): rewritten in the current one at the next save, vectors kept.
        this.store.markAllDirty();
      }
      if (damaged.length === 0) {
        this.generation = manifest.generation;
        return;
      }
      const again = await readManifest(this.host.data).catch(() => null);
      if (again && again.generation !== manifest.generation && attempt < 3) {
        this.store.clear();
        continue;
      }
      this.generation = manifest.generation;
      this.rebuiltReason = `${damaged[0]}${damaged.length > 1 ? ` (and ${damaged.length - 1} more)` : ""}; the affected notes were re-indexed`;
      this.store.markAllDirty();
      this.sweepAfterSave = true;
      this.host.logger.warn(`Index damaged: ${this.rebuiltReason}`);
      return;
    }
  }

  /** Set by a load whose chunks were cut with another chunk size: the next sync re-chunks every note. */
  private rechunkAll = false;

  private incompatibility(manifest: Manifest): string | null {
    // (A newer format never gets here: readManifest throws NewerIndexError.)
    if (!READABLE_FORMATS.includes(manifest.format)) return `the index format changed (${manifest.format} → ${INDEX_FORMAT})`;
    if (manifest.chunkerVersion !== CHUNKER_VERSION) return "the note chunker changed";
    return null;
  }

  /**
   * A manifest that lists no shards while shard files lie next to it lost its list (a crash cannot cause
   * that: the manifest is written whole): say so instead of quietly re-indexing everything.
   */
  private async strayShards(manifest: Manifest): Promise<string[]> {
    if (manifest.shards.length > 0) return [];
    const files = await this.host.data.list(INDEX_DIR).catch(() => [] as string[]);
    const stray = files.filter((f) => /^shard-\d+-\d+\.bin$/.test(f)).length;
    return stray > 0 ? [`the index manifest lists no shards although ${countOf(stray, "shard file")} ${stray === 1 ? "exists" : "exist"}`] : [];
  }

  /** The embedder of the vectors a reader without an embedder left on disk (status only). */
  private vectorsOnDiskOf: string | null = null;

  /** Returns the problems found (empty when every shard loaded). */
  private async loadShards(manifest: Manifest, slicer: WorkSlicer, reanalyze: boolean): Promise<string[]> {
    const embedder = this.deps.embedder();
    const stored = manifest.embedder;
    // Another model's vectors are useless: do not even read them into memory. Without an embedder a writer
    // keeps them (to save them again); a reader never uses them: they stay on disk and are only counted.
    const keepVectors = stored !== null && stored.dim > 0 && (embedder === null ? this.writable : embedder.id === stored.id);
    this.vectorsOnDiskOf = stored !== null && !keepVectors && embedder === null ? stored.id : null;
    if (keepVectors) {
      this.store.vectors.reset(stored.dim);
      this.store.vectorsOf = stored.id;
      this.store.vectors.reserve(manifest.shards.reduce((n, s) => n + (s.chunks ?? 0), 0), stored.dim);
    }
    const problems: string[] = [];
    for (const entry of manifest.shards) {
      await slicer.tick();
      try {
        const shard = await readShard(this.host.data, entry, stored?.dim ?? 0, reanalyze);
        await slicer.tick();
        await this.store.loadShard(entry, shard, keepVectors, slicer, reanalyze, this.vectorsOnDiskOf !== null);
        // Notes over a per-note limit stay named after a restart, not only in the run that indexed them.
        for (const note of shard.notes) if (note.limited && this.store.notes.get(note.path) === note) this.partial.set(note.path, note.limited);
      } catch (err) {
        if (isAbortError(err)) throw err;
        if (!(err instanceof IndexLoadError)) this.host.logger.warn("Reading an index shard failed", errorText(err));
        problems.push(err instanceof IndexLoadError ? err.message : `shard ${entry.file} could not be read (${errorText(err)})`);
      }
    }
    return problems;
  }

  private discard(reason: string): void {
    this.store.clear();
    this.sweepAfterSave = true;
    this.rebuiltReason = reason;
    this.host.logger.warn(`Index discarded: ${reason}`);
  }

  // ---------------------------------------------------------------- syncing

  /** Scans the vault, applies what changed, embeds what lacks a vector, saves. Runs inside `exclusive`. */
  /** `listing`: a vault listing already under way (open() starts it before loading). */
  private async syncNow(signal: AbortSignal | undefined, force: boolean, listing?: Promise<NoteInfo[]>): Promise<void> {
    const slicer = this.slicer(signal);
    this.setState("indexing");
    this.setProgress({ done: 0, total: 0, phase: "scanning" });
    let listed: NoteInfo[];
    try {
      listed = await (listing ?? this.host.vault.listNotes());
    } catch (err) {
      this.progress = undefined;
      // A network drive back, a permission restored: the index heals by itself, at the next vault event or
      // after a back-off that grows while the listing keeps failing. close() cancels the timer.
      let retry = "";
      if (!this.closed && !isAbortError(err)) {
        const { baseDelayMs, maxDelayMs } = this.options.listRetry;
        const delay = backoffMs(this.listFailures++, baseDelayMs, maxDelayMs);
        this.startBackgroundAfter(delay);
        retry = `; Krypton tries again in ${waitText(delay)} or when a note changes`;
      }
      this.setState("error", `The vault's notes could not be listed (${errorText(err)})${retry}`);
      throw err;
    }
    this.listFailures = 0;
    // Every pass over the listing goes in steps: at 100,000 notes one pass held the thread for 50-150 ms.
    const present = await this.notesToIndex(listed, slicer);
    this.skippedFolders = (this.host.vault.skippedFolders?.() ?? []).map(({ path, reason }) => ({ path, error: reason }));
    this.everyNoteExcludedBy = present.size === 0 ? this.host.vault.everyNoteExcludedBy?.() ?? null : null;

    this.failures.clear();
    for (const path of [...this.partial.keys()]) if (!present.has(path)) this.partial.delete(path);
    let n = 0;
    for (const path of [...this.store.notes.keys()]) {
      if (!present.has(path)) this.store.removeNote(path);
      if (++n % STEP_ITEMS === 0) await slicer.tick();
    }
    const toRead: NoteInfo[] = [];
    for (const info of present.values()) {
      const known = this.store.notes.get(info.path);
      if (force || !known || known.mtime !== info.mtime || known.size !== info.size) toRead.push(info);
      if (++n % STEP_ITEMS === 0) await slicer.tick();
    }
    await this.readAndChunk(toRead, slicer, force);
    this.store.flushRecycled();
    if (force) this.rechunkAll = false;
    this.chunkedWith = this.deps.settings().chunkMaxChars;
    await this.applyQueued(slicer);
    if (this.store.text.needsCompaction) await this.store.text.compact(() => slicer.tick());

    let aborted: unknown = null;
    try {
      await this.embed(signal);
    } catch (err) {
      if (!isAbortError(err)) throw err;
      aborted = err;
    }
    if (this.writable && this.store.hasDirty) {
      this.setProgress({ done: 0, total: 1, phase: "saving" });
      await this.persist(this.slicer(undefined));
    }
    if (this.rebuilding && !aborted && this.writable) {
      // The rebuild is complete: switch the manifest to the new files in one atomic write.
      this.rebuilding = false;
      await this.persist(this.slicer(undefined), true);
    }
    this.progress = undefined;
    this.setState("ready");
    if (aborted) throw aborted instanceof Error ? aborted : new AbortedError("Aborted");
  }

  private async readAndChunk(notes: NoteInfo[], slicer: WorkSlicer, force: boolean): Promise<void> {
    const total = notes.length;
    let saving = true;
    for (let i = 0; i < total; i++) {
      if (i % 16 === 0) this.setProgress({ done: i, total, phase: "chunking" });
      await this.indexNote(notes[i], slicer, force);
      await slicer.tick();
      // Save what was read so far: saved chunks keep their text on disk, not in memory. A failed save is
      // said once and the scan goes on in memory (the save at its end reports the failure as before).
      if (saving && this.writable && this.store.unsavedTextChars > this.options.unsavedTextBudget) {
        await this.persist(slicer).catch((err: unknown) => {
          if (isAbortError(err)) throw err;
          saving = false;
          this.host.logger.warn("Saving the index during the scan failed; going on in memory", errorText(err));
        });
        await this.sealWords(slicer);
      }
    }
    await this.sealWords(slicer);
    if (total > 0) this.setProgress({ done: total, total, phase: "chunking" });
  }

  /**
   * The words' postings added by a large scan go into one exact-size block (TextIndex.seal), as a loaded
   * index holds them; a few notes' worth stays in the growing lists.
   */
  private async sealWords(slicer: WorkSlicer): Promise<void> {
    if (this.store.text.unsealedPostings >= SEAL_MIN_POSTINGS) await this.store.text.seal(() => slicer.tick());
  }

  /** Reads one note and updates the index if its content changed. Failures are recorded per file. */
  private async indexNote(info: NoteInfo, slicer: WorkSlicer, force = false): Promise<void> {
    let content: string;
    try {
      content = await this.host.vault.readNote(info.path);
    } catch (err) {
      this.store.removeNote(info.path);
      // A note the read policy refuses (binary, symlink leading out, too large) is skipped, and says why.
      this.failures.set(info.path, isNoteRefusedError(err) ? err.reason : `Could not read the note: ${errorText(err)}`);
      return;
    }
    // In slices: a 5 MB note hashed in one go held Obsidian's main thread for tens of milliseconds.
    const hash = await hashTextSliced(content, () => slicer.tick());
    const known = this.store.notes.get(info.path);
    if (known && known.hash === hash && !force) {
      this.store.touchNote(info.path, info.mtime, info.size);
      return;
    }
    try {
      const limits = this.limitNote(info.path, content);
      const chunked = await chunkNoteSliced(
        info.path,
        limits.content,
        { maxChars: this.deps.settings().chunkMaxChars, maxChunks: this.options.maxChunksPerNote },
        () => slicer.tick(),
      );
      const lines = limits.content.length < content.length ? lineCount(limits.content) : 0;
      let limited: string | undefined;
      if (chunked.cutAfterLine !== undefined || lines > 0) {
        const after = chunked.cutAfterLine ?? lines;
        const why = chunked.cutAfterLine !== undefined ? `more than ${formatCount(this.options.maxChunksPerNote)} chunks` : `more than ${formatCount(this.options.maxNoteChars)} characters`;
        limited = `indexed up to line ${formatCount(after)} only: the note has ${why}`;
        this.partial.set(info.path, limited);
      } else {
        this.partial.delete(info.path);
      }
      await this.store.putNote(
        { path: info.path, hash, mtime: info.mtime, size: info.size, title: chunked.title, aliases: chunked.aliases, tags: chunked.tags, limited },
        chunked.chunks,
        slicer,
      );
      this.failures.delete(info.path);
    } catch (err) {
      if (isAbortError(err)) throw err;
      this.store.removeNote(info.path);
      this.failures.set(info.path, `Could not index the note: ${errorText(err)}`);
    }
  }

  /** A note's text cut to maxNoteChars at a line end (the chunker never sees more than that). */
  private limitNote(path: string, content: string): { content: string } {
    const limit = this.options.maxNoteChars;
    if (content.length <= limit) return { content };
    const end = content.lastIndexOf("\n", limit);
    this.host.logger.info(`Note ${path} is over ${limit} characters: only its beginning is indexed`);
    return { content: content.slice(0, end > 0 ? end : limit) };
  }

  /** Applies queued vault events (deletes first, so renamed notes can take their vectors along). */
  private async applyQueued(slicer: WorkSlicer): Promise<void> {
    if (this.queued.size === 0) return;
    const work = [...this.queued];
    this.queued.clear();
    const excluded = this.exclusionFilter();
    for (const [path, intent] of work) {
      if (intent === "delete") {
        this.store.removeNote(path);
        this.failures.delete(path);
        this.partial.delete(path);
      }
    }
    const checks = work.filter(([path, intent]) => intent === "check" && path.toLowerCase().endsWith(".md"));
    let done = 0;
    for (const [path] of checks) {
      if (done++ % 16 === 0 && checks.length > 32) this.setProgress({ done, total: checks.length, phase: "chunking" });
      if (excluded(path) || !(await this.host.vault.exists(path).catch(() => false))) {
        this.store.removeNote(path);
        continue;
      }
      const info = await this.noteInfo(path);
      await this.indexNote(info, slicer);
      await slicer.tick();
    }
    this.store.flushRecycled();
    this.progress = undefined;
    this.emit(true);
  }

  private async noteInfo(path: string): Promise<NoteInfo> {
    // Events carry no size or mtime; listNotes would be a full scan, so the index reads the note instead
    // and records a fresh mtime of "now" (the next full scan re-reads it once, then matches by hash).
    return { path, mtime: this.host.clock.now(), size: -1 };
  }

  // ---------------------------------------------------------------- embedding

  private async embed(signal?: AbortSignal): Promise<void> {
    const embedder = this.deps.embedder();
    if (!embedder) {
      this.embedderError = undefined;
      return;
    }
    if (!this.writable) return;
    if (this.store.vectorsOf !== embedder.id) {
      if (this.store.vectorsOf !== null) this.host.logger.info(`Embedding model changed to ${embedder.id}: re-embedding`);
      this.store.dropVectors(embedder.id);
      this.queryVectors.clear();
    }
    let outcome = await this.embedOnce(embedder, signal);
    if (outcome.error instanceof DimensionMismatchError) {
      // Same model name, different model (re-pulled or replaced): its old vectors cannot be compared.
      this.host.logger.info(`Embedding model ${embedder.id} changed its dimension: re-embedding`);
      this.store.dropVectors(embedder.id);
      this.queryVectors.clear();
      outcome = await this.embedOnce(embedder, signal);
    }
    if (outcome.error) {
      if (isAbortError(outcome.error)) throw outcome.error instanceof Error ? outcome.error : new AbortedError("Aborted");
      this.embedFailedAt = this.host.clock.now();
      this.embedderError = embedderErrorText(outcome.error, embedder);
      this.host.logger.warn(`Embedding stopped: ${this.embedderError}`);
    } else {
      this.embedderError = undefined;
      this.embedFailedAt = -Infinity;
    }
    this.emit(true);
  }

  private embedOnce(embedder: Embedder, signal?: AbortSignal): Promise<EmbedOutcome> {
    const slicer = this.slicer(signal);
    return embedPending(this.store, embedder, {
      concurrency: this.options.embedConcurrency,
      retry: this.options.retry,
      firstAnswerTimeoutMs: this.options.embedFirstAnswerMs,
      clock: this.host.clock,
      signal,
      checkpointEveryMs: this.options.checkpointEveryMs,
      checkpointEveryChunks: this.options.checkpointEveryChunks,
      checkpoint: () => this.persist(this.slicer(undefined)),
      textsOf: (records) => this.textsOf(records),
      onProgress: (done, total) => this.setProgress({ done, total, phase: "embedding" }),
      between: async () => {
        await slicer.tick();
        if (this.queued.size > 0 && !this.cancelDebounce) await this.applyQueued(slicer);
      },
      tick: () => slicer.tick(),
    });
  }

  // ---------------------------------------------------------------- saving

  private persisting: Promise<void> | null = null;
  private sweepAfterSave = false;
  /**
   * Shard files this process wrote that no saved manifest names yet (a rebuild's checkpoints, or a save that
   * failed at its manifest, say a folder in its way). Their texts are read back while the index is open;
   * close() removes those still unnamed, so a failed save leaves no stray file in .krypton/index.
   */
  private readonly unsavedShards = new Set<string>();
  /** A rebuild is under way: saves write shard files only, the manifest is switched when it completes. */
  private rebuilding = false;

  /** Writes changed shards, then the manifest (the commit point), then removes replaced files. */
  private async persist(slicer: WorkSlicer, commit = false): Promise<void> {
    while (this.persisting) await this.persisting.catch(() => undefined);
    if (!this.writable || (!this.store.hasDirty && !commit)) return;
    const run = (async () => {
      if (!(await this.lock.verify())) {
        this.writable = false;
        this.host.logger.warn("Another Krypton process took over the index; this one now only reads it");
        return;
      }
      let generation = ++this.generation;
      const before = new Set([...this.store.shardFiles.values()].map((entry) => entry.file));
      let obsolete: string[] = [];
      try {
        for (let attempt = 1; ; attempt++) {
          try {
            await this.store.writeDirtyShards(this.host.data, generation, slicer, obsolete);
            break;
          } catch (err) {
            // A folder with files in it at this save's shard file name is not Krypton's to remove, and the name is
            // only a name: the shards left go under the next generation's, and the folder is named (status).
            if (!(err instanceof FolderInTheWayError && err.writing) || attempt >= MAX_SHARD_NAMES_TRIED) throw err;
            this.foldersInTheWay.add(err.folder);
            this.host.logger.warn(`Saving the index: ${err.folder} is a folder with files in it; saved the shard under another name`);
            generation = ++this.generation;
          }
        }
      } finally {
        for (const entry of this.store.shardFiles.values()) if (!before.has(entry.file)) this.unsavedShards.add(entry.file);
      }
      // Replaced before any manifest named them (an earlier save failed at its manifest): nothing refers to them.
      const neverNamed = obsolete.filter((f) => this.unsavedShards.has(f));
      for (const file of neverNamed) {
        await this.host.data.remove(`${INDEX_DIR}/${file}`).catch(() => undefined);
        this.unsavedShards.delete(file);
      }
      obsolete = obsolete.filter((f) => !neverNamed.includes(f));
      this.reindexUnreadableShards();
      const dim = this.store.vectors.dim;
      const manifest: Manifest = {
        format: INDEX_FORMAT,
        chunkerVersion: CHUNKER_VERSION,
        analyzerVersion: ANALYZER_VERSION,
        chunkMaxChars: this.deps.settings().chunkMaxChars,
        embedder: this.store.vectorsOf && dim > 0 ? { id: this.store.vectorsOf, dim } : null,
        generation,
        savedAt: this.host.clock.now(),
        shards: [...this.store.shardFiles.values()].sort((a, b) => a.id - b.id),
      };
      if (this.rebuilding) {
        // Files of earlier checkpoints of this rebuild that nothing will reference.
        for (const file of obsolete) await this.host.data.remove(`${INDEX_DIR}/${file}`).catch(() => undefined);
        return;
      }
      await writeManifest(this.host.data, manifest);
      this.unsavedShards.clear();
      for (const file of obsolete) await this.host.data.remove(`${INDEX_DIR}/${file}`).catch(() => undefined);
      // After a rebuild the old shards are not "replaced" one by one: sweep whatever the manifest dropped.
      if (this.sweepAfterSave) {
        this.sweepAfterSave = false;
        await removeUnreferenced(this.host.data, manifest).catch(() => undefined);
      }
    })();
    this.persisting = run;
    try {
      await run;
    } finally {
      this.persisting = null;
    }
  }

  /** See unsavedShards: only files this process wrote, only inside .krypton/index, only while it holds the lock. */
  private async removeUnsavedShards(): Promise<void> {
    for (const file of this.unsavedShards) await this.host.data.remove(`${INDEX_DIR}/${file}`).catch(() => undefined);
    this.unsavedShards.clear();
  }

  /** The chunk size setting changed since the notes in memory were chunked. */
  private chunkSizeChanged(): boolean {
    return this.chunkedWith !== null && this.chunkedWith !== this.deps.settings().chunkMaxChars;
  }

  /** chunkMaxChars of the chunks in memory (set by each full scan). */
  private chunkedWith: number | null = null;

  /** A read-only opener still says who writes the index, if anyone does (status shows it). */
  private async noteHolder(): Promise<void> {
    const holder = await this.lock.peek().catch(() => null);
    this.lockProblem = holder ? { heldBy: describeHolder(holder, this.host.process?.hostName) } : {};
  }

  private async tryLock(): Promise<boolean> {
    this.lockProblem = {};
    this.lockNotice = undefined;
    try {
      const got = await this.lock.acquire();
      if (this.lock.tookOver) {
        this.lockNotice = this.lock.tookOver;
        this.host.logger.info(this.lock.tookOver);
      }
      if (this.lock.holder) this.lockProblem = { heldBy: describeHolder(this.lock.holder, this.host.process?.hostName) };
      if (got) {
        const manifest = await readManifest(this.host.data).catch((err: unknown) => (err instanceof NewerIndexError ? err : null));
        if (manifest instanceof NewerIndexError) {
          // Checked under the lock (no newer Krypton can save meanwhile), then the lock is let go: this version
          // only reads, and the newer one may write as soon as it wants to.
          await this.lock.release();
          this.newerIndex = this.newerIndexText(manifest);
          this.lockProblem = { writeError: this.newerIndex };
          return false;
        }
        // This writer syncs now anyway: a request left for a previous holder is answered by that.
        await this.host.data.remove(SYNC_REQUEST_PATH).catch(() => undefined);
        // Files a crashed writer left behind.
        // (A manifest without shards but with shard files beside it is damage that loading reports: keep them.)
        if (manifest && manifest.shards.length > 0) await removeUnreferenced(this.host.data, manifest, true).catch(() => undefined);
      } else {
        this.host.logger.info("Another Krypton process is writing this index: opening it read-only");
      }
      return got;
    } catch (err) {
      this.lockProblem = { writeError: errorText(err) };
      this.host.logger.warn("Could not take the index lock; opening read-only", errorText(err));
      return false;
    }
  }

  /** Why this version leaves the saved index alone, and how to update it where it runs. */
  private newerIndexText(err: NewerIndexError): string {
    const update = this.host.platform.kind === "cli" ? "`git pull && npm ci` in its folder" : "Settings → Community plugins → Check for updates";
    return `${err.message}, which this version leaves as it is: update Krypton (${update})`;
  }

  // ---------------------------------------------------------------- helpers

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.jobs.run(fn);
  }

  /**
   * The caller's signal, also fired by close(): open/sync/rebuild started without a signal (CLI, MCP)
   * still stop promptly on close, embedding requests and retry pauses included.
   */
  private untilClose(signal?: AbortSignal): { signal: AbortSignal; dispose: () => void } {
    const lifetime = this.backgroundAbort.signal;
    if (!signal) return { signal: lifetime, dispose: () => undefined };
    const linked = new AbortController();
    const fire = () => linked.abort();
    if (signal.aborted || lifetime.aborted) linked.abort();
    signal.addEventListener("abort", fire, { once: true });
    lifetime.addEventListener("abort", fire, { once: true });
    return {
      signal: linked.signal,
      dispose: () => {
        signal.removeEventListener("abort", fire);
        lifetime.removeEventListener("abort", fire);
      },
    };
  }

  private whileLinked<T>(run: { dispose: () => void }, fn: () => Promise<T>): Promise<T> {
    const result = this.exclusive(fn);
    result.then(run.dispose, run.dispose);
    return result;
  }

  private slicer(signal?: AbortSignal): WorkSlicer {
    return new WorkSlicer(this.host.clock, signal, this.options.sliceMs);
  }

  /** The notes of a vault listing the index should hold (markdown, allowed by the read policy), by path. */
  private async notesToIndex(listed: readonly NoteInfo[], slicer?: WorkSlicer): Promise<Map<string, NoteInfo>> {
    const excluded = this.exclusionFilter();
    const present = new Map<string, NoteInfo>();
    for (let i = 0; i < listed.length; i++) {
      const info = listed[i];
      if (info.path.toLowerCase().endsWith(".md") && !excluded(info.path)) present.set(info.path, info);
      if (slicer && i % STEP_ITEMS === STEP_ITEMS - 1) await slicer.tick();
    }
    return present;
  }

  private exclusionFilter() {
    const policy = this.readPolicy();
    return (path: string) => !policy.mayRead(path);
  }

  private policyCache?: { patterns: readonly string[]; configDir: string; policy: ReadPolicy };
  /** The one read policy (core/notes/read-policy.ts) for the current exclude patterns. */
  private readPolicy(): ReadPolicy {
    const patterns = this.deps.settings().excludePatterns;
    const configDir = this.host.vault.configDir;
    if (this.policyCache?.patterns !== patterns || this.policyCache.configDir !== configDir) {
      this.policyCache = { patterns, configDir, policy: createReadPolicy({ excludePatterns: patterns }, configDir) };
    }
    return this.policyCache.policy;
  }

  private setState(state: Exclude<IndexStatus["state"], "error">): void;
  private setState(state: "error", why: string): void;
  private setState(state: IndexStatus["state"], why?: string): void {
    this.state = state;
    this.stateError = why;
    this.emit(true);
  }

  private setProgress(progress: NonNullable<IndexStatus["progress"]>): void {
    const phaseChanged = this.progress?.phase !== progress.phase;
    this.progress = progress;
    this.emit(phaseChanged);
  }

  private emit(force: boolean): void {
    if (this.listeners.size === 0) return;
    const now = this.host.clock.now();
    if (!force && now - this.lastEmit < STATUS_THROTTLE_MS) return;
    this.lastEmit = now;
    const status = this.status();
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (err) {
        this.host.logger.warn("An index status listener failed", errorText(err));
      }
    }
  }
}

/** A ranking as the search API hands it out: the reason read from the status right after a search that went without meaning. */
function withReason<T>({ hits, withoutMeaning }: Ranking<T>, status: () => IndexStatus): SearchResult<T> {
  const keywordOnly = withoutMeaning ? keywordOnlyReason(status()) : null;
  return keywordOnly ? { hits, keywordOnly } : { hits };
}

function errorText(err: unknown): string {
  return errorMessage(err);
}

/**
 * What is wrong with the embedder, in plain words and without a closing stop: it is shown alone beside
 * "keyword-only" (status bar, status dialog, `krypton status`) and inside "Semantic search is unavailable
 * (…): notes were matched by keywords only." (keyword-only.ts), so it leaves the consequence to them.
 */
function embedderErrorText(err: unknown, embedder: Embedder): string {
  return embedderProblemText(err, embedder).replace(/\.$/, "");
}

function embedderProblemText(err: unknown, embedder: Embedder): string {
  const model = embedder.id.replace(/^[a-z]+:/, "");
  if (err instanceof ProviderError) {
    switch (err.kind) {
      case "unreachable": // "Ollama is not reachable at <url>: is it running and is the address right?"
      case "model-missing":
        return err.message;
      case "timeout": {
        const within = /within (\d+ s)/.exec(err.message)?.[1];
        return `The embedding model '${model}' did not answer ${within ? `within ${within}` : "in time"}`;
      }
      case "rate-limited": {
        const wait = err.retryAfterMs !== undefined ? ` and asks to wait ${waitText(err.retryAfterMs)}` : "";
        return `The embedding service is rate-limiting requests${wait}`;
      }
      default:
        return `Embedding failed: ${err.message}`;
    }
  }
  return `Embedding failed: ${errorText(err)}`;
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
