import type { ByteRange, DataDirPort } from "../ports/data-dir";
import type { Chunk } from "./chunk";
import { checksumBytes } from "./checksum";
import type { ChunkRecord, IndexedChunk, NoteRecord } from "./index-records";
import { forEachChunkWord } from "./text-index";
import { checkManifest, storedScalesProblem, storedNotesProblemV2, storedShardMetaProblem, storedTextProblem, storedVectorsProblem } from "./index-validation";
import { quantizeInto } from "./int8-vectors";
import type { StoredCodes } from "./vector-store";

/**
 * The index on disk, under .krypton/index/:
 *   manifest.json            format, chunker version, embedder id and dimension, and for every shard its
 *                            file name, size and checksum. Written last, atomically: it is the commit point.
 *   shard-<n>-<gen>.bin      one partition of notes (≤ SHARD_MAX_CHUNKS chunks): a small header, the notes
 *                            and chunks (without their texts) as UTF-8 JSON, a has-vector flag per chunk, the
 *                            vectors as int8 codes with one float32 scale each (int8-vectors.ts), then
 *                            the chunks' analyzed words (a word list plus per-chunk word ids and weights), so
 *                            loading rebuilds the full-text index without tokenizing a single note, and last
 *                            the chunk texts (UTF-8, with end offsets), which loading skips: a search reads
 *                            back only the texts of its hits (readShardTexts).
 *                            Format 2 (still read): float32 vectors, chunk texts inside the JSON.
 * Shard files are never rewritten in place: a changed shard gets a new generation name, the manifest is
 * switched to it, then the old file is removed. So no write grows with the vault, a crash leaves the old
 * manifest intact, and a reader in another process sees either the old or the new set of files.
 */
export const INDEX_DIR = "index";
export const MANIFEST_PATH = `${INDEX_DIR}/manifest.json`;
export const INDEX_FORMAT = 4;
/**
 * Formats still read (their shards are rewritten in the current format at the next save, vectors kept).
 * Format 3 (int8 vectors, texts inside the JSON) only ever existed between two development commits.
 */
export const READABLE_FORMATS: readonly number[] = [2, 4];
export const SHARD_MAX_CHUNKS = 1024;

const MAGIC = 0x5358524b; // "KRXS" little-endian
const HEADER_BYTES = 32;
const HEADER_BYTES_V2 = 28;

export interface ShardEntry {
  id: number;
  file: string;
  bytes: number;
  /** Of the bytes before `textsAt` (the whole file when there is no `textsAt`: format 2). */
  checksum: string;
  notes: number;
  chunks: number;
  /** Where the chunk texts begin (format 4): loading reads and checks only the bytes before. */
  textsAt?: number;
  /** Of the bytes from `textsAt` on. */
  textsChecksum?: string;
}

export interface Manifest {
  format: number;
  chunkerVersion: number | string;
  /** The text analyser the stored words came from (text-analyzer.ts); another version re-analyses on load, keeping vectors. Absent = 1. */
  analyzerVersion?: number;
  /** The chunk size setting the notes were cut with (a change re-chunks, keeping vectors of unchanged texts). */
  chunkMaxChars?: number;
  /** Whose vectors the shards hold; null when none were ever made. */
  embedder: { id: string; dim: number } | null;
  generation: number;
  savedAt: number;
  shards: ShardEntry[];
  /** Set by readManifest when it had to repair fields (never written: the next save writes a whole manifest). */
  repairs?: string[];
}

export class IndexLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IndexLoadError";
  }
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

/** The analyzed words of a shard's chunks (see TextIndex.addBlock). Chunk i owns entries termStart[i]..termStart[i+1]. */
export interface StoredText {
  dictionary: string[];
  termStart: Uint32Array;
  lengths: Float32Array;
  termIdx: Uint32Array;
  weights: Float32Array;
}

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
  /** NoteRecord.limited, only when set. */
  l?: string;
}

