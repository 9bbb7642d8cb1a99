import type { DataDirPort } from "../ports/data-dir";
import type { Chunk } from "./chunk";
import { type ChunkRecord, chunkOf, chunkRecord, type NoteFacts, noteRecord, type NoteRecord, trailKey } from "./index-records";
import { IndexLoadError, readShardFile, readShardTexts, type ShardEntry, SHARD_MAX_CHUNKS, writeShard } from "./index-persistence";
import { ShardTextBuffers } from "./shard-text-buffers";
import { encodeShard, encodeShardVectors, type DecodedShard, type ShardTexts } from "./shard-codec";
import { TextIndex } from "./text-index";
import { type StoredCodes, VectorStore } from "./vector-store";
import type { WorkSlicer } from "./work-slicer";
import { ownString } from "../util/own-string";

/** Text-index inserts per slice: small enough that one insert never holds the thread for long. */
const TEXT_INSERT_SLICE = 64;
/** Shards whose chunk texts stay cached after a search read them (a shard's texts are ~1 MB). */
const TEXT_CACHE_SHARDS = 8;

interface ShardInfo {
  paths: Set<string>;
  chunks: number;
}

/**
 * The index in memory: notes and their chunks, the Orama text index, the vector store, and which
 * persistence shard every note belongs to. All changes go through here so the four stay consistent.
 */
export class IndexStore {
  readonly notes = new Map<string, NoteRecord>();
  /** Chunks in the index. */
  chunkCount = 0;
  readonly text = new TextIndex<ChunkRecord>();
  readonly vectors = new VectorStore();
  /** Vector slot → its chunk. */
  private readonly slotOwner: (ChunkRecord | undefined)[] = [];
  /** Embedder id the vectors belong to. */
  vectorsOf: string | null = null;
  /** A loaded shard held vectors (kept or not): dropping vectors must rewrite the shards. */
  private vectorsSaved = false;
  /** Saved vectors of the notes in memory that were left on disk (loadShard without vectors). */
  vectorsOnDisk = 0;

  private readonly shards = new Map<number, ShardInfo>();
  private readonly dirty = new Set<number>();
  /** What the manifest currently says about each shard on disk. */
  readonly shardFiles = new Map<number, ShardEntry>();
  private openShard = -1;
  private nextShardId = 0;

  /** Vectors of removed or changed chunks, by textHash, claimable by new chunks until flushRecycled(). */
  private recycled = new Map<string, number[]>();
  /** Chunk texts of recently read shard files, by file name (a name is never reused for other contents). */
  private readonly textCache = new Map<string, ShardTexts>();
  /** Where textsOf reads shard texts it does not find in textCache. */
  private readonly textBuffers = new ShardTextBuffers();
  /** Characters of chunk text held in memory (chunks not saved yet). */
  unsavedTextChars = 0;
  /** Shards whose chunk texts could not be read back (damaged or cut files), with why: VaultIndex re-indexes their notes. */
  readonly unreadableTexts = new Map<number, string>();
  /** Notes a save dropped because their saved texts could not be read: VaultIndex reads them from the vault again. */
  readonly droppedNotes = new Set<string>();

  clear(): void {
    this.notes.clear();
    this.chunkCount = 0;
    this.text.clear();
    this.vectors.reset();
    this.slotOwner.length = 0;
    this.vectorsOf = null;
    this.vectorsSaved = false;
    this.vectorsOnDisk = 0;
    this.shards.clear();
    this.dirty.clear();
    this.shardFiles.clear();
    this.openShard = -1;
    this.nextShardId = 0;
    this.recycled.clear();
    this.textCache.clear();
    this.textBuffers.clear();
    this.unsavedTextChars = 0;
    this.droppedNotes.clear();
  }

  get hasDirty(): boolean {
    return this.dirty.size > 0;
  }

  chunkOfSlot(slot: number): ChunkRecord | undefined {
    return this.slotOwner[slot];
  }

