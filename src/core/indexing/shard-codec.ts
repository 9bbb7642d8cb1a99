import type { Chunk, ChunkMeta } from "./chunk";
import { type ChunkRecord, chunkIdOf, chunkOf, chunkRecord, encodeTrail, headingsOf, noteRecord, type NoteRecord } from "./index-records";
import { storedListingProblem, storedScalesProblem, storedShardMetaProblem, storedNotesProblemV2, storedTextProblem, storedVectorsProblem } from "./index-validation";
import { packInt8, packInto, rowBytes } from "./vector-codes";
import { forEachChunkWord } from "./text-index";
import type { StoredCodes } from "./vector-store";
import { utf8Length } from "../util/text";
import { resized } from "../util/typed-arrays";

/**
 * The bytes of one shard file (index-persistence.ts names and checks the files). Format 6, every section
 * 4-byte aligned, in the order a reader needs them:
 *
 *   header     48 bytes: signature, format, then the counts and lengths below (ShardHeader)
 *   ─ index part: what a one-shot search reads of every shard (saved-index.ts) ─
 *   listing    JSON columns {p, m, s, n, l?}: each note's path, mtime, size and chunk count (and why it
 *              is indexed in part): enough to tell whether the vault changed since, without the rest
 *   words      the shard's distinct analysed words, sorted by their UTF-8 bytes, back to back,
 *              then each word's end offset: a word is found by binary search without decoding the list
 *   postingStart  per word, where its postings begin (term-major; one more entry at the end)
 *   lengths    per chunk, its boosted length (BM25)
 *   flags      per chunk, 1 when it has a vector
 *   ─ vectors part ─  a float32 scale per vector, then the 4-bit codes, a row of rowBytes(dim) bytes each,
 *                     laid out as the vector store holds them (vector-codes.ts), so they are read in place
 *   ─ postings part ─ per word, its (chunk, weight) pairs: uint32 chunk position, float32 weight
 *   ─ meta part ─     JSON: heading trails, and per note its hash, title, aliases, tags and chunk columns
 *   ─ texts ─         per chunk its text's end offset, then the UTF-8 texts (read only for hits)
 *
 * The manifest has a checksum per part (ShardParts), so a reader can check exactly what it reads.
 * Formats 2 (float32 vectors, texts inside the JSON), 4 (chunk-major words, int8 codes) and 5 (this layout
 * with int8 codes, `dim` bytes per vector) are still decoded; their vectors are packed into 4-bit codes.
 */
export const SHARD_FORMAT = 6;
/** Formats decodeShard reads (older ones are rewritten in the current format at the next save, vectors kept). */
export const READABLE_SHARD_FORMATS: readonly number[] = [2, 4, 5, 6];
/** The format before 4-bit codes: the same layout with int8 codes. */
const INT8_CODES_FORMAT = 5;
export const HEADER_BYTES = 48;
const MAGIC = 0x5358524b; // "KRXS" little-endian
const HEADER_BYTES_V4 = 32;
const HEADER_BYTES_V2 = 28;
const HASH_DIGITS = 16;

export class IndexLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IndexLoadError";
  }
}

/** The counts a format-5 or format-6 header holds. */
export interface ShardHeader {
  format: number;
  /** Chunks. */
  count: number;
  dim: number;
  /** Chunks with a vector. */
  vectors: number;
  listingBytes: number;
  wordCount: number;
  wordBytes: number;
  /** (chunk, weight) pairs. */
  postingCount: number;
  metaBytes: number;
  textBytes: number;
}

/** Byte offsets of a format-5 or format-6 shard's sections (from its header alone). */
export interface ShardLayout extends ShardHeader {
  listingAt: number;
  wordsAt: number;
  wordEndsAt: number;
  postingStartAt: number;
  lengthsAt: number;
  flagsAt: number;
  /** End of the index part = start of the vectors part (the scales). */
  indexEnd: number;
  codesAt: number;
  vectorsEnd: number;
  postingsEnd: number;
  metaAt: number;
  /** End of the meta part = start of the texts (their end offsets first). */
  textsAt: number;
  total: number;
}

export function shardLayout(h: ShardHeader): ShardLayout {
  const listingAt = HEADER_BYTES;
  const wordsAt = align4(listingAt + h.listingBytes);
  const wordEndsAt = align4(wordsAt + h.wordBytes);
  const postingStartAt = wordEndsAt + h.wordCount * 4;
  const lengthsAt = postingStartAt + (h.wordCount + 1) * 4;
  const flagsAt = lengthsAt + h.count * 4;
  const indexEnd = align4(flagsAt + h.count);
  const codesAt = indexEnd + h.vectors * 4;
  const vectorsEnd = align4(codesAt + h.vectors * codeBytes(h.format, h.dim));
  const postingsEnd = vectorsEnd + h.postingCount * 8;
  const metaAt = postingsEnd;
  const textsAt = align4(metaAt + h.metaBytes);
  const total = textsAt + h.count * 4 + h.textBytes;
  return { ...h, listingAt, wordsAt, wordEndsAt, postingStartAt, lengthsAt, flagsAt, indexEnd, codesAt, vectorsEnd, postingsEnd, metaAt, textsAt, total };
}