/**
 * A note in a format-4 shard: its chunks as columns, not one array per chunk (half a million chunks made
 * that many small objects to parse and collect at every load). Chunk k's id is `${p}#${k}` unless `i` lists them.
 */
export interface StoredNote {
  p: string;
  h: string;
  m: number;
  s: number;
  t: string;
  a: string[];
  g: string[];
  l?: string;
  /** Chunk count. */
  n: number;
  /** Per chunk, its heading trail's index in the shard's `trails`. */
  hd: number[];
  /** Per chunk, start line then end line. */
  ln: number[];
  /** The chunks' text hashes (16 hex digits each), one after the other. */
  x: string;
  /** Chunk ids, only when they are not `${p}#${k}`. */
  i?: string[];
}

export interface StoredShardMeta {
  /** Heading trails, each once. */
  trails: string[][];
  notes: StoredNote[];
}

const HASH_DIGITS = 16;

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
  const meta = encoder.encode(JSON.stringify(storedMeta(notes)));
  let count = 0;
  for (const n of notes) count += n.chunks.length;
  const records: Chunk[] = new Array<Chunk>(count);
  const texts: Uint8Array[] = new Array<Uint8Array>(count);
  let textBytes = 0;
  // Vectors are copied before the first tick: embedding goes on meanwhile, and the shard must be one snapshot.
  const flags = new Uint8Array(count);
  let withVector = 0;
  const found: (StoredCodes | null)[] = new Array<StoredCodes | null>(count);
  let r = 0;
  for (const n of notes) {
    for (const rec of n.chunks) {
      const text = textOf(rec);
      records[r] = { ...rec.chunk, text };
      texts[r] = encoder.encode(text);
      textBytes += texts[r].length;
      const vec = dim > 0 ? vectorOf(rec) : null;
      if (vec) {
        if (vec.codes.length !== dim) throw new Error(`Vector of ${vec.codes.length} dimensions in a ${dim}-dimension index`);
        flags[r] = 1;
        withVector++;
      }
      found[r++] = vec;
    }
  }
  const codes = new Int8Array(withVector * dim);
  const scales = new Float32Array(withVector);
  for (let i = 0, v = 0; i < count; i++) {
    const vec = found[i];
    if (!vec) continue;
    codes.set(vec.codes, v * dim);
    scales[v++] = vec.scale;
  }
  found.length = 0;

  // Analyzed words, with a shard-local dictionary. A full build saves every shard at least once, so this
  // allocates nothing per chunk: no map, no word arrays; ids and weights live in typed arrays grown by doubling.
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
        const grownLast = new Int32Array(lastChunk.length * 2).fill(-1);
        grownLast.set(lastChunk);
        lastChunk = grownLast;
        const grownAt = new Uint32Array(entryAt.length * 2);
        grownAt.set(entryAt);
        entryAt = grownAt;
      }
    }
    if (lastChunk[id] === current) {
      weights[entryAt[id]] += boost;
      return;
    }
    if (used === ids.length) {
      const grownIds = new Uint32Array(ids.length * 2);
      grownIds.set(ids);
      ids = grownIds;
      const grownWeights = new Float32Array(weights.length * 2);
      grownWeights.set(weights);
      weights = grownWeights;
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
  const dictionary = encoder.encode(JSON.stringify([...wordIds.keys()]));

  const metaEnd = align4(HEADER_BYTES + meta.length);
  const flagsEnd = align4(metaEnd + count);
  const scalesEnd = flagsEnd + withVector * 4;
  const vectorsEnd = align4(scalesEnd + withVector * dim);
  const dictEnd = align4(vectorsEnd + dictionary.length);
  const textsAt = dictEnd + (count + 1) * 4 + count * 4 + used * 8;
  const total = textsAt + count * 4 + textBytes;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, INDEX_FORMAT, true);
  view.setUint32(8, meta.length, true);
  view.setUint32(12, count, true);
  view.setUint32(16, dim, true);
  view.setUint32(20, dictionary.length, true);
  view.setUint32(24, used, true);
  view.setUint32(28, textBytes, true);
  bytes.set(meta, HEADER_BYTES);
  bytes.set(flags, metaEnd);
  new Float32Array(bytes.buffer, flagsEnd, withVector).set(scales);
  new Int8Array(bytes.buffer, scalesEnd, withVector * dim).set(codes);
  bytes.set(dictionary, vectorsEnd);
  let at = dictEnd;
  new Uint32Array(bytes.buffer, at, count + 1).set(termStart);
  at += (count + 1) * 4;
  new Float32Array(bytes.buffer, at, count).set(lengths);
  at += count * 4;
  new Uint32Array(bytes.buffer, at, used).set(ids.subarray(0, used));
  at += used * 4;
  new Float32Array(bytes.buffer, at, used).set(weights.subarray(0, used));
  at += used * 4;
  const ends = new Uint32Array(bytes.buffer, at, count);
  let end = at + count * 4;
  for (let i = 0; i < count; i++) {
    bytes.set(texts[i], end);
    end += texts[i].length;
    ends[i] = end - textsAt - count * 4;
  }
  return bytes;
}

