import type { DataDirPort } from "../ports/data-dir";
import type { KeywordHit } from "../search/hybrid-search";
import type { Chunk, ChunkMeta } from "./chunk";
import { PartChecksum } from "./checksum";
import { checkShardPart, INDEX_DIR, readShardPart, readShardRange, readShardTexts, type Manifest, type ShardEntry } from "./index-persistence";
import { postingStartProblem, storedScalesProblem } from "./index-validation";
import {
  chunkFromMeta,
  compareBytes,
  decodeListing,
  decodeMeta,
  IndexLoadError,
  readHeader,
  shardLayout,
  type ShardLayout,
  type ShardTexts,
  type StoredListing,
  type StoredShardMeta,
  wordEndsOf,
} from "./shard-codec";
import { analyzeQuery } from "./text-analyzer";
import { pickCompletions, PREFIX_KEY, scoreQuery, ScoringScratch, type PostingRun, type WordPostings } from "./text-scoring";
import { VectorStore } from "./vector-store";
import { rowBytes } from "./vector-codes";

/**
 * The saved index, searched where it lies: what a one-shot `krypton search` uses instead of loading the
 * whole index (VaultIndex.searchSavedNotes). Of each shard it reads the index part (note listing, sorted words,
 * lengths; a few tens of kilobytes), then per query the postings of the query's words only, the vectors
 * when the query has a vector, and the metadata and texts of the shards its hits are in. Everything read
 * whole is checked against its checksum; the posting runs, read in part, are checked for shape.
 *
 * Ranking is the same code as for a loaded index: text-scoring.ts for keywords, VectorStore for vectors,
 * hybrid-search.ts on top. Documents are numbered across shards in manifest order, as loading numbers them.
 */
interface SavedShard {
  entry: ShardEntry;
  layout: ShardLayout;
  listing: StoredListing;
  /** Document number of its chunk 0. */
  first: number;
  words: Uint8Array;
  wordEnds: Uint32Array;
  postingStart: Uint32Array;
  flags: Uint8Array;
  lengths: Float32Array;
  /** Per note, its first chunk (one more entry at the end). */
  noteStart: Uint32Array;
  meta: Promise<StoredShardMeta> | null;
  texts: Promise<ShardTexts> | null;
  /** The vector scales (read with the index part, checked with the codes). */
  scaleBytes: Uint8Array;
}

