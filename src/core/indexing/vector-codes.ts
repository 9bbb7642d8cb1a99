import { VECTOR_DOT_WASM } from "./wasm/vector-dot-wasm";

/**
 * Vector codes: how the vector store and the shard files keep embeddings. A unit vector v is stored as
 * 4-bit codes c = round(v / s), −7..7, with s = max|v| / 7, so a cosine is s_a · s_b · Σ c_a c_b. Half a
 * byte per dimension: 500k 768-d vectors take 190 MB (int8 took 380 MB, float32 1.5 GB). A search's
 * query is quantized to int8 (−127..127): the scan's error is then the stored side's alone, and the
 * candidates are re-scored with the float query. The quality benchmark measures the ranking against int8
 * on a real model (hybrid MRR@10 0.904 against 0.906 with int8; 15 levels keep the order of real hits,
 * whose cosines differ by more than the rounding moves them).
 *
 * Row layout (rowBytes(dim) bytes, zero padded): each 16-byte group holds 32 dimensions, dimension
 * 32g + i in the low nibble of byte 16g + i and dimension 32g + 16 + i in its high nibble, so the SIMD
 * kernel unpacks a group into two 16-lane vectors that line up with 32 consecutive query bytes.
 */
export const CODE_MAX = 7;
/** The int8 query's largest code. */
export const QUERY_CODE_MAX = 127;

/** Bytes of one stored vector of `dim` dimensions: half a byte each, in whole 16-byte groups. */
export function rowBytes(dim: number): number {
  return Math.ceil(dim / 32) * 16;
}

/** The dimension in byte b's low nibble (its high nibble holds the one 16 after it). */
function lowDimension(b: number): number {
  return ((b >> 4) << 5) + (b & 15);
}

/** The signed code in a byte's low nibble. */
function lowCode(byte: number): number {
  return (byte << 28) >> 28;
}

/** The signed code in a byte's high nibble (the byte is read signed: its sign is the nibble's). */
function highCode(byte: number): number {
  return byte >> 4;
}

/** Quantizes source[from .. from + dim) (unit length) into a row of 4-bit codes at codes[to ..); returns its scale (0 for a zero vector). */
export function packInto(source: ArrayLike<number>, from: number, dim: number, codes: Int8Array, to: number): number {
  const bytes = rowBytes(dim);
  const max = largest(source, from, dim);
  if (!(max > 0)) {
    codes.fill(0, to, to + bytes);
    return 0;
  }
  // |value| ≤ max, so every code is within ±CODE_MAX without clamping.
  const inv = CODE_MAX / max;
  for (let b = 0; b < bytes; b++) {
    // Past the dimension, zeros.
    const d = lowDimension(b);
    const low = d < dim ? Math.round(source[from + d] * inv) : 0;
    const high = d + 16 < dim ? Math.round(source[from + d + 16] * inv) : 0;
    // Int8Array stores the byte's two's complement: the high nibble keeps its sign.
    codes[to + b] = (low & 15) | (high << 4);
  }
  return max / CODE_MAX;
}

/** The code of dimension i in the row at codes[at ..]. */
export function codeAt(codes: Int8Array, at: number, i: number): number {
  const byte = codes[at + ((i >> 5) << 4) + (i & 15)];
  return (i & 16) === 0 ? lowCode(byte) : highCode(byte);
}

/** The row at codes[at ..] (of `dim` dimensions) dotted with float values, a byte (two codes) at a time. */
export function dotRow(codes: Int8Array, at: number, dim: number, values: ArrayLike<number>): number {
  const bytes = rowBytes(dim);
  let dot = 0;
  for (let b = 0; b < bytes; b++) {
    const byte = codes[at + b];
    const d = lowDimension(b);
    if (d < dim) dot += lowCode(byte) * values[d];
    if (d + 16 < dim) dot += highCode(byte) * values[d + 16];
  }
  return dot;
}

/** Quantizes a query (unit length) into int8 codes at codes[to .. to + dim); returns its scale (0 for a zero vector). */
export function quantizeQueryInto(source: ArrayLike<number>, from: number, dim: number, codes: Int8Array, to: number): number {
  const max = largest(source, from, dim);
  if (!(max > 0)) {
    codes.fill(0, to, to + dim);
    return 0;
  }
  const inv = QUERY_CODE_MAX / max;
  for (let i = 0; i < dim; i++) codes[to + i] = Math.round(source[from + i] * inv);
  return max / QUERY_CODE_MAX;
}