/** The notes and chunks of a shard as its JSON stores them (texts aside). */
function storedMeta(notes: readonly NoteRecord[]): StoredShardMeta {
  const trails: string[][] = [];
  const trailIds = new Map<string, number>();
  const stored = notes.map((n): StoredNote => {
    const hd: number[] = [];
    const ln: number[] = [];
    let x = "";
    let plainIds = true;
    n.chunks.forEach(({ chunk: c }, k) => {
      const key = c.headings.join("\u0000");
      let trail = trailIds.get(key);
      if (trail === undefined) {
        trail = trails.length;
        trails.push(c.headings);
        trailIds.set(key, trail);
      }
      hd.push(trail);
      ln.push(c.startLine, c.endLine);
      x += c.textHash.length === HASH_DIGITS ? c.textHash : c.textHash.padEnd(HASH_DIGITS, "0").slice(0, HASH_DIGITS);
      if (c.id !== `${n.path}#${k}`) plainIds = false;
    });
    return {
      p: n.path,
      h: n.hash,
      m: n.mtime,
      s: n.size,
      t: n.title,
      a: n.aliases,
      g: n.tags,
      ...(n.limited ? { l: n.limited } : {}),
      n: n.chunks.length,
      hd,
      ln,
      x,
      ...(plainIds ? {} : { i: n.chunks.map((r) => r.chunk.id) }),
    };
  });
  return { trails, notes: stored };
}

/**
 * Decodes a shard file, or only its part before the chunk texts (`headOnly`: the texts are then not
 * available, and asking for one throws).
 */