  /**
   * Chunks still waiting for a vector, in note order. Collected in steps (`tick` between them): one pass over
   * 500,000 chunks held the thread for over 100 ms. A chunk replaced meanwhile may be listed: callers skip
   * the ones no longer current (isCurrent).
   */
  async pendingChunks(tick: () => Promise<void>): Promise<ChunkRecord[]> {
    const out: ChunkRecord[] = [];
    let n = 0;
    for (const note of this.notes.values()) {
      for (const rec of note.chunks) if (rec.slot < 0) out.push(rec);
      if (++n % 256 === 0) await tick();
    }
    return out;
  }

  isCurrent(rec: ChunkRecord): boolean {
    return !rec.detached;
  }

  /** Gives a chunk its vector; false when the chunk was replaced or already has one. */
  setVector(rec: ChunkRecord, vector: ArrayLike<number>): boolean {
    if (!this.isCurrent(rec) || rec.slot >= 0) return false;
    rec.slot = this.vectors.add(vector);
    this.slotOwner[rec.slot] = rec;
    this.markDirty(rec.note.shard);
    return true;
  }

  /** Forgets every vector (another embedder's vectors cannot be compared with this one's). */
  dropVectors(newOwner: string | null): void {
    if (this.vectorsOf === null && this.vectors.size === 0 && !this.vectorsSaved) {
      // Nothing to drop, in memory or on disk (a first build): no pass over every chunk, and no shard needs
      // rewriting (marking them all dirty made the first checkpoint of a 100k-note build re-encode every shard).
      this.vectorsOf = newOwner;
      return;
    }
    for (const note of this.notes.values()) for (const rec of note.chunks) rec.slot = -1;
    this.vectors.reset();
    this.slotOwner.length = 0;
    this.recycled.clear();
    this.vectorsOf = newOwner;
    for (const id of this.shards.keys()) this.dirty.add(id);
  }

  /** Removes a note; its vectors stay claimable by textHash until flushRecycled() (renames, moves). */
  removeNote(path: string): boolean {
    const note = this.notes.get(path);
    if (!note) return false;
    this.detach(note);
    return true;
  }

  /**
   * Adds or replaces a note with freshly chunked content, reusing vectors of chunks whose text is unchanged.
   * The store takes the chunk objects over: their texts are dropped once saved (textsOf reads them back).
   */
  async putNote(
    meta: NoteFacts,
    chunks: Chunk[],
    slicer: WorkSlicer,
  ): Promise<void> {
    const old = this.notes.get(meta.path);
    if (old) this.detach(old);
    const trails = ownNoteStrings(meta, chunks);
    const shard = this.assignShard(old?.shard, chunks.length);
    const note = noteRecord(meta, chunks.length, shard);
    const records = note.chunks;
    chunks.forEach((chunk, k) => {
      const rec = chunkRecord(note, k, trails[k], chunk, chunk.text);
      const slots = this.recycled.get(chunk.textHash);
      if (slots && slots.length > 0) {
        rec.slot = slots.pop() as number;
        this.slotOwner[rec.slot] = rec;
      }
      this.unsavedTextChars += chunk.text.length;
      records[k] = rec;
    });
    this.notes.set(note.path, note);
    this.chunkCount += records.length;
    this.shards.get(shard)?.paths.add(note.path);
    const info = this.shards.get(shard);
    if (info) info.chunks += records.length;
    this.markDirty(shard);
    // A stop (close, cancel) between slices must not leave the note half in the word index: finish it, then stop.
    let stopped: Error | null = null;
    for (let i = 0; i < records.length; i += TEXT_INSERT_SLICE) {
      for (let r = i; r < Math.min(records.length, i + TEXT_INSERT_SLICE); r++) {
        // Replaced while an earlier slice yielded: its words must not enter the index.
        if (!records[r].detached) records[r].textSlot = this.text.add(chunks[r], records[r]);
      }
      if (stopped === null) {
        try {
          await slicer.tick();
        } catch (err) {
          stopped = err instanceof Error ? err : new Error(String(err));
        }
      }
    }
    if (stopped !== null) throw stopped;
  }