/** Reads at once, at most: enough to keep the disk and the I/O threads busy, few enough not to flood them. */
const READ_WINDOW = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class SavedIndex {
  private readonly scratch = new ScoringScratch();
  private vectors: Promise<VectorStore | null> | null = null;
  /** Set once the vectors are read. */
  private store: VectorStore | null = null;
  /** Per vector slot its document, and per document its vector slot (-1: none). */
  private slotDoc = new Int32Array(0);
  private docSlot = new Int32Array(0);
  private readonly chunks = new Map<number, ChunkMeta>();
  private readonly docOfChunk = new Map<ChunkMeta, number>();

  private constructor(
    private readonly data: DataDirPort,
    private readonly manifest: Manifest,
    private readonly shards: SavedShard[],
    private readonly lengths: Float32Array,
    private readonly totalLength: number,
  ) {}

  /** Reads every shard's index part. Throws IndexLoadError when one is missing, damaged or of another format. */
  static async open(data: DataDirPort, manifest: Manifest): Promise<SavedIndex> {
    const dim = manifest.embedder?.dim ?? 0;
    const shards = await inWindows(manifest.shards, async (entry) => readIndexPart(data, entry, dim));
    let docs = 0;
    for (const shard of shards) {
      shard.first = docs;
      docs += shard.layout.count;
    }
    const lengths = new Float32Array(docs);
    let totalLength = 0;
    for (const shard of shards) {
      lengths.set(shard.lengths, shard.first);
      for (let i = 0; i < shard.lengths.length; i++) totalLength += shard.lengths[i];
    }
    return new SavedIndex(data, manifest, shards, lengths, totalLength);
  }

  get chunkCount(): number {
    return this.lengths.length;
  }

  /** Chunks with a vector. */
  get vectorCount(): number {
    return this.shards.reduce((n, s) => n + s.layout.vectors, 0);
  }

  /** Every note of the saved index, in shard order (a note listed twice is listed twice); stops when `visit` returns false. */
  everyNote(visit: (path: string, mtime: number, size: number) => boolean): boolean {
    for (const { listing } of this.shards) {
      const { p, m, s } = listing;
      for (let k = 0; k < p.length; k++) if (!visit(p[k], m[k], s[k])) return false;
    }
    return true;
  }

  /** Notes indexed only in part, with what was left out. */
  limitedNotes(): { path: string; error: string }[] {
    return this.shards.flatMap(({ listing }) => (listing.l ?? []).map(([k, error]) => ({ path: listing.p[k], error })));
  }

  // ---------------------------------------------------------------- keywords

  /** Keyword hits, best first: BM25 over the whole saved index, reading only the query words' postings. */
  async textSearch(query: string, limit: number): Promise<KeywordHit[]> {
    const terms = analyzeQuery(query).slice(0, 255);
    if (terms.length === 0 || this.chunkCount === 0) return [];
    const words = new Set<string>();
    for (const term of terms) for (const v of term.variants) words.add(v);
    const last = terms[terms.length - 1].surface;
    const completions = last.length >= PREFIX_KEY ? pickCompletions(last, this.wordsStartingWith(last)) : [];
    for (const w of completions) words.add(w);

    const runs = await this.postingRuns([...words]);
    const postings: WordPostings = {
      docCount: this.chunkCount,
      avgLength: this.totalLength / this.chunkCount || 1,
      slotCount: this.chunkCount,
      lengths: this.lengths,
      live: null,
      runsOf: (word) => runs.get(word) ?? [],
      completions: (prefix) => (prefix === last ? completions : []),
    };
    const scored = scoreQuery(terms, postings, limit, this.scratch);
    const chunks = await this.chunksAt(scored.map((s) => s.doc));
    return scored.map((s, i) => ({ chunk: chunks[i], score: s.score, matched: s.matched, coverage: s.coverage }));
  }

  /** Words of any shard that start with `prefix`, with their posting counts over all shards. */
  private wordsStartingWith(prefix: string): Map<string, number> {
    const key = encoder.encode(prefix);
    const found = new Map<string, number>();
    for (const shard of this.shards) {
      for (let w = lowerBound(shard, key); w < shard.layout.wordCount; w++) {
        const bytes = wordBytes(shard, w);
        if (!startsWith(bytes, key)) break;
        const word = decoder.decode(bytes);
        found.set(word, (found.get(word) ?? 0) + shard.postingStart[w + 1] - shard.postingStart[w]);
      }
    }
    return found;
  }

  /** Each word's posting runs, one per shard that has it (in shard order: documents ascending). */
  private async postingRuns(words: string[]): Promise<Map<string, PostingRun[]>> {
    const wanted: { shard: SavedShard; word: string; w: number; order: number }[] = [];
    words.forEach((word) => {
      const key = encoder.encode(word);
      this.shards.forEach((shard, order) => {
        const w = lowerBound(shard, key);
        if (w < shard.layout.wordCount && compareBytes(wordBytes(shard, w), key) === 0 && shard.postingStart[w + 1] > shard.postingStart[w]) wanted.push({ shard, word, w, order });
      });
    });
    const read = await inWindows(wanted, async ({ shard, w }) => {
      const from = shard.postingStart[w];
      const to = shard.postingStart[w + 1];
      const bytes = await readShardRange(this.data, shard.entry, { offset: shard.layout.vectorsEnd + from * 8, length: (to - from) * 8 });
      return runFrom(shard, bytes, to - from);
    });
    const runs = new Map<string, PostingRun[]>();
    wanted.forEach(({ word }, i) => {
      const list = runs.get(word);
      if (list) list.push(read[i]);
      else runs.set(word, [read[i]]);
    });
    return runs;
  }

  // ---------------------------------------------------------------- vectors

  private abandoned = false;

  /** Stops reading (vectors read ahead for a search that will not happen) and lets go of what was read. */
  abandon(): void {
    this.abandoned = true;
    this.store = null;
    this.vectors?.catch(() => undefined);
    this.vectors = null;
  }

  /** The stored vectors, read once (null when the index has none). */
  loadVectors(): Promise<VectorStore | null> {
    this.vectors ??= this.readVectors();
    return this.vectors;
  }

  private async readVectors(): Promise<VectorStore | null> {
    const dim = this.manifest.embedder?.dim ?? 0;
    const total = this.vectorCount;
    if (dim <= 0 || total === 0) return null;
    const store = new VectorStore();
    this.store = null;
    store.reset(dim);
    store.reserve(total, dim);
    this.slotDoc = new Int32Array(total);
    this.docSlot = new Int32Array(this.chunkCount).fill(-1);
    // Read in windows, stored in shard order (slots follow documents, as when loading).
    for (let from = 0; from < this.shards.length; from += READ_WINDOW) {
      if (this.abandoned) throw new IndexLoadError("the saved index was set aside");
      const window = this.shards.slice(from, from + READ_WINDOW).filter((shard) => shard.layout.vectors > 0);
      const firsts = await Promise.all(window.map((shard) => this.readShardVectors(store, shard, dim)));
      window.forEach((shard, i) => {
        for (let c = 0, v = firsts[i]; c < shard.layout.count; c++) {
          if (shard.flags[c] !== 1) continue;
          this.slotDoc[v] = shard.first + c;
          this.docSlot[shard.first + c] = v++;
        }
      });
    }
    this.store = store;
    return store;
  }

  /**
   * One shard's vectors into the store; returns the first slot. The codes go straight from the file into
   * the store's memory when the data folder can do that, and the part's checksum is taken where they land.
   * Slots are taken before the first await, so shards read side by side keep their order.
   */
  private async readShardVectors(store: VectorStore, shard: SavedShard, dim: number): Promise<number> {
    const { vectors, dim: shardDim, codesAt } = shard.layout;
    const file = shard.entry.file;
    if (shardDim !== dim) throw new IndexLoadError(`shard ${file} has vectors of another dimension`);
    const inPlace = this.data.readInto ? store.appendInPlace(vectors, dim) : null;
    let first: number;
    let scales: Float32Array;
    if (inPlace && this.data.readInto) {
      first = inPlace.first;
      const scaleBytes = shard.scaleBytes;
      const got = await this.data.readInto(`${INDEX_DIR}/${file}`, codesAt, inPlace.codes);
      if (got !== inPlace.codes.length) throw new IndexLoadError(`shard ${file} is missing or truncated`);
      const sum = new PartChecksum(scaleBytes.length + inPlace.codes.length);
      sum.update(scaleBytes);
      store.checksumCodes(first, vectors, sum);
      if (sum.digest() !== shard.entry.parts?.vectors.checksum) throw new IndexLoadError(`shard ${file} is corrupt (checksum mismatch)`);
      scales = new Float32Array(scaleBytes.buffer, scaleBytes.byteOffset, vectors);
      store.setScales(first, scales);
    } else {
      const bytes = await readShardPart(this.data, shard.entry, "vectors");
      scales = new Float32Array(bytes.buffer, bytes.byteOffset, vectors);
      first = store.addCodesMany(new Int8Array(bytes.buffer, bytes.byteOffset + vectors * 4, vectors * rowBytes(dim)), scales, vectors, dim);
    }
    const problem = storedScalesProblem(scales) ?? store.lengthProblem(first, vectors);
    if (problem) throw new IndexLoadError(`shard ${file} has impossible contents: ${problem}`);
    return first;
  }

  /** Top k chunks by cosine (VectorStore.search over every saved vector), with the query's cosine statistics. */
  async vectorSearch(query: Float32Array, k: number, accept: (path: string) => boolean): Promise<{ hits: { chunk: ChunkMeta; cosine: number }[]; mean: number; std: number; count: number }> {
    const store = await this.loadVectors();
    if (!store) return { hits: [], mean: 0, std: 0, count: 0 };
    const found = store.search(query, k, (slot) => accept(this.pathOf(this.slotDoc[slot])));
    const chunks = await this.chunksAt(found.slots.map((slot) => this.slotDoc[slot]));
    return { hits: chunks.map((chunk, i) => ({ chunk, cosine: found.scores[i] })), mean: found.mean, std: found.std, count: found.count };
  }

  /** Cosine of a chunk this index handed out to the query, or null without a vector. */
  cosineOf(chunk: ChunkMeta, query: Float32Array): number | null {
    const doc = this.docOfChunk.get(chunk);
    if (doc === undefined || !this.store || this.docSlot[doc] < 0) return null;
    return this.store.cosine(this.docSlot[doc], query);
  }

  // ---------------------------------------------------------------- chunks and texts

  /** The chunks this index handed out, with their texts (read from their shards' text sections). */
  async withTexts(chunks: readonly ChunkMeta[]): Promise<Chunk[]> {
    return Promise.all(
      chunks.map(async (chunk) => {
        const doc = this.docOfChunk.get(chunk);
        if (doc === undefined) return { ...chunk, text: "" };
        const shard = this.shardOf(doc);
        shard.texts ??= readShardTexts(this.data, shard.entry);
        return { ...chunk, text: (await shard.texts).textAt(doc - shard.first) };
      }),
    );
  }

  private async chunksAt(docs: readonly number[]): Promise<ChunkMeta[]> {
    // The metadata of every shard involved, read side by side.
    const shards = new Set(docs.filter((doc) => !this.chunks.has(doc)).map((doc) => this.shardOf(doc)));
    await inWindows([...shards], (shard) => {
      shard.meta ??= readShardPart(this.data, shard.entry, "meta").then((bytes) => decodeMeta(bytes.subarray(0, shard.layout.metaBytes), shard.listing));
      return shard.meta;
    });
    const out: ChunkMeta[] = [];
    for (const doc of docs) {
      let chunk = this.chunks.get(doc);
      if (!chunk) {
        const shard = this.shardOf(doc);
        const meta = await (shard.meta as Promise<StoredShardMeta>);
        const local = doc - shard.first;
        const note = noteOfChunk(shard, local);
        chunk = chunkFromMeta(meta, shard.listing, note, local - shard.noteStart[note]);
        this.chunks.set(doc, chunk);
        this.docOfChunk.set(chunk, doc);
      }
      out.push(chunk);
    }
    return out;
  }

  private pathOf(doc: number): string {
    const shard = this.shardOf(doc);
    return shard.listing.p[noteOfChunk(shard, doc - shard.first)];
  }

  private shardOf(doc: number): SavedShard {
    let lo = 0;
    let hi = this.shards.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.shards[mid].first <= doc) lo = mid;
      else hi = mid - 1;
    }
    return this.shards[lo];
  }
}