export function decodeShard(bytes: Uint8Array, shardId: number, expectedDim: number, headOnly = false): DecodedShard {
  if (bytes.length < HEADER_BYTES) throw new IndexLoadError("shard file is truncated");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new IndexLoadError("shard file has a wrong signature");
  const format = view.getUint32(4, true);
  if (!READABLE_FORMATS.includes(format)) throw new IndexLoadError("shard file has another format version");
  const headerBytes = format === 2 ? HEADER_BYTES_V2 : HEADER_BYTES;
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

  let stored: unknown;
  try {
    stored = JSON.parse(decoder.decode(bytes.subarray(headerBytes, headerBytes + metaLength)));
  } catch {
    throw new IndexLoadError("shard metadata is unreadable");
  }
  const notesProblem = format === 2 ? storedNotesProblemV2(stored) : storedShardMetaProblem(stored);
  if (notesProblem) throw new IndexLoadError(`shard has impossible contents: ${notesProblem}`);

  const vectorIndex = new Int32Array(count).fill(-1);
  let withVector = 0;
  for (let i = 0; i < count; i++) if (bytes[metaEnd + i] === 1) vectorIndex[i] = withVector++;
  // Format 2: float32 vectors. Format 4: a float32 scale per vector, then int8 codes (padded to 4 bytes).
  const scalesEnd = flagsEnd + withVector * 4;
  const vectorsEnd = format === 2 ? flagsEnd + withVector * dim * 4 : align4(scalesEnd + withVector * dim);
  const dictEnd = align4(vectorsEnd + dictLength);
  const textsAt = dictEnd + (count + 1) * 4 + count * 4 + termCount * 8;
  const textsOnDisk = headOnly && format !== 2;
  if (textsAt + (format === 2 || textsOnDisk ? 0 : count * 4 + textBytes) !== bytes.length) throw new IndexLoadError("shard file has a wrong length");
  // Typed-array views need 4-byte alignment: copy the file buffer once if it is misaligned.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const base = aligned.byteOffset;
  let codes: Int8Array;
  let scales: Float32Array;
  let vectorsProblem: string | null;
  if (format === 2) {
    const floats = new Float32Array(aligned.buffer, base + flagsEnd, withVector * dim);
    vectorsProblem = storedVectorsProblem(floats, dim);
    codes = new Int8Array(withVector * dim);
    scales = new Float32Array(withVector);
    if (!vectorsProblem) for (let v = 0; v < withVector; v++) scales[v] = quantizeInto(floats, v * dim, dim, codes, v * dim);
  } else {
    scales = new Float32Array(aligned.buffer, base + flagsEnd, withVector);
    codes = new Int8Array(aligned.buffer, base + scalesEnd, withVector * dim);
    vectorsProblem = storedScalesProblem(scales);
  }
  let dictionary: unknown;
  try {
    dictionary = JSON.parse(decoder.decode(aligned.subarray(vectorsEnd, vectorsEnd + dictLength)));
  } catch {
    throw new IndexLoadError("shard word list is unreadable");
  }
  if (!Array.isArray(dictionary)) throw new IndexLoadError("shard word list is malformed");
  let at = base + dictEnd;
  const termStart = new Uint32Array(aligned.buffer, at, count + 1);
  at += (count + 1) * 4;
  const lengths = new Float32Array(aligned.buffer, at, count);
  at += count * 4;
  const termIdx = new Uint32Array(aligned.buffer, at, termCount);
  at += termCount * 4;
  const weights = new Float32Array(aligned.buffer, at, termCount);
  if (termStart[count] !== termCount) throw new IndexLoadError("shard word index is malformed");
  for (let i = 0; i < termCount; i++) if (termIdx[i] >= dictionary.length) throw new IndexLoadError("shard word index is malformed");
  const text: StoredText = { dictionary: dictionary as string[], termStart, lengths, termIdx, weights };
  const contentProblem = storedTextProblem(text, count) ?? vectorsProblem;
  if (contentProblem) throw new IndexLoadError(`shard has impossible contents: ${contentProblem}`);

  const notes: NoteRecord[] = [];
  const textsV2: string[] = [];
  let seen = 0;
  if (format === 2) {
    for (const n of stored as StoredNoteV2[]) {
      const chunks: ChunkRecord[] = n.c.map((c, k) => {
        textsV2.push(c[4]);
        const chunk: IndexedChunk = { id: c[0], path: n.p, title: n.t, aliases: n.a, tags: n.g, headings: c[1], startLine: c[2], endLine: c[3], textHash: c[5] };
        return { chunk, slot: -1, at: seen + k, textSlot: -1 };
      });
      seen += chunks.length;
      notes.push(noteRecord(n, chunks, shardId));
    }
  } else {
    const { trails, notes: stored4 } = stored as StoredShardMeta;
    for (const n of stored4) {
      const chunks = new Array<ChunkRecord>(n.n);
      for (let k = 0; k < n.n; k++) {
        const chunk: IndexedChunk = {
          id: n.i ? n.i[k] : `${n.p}#${k}`,
          path: n.p,
          title: n.t,
          aliases: n.a,
          tags: n.g,
          headings: trails[n.hd[k]],
          startLine: n.ln[2 * k],
          endLine: n.ln[2 * k + 1],
          textHash: n.x.slice(k * HASH_DIGITS, (k + 1) * HASH_DIGITS),
        };
        chunks[k] = { chunk, slot: -1, at: seen + k, textSlot: -1 };
      }
      seen += n.n;
      notes.push(noteRecord(n, chunks, shardId));
    }
  }
  if (seen !== count) throw new IndexLoadError("shard chunk count does not match");
  const texts = format === 2 ? arrayTexts(textsV2) : textsOnDisk ? textsNotRead(count) : textSection(aligned, textsAt, count, textBytes);
  return { notes, vectorIndex, codes, scales, format, text, texts };
}

