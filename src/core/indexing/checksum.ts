/**
 * A fast 64-bit checksum of bytes (two independent 32-bit multiply-xor lanes over 32-bit words), as 16 hex
 * digits. Detects truncated or corrupted index files; not a cryptographic hash. Pure TypeScript because
 * the core may not use node:crypto, and word-at-a-time because vector shards are megabytes.
 */
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
