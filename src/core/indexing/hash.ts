/** Character codes of the hex digits 0-9a-f. */
const HEX = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** FNV-1a 64's offset basis as four 16-bit limbs, low to high. */
const OFFSET_BASIS = [0x2325, 0x8422, 0x9ce4, 0xcbf2];

/**
 * Characters hashed between two ticks by hashTextSliced: about a millisecond's work, so a 5 MB note (20-40 ms
 * in one go) no longer holds Obsidian's main thread at once.
 */
export const HASH_SLICE_CHARS = 256 * 1024;

/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string, as 16 hex digits. Pure TypeScript (core may not use
 * node:crypto) and fast enough for multi-megabyte notes. Used for note content hashes and Chunk.textHash:
 * a change detector, not a security primitive.
 */
export function hashText(text: string): string {
  const h = [...OFFSET_BASIS];
  hashRange(text, 0, text.length, h);
  return hexOf(h);
}

/**
 * hashText's value, computed in slices of `sliceChars` with `tick` awaited between them (a WorkSlicer's), for
 * a whole note: FNV-1a goes byte by byte, so slicing changes nothing in the result.
 */
export async function hashTextSliced(text: string, tick: () => Promise<void>, sliceChars = HASH_SLICE_CHARS): Promise<string> {
  const h = [...OFFSET_BASIS];
  for (let i = 0; i < text.length; ) {
    i = hashRange(text, i, Math.min(text.length, i + sliceChars), h);
    if (i < text.length) await tick();
  }
  return hexOf(h);
}

/**
 * Hashes the characters from `from` to `to` into `h` (the 64-bit state as four 16-bit limbs, low to high, so
 * every product stays exact in a double). Returns where it stopped: `to`, or one past it when a surrogate pair
 * straddles `to` (a pair is one code point, hashed whole).
 */
function hashRange(text: string, from: number, to: number, h: number[]): number {
  let h0 = h[0];
  let h1 = h[1];
  let h2 = h[2];
  let h3 = h[3];

  const n = text.length;
  let i = from;
  for (; i < to; i++) {
    let c = text.charCodeAt(i);
    // Decode a surrogate pair to its code point; a lone surrogate is hashed as U+FFFD, like TextEncoder.
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else {
        c = 0xfffd;
      }
    }
    if (c < 0x80) {
      step(c);
    } else if (c < 0x800) {
      step(0xc0 | (c >> 6));
      step(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      step(0xe0 | (c >> 12));
      step(0x80 | ((c >> 6) & 0x3f));
      step(0x80 | (c & 0x3f));
    } else {
      step(0xf0 | (c >> 18));
      step(0x80 | ((c >> 12) & 0x3f));
      step(0x80 | ((c >> 6) & 0x3f));
      step(0x80 | (c & 0x3f));
    }
  }
  h[0] = h0;
  h[1] = h1;
  h[2] = h2;
  h[3] = h3;
  return i;

  /** h ^= byte; h *= 0x100000001b3 (mod 2^64), where h * prime = h * 0x1b3 + (h << 40). */
  function step(byte: number): void {
    h0 ^= byte;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
}

/** The state as 16 hex digits, high limb first. */
function hexOf([h0, h1, h2, h3]: number[]): string {
  // One flat string: concatenating four pieces makes a rope of three strings, and the index keeps one of
  // these per chunk (at 500k chunks ~30 MB more heap and a million more objects for the collector to mark).
  return String.fromCharCode(
    HEX[h3 >>> 12], HEX[(h3 >>> 8) & 15], HEX[(h3 >>> 4) & 15], HEX[h3 & 15],
    HEX[h2 >>> 12], HEX[(h2 >>> 8) & 15], HEX[(h2 >>> 4) & 15], HEX[h2 & 15],
    HEX[h1 >>> 12], HEX[(h1 >>> 8) & 15], HEX[(h1 >>> 4) & 15], HEX[h1 & 15],
    HEX[h0 >>> 12], HEX[(h0 >>> 8) & 15], HEX[(h0 >>> 4) & 15], HEX[h0 & 15],
  );
}
