/**
 * Byte offsets inside a shard file of the current format (src/core/indexing/index-persistence.ts), for
 * tests that damage one part of a real shard on purpose.
 */
import { checksumBytes } from "../../src/core/indexing/checksum";
import { textsStart, type ShardEntry } from "../../src/core/indexing/index-persistence";

const align4 = (n: number) => (n + 3) & ~3;

/** Makes a manifest entry match a shard file's (changed) bytes again: size and both checksums. */
export function sealShard(entry: ShardEntry, bytes: Uint8Array): void {
  const at = textsStart(bytes);
  entry.bytes = bytes.length;
  entry.textsAt = at;
  entry.checksum = checksumBytes(bytes.subarray(0, at));
  entry.textsChecksum = checksumBytes(bytes.subarray(at));
}

export interface ShardLayout {
  bytes: Buffer;
  view: DataView;
  count: number;
  metaStart: number;
  metaLength: number;
  /** A float32 scale per vector, then int8 codes. */
  scalesAt: number;
  codesAt: number;
  dim: number;
  /** The shard's word list (UTF-8 JSON). */
  dictAt: number;
  dictLength: number;
  termStartAt: number;
  lengthsAt: number;
  weightsAt: number;
  termCount: number;
}

export function shardLayout(bytes: Buffer): ShardLayout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const metaLength = view.getUint32(8, true);
  const count = view.getUint32(12, true);
  const dim = view.getUint32(16, true);
  const dictLength = view.getUint32(20, true);
  const termCount = view.getUint32(24, true);
  const metaEnd = align4(32 + metaLength);
  const flagsEnd = align4(metaEnd + count);
  let withVector = 0;
  for (let i = 0; i < count; i++) if (bytes[metaEnd + i] === 1) withVector++;
  const codesAt = flagsEnd + withVector * 4;
  const dictAt = align4(codesAt + withVector * dim);
  const dictEnd = align4(dictAt + dictLength);
  const lengthsAt = dictEnd + (count + 1) * 4;
  return {
    bytes,
    view,
    count,
    metaStart: 32,
    metaLength,
    scalesAt: flagsEnd,
    codesAt,
    dim,
    dictAt,
    dictLength,
    termStartAt: dictEnd,
    lengthsAt,
    weightsAt: lengthsAt + count * 4 + termCount * 4,
    termCount,
  };
}