function noteRecord(n: StoredNote | StoredNoteV2, chunks: ChunkRecord[], shardId: number): NoteRecord {
  const note: NoteRecord = { path: n.p, hash: n.h, mtime: n.m, size: n.s, title: n.t, aliases: n.a, tags: n.g, chunks, shard: shardId };
  if (typeof n.l === "string" && n.l) note.limited = n.l;
  return note;
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

/** The text section of a format-4 shard (`at` = offset of its end offsets within `bytes`), checked, decoded lazily. */
function textSection(bytes: Uint8Array, at: number, count: number, textBytes: number): ShardTexts {
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

/**
 * The chunk texts of one shard file (checked against its manifest entry) without reading the rest: what a
 * search reads to show its hits.
 */
export async function readShardTexts(data: DataDirPort, entry: ShardEntry): Promise<ShardTexts> {
  // Format 2: the texts are inside the notes' JSON.
  if (entry.textsAt === undefined) return decodeShard(await readChecked(data, entry), entry.id, 0).texts;
  const length = entry.bytes - entry.textsAt;
  const bytes = await readChecked(data, entry, { offset: entry.textsAt, length });
  const textBytes = length - entry.chunks * 4;
  if (textBytes < 0) throw new IndexLoadError(`shard ${entry.file} has a wrong length`);
  return textSection(bytes.byteOffset % 4 === 0 ? bytes : bytes.slice(), 0, entry.chunks, textBytes);
}

/**
 * Reads a shard file, or a range of it, and checks it against the manifest entry: the whole file against
 * both checksums, the part before the texts against `checksum`, the texts against `textsChecksum`.
 */
async function readChecked(data: DataDirPort, entry: ShardEntry, range?: ByteRange): Promise<Uint8Array> {
  const bytes = await data.read(`${INDEX_DIR}/${entry.file}`, range);
  if (!bytes) throw new IndexLoadError(`shard ${entry.file} is missing`);
  if (bytes.length !== (range ? range.length : entry.bytes)) throw new IndexLoadError(`shard ${entry.file} is truncated or has a wrong size`);
  const at = entry.textsAt;
  let intact: boolean;
  if (at === undefined) intact = checksumBytes(bytes) === entry.checksum;
  else if (!range) intact = checksumBytes(bytes.subarray(0, at)) === entry.checksum && checksumBytes(bytes.subarray(at)) === entry.textsChecksum;
  else intact = checksumBytes(bytes) === (range.offset === 0 ? entry.checksum : entry.textsChecksum);
  if (!intact) throw new IndexLoadError(`shard ${entry.file} is corrupt (checksum mismatch)`);
  return bytes;
}

/**
 * Reads and checks one shard file against its manifest entry: only the part before the chunk texts, unless
 * `withTexts` (re-analysing the words needs them).
 */
export async function readShard(data: DataDirPort, entry: ShardEntry, dim: number, withTexts = false): Promise<DecodedShard> {
  const headOnly = entry.textsAt !== undefined && !withTexts;
  // Reading in part cannot see a file cut short in its texts: its size can.
  if (headOnly) {
    const size = await data.size(`${INDEX_DIR}/${entry.file}`);
    if (size === null) throw new IndexLoadError(`shard ${entry.file} is missing`);
    if (size !== entry.bytes) throw new IndexLoadError(`shard ${entry.file} is truncated or has a wrong size`);
  }
  const bytes = await readChecked(data, entry, headOnly ? { offset: 0, length: entry.textsAt as number } : undefined);
  try {
    return decodeShard(bytes, entry.id, dim, headOnly);
  } catch (err) {
    if (err instanceof IndexLoadError && err.message.startsWith("shard ")) throw new IndexLoadError(`shard ${entry.file}${err.message.slice(5)}`);
    throw err;
  }
}

export async function writeShard(data: DataDirPort, id: number, generation: number, bytes: Uint8Array, notes: number, chunks: number): Promise<ShardEntry> {
  const file = `shard-${id}-${generation}.bin`;
  await data.writeAtomic(`${INDEX_DIR}/${file}`, bytes);
  const textsAt = textsStart(bytes);
  return {
    id,
    file,
    bytes: bytes.length,
    checksum: checksumBytes(bytes.subarray(0, textsAt)),
    notes,
    chunks,
    textsAt,
    textsChecksum: checksumBytes(bytes.subarray(textsAt)),
  };
}

/** Where an encoded (format 4) shard's text section begins: its end offsets, then the UTF-8 texts. */
export function textsStart(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return bytes.length - view.getUint32(28, true) - view.getUint32(12, true) * 4;
}

/** Null when there is no index yet; throws IndexLoadError when the manifest is unusable. */
export async function readManifest(data: DataDirPort): Promise<Manifest | null> {
  const text = await data.readText(MANIFEST_PATH);
  if (text === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new IndexLoadError("the index manifest is unreadable");
  }
  const m = raw as Partial<Manifest>;
  if (!m || typeof m !== "object" || typeof m.format !== "number" || !Array.isArray(m.shards)) {
    throw new IndexLoadError("the index manifest is malformed");
  }
  for (const s of m.shards) {
    if (!s || typeof s.file !== "string" || typeof s.id !== "number" || typeof s.checksum !== "string" || typeof s.bytes !== "number") {
      throw new IndexLoadError("the index manifest is malformed");
    }
    if (!/^shard-\d+-\d+\.bin$/.test(s.file)) throw new IndexLoadError("the index manifest names an unexpected file");
    if (s.textsAt !== undefined && (!Number.isInteger(s.textsAt) || s.textsAt < 0 || s.textsAt > s.bytes || typeof s.textsChecksum !== "string")) {
      throw new IndexLoadError("the index manifest has an invalid shard entry");
    }
  }
  if (m.embedder !== null && (typeof m.embedder !== "object" || typeof m.embedder.id !== "string" || typeof m.embedder.dim !== "number")) {
    throw new IndexLoadError("the index manifest is malformed");
  }
  const manifest = m as Manifest;
  const repairs = checkManifest(manifest, (message) => new IndexLoadError(message));
  if (repairs.length > 0) manifest.repairs = repairs;
  return manifest;
}

export async function writeManifest(data: DataDirPort, manifest: Manifest): Promise<void> {
  await data.writeAtomic(MANIFEST_PATH, JSON.stringify(manifest, null, 1));
}

/**
 * Removes shard files the manifest no longer names, and with `tempFiles` also temp files left by a
 * crashed write (only right after taking the lock: nobody else can be writing then).
 */
export async function removeUnreferenced(data: DataDirPort, manifest: Manifest | null, tempFiles = false): Promise<void> {
  const keep = new Set(manifest?.shards.map((s) => s.file) ?? []);
  for (const name of await data.list(INDEX_DIR)) {
    if ((name.startsWith("shard-") && name.endsWith(".bin") && !keep.has(name)) || (tempFiles && name.endsWith(".tmp"))) {
      await data.remove(`${INDEX_DIR}/${name}`);
    }
  }
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