  /** Records a new mtime for a note whose content is unchanged (so the next scan need not read it). */
  touchNote(path: string, mtime: number, size: number): void {
    const note = this.notes.get(path);
    if (!note || (note.mtime === mtime && note.size === size)) return;
    note.mtime = mtime;
    note.size = size;
    this.markDirty(note.shard);
  }

  /** Frees the vectors nobody claimed since the last removals. */
  flushRecycled(): void {
    for (const slots of this.recycled.values()) {
      for (const slot of slots) {
        this.vectors.remove(slot);
        this.slotOwner[slot] = undefined;
      }
    }
    this.recycled.clear();
  }

  /**
   * Adds one shard read from disk (its full-text entries come pre-analyzed; with `reanalyze`, saved by
   * another analyser version, the chunk texts are analysed again). Vectors only when `withVectors`; with
   * `countOnDisk` the ones left out are counted as saved (a reader without an embedder).
   */
  async loadShard(entry: ShardEntry, shard: DecodedShard, withVectors: boolean, slicer: WorkSlicer, reanalyze = false, countOnDisk = false): Promise<void> {
    const dim = this.vectors.dim;
    const { text } = shard;
    const terms = reanalyze ? [] : this.text.resolveTerms(text.dictionary);
    // All of the shard's vectors in one block copy; vector v lands in slot firstSlot + v.
    const vectorCount = dim > 0 ? shard.scales.length : 0;
    const firstSlot = withVectors && vectorCount > 0 ? this.vectors.addCodesMany(shard.codes, shard.scales, vectorCount, dim) : -1;
    const damaged = firstSlot >= 0 ? this.vectors.lengthProblem(firstSlot, vectorCount) : null;
    if (damaged) {
      for (let v = 0; v < vectorCount; v++) this.vectors.remove(firstSlot + v);
      throw new IndexLoadError(`shard ${entry.file} has impossible contents: ${damaged}`);
    }
    const claimed = new Uint8Array(firstSlot >= 0 ? vectorCount : 0);
    let i = 0;
    const info: ShardInfo = { paths: new Set(), chunks: 0 };
    // Text-index owners by chunk position (undefined: a chunk left out).
    const owners: (ChunkRecord | undefined)[] = reanalyze ? [] : new Array<ChunkRecord | undefined>(text.lengths.length);
    for (const note of shard.notes) {
      // A note can only be in one shard; if a damaged index lists it twice, the first copy wins.
      if (this.notes.has(note.path)) {
        i += note.chunks.length;
        continue;
      }
      note.shard = entry.id;
      this.notes.set(note.path, note);
      info.paths.add(note.path);
      info.chunks += note.chunks.length;
      let onDisk = 0;
      for (const rec of note.chunks) {
        const v = shard.vectorIndex[i];
        if (v >= 0) this.vectorsSaved = true;
        if (firstSlot >= 0 && v >= 0) {
          rec.slot = firstSlot + v;
          claimed[v] = 1;
          this.slotOwner[rec.slot] = rec;
        } else if (countOnDisk && v >= 0) {
          onDisk++;
        }
        this.chunkCount++;
        if (reanalyze) rec.textSlot = this.text.add(chunkOf(rec, shard.texts.textAt(i)), rec);
        else owners[i] = rec;
        i++;
        if (i % TEXT_INSERT_SLICE === 0) await slicer.tick();
      }
      if (onDisk > 0) {
        note.vectorsOnDisk = onDisk;
        this.vectorsOnDisk += onDisk;
      }
    }
    if (!reanalyze) {
      // The whole shard's words in one step (stored analysis, sorted by word into one block).
      const first = this.text.addBlock(owners, terms, text);
      owners.forEach((rec, k) => {
        if (rec) rec.textSlot = first + k;
      });
    }
    // Vectors of notes skipped as duplicates belong to nobody.
    for (let v = 0; v < claimed.length; v++) if (claimed[v] === 0) this.vectors.remove(firstSlot + v);
    this.shards.set(entry.id, info);
    this.shardFiles.set(entry.id, entry);
    this.nextShardId = Math.max(this.nextShardId, entry.id + 1);
    if (info.chunks < SHARD_MAX_CHUNKS) this.openShard = entry.id;
    await slicer.tick();
  }

