import type { ByteRange, DataDirPort } from "../ports/data-dir";
import { checksumBytes, partChecksum } from "./checksum";
import { checkManifest } from "./index-validation";
import { decodeShard, IndexLoadError, partEnds, READABLE_SHARD_FORMATS, SHARD_FORMAT, textSection, type DecodedShard, type ShardParts, type ShardTexts } from "./shard-codec";

export { IndexLoadError } from "./shard-codec";

/**
 * The index on disk, under .krypton/index/:
 *   manifest.json            format, chunker version, embedder id and dimension, and for every shard its
 *                            file name, size and checksums. Written last, atomically: it is the commit point.
 *   shard-<n>-<gen>.bin      one partition of notes (≤ SHARD_MAX_CHUNKS chunks), laid out in shard-codec.ts:
 *                            an index part (note listing, sorted words, lengths), the int8 vectors, the
 *                            postings, the notes' metadata, then the chunk texts. Loading reads everything
 *                            before the texts; a one-shot search (saved-index.ts) reads only the parts it
 *                            needs; either reads back only the texts of the hits it shows (readShardTexts).
 * Shard files are never rewritten in place: a changed shard gets a new generation name, the manifest is
 * switched to it, then the old file is removed. So no write grows with the vault, a crash leaves the old
 * manifest intact, and a reader in another process sees either the old or the new set of files.
 */
export const INDEX_DIR = "index";
export const MANIFEST_PATH = `${INDEX_DIR}/manifest.json`;
export const INDEX_FORMAT = SHARD_FORMAT;
/**
 * Formats still read (their shards are rewritten in the current format at the next save, vectors kept).
 * Format 3 (int8 vectors, texts inside the JSON) only ever existed between two development commits.
 */
export const READABLE_FORMATS: readonly number[] = READABLE_SHARD_FORMATS;
export const SHARD_MAX_CHUNKS = 1024;

