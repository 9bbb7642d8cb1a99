/**
 * Checksums of index files: they detect truncated or corrupted files, they are not cryptographic. Pure
 * TypeScript because the core may not use node:crypto, and word-at-a-time because vector shards are megabytes.
 *
 * partChecksum is the one written (index format 5, every part of a shard). checksumBytes is the one of
 * formats 2 and 4, kept to check files of those formats until they are rewritten.
 */

/**
 * 64-bit checksum over four independent 32-bit multiply-xor-shift lanes (word i feeds lane i mod 4), as 16
 * hex digits: the lanes do not wait on each other, so it runs about twice as fast as one chain, which
 * matters when a search checks 400 MB of vectors. Takes the bytes as pieces (a part read in pieces, e.g.
 * straight into the vector store's memory); every piece but the last must be a whole number of 4-byte words.
 */
export function partChecksum(pieces: Uint8Array | readonly Uint8Array[]): string {
  const list = pieces instanceof Uint8Array ? [pieces] : pieces;
  let length = 0;
  for (const p of list) length += p.length;
  const sum = new PartChecksum(length);
  for (const p of list) sum.update(p);
  return sum.digest();
}

/**
 * partChecksum fed piece by piece, for bytes that are not in one array: `update` with bytes, or `updateWith`
 * a mixer that runs the lanes elsewhere (the vector store's SIMD kernel over codes in its memory).
 */
export class PartChecksum {
  /** The four lanes (partChecksum's state), in lane order. */
  readonly lanes: Int32Array;
  /** The lane the next word goes into. */
  lane = 0;
  private fed = 0;
  private tail: Uint8Array | null = null;

  constructor(private readonly length: number) {
    this.lanes = new Int32Array([0x9e3779b1 ^ length, 0x85ebca77 ^ Math.imul(length, 0x27d4eb2f), 0xc2b2ae3d, 0x165667b1]);
  }

  /** Every piece but the last must be a whole number of 4-byte words. */
  update(bytes: Uint8Array): void {
    this.startPiece(bytes.length);
    this.lane = mixWords(bytes, this.lanes, this.lane);
    if (bytes.length % 4 !== 0) this.tail = bytes.subarray(bytes.length & ~3);
  }

  /**
   * `words` words (a multiple of 4) mixed by `mix`, which gets the lanes rotated so that its first word
   * goes into lane 0 of what it is given, and mixes in place.
   */
  updateWith(words: number, mix: (rotated: Int32Array) => void): void {
    if (words % 4 !== 0) throw new Error("PartChecksum.updateWith: not whole blocks of four words");
    this.startPiece(words * 4);
    const rotated = new Int32Array(4);
    for (let k = 0; k < 4; k++) rotated[k] = this.lanes[(this.lane + k) & 3];
    mix(rotated);
    for (let k = 0; k < 4; k++) this.lanes[(this.lane + k) & 3] = rotated[k];
  }

  digest(): string {
    if (this.fed !== this.length) throw new Error(`PartChecksum: ${this.fed} bytes fed of ${this.length}`);
    let a0 = this.lanes[0];
    // Trailing bytes (fewer than 4) go into lane 0.
    for (const byte of this.tail ?? []) {
      a0 = Math.imul(a0 ^ byte, 0x01000193);
      a0 ^= a0 >>> 15;
    }
    const hi = fmix(a0 ^ rotl(fmix(this.lanes[1]), 13));
    const lo = fmix(this.lanes[2] ^ rotl(fmix(this.lanes[3]), 17) ^ hi);
    return (hi >>> 0).toString(16).padStart(8, "0") + (lo >>> 0).toString(16).padStart(8, "0");
  }

  private startPiece(bytes: number): void {
    if (this.tail !== null) throw new Error("PartChecksum: a piece before the last is not whole words");
    this.fed += bytes;
  }
}

/** Feeds the whole words of `bytes` to the lanes, the first into lane `lane`; returns the lane of the next word. */
function mixWords(bytes: Uint8Array, state: Int32Array, lane: number): number {
  const words = bytes.length >>> 2;
  const view = (bytes.byteOffset & 3) === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset, words) : new Int32Array(bytes.slice(0, words * 4).buffer);
  let i = 0;
  // Single words until lane 0 comes round, then four at a time, then the rest one by one.
  for (; i < words && lane !== 0; i++, lane = (lane + 1) & 3) state[lane] = step(state[lane], view[i]);
  let a0 = state[0];
  let a1 = state[1];
  let a2 = state[2];
  let a3 = state[3];
  const end = i + ((words - i) & ~3);
  for (; i < end; i += 4) {
    a0 = Math.imul(a0 ^ view[i], 0x01000193);
    a0 ^= a0 >>> 15;
    a1 = Math.imul(a1 ^ view[i + 1], 0x01000193);
    a1 ^= a1 >>> 15;
    a2 = Math.imul(a2 ^ view[i + 2], 0x01000193);
    a2 ^= a2 >>> 15;
    a3 = Math.imul(a3 ^ view[i + 3], 0x01000193);
    a3 ^= a3 >>> 15;
  }
  state[0] = a0;
  state[1] = a1;
  state[2] = a2;
  state[3] = a3;
  for (; i < words; i++, lane = (lane + 1) & 3) state[lane] = step(state[lane], view[i]);
  return lane;
}

function step(a: number, w: number): number {
  const m = Math.imul(a ^ w, 0x01000193);
  return m ^ (m >>> 15);
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** MurmurHash3's finalizer: every input bit reaches every output bit. */
function fmix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The checksum of index formats 2 and 4 (two dependent multiply-xor chains), as 16 hex digits. */
export function checksumBytes(bytes: Uint8Array): string {
  let a = 0x9e3779b1 ^ bytes.length;
  let b = 0x85ebca77 ^ Math.imul(bytes.length, 0x27d4eb2f);
  const words = bytes.length >>> 2;
  if ((bytes.byteOffset & 3) === 0) {
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
    for (let i = 0; i < words; i++) {
      const w = view[i];
      a = Math.imul(a ^ w, 0x01000193);
      b = Math.imul((b << 5) | (b >>> 27), 0x5bd1e995) ^ w;
    }
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < words; i++) {
      const w = view.getUint32(i * 4, true);
      a = Math.imul(a ^ w, 0x01000193);
      b = Math.imul((b << 5) | (b >>> 27), 0x5bd1e995) ^ w;
    }
  }
  for (let i = words * 4; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul((b << 5) | (b >>> 27), 0x5bd1e995) ^ bytes[i];
  }
  // Final avalanche so neighbouring inputs differ in every digit.
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b);
  a = Math.imul(a ^ (a >>> 13), 0xc2b2ae35) ^ (a >>> 16);
  b = Math.imul(b ^ (b >>> 15), 0x2c1b3c6d);
  b = Math.imul(b ^ (b >>> 12), 0x297a2d39) ^ (b >>> 15);
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