  /**
   * Writes every changed shard under a new generation name; returns the files that the new manifest
   * no longer references (to delete once the manifest is written), gathered in `obsolete`, which keeps those
   * of the shards written before a failure (a save that goes on under another generation still needs them).
   */
  async writeDirtyShards(data: DataDirPort, generation: number, slicer: WorkSlicer, obsolete: string[] = []): Promise<string[]> {
    for (const id of [...this.dirty]) {
      this.dirty.delete(id);
      const info = this.shards.get(id);
      const previous = this.shardFiles.get(id);
      if (!info || info.paths.size === 0) {
        this.shards.delete(id);
        this.shardFiles.delete(id);
        if (previous) obsolete.push(previous.file);
        continue;
      }
      const vectorOf = (rec: ChunkRecord) => (rec.slot >= 0 ? this.vectors.codesAt(rec.slot) : null);
      // Its notes unchanged since the last save (only vectors came): the previous file with new vectors.
      let notes: NoteRecord[] = [...info.paths].map((p) => this.notes.get(p)).filter((n): n is NoteRecord => n !== undefined);
      let bytes = previous?.parts ? await this.withNewVectors(data, previous, notes, vectorOf) : null;
      if (!bytes) {
        notes = await this.notesWithTexts(data, [...info.paths], previous);
        if (notes.length === 0) {
          this.dirty.add(id);
          continue;
        }
        const previousTexts = previous && notes.some((n) => n.chunks.some((r) => r.text === undefined)) ? await this.shardTexts(data, previous) : null;
        bytes = await encodeShard(
          notes,
          this.vectors.dim,
          vectorOf,
          (rec) => rec.text ?? (previousTexts as ShardTexts).textAt(rec.at),
          () => slicer.tick(),
        );
      }
      let entry: ShardEntry;
      try {
        entry = await writeShard(data, id, generation, bytes, notes.length, notes.reduce((n, note) => n + note.chunks.length, 0));
      } catch (err) {
        this.dirty.add(id);
        throw err;
      }
      this.shardFiles.set(id, entry);
      if (previous && previous.file !== entry.file) obsolete.push(previous.file);
      // Saved: from now on the texts are read back from this file, by position.
      let at = 0;
      for (const note of notes) {
        // A note replaced while the shard was being written keeps its new records (and their texts).
        if (this.notes.get(note.path) !== note) {
          at += note.chunks.length;
          this.dirty.add(id);
          continue;
        }
        for (const rec of note.chunks) {
          rec.at = at++;
          if (rec.text !== undefined) {
            this.unsavedTextChars -= rec.text.length;
            rec.text = undefined;
          }
        }
      }
      await slicer.tick();
    }
    return obsolete;
  }

  /**
   * The shard re-encoded from its previous file with new vectors (encodeShardVectors), or null when its
   * notes changed or the file cannot be read intact (then it is encoded in full, as before). Every chunk
   * must have been saved in that file (none holds a text in memory), and the file passes its checksums
   * first: a damaged part is never carried over under fresh checksums.
   */
  private async withNewVectors(data: DataDirPort, previous: ShardEntry, notes: NoteRecord[], vectorOf: (rec: ChunkRecord) => StoredCodes | null): Promise<Uint8Array | null> {
    if (notes.length === 0 || notes.some((n) => n.chunks.some((r) => r.text !== undefined || r.at < 0))) return null;
    const file = await readShardFile(data, previous).catch(() => null);
    // The notes as they are now (a save or a change may have come while the file was read).
    if (!file || notes.some((n) => this.notes.get(n.path) !== n)) return null;
    return encodeShardVectors(file, notes, this.vectors.dim, vectorOf);
  }