/**
 * A shard's index part, checked, and the vector scales that follow it (the first bytes of the vectors part,
 * checked with the codes later): one read instead of two per shard.
 */
async function readIndexPart(data: DataDirPort, entry: ShardEntry, dim: number): Promise<SavedShard> {
  if (!entry.parts) throw new IndexLoadError(`shard ${entry.file} has another format version`);
  const indexEnd = entry.parts.index.end;
  // The vectors part is a scale and a row of codes per vector, padded to 4 bytes: its length gives the count.
  const vectors = dim > 0 ? Math.floor((entry.parts.vectors.end - indexEnd) / (4 + rowBytes(dim))) : 0;
  const read = await readShardRange(data, entry, { offset: 0, length: indexEnd + vectors * 4 });
  const bytes = read.subarray(0, indexEnd);
  checkShardPart(entry, "index", bytes);
  const layout = shardLayout(readHeader(bytes));
  if (layout.indexEnd !== indexEnd || layout.textsAt !== entry.textsAt || layout.total !== entry.bytes || (dim > 0 && layout.vectors !== vectors)) {
    throw new IndexLoadError(`shard ${entry.file} does not match its manifest entry`);
  }
  const listing = decodeListing(bytes, layout);
  const base = bytes.byteOffset;
  const wordEnds = wordEndsOf(bytes, layout);
  const postingStart = new Uint32Array(bytes.buffer, base + layout.postingStartAt, layout.wordCount + 1);
  const offsetsProblem = postingStartProblem(postingStart, layout.wordCount, layout.postingCount);
  if (offsetsProblem) throw new IndexLoadError(`shard ${entry.file} has impossible contents: ${offsetsProblem}`);
  const lengths = new Float32Array(bytes.buffer, base + layout.lengthsAt, layout.count);
  for (let i = 0; i < lengths.length; i++) if (!Number.isFinite(lengths[i]) || lengths[i] < 0) throw new IndexLoadError(`shard ${entry.file} has impossible contents: chunk ${i} has an impossible length (${lengths[i]})`);
  const noteStart = new Uint32Array(listing.n.length + 1);
  listing.n.forEach((n, k) => (noteStart[k + 1] = noteStart[k] + n));
  return {
    entry,
    layout,
    listing,
    first: 0,
    words: bytes.subarray(layout.wordsAt, layout.wordsAt + layout.wordBytes),
    wordEnds,
    postingStart,
    flags: bytes.subarray(layout.flagsAt, layout.flagsAt + layout.count),
    lengths,
    noteStart,
    meta: null,
    texts: null,
    scaleBytes: read.subarray(indexEnd),
  };
}