export interface ShardEntry {
  id: number;
  file: string;
  bytes: number;
  /** Of the bytes before `textsAt` (the whole file when there is no `textsAt`: format 2). */
  checksum: string;
  notes: number;
  chunks: number;
  /** Where the chunk texts begin (formats 4 and 5): loading reads and checks only the bytes before. */
  textsAt?: number;
  /** Of the bytes from `textsAt` on. */
  textsChecksum?: string;
  /** Format 5: each part's end and checksum, so a reader of one part checks that part alone. */
  parts?: ShardParts;
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

/**
 * The chunk texts of one shard file (checked against its manifest entry) without reading the rest: what a
 * search reads to show its hits. With `into` (at least shardTextsLength(entry) bytes), read into that buffer
 * when the data dir can read in place: the texts then last only until the buffer is reused
 * (ShardTextBuffers).
 */
export async function readShardTexts(data: DataDirPort, entry: ShardEntry, into?: Uint8Array): Promise<ShardTexts> {
  // Format 2: the texts are inside the notes' JSON.
  if (entry.textsAt === undefined) return decodeShard(await readChecked(data, entry), entry.id, 0).texts;
  const length = shardTextsLength(entry);
  const bytes = await readChecked(data, entry, { offset: entry.textsAt, length }, into);
  const textBytes = length - entry.chunks * 4;
  if (textBytes < 0) throw new IndexLoadError(`shard ${entry.file} has a wrong length`);
  return textSection(bytes, 0, entry.chunks, textBytes);
}

/** Bytes of a shard file's chunk-text part (formats 4 and later; 0 for format 2, whose texts are not apart). */
export function shardTextsLength(entry: ShardEntry): number {
  return entry.textsAt === undefined ? 0 : entry.bytes - entry.textsAt;
}

/** A whole shard file, checked against both of its manifest checksums. */
export function readShardFile(data: DataDirPort, entry: ShardEntry): Promise<Uint8Array> {
  return readChecked(data, entry);
}

/**
 * Reads a shard file, or a range of it, and checks it against the manifest entry: the whole file against
 * both checksums, the part before the texts against `checksum`, the texts against `textsChecksum`.
 */
async function readChecked(data: DataDirPort, entry: ShardEntry, range?: ByteRange, into?: Uint8Array): Promise<Uint8Array> {
  const bytes = await readShardRange(data, entry, range, into);
  const at = entry.textsAt;
  // Format-5 entries (with parts) were summed with partChecksum, older ones with checksumBytes.
  const sum = entry.parts ? partChecksum : checksumBytes;
  let intact: boolean;
  if (at === undefined) intact = sum(bytes) === entry.checksum;
  else if (!range) intact = sum(bytes.subarray(0, at)) === entry.checksum && sum(bytes.subarray(at)) === entry.textsChecksum;
  else intact = sum(bytes) === (range.offset === 0 ? entry.checksum : entry.textsChecksum);
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
  const ends = partEnds(bytes);
  const part = (from: number, end: number) => ({ end, checksum: partChecksum(bytes.subarray(from, end)) });
  return {
    id,
    file,
    bytes: bytes.length,
    checksum: partChecksum(bytes.subarray(0, ends.meta)),
    notes,
    chunks,
    textsAt: ends.meta,
    textsChecksum: partChecksum(bytes.subarray(ends.meta)),
    parts: { index: part(0, ends.index), vectors: part(ends.index, ends.vectors), postings: part(ends.vectors, ends.postings), meta: part(ends.postings, ends.meta) },
  };
}

export type ShardPartName = keyof ShardParts;
const PART_ORDER: readonly ShardPartName[] = ["index", "vectors", "postings", "meta"];

/** Where a part of a shard (format 5 or later) lies, from its manifest entry. */
function partRange(entry: ShardEntry, name: ShardPartName): ByteRange {
  const parts = entry.parts;
  if (!parts) throw new IndexLoadError(`shard ${entry.file} has no parts`);
  const k = PART_ORDER.indexOf(name);
  const offset = k === 0 ? 0 : parts[PART_ORDER[k - 1]].end;
  return { offset, length: parts[name].end - offset };
}

/**
 * One part of a shard (format 5 or later), checked against its own checksum (a one-shot search reads only the parts
 * it needs; readShard reads and checks everything before the texts).
 */
export async function readShardPart(data: DataDirPort, entry: ShardEntry, name: ShardPartName): Promise<Uint8Array> {
  const bytes = await readShardRange(data, entry, partRange(entry, name));
  checkShardPart(entry, name, bytes);
  return bytes;
}

/** Throws IndexLoadError unless `bytes` are the part `name` of the shard its manifest entry describes. */
export function checkShardPart(entry: ShardEntry, name: ShardPartName, bytes: Uint8Array): void {
  if (partChecksum(bytes) !== entry.parts?.[name].checksum) throw new IndexLoadError(`shard ${entry.file} is corrupt (checksum mismatch)`);
}

/**
 * A shard file, or a range of it, 4-byte aligned for typed-array views, without a checksum: missing or
 * short files are errors. With `into`, a range is read into that buffer where the data dir can. The postings a search reads a few words at a time are checked for shape by
 * their reader instead; everything else goes through readChecked or readShardPart.
 */
export async function readShardRange(data: DataDirPort, entry: ShardEntry, range?: ByteRange, into?: Uint8Array): Promise<Uint8Array> {
  if (range && into && data.readInto && into.length >= range.length && into.byteOffset % 4 === 0) {
    const target = into.subarray(0, range.length);
    const got = await data.readInto(`${INDEX_DIR}/${entry.file}`, range.offset, target);
    if (got === null) throw new IndexLoadError(`shard ${entry.file} is missing`);
    if (got !== range.length) throw new IndexLoadError(`shard ${entry.file} is truncated or has a wrong size`);
    return target;
  }
  const bytes = await data.read(`${INDEX_DIR}/${entry.file}`, range);
  if (!bytes) throw new IndexLoadError(`shard ${entry.file} is missing`);
  if (bytes.length !== (range ? range.length : entry.bytes)) throw new IndexLoadError(`shard ${entry.file} is truncated or has a wrong size`);
  return bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
}

/**
 * The saved index is in a format newer than this version's (a newer Krypton saved it, the plugin or a CLI
 * sharing the vault). It is not this version's to rebuild: each copy would rebuild the other's, re-embedding
 * the whole vault at every switch. The index leaves it as it is (VaultIndex: read-only, in memory).
 */
export class NewerIndexError extends IndexLoadError {
  constructor(readonly format: number) {
    super(`the index was saved by a newer version of Krypton (index format ${format}; this version reads up to format ${INDEX_FORMAT})`);
    this.name = "NewerIndexError";
  }
}

/**
 * Null when there is no index yet; throws IndexLoadError when the manifest is unusable, NewerIndexError when a
 * newer Krypton wrote it (checked first: a newer format may change any other field).
 */
export async function readManifest(data: DataDirPort): Promise<Manifest | null> {
  const text = await data.readText(MANIFEST_PATH);
  if (text === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new IndexLoadError("the index manifest is unreadable");
  }
  const format = (raw as { format?: unknown } | null)?.format;
  if (typeof format === "number" && format > INDEX_FORMAT) throw new NewerIndexError(format);
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
    if (s.parts !== undefined && !partsValid(s)) throw new IndexLoadError("the index manifest has an invalid shard entry");
  }
  if (m.embedder !== null && (typeof m.embedder !== "object" || typeof m.embedder.id !== "string" || typeof m.embedder.dim !== "number")) {
    throw new IndexLoadError("the index manifest is malformed");
  }
  const manifest = m as Manifest;
  const repairs = checkManifest(manifest, (message) => new IndexLoadError(message));
  if (repairs.length > 0) manifest.repairs = repairs;
  return manifest;
}

/** Parts that follow each other from 0 up to the texts, each with a checksum. */
function partsValid(entry: ShardEntry): boolean {
  const parts = entry.parts as unknown as Record<string, { end?: unknown; checksum?: unknown } | undefined>;
  if (!parts || typeof parts !== "object" || entry.textsAt === undefined) return false;
  let previous = 0;
  for (const name of PART_ORDER) {
    const part = parts[name];
    if (!part || typeof part.checksum !== "string" || typeof part.end !== "number" || !Number.isInteger(part.end) || part.end < previous) return false;
    previous = part.end;
  }
  return previous === entry.textsAt;
}

export async function writeManifest(data: DataDirPort, manifest: Manifest): Promise<void> {
  await data.writeAtomic(MANIFEST_PATH, JSON.stringify(manifest, null, 1));
}

/**
 * Removes shard files the manifest no longer names, and with `tempFiles` also temp files left by a
 * crashed write (only right after taking the lock: nobody else can be writing then). One that cannot be
 * removed (a folder with files in it under a shard's name, never removed) does not keep the others.
 */
export async function removeUnreferenced(data: DataDirPort, manifest: Manifest | null, tempFiles = false): Promise<void> {
  const keep = new Set(manifest?.shards.map((s) => s.file) ?? []);
  for (const name of await data.list(INDEX_DIR)) {
    if ((name.startsWith("shard-") && name.endsWith(".bin") && !keep.has(name)) || (tempFiles && name.endsWith(".tmp"))) {
      await data.remove(`${INDEX_DIR}/${name}`).catch(() => undefined);
    }
  }
}