  /**
   * The notes of a shard about to be saved, each with every chunk text at hand (in memory or in the
   * shard's previous file). Notes whose saved texts cannot be read any more are dropped from the index
   * and listed in droppedNotes, so the writer reads them again from the vault at once (their vectors
   * stay claimable by text hash until then); damage is recorded like a search's (unreadableTexts).
   */
  private async notesWithTexts(data: DataDirPort, paths: string[], previous: ShardEntry | undefined): Promise<NoteRecord[]> {
    const notes = paths.map((p) => this.notes.get(p)).filter((n): n is NoteRecord => n !== undefined);
    const needsFile = notes.some((n) => n.chunks.some((r) => r.text === undefined));
    if (!needsFile) return notes;
    let texts: ShardTexts | null = null;
    if (previous) {
      texts = await this.shardTexts(data, previous).catch((err: unknown) => {
        this.noteTextDamage(previous, err);
        return null;
      });
    }
    const kept: NoteRecord[] = [];
    for (const note of notes) {
      const readable = note.chunks.every((r) => r.text !== undefined || (texts !== null && r.at >= 0 && r.at < texts.count));
      if (readable) {
        kept.push(note);
      } else {
        this.detach(note);
        this.droppedNotes.add(note.path);
      }
    }
    return kept;
  }

  /**
   * The texts of chunks, in order: from memory for chunks not saved yet, else from their shard files
   * (each file read once, recent ones cached). Null for a text that cannot be read (its file replaced by
   * another process, or damaged): the caller falls back to the note itself.
   */
  async textsOf(data: DataDirPort, records: readonly ChunkRecord[]): Promise<(string | null)[]> {
    const out: (string | null)[] = new Array<string | null>(records.length).fill(null);
    // Two rounds: a save in this process may switch a shard's file between grouping and reading.
    for (let round = 0; round < 2; round++) {
      const byFile = new Map<string, { entry: ShardEntry; wanted: number[] }>();
      records.forEach((rec, i) => {
        if (out[i] !== null) return;
        if (rec.text !== undefined) {
          out[i] = rec.text;
          return;
        }
        const note = this.notes.get(rec.note.path);
        const entry = note ? this.shardFiles.get(note.shard) : undefined;
        if (!entry || rec.at < 0) return;
        const group = byFile.get(entry.file);
        if (group) group.wanted.push(i);
        else byFile.set(entry.file, { entry, wanted: [i] });
      });
      if (byFile.size === 0) break;
      for (const { entry, wanted } of byFile.values()) {
        const texts = await this.textsForNow(data, entry).catch((err: unknown) => {
          this.noteTextDamage(entry, err);
          return null;
        });
        if (!texts) continue;
        for (const i of wanted) {
          const rec = records[i];
          // Only if the file is still the chunk's (positions belong to one file).
          const current = this.shardFiles.get(this.notes.get(rec.note.path)?.shard ?? -1);
          if (rec.text !== undefined) out[i] = rec.text;
          else if (current?.file === entry.file && rec.at < texts.count) out[i] = safeText(texts, rec.at);
        }
      }
    }
    return out;
  }

  /** Paths of the notes in one shard. */
  notesInShard(id: number): string[] {
    return [...(this.shards.get(id)?.paths ?? [])];
  }

  /**
   * Reads every saved shard's chunk texts and checks them against their checksums, which a load does not
   * (it reads the parts before them): damaged ones join unreadableTexts. A search finds such damage only
   * in the shards its hits are in; `krypton index` checks them all, so it can repair what it finds.
   */
  async checkSavedTexts(data: DataDirPort, tick: () => Promise<void>): Promise<void> {
    for (const entry of [...this.shardFiles.values()]) {
      await tick();
      if (this.textCache.get(entry.file) !== undefined) continue; // read and checked already
      await this.textBuffers.texts(data, entry).catch((err: unknown) => this.noteTextDamage(entry, err));
    }
  }

  /** Damage (not a file replaced or removed meanwhile, which a second read handles) is recorded for repair. */
  private noteTextDamage(entry: ShardEntry, err: unknown): void {
    if (err instanceof IndexLoadError && this.shardFiles.get(entry.id)?.file === entry.file && !/missing/.test(err.message)) this.unreadableTexts.set(entry.id, err.message);
  }