/** A word's postings as read from its shard, checked for shape, as document numbers of the whole index. */
function runFrom(shard: SavedShard, bytes: Uint8Array, count: number): PostingRun {
  const pairs = new Uint32Array(bytes.buffer, bytes.byteOffset, count * 2);
  const pairWeights = new Float32Array(bytes.buffer, bytes.byteOffset, count * 2);
  const docs = new Int32Array(count);
  const weights = new Float32Array(count);
  let previous = -1;
  for (let e = 0; e < count; e++) {
    const chunk = pairs[2 * e];
    const weight = pairWeights[2 * e + 1];
    if (chunk >= shard.layout.count || chunk <= previous || !(weight > 0) || !Number.isFinite(weight)) {
      throw new IndexLoadError(`shard ${shard.entry.file} has impossible contents: a posting is out of order or range`);
    }
    previous = chunk;
    docs[e] = shard.first + chunk;
    weights[e] = weight;
  }
  return { docs, weights, from: 0, to: count };
}

function wordBytes(shard: SavedShard, w: number): Uint8Array {
  return shard.words.subarray(w === 0 ? 0 : shard.wordEnds[w - 1], shard.wordEnds[w]);
}

/** The first word of the shard not below `key` (byte order, the order the list is sorted in). */
function lowerBound(shard: SavedShard, key: Uint8Array): number {
  let lo = 0;
  let hi = shard.layout.wordCount;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareBytes(wordBytes(shard, mid), key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

function noteOfChunk(shard: SavedShard, local: number): number {
  const starts = shard.noteStart;
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= local) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Maps items through an async step, at most READ_WINDOW at a time, keeping their order. */
async function inWindows<T, R>(items: readonly T[], step: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await step(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_WINDOW, items.length) }, worker));
  return out;
}