/** Bytes of one vector's codes in a shard of `format`: a row of 4-bit codes, or (format 5) `dim` int8 codes. */
function codeBytes(format: number, dim: number): number {
  return format === INT8_CODES_FORMAT ? dim : rowBytes(dim);
}

/** Writes a current-format header at the start of `bytes` (readHeader's fields, in its order). */
function writeHeader(bytes: Uint8Array, h: ShardHeader): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, SHARD_FORMAT, true);
  const fields = [h.count, h.dim, h.vectors, h.listingBytes, h.wordCount, h.wordBytes, h.postingCount, h.metaBytes, h.textBytes];
  fields.forEach((value, k) => view.setUint32(8 + 4 * k, value, true));
}

/** Reads a header of one of `formats` (the current one unless told); throws IndexLoadError when the bytes are not one. */
export function readHeader(bytes: Uint8Array, formats: readonly number[] = [SHARD_FORMAT]): ShardHeader {
  if (bytes.length < 8) throw new IndexLoadError("shard file is truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new IndexLoadError("shard file has a wrong signature");
  const format = view.getUint32(4, true);
  if (!formats.includes(format)) throw new IndexLoadError("shard file has another format version");
  if (bytes.length < HEADER_BYTES) throw new IndexLoadError("shard file is truncated");
  const at = (k: number) => view.getUint32(8 + 4 * k, true);
  return { format, count: at(0), dim: at(1), vectors: at(2), listingBytes: at(3), wordCount: at(4), wordBytes: at(5), postingCount: at(6), metaBytes: at(7), textBytes: at(8) };
}

/** The manifest's checksums of a format-5 or format-6 shard's parts: each part begins where the one before ends (index at 0). */
export interface ShardParts {
  index: ShardPart;
  vectors: ShardPart;
  postings: ShardPart;
  meta: ShardPart;
}

export interface ShardPart {
  end: number;
  checksum: string;
}

/** A note's listing entry: what tells whether the note changed since it was indexed. */
export interface StoredListing {
  p: string[];
  m: number[];
  s: number[];
  /** Chunk counts. */
  n: number[];
  /** [note position, what was left out] for notes indexed in part. */
  l?: [number, string][];
}

/**
 * A note in the meta part: its chunks as columns, not one array per chunk (half a million chunks made that
 * many small objects to parse and collect at every load). Chunk k's id is `${path}#${k}` unless `i` lists them.
 */
export interface StoredNote {
  h: string;
  t: string;
  a: string[];
  g: string[];
  /** Per chunk, its heading trail's index in the shard's `trails`. */
  hd: number[];
  /** Per chunk, start line then end line. */
  ln: number[];
  /** The chunks' text hashes (16 hex digits each), one after the other. */
  x: string;
  /** Chunk ids other than `${path}#${k}`, from earlier versions: read as valid, not used (ids are derived, chunkIdOf). */
  i?: string[];
}

export interface StoredShardMeta {
  /** Heading trails, each once. */
  trails: string[][];
  notes: StoredNote[];
}

/** A format-4 note: listing and meta fields in one object. */
type StoredNoteV4 = StoredNote & { p: string; m: number; s: number; n: number; l?: string };
type StoredChunkV2 = [id: string, headings: string[], startLine: number, endLine: number, text: string, textHash: string];
interface StoredNoteV2 {
  p: string;
  h: string;
  m: number;
  s: number;
  t: string;
  a: string[];
  g: string[];
  c: StoredChunkV2[];
  l?: string;
}

/**
 * The analysed words of a shard's chunks, term-major (see TextIndex.addBlock): word w's postings are pairs
 * postingStart[w] .. postingStart[w + 1], pair e being chunk `pairs[2e]` with weight `pairWeights[2e + 1]`
 * (two views of the same interleaved words), chunks ascending within a word.
 */
export interface StoredText {
  dictionary: string[];
  postingStart: Uint32Array;
  pairs: Uint32Array;
  pairWeights: Float32Array;
  /** Per chunk, its boosted length. */
  lengths: Float32Array;
}

/** One shard as read back: notes with chunks, and the vectors of the chunks that have one. */
export interface DecodedShard {
  notes: NoteRecord[];
  /** Per chunk in note order: index into the vectors (codes times dim, scales), or -1. */
  vectorIndex: Int32Array;
  /** Int8 codes, `dim` per vector, back to back. */
  codes: Int8Array;
  scales: Float32Array;
  /** The file's format version (2: float32 vectors, quantized while decoding). */
  format: number;
  text: StoredText;
  /** The chunks' texts, decoded one by one on demand. */
  texts: ShardTexts;
}

/** The texts of a shard's chunks, by position in the file. */
export interface ShardTexts {
  count: number;
  textAt(i: number): string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Serializes one shard. Everything that can change under us (vectors) is copied before the first await;
 * the slow part, analyzing chunk words, yields through `tick` so no step holds the UI thread for long.
 * `textOf` gives every chunk's text (the index keeps texts of saved chunks on disk only).
 */
export async function encodeShard(
  notes: readonly NoteRecord[],
  dim: number,
  vectorOf: (record: ChunkRecord) => StoredCodes | null,
  textOf: (record: ChunkRecord) => string,
  tick: () => Promise<void> = () => Promise.resolve(),
): Promise<Uint8Array> {
  const listing = encoder.encode(JSON.stringify(storedListing(notes)));
  const meta = encoder.encode(JSON.stringify(storedMeta(notes)));
  let count = 0;
  for (const n of notes) count += n.chunks.length;
  const records: Chunk[] = new Array<Chunk>(count);
  let r = 0;
  for (const n of notes) for (const rec of n.chunks) records[r++] = chunkOf(rec, textOf(rec));
  // Vectors are copied before the first tick: embedding goes on meanwhile, and the shard must be one
  // snapshot. Texts are strings, which nothing changes.
  const { flags, codes, scales, withVector } = gatherVectors(notes, count, dim, vectorOf);
  // The texts are measured here and encoded straight into the file below, in steps that yield: an encode
  // per text (an array each, whose allocations drive the collector) held the thread for a third of a second
  // at 100,000 notes.
  const textLengths = new Uint32Array(count);
  let textBytes = 0;
  for (let i = 0; i < count; i++) {
    textBytes += textLengths[i] = utf8Length(records[i].text);
    if (i % 64 === 63) await tick();
  }

  const words = await analyseWords(records, tick);
  const wordBytes = words.wordBytes.length;
  const layout = shardLayout({
    format: SHARD_FORMAT,
    count,
    dim,
    vectors: withVector,
    listingBytes: listing.length,
    wordCount: words.wordEnds.length,
    wordBytes,
    postingCount: words.pairCount,
    metaBytes: meta.length,
    textBytes,
  });
  const bytes = new Uint8Array(layout.total);
  writeHeader(bytes, layout);
  bytes.set(listing, layout.listingAt);
  bytes.set(words.wordBytes, layout.wordsAt);
  new Uint32Array(bytes.buffer, layout.wordEndsAt, layout.wordCount).set(words.wordEnds);
  new Uint32Array(bytes.buffer, layout.postingStartAt, layout.wordCount + 1).set(words.postingStart);
  new Float32Array(bytes.buffer, layout.lengthsAt, count).set(words.lengths);
  bytes.set(flags, layout.flagsAt);
  new Float32Array(bytes.buffer, layout.indexEnd, withVector).set(scales);
  new Int8Array(bytes.buffer, layout.codesAt, codes.length).set(codes);
  new Uint32Array(bytes.buffer, layout.vectorsEnd, words.pairCount * 2).set(words.pairs.subarray(0, words.pairCount * 2));
  bytes.set(meta, layout.metaAt);
  const textEnds = new Uint32Array(bytes.buffer, layout.textsAt, count);
  let end = layout.textsAt + count * 4;
  for (let i = 0; i < count; i++) {
    const { written } = encoder.encodeInto(records[i].text, bytes.subarray(end, end + textLengths[i]));
    if (written !== textLengths[i]) throw new Error("Shard texts: UTF-8 lengths do not add up");
    end += written;
    textEnds[i] = end - layout.textsAt - count * 4;
    if (i % 64 === 63) await tick();
  }
  return bytes;
}

/**
 * A shard whose notes are exactly those of `previous` (a current-format file, checked by the caller), with new
 * vectors: the listing, words, postings, meta and texts are copied byte for byte, only the flags and the
 * vectors part are written. Saving a shard whose chunks just got vectors (every save while embedding) then
 * reads, analyses and encodes no text. Null when the notes differ in anything the file holds (listing or
 * meta), or the file is of another dimension: encode the shard in full (encodeShard).
 */
export function encodeShardVectors(
  previous: Uint8Array,
  notes: readonly NoteRecord[],
  dim: number,
  vectorOf: (record: ChunkRecord) => StoredCodes | null,
): Uint8Array | null {
  let old: ShardLayout;
  try {
    old = shardLayout(readHeader(previous));
  } catch {
    return null;
  }
  if (old.total !== previous.length || (old.dim !== dim && old.vectors > 0)) return null;
  const listing = encoder.encode(JSON.stringify(storedListing(notes)));
  if (compareBytes(listing, previous.subarray(old.listingAt, old.listingAt + old.listingBytes)) !== 0) return null;
  const meta = encoder.encode(JSON.stringify(storedMeta(notes)));
  if (compareBytes(meta, previous.subarray(old.metaAt, old.metaAt + old.metaBytes)) !== 0) return null;
  let count = 0;
  for (const n of notes) count += n.chunks.length;
  if (count !== old.count) return null;
  const { flags, codes, scales, withVector } = gatherVectors(notes, count, dim, vectorOf);
  const layout = shardLayout({ ...old, dim, vectors: withVector });
  const bytes = new Uint8Array(layout.total);
  // The index part as it was (a new header, its flags rewritten), then the new vectors, then postings, meta
  // and texts as they were.
  bytes.set(previous.subarray(0, old.flagsAt), 0);
  writeHeader(bytes, layout);
  bytes.set(flags, layout.flagsAt);
  new Float32Array(bytes.buffer, layout.indexEnd, withVector).set(scales);
  new Int8Array(bytes.buffer, layout.codesAt, codes.length).set(codes);
  bytes.set(previous.subarray(old.vectorsEnd), layout.vectorsEnd);
  return bytes;
}

/** The shard's vectors in chunk order, copied into one array (no view per chunk), and which chunks have one. */
function gatherVectors(
  notes: readonly NoteRecord[],
  count: number,
  dim: number,
  vectorOf: (record: ChunkRecord) => StoredCodes | null,
): { flags: Uint8Array; codes: Int8Array; scales: Float32Array; withVector: number } {
  const flags = new Uint8Array(count);
  const row = rowBytes(dim);
  const allCodes = new Int8Array(count * row);
  const allScales = new Float32Array(count);
  let withVector = 0;
  let r = 0;
  for (const n of notes) {
    for (const rec of n.chunks) {
      const vec = dim > 0 ? vectorOf(rec) : null;
      if (vec) {
        if (vec.codes.length !== row) throw new Error(`Vector row of ${vec.codes.length} bytes in a ${dim}-dimension index`);
        flags[r] = 1;
        allCodes.set(vec.codes, withVector * row);
        allScales[withVector++] = vec.scale;
      }
      r++;
    }
  }
  return { flags, codes: allCodes.subarray(0, withVector * row), scales: allScales.subarray(0, withVector), withVector };
}

/**
 * The chunks' analysed words, term-major, with a sorted shard-local dictionary (UTF-8). Collected chunk by
 * chunk into typed arrays (no map per chunk), then sorted by word with a counting sort.
 */
async function analyseWords(
  records: readonly Chunk[],
  tick: () => Promise<void>,
): Promise<{ wordBytes: Uint8Array; wordEnds: Uint32Array; postingStart: Uint32Array; pairs: Uint32Array; pairCount: number; lengths: Float32Array }> {
  const count = records.length;
  const wordIds = new Map<string, number>();
  const termStart = new Uint32Array(count + 1);
  const lengths = new Float32Array(count);
  let ids = new Uint32Array(Math.max(256, count * 64));
  let weights = new Float32Array(ids.length);
  let used = 0;
  // Per dictionary word: the last chunk it occurred in, and where its entry for that chunk is.
  let lastChunk = new Int32Array(4096).fill(-1);
  let entryAt = new Uint32Array(4096);
  let current = 0;
  const visit = (word: string, boost: number) => {
    let id = wordIds.get(word);
    if (id === undefined) {
      id = wordIds.size;
      wordIds.set(word, id);
      if (id >= lastChunk.length) {
        const words = lastChunk.length;
        lastChunk = resized(lastChunk, words * 2).fill(-1, words);
        entryAt = resized(entryAt, words * 2);
      }
    }
    if (lastChunk[id] === current) {
      weights[entryAt[id]] += boost;
      return;
    }
    if (used === ids.length) {
      ids = resized(ids, ids.length * 2);
      weights = resized(weights, weights.length * 2);
    }
    lastChunk[id] = current;
    entryAt[id] = used;
    ids[used] = id;
    weights[used] = boost;
    used++;
  };
  for (let i = 0; i < count; i++) {
    current = i;
    lengths[i] = forEachChunkWord(records[i], visit);
    termStart[i + 1] = used;
    if (i % 64 === 63) await tick();
  }
  // Sorted in code point order, which is the UTF-8 byte order readers search in, then encoded in one call
  // (an encode per word, a thousand per shard, held the thread for hundreds of ms when a checkpoint saved every shard).
  // A tick between the steps after the loop: with a few hundred thousand distinct words (a hostile note of
  // numbers) together they held the thread for ~60 ms.
  const words = [...wordIds.keys()];
  await tick();
  const order = words.map((_, k) => k).sort((a, b) => compareCodePoints(words[a], words[b]));
  await tick();
  const rank = new Uint32Array(order.length);
  order.forEach((id, r) => (rank[id] = r));
  for (let e = 0; e < used; e++) ids[e] = rank[ids[e]];
  await tick();
  const { postingStart, pairs } = termMajor(order.length, count, termStart, ids, weights);
  await tick();
  const sorted = order.map((id) => words[id]);
  const wordBytes = encoder.encode(sorted.join(""));
  const wordEnds = new Uint32Array(sorted.length);
  let end = 0;
  sorted.forEach((word, k) => (wordEnds[k] = end += utf8Length(word)));
  if (end !== wordBytes.length) throw new Error("Shard word list: UTF-8 lengths do not add up");
  return { wordBytes, wordEnds, postingStart, pairs, pairCount: used, lengths };
}

/**
 * Chunk-major word entries (chunk i owns entries termStart[i] .. termStart[i + 1] of wordIds/weights) to
 * term-major interleaved pairs, by a counting sort: chunks stay ascending within each word.
 */
function termMajor(wordCount: number, count: number, termStart: Uint32Array, wordIds: Uint32Array, weights: Float32Array): { postingStart: Uint32Array; pairs: Uint32Array } {
  const entries = termStart[count];
  const postingStart = new Uint32Array(wordCount + 1);
  for (let e = 0; e < entries; e++) postingStart[wordIds[e] + 1]++;
  for (let w = 0; w < wordCount; w++) postingStart[w + 1] += postingStart[w];
  const cursor = postingStart.slice(0, wordCount);
  const pairs = new Uint32Array(entries * 2);
  const pairWeights = new Float32Array(pairs.buffer);
  for (let i = 0; i < count; i++) {
    for (let e = termStart[i]; e < termStart[i + 1]; e++) {
      const at = cursor[wordIds[e]]++;
      pairs[2 * at] = i;
      pairWeights[2 * at + 1] = weights[e];
    }
  }
  return { postingStart, pairs };
}

function storedListing(notes: readonly NoteRecord[]): StoredListing {
  const listing: StoredListing = { p: [], m: [], s: [], n: [] };
  notes.forEach((n, k) => {
    listing.p.push(n.path);
    listing.m.push(n.mtime);
    listing.s.push(n.size);
    listing.n.push(n.chunks.length);
    if (n.limited) (listing.l ??= []).push([k, n.limited]);
  });
  return listing;
}

/** The notes and chunks of a shard as its meta part stores them (texts and listing aside). */
function storedMeta(notes: readonly NoteRecord[]): StoredShardMeta {
  const trails: string[][] = [];
  const trailIds = new Map<string, number>();
  const stored = notes.map((n): StoredNote => {
    const hd: number[] = [];
    const ln: number[] = [];
    let x = "";
    for (const c of n.chunks) {
      let trail = trailIds.get(c.trail);
      if (trail === undefined) {
        trail = trails.length;
        trails.push(headingsOf(c));
        trailIds.set(c.trail, trail);
      }
      hd.push(trail);
      ln.push(c.startLine, c.endLine);
      x += c.textHash.length === HASH_DIGITS ? c.textHash : c.textHash.padEnd(HASH_DIGITS, "0").slice(0, HASH_DIGITS);
    }
    // Ids are derived from path and position (chunkIdOf): none is stored.
    return { h: n.hash, t: n.title, a: n.aliases, g: n.tags, hd, ln, x };
  });
  return { trails, notes: stored };
}

/** Parses and checks a format-5 listing part. */
export function decodeListing(bytes: Uint8Array, layout: ShardLayout): StoredListing {
  const listing = parseJson(bytes.subarray(layout.listingAt, layout.listingAt + layout.listingBytes), "shard note listing is unreadable");
  const problem = storedListingProblem(listing, layout.count);
  if (problem) throw new IndexLoadError(`shard has impossible contents: ${problem}`);
  return listing as StoredListing;
}

/** Parses and checks a format-5 meta part (`bytes` = the part alone) against its listing. */
export function decodeMeta(bytes: Uint8Array, listing: StoredListing): StoredShardMeta {
  const meta = parseJson(bytes, "shard metadata is unreadable");
  const problem = storedShardMetaProblem(meta, listing.p, listing.n);
  if (problem) throw new IndexLoadError(`shard has impossible contents: ${problem}`);
  return meta as StoredShardMeta;
}

/** Chunk k of note `note` (position `k` within it) as the meta part describes it. */
export function chunkFromMeta(meta: StoredShardMeta, listing: StoredListing, note: number, k: number): ChunkMeta {
  const n = meta.notes[note];
  const path = listing.p[note];
  return {
    id: chunkIdOf(path, k),
    path,
    title: n.t,
    aliases: n.a,
    tags: n.g,
    headings: meta.trails[n.hd[k]],
    startLine: n.ln[2 * k],
    endLine: n.ln[2 * k + 1],
    textHash: storedTextHash(n, k),
  };
}

/** Chunk k's text hash in its stored note's hash column. */
function storedTextHash(n: StoredNote, k: number): string {
  return n.x.slice(k * HASH_DIGITS, (k + 1) * HASH_DIGITS);
}

/**
 * Decodes a shard file, or only its part before the chunk texts (`headOnly`: the texts are then not
 * available, and asking for one throws).
 */
export function decodeShard(bytes: Uint8Array, shardId: number, expectedDim: number, headOnly = false): DecodedShard {
  if (bytes.length < 8) throw new IndexLoadError("shard file is truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new IndexLoadError("shard file has a wrong signature");
  const format = view.getUint32(4, true);
  if (!READABLE_SHARD_FORMATS.includes(format)) throw new IndexLoadError("shard file has another format version");
  // Typed-array views need 4-byte alignment: copy the file buffer once if it is misaligned.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  return format >= INT8_CODES_FORMAT ? decodeLaidOut(aligned, shardId, expectedDim, headOnly) : decodeOlder(aligned, format, shardId, expectedDim, headOnly);
}

/** Formats 5 and 6: sections found from the header (format 5's int8 codes are packed into 4-bit ones here). */
function decodeLaidOut(bytes: Uint8Array, shardId: number, expectedDim: number, headOnly: boolean): DecodedShard {
  const layout = shardLayout(readHeader(bytes, [INT8_CODES_FORMAT, SHARD_FORMAT]));
  const { count, dim } = layout;
  if (dim !== 0 && expectedDim !== 0 && dim !== expectedDim) throw new IndexLoadError("shard vectors have another dimension");
  if ((headOnly ? layout.textsAt : layout.total) !== bytes.length) throw new IndexLoadError("shard file has a wrong length");
  const listing = decodeListing(bytes, layout);
  const meta = decodeMeta(bytes.subarray(layout.metaAt, layout.metaAt + layout.metaBytes), listing);
  const base = bytes.byteOffset;
  const text = wordsOf(bytes, layout);
  const { vectorIndex, withVector } = vectorIndexOf(bytes.subarray(layout.flagsAt, layout.flagsAt + count));
  if (withVector !== layout.vectors) throw new IndexLoadError("shard has impossible contents: its vector flags do not match its vector count");
  let scales = new Float32Array(bytes.buffer, base + layout.indexEnd, withVector);
  const int8 = layout.format === INT8_CODES_FORMAT;
  let codes = new Int8Array(bytes.buffer, base + layout.codesAt, withVector * codeBytes(layout.format, dim));
  const contentProblem = storedTextProblem(text, count) ?? storedScalesProblem(scales);
  if (contentProblem) throw new IndexLoadError(`shard has impossible contents: ${contentProblem}`);
  if (int8) ({ codes, scales } = packInt8(codes, scales, withVector, dim));
  const notes: NoteRecord[] = [];
  let seen = 0;
  // One string per trail for all its chunks (as the store keeps them).
  const trails = meta.trails.map(encodeTrail);
  listing.p.forEach((path, k) => {
    const note = noteRecord({ path, hash: meta.notes[k].h, mtime: listing.m[k], size: listing.s[k], title: meta.notes[k].t, aliases: meta.notes[k].a, tags: meta.notes[k].g }, listing.n[k], shardId);
    for (let c = 0; c < listing.n[k]; c++) note.chunks[c] = recordFromMeta(note, meta.notes[k], trails, c, seen + c);
    seen += listing.n[k];
    notes.push(note);
  });
  for (const [k, why] of listing.l ?? []) notes[k].limited = why;
  const texts = headOnly ? textsNotRead(count) : textSection(bytes, layout.textsAt, count, layout.textBytes);
  return { notes, vectorIndex, codes, scales, format: layout.format, text, texts };
}

/** The words of a format-5 shard: dictionary decoded, postings as views of the file. */
function wordsOf(bytes: Uint8Array, layout: ShardLayout): StoredText {
  const base = bytes.byteOffset;
  const ends = wordEndsOf(bytes, layout);
  const dictionary = new Array<string>(layout.wordCount);
  let from = 0;
  for (let k = 0; k < layout.wordCount; k++) {
    try {
      dictionary[k] = decoder.decode(bytes.subarray(layout.wordsAt + from, layout.wordsAt + ends[k]));
    } catch {
      throw new IndexLoadError("shard word list is unreadable");
    }
    from = ends[k];
  }
  const postingStart = new Uint32Array(bytes.buffer, base + layout.postingStartAt, layout.wordCount + 1);
  const pairs = new Uint32Array(bytes.buffer, base + layout.vectorsEnd, layout.postingCount * 2);
  const pairWeights = new Float32Array(bytes.buffer, base + layout.vectorsEnd, layout.postingCount * 2);
  const lengths = new Float32Array(bytes.buffer, base + layout.lengthsAt, layout.count);
  return { dictionary, postingStart, pairs, pairWeights, lengths };
}

/** The end offset of each word in a format-5 shard's word list (`bytes` from the file's start), checked to be in order and in bounds. */
export function wordEndsOf(bytes: Uint8Array, layout: ShardLayout): Uint32Array {
  const ends = new Uint32Array(bytes.buffer, bytes.byteOffset + layout.wordEndsAt, layout.wordCount);
  let from = 0;
  for (let k = 0; k < layout.wordCount; k++) {
    if (ends[k] < from || ends[k] > layout.wordBytes) throw new IndexLoadError("shard word list is malformed");
    from = ends[k];
  }
  return ends;
}

function vectorIndexOf(flags: Uint8Array): { vectorIndex: Int32Array; withVector: number } {
  const vectorIndex = new Int32Array(flags.length).fill(-1);
  let withVector = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i] === 1) vectorIndex[i] = withVector++;
  return { vectorIndex, withVector };
}

/** Record of chunk k of `note` as its stored note `n` describes it (`trails`: the shard's, encoded), at position `at` in the shard. */
function recordFromMeta(note: NoteRecord, n: StoredNote, trails: readonly string[], k: number, at: number): ChunkRecord {
  const chunk = { startLine: n.ln[2 * k], endLine: n.ln[2 * k + 1], textHash: storedTextHash(n, k) };
  return chunkRecord(note, k, trails[n.hd[k]], chunk, undefined, at);
}

/** Formats 2 and 4: the meta JSON after a shorter header, chunk-major words, and (2) float32 vectors. */
function decodeOlder(bytes: Uint8Array, format: number, shardId: number, expectedDim: number, headOnly: boolean): DecodedShard {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerBytes = format === 2 ? HEADER_BYTES_V2 : HEADER_BYTES_V4;
  if (bytes.length < headerBytes) throw new IndexLoadError("shard file is truncated");
  const metaLength = view.getUint32(8, true);
  const count = view.getUint32(12, true);
  const dim = view.getUint32(16, true);
  const dictLength = view.getUint32(20, true);
  const termCount = view.getUint32(24, true);
  const textBytes = format === 2 ? 0 : view.getUint32(28, true);
  const metaEnd = align4(headerBytes + metaLength);
  const flagsEnd = align4(metaEnd + count);
  if (flagsEnd > bytes.length) throw new IndexLoadError("shard file is truncated");
  if (dim !== 0 && expectedDim !== 0 && dim !== expectedDim) throw new IndexLoadError("shard vectors have another dimension");

  const stored = parseJson(bytes.subarray(headerBytes, headerBytes + metaLength), "shard metadata is unreadable");
  const notesProblem = format === 2 ? storedNotesProblemV2(stored) : storedMetaV4Problem(stored);
  if (notesProblem) throw new IndexLoadError(`shard has impossible contents: ${notesProblem}`);

  const { vectorIndex, withVector } = vectorIndexOf(bytes.subarray(metaEnd, metaEnd + count));
  // Format 2: float32 vectors. Format 4: a float32 scale per vector, then int8 codes (padded to 4 bytes).
  const scalesEnd = flagsEnd + withVector * 4;
  const vectorsEnd = format === 2 ? flagsEnd + withVector * dim * 4 : align4(scalesEnd + withVector * dim);
  const dictEnd = align4(vectorsEnd + dictLength);
  const textsAt = dictEnd + (count + 1) * 4 + count * 4 + termCount * 8;
  const textsOnDisk = headOnly && format !== 2;
  if (textsAt + (format === 2 || textsOnDisk ? 0 : count * 4 + textBytes) !== bytes.length) throw new IndexLoadError("shard file has a wrong length");
  const base = bytes.byteOffset;
  let codes: Int8Array;
  let scales: Float32Array;
  let vectorsProblem: string | null;
  if (format === 2) {
    const floats = new Float32Array(bytes.buffer, base + flagsEnd, withVector * dim);
    vectorsProblem = storedVectorsProblem(floats, dim);
    codes = new Int8Array(withVector * rowBytes(dim));
    scales = new Float32Array(withVector);
    if (!vectorsProblem) for (let v = 0; v < withVector; v++) scales[v] = packInto(floats, v * dim, dim, codes, v * rowBytes(dim));
  } else {
    scales = new Float32Array(bytes.buffer, base + flagsEnd, withVector);
    codes = new Int8Array(bytes.buffer, base + scalesEnd, withVector * dim);
    vectorsProblem = storedScalesProblem(scales);
    if (!vectorsProblem) ({ codes, scales } = packInt8(codes, scales, withVector, dim));
  }
  const dictionary = parseJson(bytes.subarray(vectorsEnd, vectorsEnd + dictLength), "shard word list is unreadable");
  if (!Array.isArray(dictionary) || !dictionary.every((w) => typeof w === "string")) throw new IndexLoadError("shard word list is malformed");
  let at = base + dictEnd;
  const termStart = new Uint32Array(bytes.buffer, at, count + 1);
  at += (count + 1) * 4;
  const lengths = new Float32Array(bytes.buffer, at, count);
  at += count * 4;
  const termIdx = new Uint32Array(bytes.buffer, at, termCount);
  at += termCount * 4;
  const weights = new Float32Array(bytes.buffer, at, termCount);
  if (termStart[0] !== 0 || termStart[count] !== termCount) throw new IndexLoadError("shard word index is malformed");
  for (let i = 0; i < count; i++) if (termStart[i + 1] < termStart[i]) throw new IndexLoadError("shard word index is malformed");
  for (let i = 0; i < termCount; i++) if (termIdx[i] >= dictionary.length) throw new IndexLoadError("shard word index is malformed");
  const { postingStart, pairs } = termMajor(dictionary.length, count, termStart, termIdx, weights);
  const text: StoredText = { dictionary: dictionary, postingStart, pairs, pairWeights: new Float32Array(pairs.buffer), lengths };
  const contentProblem = storedTextProblem(text, count) ?? vectorsProblem;
  if (contentProblem) throw new IndexLoadError(`shard has impossible contents: ${contentProblem}`);

  const notes: NoteRecord[] = [];
  const textsV2: string[] = [];
  let seen = 0;
  if (format === 2) {
    for (const n of stored as StoredNoteV2[]) {
      const note = noteRecordOlder(n, shardId);
      n.c.forEach((c, k) => {
        textsV2.push(c[4]);
        note.chunks.push(chunkRecord(note, k, encodeTrail(c[1]), { startLine: c[2], endLine: c[3], textHash: c[5] }, undefined, seen + k));
      });
      seen += note.chunks.length;
      notes.push(note);
    }
  } else {
    const { trails: stored4Trails, notes: stored4 } = stored as { trails: string[][]; notes: StoredNoteV4[] };
    const trails = stored4Trails.map(encodeTrail);
    for (const n of stored4) {
      const note = noteRecordOlder(n, shardId);
      for (let k = 0; k < n.n; k++) note.chunks.push(recordFromMeta(note, n, trails, k, seen + k));
      seen += n.n;
      notes.push(note);
    }
  }
  if (seen !== count) throw new IndexLoadError("shard chunk count does not match");
  const texts = format === 2 ? arrayTexts(textsV2) : textsOnDisk ? textsNotRead(count) : textSection(bytes, textsAt, count, textBytes);
  return { notes, vectorIndex, codes, scales, format, text, texts };
}

/** A format-4 meta: the format-5 meta and listing checks on its one-object-per-note form. */
function storedMetaV4Problem(raw: unknown): string | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return "its note list is not a list";
  const notes = (raw as { notes?: unknown }).notes;
  if (!Array.isArray(notes)) return "its note list is not a list";
  const listing: StoredListing = { p: [], m: [], s: [], n: [] };
  for (const n of notes as unknown[]) {
    if (!n || typeof n !== "object") return "a note entry is not an object";
    const note = n as Record<string, unknown>;
    listing.p.push(note.p as string);
    listing.m.push(note.m as number);
    listing.s.push(note.s as number);
    listing.n.push(note.n as number);
  }
  return storedListingProblem(listing, null) ?? storedShardMetaProblem(raw, listing.p, listing.n);
}

