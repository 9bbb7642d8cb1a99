import { INT8_DOT_WASM } from "./wasm/int8-dot-wasm";

/**
 * Int8 vectors: how the vector store and the shard files keep embeddings. A unit vector v is stored as
 * codes c = round(v / s) with s = max|v| / 127, so a cosine is s_a · s_b · Σ c_a c_b. Against float32 this
 * is a quarter of the memory and of the disk, and the ranking error is ~1e-3 in cosine (below what
 * separates two real hits; the quality benchmark measures it with a real model).
 */
export const CODE_MAX = 127;

/** Quantizes source[from .. from + dim) (unit length) into codes[to ..); returns its scale (0 for a zero vector). */
export function quantizeInto(source: ArrayLike<number>, from: number, dim: number, codes: Int8Array, to: number): number {
  let max = 0;
  for (let i = 0; i < dim; i++) {
    const a = Math.abs(source[from + i]);
    if (a > max) max = a;
  }
  if (!(max > 0)) {
    codes.fill(0, to, to + dim);
    return 0;
  }
  const inv = CODE_MAX / max;
  for (let i = 0; i < dim; i++) codes[to + i] = Math.round(source[from + i] * inv);
  return max / CODE_MAX;
}

/**
 * Scores `n` code rows lying `stride` bytes apart in `memory`, starting at byte `codesAt`, against the query
 * codes at `queryAt` (stride bytes, zero padded): int32 dot products written at `outAt`.
 */
export type DotKernel = (codesAt: number, queryAt: number, n: number, stride: number, outAt: number) => void;

/** Each of `n` rows' sum of squares (int32) written at `outAt`: a stored vector's length, to check it. */
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
    compiled = typeof WebAssembly === "object" && WebAssembly.validate(INT8_DOT_WASM) ? new WebAssembly.Module(INT8_DOT_WASM) : null;
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
      for (let i = 0; i < stride; i++) sum += bytes[row + i] * bytes[row + i];
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
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let i = 0; i < stride; i += 4) {
        a0 += bytes[row + i] * bytes[queryAt + i];
        a1 += bytes[row + i + 1] * bytes[queryAt + i + 1];
        a2 += bytes[row + i + 2] * bytes[queryAt + i + 2];
        a3 += bytes[row + i + 3] * bytes[queryAt + i + 3];
      }
      out[v] = a0 + a1 + a2 + a3;
    }
  };
}
