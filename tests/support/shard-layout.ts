/**
 * Byte offsets inside a shard file of the current format (src/core/indexing/shard-codec.ts), for tests
 * that damage one part of a real shard on purpose.
 */
import { partChecksum } from "../../src/core/indexing/checksum";
import type { ShardEntry } from "../../src/core/indexing/index-persistence";
import { partEnds, readHeader, shardLayout as codecLayout, type ShardLayout as CodecLayout } from "../../src/core/indexing/shard-codec";

/** Makes a manifest entry match a shard file's (changed) bytes again: size and every checksum. */
export function sealShard(entry: ShardEntry, bytes: Uint8Array): void {
  const ends = partEnds(bytes);
  const part = (from: number, end: number) => ({ end, checksum: partChecksum(bytes.subarray(from, end)) });
  entry.bytes = bytes.length;
  entry.textsAt = ends.meta;
  entry.checksum = partChecksum(bytes.subarray(0, ends.meta));
  entry.textsChecksum = partChecksum(bytes.subarray(ends.meta));
  entry.parts = { index: part(0, ends.index), vectors: part(ends.index, ends.vectors), postings: part(ends.vectors, ends.postings), meta: part(ends.postings, ends.meta) };
}

export interface ShardLayout extends CodecLayout {
  bytes: Buffer;
  view: DataView;
  /** The notes' meta JSON (hashes, titles, chunk columns). */
  metaStart: number;
  metaLength: number;
  /** A float32 scale per vector, then int8 codes. */
  scalesAt: number;
  /** The first posting's weight (postings are (uint32 chunk, float32 weight) pairs). */
  weightsAt: number;
}

export function shardLayout(bytes: Buffer): ShardLayout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const layout = codecLayout(readHeader(bytes));
  return { ...layout, bytes, view, metaStart: layout.metaAt, metaLength: layout.metaBytes, scalesAt: layout.indexEnd, weightsAt: layout.vectorsEnd + 4 };
}