  /** A shard's texts for a reader that takes them out before it yields: the cache if a save put them there, else a reused buffer. */
  private textsForNow(data: DataDirPort, entry: ShardEntry): Promise<ShardTexts> {
    return this.textCache.get(entry.file) !== undefined ? this.shardTexts(data, entry) : this.textBuffers.texts(data, entry);
  }

  private async shardTexts(data: DataDirPort, entry: ShardEntry): Promise<ShardTexts> {
    const cached = this.textCache.get(entry.file);
    if (cached) {
      this.textCache.delete(entry.file);
      this.textCache.set(entry.file, cached);
      return cached;
    }
    const texts = await readShardTexts(data, entry);
    this.textCache.set(entry.file, texts);
    if (this.textCache.size > TEXT_CACHE_SHARDS) this.textCache.delete(this.textCache.keys().next().value as string);
    return texts;
  }

  /** Marks every shard for rewriting (after a load that found damage, so the manifest is made whole). */
  markAllDirty(): void {
    for (const id of this.shards.keys()) this.dirty.add(id);
  }

  private detach(note: NoteRecord): void {
    this.notes.delete(note.path);
    this.vectorsOnDisk -= note.vectorsOnDisk ?? 0;
    for (const rec of note.chunks) {
      rec.detached = true;
      this.chunkCount--;
      this.text.removeSlot(rec.textSlot);
      rec.textSlot = -1;
      if (rec.text !== undefined) this.unsavedTextChars -= rec.text.length;
      if (rec.slot >= 0) {
        const list = this.recycled.get(rec.textHash);
        if (list) list.push(rec.slot);
        else this.recycled.set(rec.textHash, [rec.slot]);
        this.slotOwner[rec.slot] = undefined;
        rec.slot = -1;
      }
    }
    const info = this.shards.get(note.shard);
    if (info) {
      info.paths.delete(note.path);
      info.chunks -= note.chunks.length;
    }
    this.markDirty(note.shard);
  }

  private assignShard(previous: number | undefined, chunkCount: number): number {
    if (previous !== undefined) {
      const info = this.shards.get(previous);
      // Stay put unless the shard would grow far past its size (one note may exceed it alone).
      if (info && (info.chunks + chunkCount <= 2 * SHARD_MAX_CHUNKS || info.paths.size === 0)) return previous;
    }
    const open = this.shards.get(this.openShard);
    if (open && (open.chunks + chunkCount <= SHARD_MAX_CHUNKS || open.paths.size === 0)) return this.openShard;
    const id = this.nextShardId++;
    this.shards.set(id, { paths: new Set(), chunks: 0 });
    this.openShard = id;
    return id;
  }

  private markDirty(shard: number | undefined): void {
    if (shard !== undefined && shard >= 0) this.dirty.add(shard);
  }
}

/**
 * Replaces, in place, a note's title, aliases and tags by copies that own their characters (ownString): cut
 * from the note's text, they would keep all of it in memory long after its chunk texts were saved and
 * dropped. Returns each chunk's heading trail as the records keep it (encodeTrail: flat, owned), one
 * string for all the chunks of a section.
 */
function ownNoteStrings(meta: { title: string; aliases: string[]; tags: string[] }, chunks: Chunk[]): string[] {
  const own = (list: string[]): void => {
    for (let i = 0; i < list.length; i++) list[i] = ownString(list[i]);
  };
  meta.title = ownString(meta.title);
  own(meta.aliases);
  if (meta.tags !== meta.aliases) own(meta.tags);
  const trails = new Map<string, string>();
  return chunks.map((chunk) => {
    const key = trailKey(chunk.headings);
    let trail = trails.get(key);
    if (trail === undefined) {
      trail = ownString(key);
      trails.set(key, trail);
    }
    return trail;
  });
}

/** A text that does not decode counts as unreadable (null), like a missing file. */
function safeText(texts: ShardTexts, at: number): string | null {
  try {
    return texts.textAt(at);
  } catch {
    return null;
  }
}