function noteRecordOlder(n: StoredNoteV4 | StoredNoteV2, shardId: number): NoteRecord {
  const note = noteRecord({ path: n.p, hash: n.h, mtime: n.m, size: n.s, title: n.t, aliases: n.a, tags: n.g }, 0, shardId);
  if (typeof n.l === "string" && n.l) note.limited = n.l;
  return note;
}

function parseJson(bytes: Uint8Array, problem: string): unknown {
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new IndexLoadError(problem);
  }
}

function textsNotRead(count: number): ShardTexts {
  return {
    count,
    textAt() {
      throw new Error("The chunk texts of this shard were not read");
    },
  };
}

function arrayTexts(texts: string[]): ShardTexts {
  return { count: texts.length, textAt: (i) => texts[i] };
}

/** The text section of a shard (`at` = offset of its end offsets within `bytes`), checked, decoded lazily. */
export function textSection(bytes: Uint8Array, at: number, count: number, textBytes: number): ShardTexts {
  const ends = new Uint32Array(bytes.buffer, bytes.byteOffset + at, count);
  const start = at + count * 4;
  let previous = 0;
  for (let i = 0; i < count; i++) {
    if (ends[i] < previous || ends[i] > textBytes) throw new IndexLoadError("shard text offsets are malformed");
    previous = ends[i];
  }
  return {
    count,
    textAt(i) {
      const from = i === 0 ? 0 : ends[i - 1];
      try {
        return decoder.decode(bytes.subarray(start + from, start + ends[i]));
      } catch {
        throw new IndexLoadError("shard chunk text is not text");
      }
    },
  };
}

/** The byte boundaries of an encoded (current-format) shard's parts, for its manifest entry. */
export function partEnds(bytes: Uint8Array): { index: number; vectors: number; postings: number; meta: number } {
  const layout = shardLayout(readHeader(bytes));
  return { index: layout.indexEnd, vectors: layout.vectorsEnd, postings: layout.postingsEnd, meta: layout.textsAt };
}

/** Code point order of two strings (JavaScript's < compares UTF-16 code units, which differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) - codeUnitRank(y);
  }
  return a.length - b.length;
}

/** Surrogates (U+D800–DFFF, the halves of code points above U+FFFF) rank after every other code unit. */
function codeUnitRank(c: number): number {
  return c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c;
}

/** Byte order of two UTF-8 strings (the order shard word lists are sorted in: code point order). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

export function align4(n: number): number {
  return (n + 3) & ~3;
}