/**
 * Rows of 4-bit codes from int8 codes (`dim` bytes per vector, the format-4 and format-5 shards): each
 * vector decoded and packed again, with its new scale. Older indexes keep their vectors this way.
 */
export function packInt8(int8: Int8Array, scales: Float32Array, count: number, dim: number): { codes: Int8Array; scales: Float32Array } {
  const row = rowBytes(dim);
  const codes = new Int8Array(count * row);
  const packedScales = new Float32Array(count);
  const unit = new Float32Array(dim);
  for (let v = 0; v < count; v++) {
    for (let i = 0; i < dim; i++) unit[i] = int8[v * dim + i] * scales[v];
    packedScales[v] = packInto(unit, 0, dim, codes, v * row);
  }
  return { codes, scales: packedScales };
}

function largest(source: ArrayLike<number>, from: number, dim: number): number {
  let max = 0;
  for (let i = 0; i < dim; i++) {
    const a = Math.abs(source[from + i]);
    if (a > max) max = a;
  }
  return max;
}

/**
 * Scores `n` rows of 4-bit codes lying `stride` bytes apart in `memory` (stride = rowBytes(dim)), starting
 * at byte `codesAt`, against the int8 query codes at `queryAt` (2 × stride bytes, zero padded): int32 dot
 * products written at `outAt`.
 */
export type DotKernel = (codesAt: number, queryAt: number, n: number, stride: number, outAt: number) => void;

/** Each of `n` rows' sum of squared codes (int32) written at `outAt`: a stored vector's length, to check it. */
export type NormKernel = (codesAt: number, n: number, stride: number, outAt: number) => void;

/** partChecksum's four lanes (16 bytes at `stateAt`, updated in place) over `blocks` 16-byte blocks at `at`. */
export type MixKernel = (at: number, blocks: number, stateAt: number) => void;

export interface Kernels {
  dots: DotKernel;
  norms: NormKernel;
  /** Null without WebAssembly SIMD (the caller mixes in JavaScript then). */
  mix: MixKernel | null;
  simd: boolean;
}

/** The kernel is SIMD WebAssembly where the host has it (every current Obsidian and Node), else plain JavaScript. */
export function dotKernel(memory: WebAssembly.Memory): Kernels {
  const module = wasmModule();
  if (module) {
    try {
      const instance = new WebAssembly.Instance(module, { env: { memory } });
      return { dots: instance.exports.dots as DotKernel, norms: instance.exports.norms as NormKernel, mix: instance.exports.mix as MixKernel, simd: true };
    } catch {
      // Fall through to JavaScript.
    }
  }
  return { dots: jsDots(memory), norms: jsNorms(memory), mix: null, simd: false };
}

let compiled: WebAssembly.Module | null | undefined;

function wasmModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    compiled = typeof WebAssembly === "object" && WebAssembly.validate(VECTOR_DOT_WASM) ? new WebAssembly.Module(VECTOR_DOT_WASM) : null;
  } catch {
    compiled = null;
  }
  return compiled;
}

/** NormKernel in JavaScript. */
export function jsNorms(memory: WebAssembly.Memory): NormKernel {
  return (codesAt, n, stride, outAt) => {
    const bytes = new Int8Array(memory.buffer);
    const out = new Int32Array(memory.buffer, outAt, n);
    for (let v = 0, row = codesAt; v < n; v++, row += stride) {
      let sum = 0;
      for (let i = 0; i < stride; i++) {
        const low = lowCode(bytes[row + i]);
        const high = highCode(bytes[row + i]);
        sum += low * low + high * high;
      }
      out[v] = sum;
    }
  };
}

/** The same contract in JavaScript (hosts without WebAssembly SIMD). */
export function jsDots(memory: WebAssembly.Memory): DotKernel {
  return (codesAt, queryAt, n, stride, outAt) => {
    const bytes = new Int8Array(memory.buffer);
    const out = new Int32Array(memory.buffer, outAt, n);
    for (let v = 0, row = codesAt; v < n; v++, row += stride) {
      let low = 0;
      let high = 0;
      for (let g = 0; g < stride; g += 16) {
        const query = queryAt + 2 * g;
        for (let i = 0; i < 16; i++) {
          const byte = bytes[row + g + i];
          low += lowCode(byte) * bytes[query + i];
          high += highCode(byte) * bytes[query + 16 + i];
        }
      }
      out[v] = low + high;
    }
  };
}
