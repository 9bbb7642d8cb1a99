import type { PartChecksum } from "./checksum";
import { codeAt, dotKernel, dotRow, type DotKernel, type MixKernel, type NormKernel, packInto, quantizeQueryInto, rowBytes } from "./vector-codes";
import { readVector } from "./vector-check";
import { TopK } from "./top-k";
import { resized } from "../util/typed-arrays";

/**
 * The embedding vectors: unit-normalized on the way in and kept as 4-bit codes with one scale per vector
 * (vector-codes.ts), back to back in one WebAssembly memory, so a search is one SIMD scan over contiguous
 * bytes (~45 ms for 532k 768-d vectors on one core) and 500k vectors take 190 MB instead of 1.5 GB.
 * Brute force is exact and, at vault sizes (≤ a few 100k chunks), as fast as an approximate index.
 * Candidates from the scan (int8 query) are re-scored with the float query against the codes before they
 * are returned, so reported cosines are as precise as the codes allow.
 */
const BLOCK_SLOTS = 4096;
const PAGE = 65536;

/** A vector whose length differs from the store's: the model behind an embedder id changed. */
export class DimensionMismatchError extends Error {
  constructor(got: number, expected: number) {
    super(`Vector has ${got} dimensions, the index has ${expected}`);
    this.name = "DimensionMismatchError";
  }
}

export interface VectorHits {
  slots: number[];
  /** Cosine similarity, -1..1, best first. */
  scores: number[];
  /** Mean and standard deviation of the cosine over every stored vector (`count` of them): where "unrelated" lies for this query. */
  mean: number;
  std: number;
  count: number;
}

/** A vector as stored: its row of 4-bit codes (rowBytes(dim) bytes; a view, valid until the store grows) and its scale. */
export interface StoredCodes {
  codes: Int8Array;
  scale: number;
}

export class VectorStore {
  private memory: WebAssembly.Memory | null = null;
  private kernel: DotKernel | null = null;
  private normKernel: NormKernel | null = null;
  private mixKernel: MixKernel | null = null;
  private scales = new Float32Array(0);
  private live = new Uint8Array(0);
  private free: number[] = [];
  private next = 0;
  private capacity = 0;
  private liveCount = 0;
  private dimension = 0;
  /** Bytes per slot: rowBytes(dim), half a byte per dimension in whole 16-byte groups, zero padded. */
  private stride = 0;
  /** Byte offsets in the memory: the query's int8 codes (2 × stride bytes), the scan's int32 output for one block, then the slots. */
  private readonly queryAt = 0;
  private outAt = 0;
  private slotsAt = 0;

  get dim(): number {
    return this.dimension;
  }

  /** Slots that hold a vector. */
  get size(): number {
    return this.liveCount;
  }

  /** Whether searches run the SIMD WebAssembly kernel (false: the JavaScript fallback). */
  get simd(): boolean {
    return this.kernelIsSimd;
  }
  private kernelIsSimd = false;
  private unit = new Float32Array(0);
  private values = new Float64Array(0);

  /** Drops every vector and fixes the dimension for the ones to come. */
  reset(dim = 0): void {
    this.memory = null;
    this.kernel = null;
    this.normKernel = null;
    this.mixKernel = null;
    this.scales = new Float32Array(0);
    this.live = new Uint8Array(0);
    this.free = [];
    this.next = 0;
    this.capacity = 0;
    this.liveCount = 0;
    this.dimension = dim;
    this.stride = 0;
  }

  /**
   * Makes room for this many slots in one step (loading knows the count from the manifest): growing a
   * shard at a time would copy the memory again and again.
   */
  reserve(slots: number, dim: number): void {
    if (this.dimension === 0) this.dimension = dim;
    if (dim !== this.dimension || slots <= this.capacity) return;
    this.ensureCapacity(slots, true);
  }

  /** Stores a vector (normalized, then quantized) and returns its slot. */
  add(vector: ArrayLike<number>): number {
    if (this.dimension > 0 && vector.length !== this.dimension) throw new DimensionMismatchError(vector.length, this.dimension);
    // One scratch pair for every add: a fresh 3 KB array per chunk was garbage the collector chased all
    // through the embedding of a large vault. The values are read once, checked, into `values`.
    if (this.values.length < vector.length) this.values = new Float64Array(vector.length);
    const values = this.values;
    const problem = readVector(vector, 0, values);
    if (problem) throw new Error(`Refusing to store an unusable vector (${problem})`);
    const slot = this.allocate(vector.length);
    const dim = this.dimension;
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += values[i] * values[i];
    const inv = norm > 0 && Number.isFinite(norm) ? 1 / Math.sqrt(norm) : 0;
    if (this.unit.length !== dim) this.unit = new Float32Array(dim);
    const unit = this.unit;
    for (let i = 0; i < dim; i++) unit[i] = values[i] * inv;
    this.scales[slot] = packInto(unit, 0, dim, this.bytes(), this.rowAt(slot));
    return slot;
  }

  /**
   * Stores `count` unit-length float vectors lying back to back in `source` (a shard of the previous,
   * float32 format) in consecutive new slots; returns the first slot (vector i is in first + i).
   */
  addNormalizedMany(source: Float32Array, count: number, dim: number): number {
    const first = this.appendSlots(count, dim);
    const bytes = this.bytes();
    for (let v = 0; v < count; v++) this.scales[first + v] = packInto(source, v * dim, dim, bytes, this.rowAt(first + v));
    return first;
  }

  /** Stores `count` quantized vectors (rows of codes back to back, rowBytes(dim) each, one scale each) in consecutive new slots; returns the first. */
  addCodesMany(codes: Int8Array, scales: Float32Array, count: number, dim: number): number {
    const first = this.appendSlots(count, dim);
    this.bytes().set(codes.subarray(0, count * this.stride), this.rowAt(first));
    this.scales.set(scales.subarray(0, count), first);
    return first;
  }

  /**
   * `count` new consecutive slots whose codes the caller writes in place (`codes`, a view of this store's
   * memory, rowBytes(dim) bytes per vector back to back, as a shard file holds them) and whose scales it sets
   * with setScales: a shard's vectors read straight from disk, not copied. Null for another dimension or
   * no vectors.
   */
  appendInPlace(count: number, dim: number): { first: number; codes: Uint8Array } | null {
    if ((this.dimension !== 0 && dim !== this.dimension) || count <= 0) return null;
    const first = this.appendSlots(count, dim);
    return { first, codes: new Uint8Array((this.memory as WebAssembly.Memory).buffer, this.rowAt(first), count * this.stride) };
  }

  /**
   * Feeds the codes of slots first .. first + count (written by appendInPlace: back to back) to a part
   * checksum, with the SIMD kernel where there is one.
   */
  checksumCodes(first: number, count: number, sum: PartChecksum): void {
    const bytes = count * this.stride;
    if (!this.memory || bytes === 0) return;
    const memory = this.memory;
    const at = this.rowAt(first);
    if (!this.mixKernel) {
      sum.update(new Uint8Array(memory.buffer, at, bytes));
      return;
    }
    const mix = this.mixKernel;
    // The lanes go through the scan's output area (unused between scans).
    sum.updateWith(bytes / 4, (rotated) => {
      new Int32Array(memory.buffer, this.outAt, 4).set(rotated);
      mix(at, bytes / 16, this.outAt);
      rotated.set(new Int32Array(memory.buffer, this.outAt, 4));
    });
  }

  /** The scales of slots first .. first + scales.length (after appendInPlace). */
  setScales(first: number, scales: Float32Array): void {
    this.scales.set(scales, first);
  }

  /**
   * Why one of the vectors in slots first .. first + count is impossible (its decoded length is far from 1:
   * damage, since every stored vector was unit length), or null. Runs the SIMD kernel over the stored codes.
   */
  lengthProblem(first: number, count: number): string | null {
    if (!this.memory || !this.normKernel || count <= 0) return null;
    for (let from = 0; from < count; from += BLOCK_SLOTS) {
      const n = Math.min(BLOCK_SLOTS, count - from);
      this.normKernel(this.rowAt(first + from), n, this.stride, this.outAt);
      const sums = new Int32Array(this.memory.buffer, this.outAt, n);
      for (let v = 0; v < n; v++) {
        const scale = this.scales[first + from + v];
        const norm = sums[v] * scale * scale;
        if (!(norm > 0.5 && norm < 2)) return `vector ${from + v} is damaged (${sums[v] === 0 ? "all zeros" : `length ${Math.sqrt(norm)}`})`;
      }
    }
    return null;
  }

  /** A slot's codes (a view valid until the store grows) and scale. */
  codesAt(slot: number): StoredCodes {
    const at = this.rowAt(slot);
    return { codes: this.bytes().subarray(at, at + this.stride), scale: this.scales[slot] };
  }

  /** The vector in a slot, decoded to floats (a copy). */
  vectorAt(slot: number): Float32Array {
    const out = new Float32Array(this.dimension);
    if (!this.has(slot)) return out;
    const bytes = this.bytes();
    const at = this.rowAt(slot);
    const scale = this.scales[slot];
    for (let i = 0; i < this.dimension; i++) out[i] = codeAt(bytes, at, i) * scale;
    return out;
  }

  /** Cosine between a slot's vector and a query (any length). */
  cosine(slot: number, query: ArrayLike<number>): number {
    if (!this.has(slot) || query.length !== this.dimension) return 0;
    let norm = 0;
    for (let i = 0; i < query.length; i++) norm += query[i] * query[i];
    return norm > 0 && Number.isFinite(norm) ? this.dotWith(slot, query) / Math.sqrt(norm) : 0;
  }

  /** A slot's decoded vector dotted with a unit-length float query. */
  private dotWith(slot: number, unitQuery: ArrayLike<number>): number {
    return dotRow(this.bytes(), this.rowAt(slot), this.dimension, unitQuery) * this.scales[slot];
  }

  /** Frees a slot (its codes are zeroed so scans score it 0 and skip it). */
  remove(slot: number): void {
    if (slot < 0 || slot >= this.next || this.live[slot] === 0) return;
    const at = this.rowAt(slot);
    this.bytes().fill(0, at, at + this.stride);
    this.scales[slot] = 0;
    this.live[slot] = 0;
    this.liveCount--;
    this.free.push(slot);
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.next && this.live[slot] === 1;
  }

  /**
   * The k most similar live slots to a query (normalized here), optionally filtered. The filter runs
   * only for slots good enough to enter the candidates, so it may be slow-ish.
   */
  search(query: ArrayLike<number>, k: number, accept?: (slot: number) => boolean): VectorHits {
    const dim = this.dimension;
    if (dim === 0 || k <= 0 || this.liveCount === 0 || query.length !== dim || !this.memory || !this.kernel) return { slots: [], scores: [], mean: 0, std: 0, count: 0 };
    const unit = new Float32Array(dim);
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += query[i] * query[i];
    if (!(norm > 0) || !Number.isFinite(norm)) return { slots: [], scores: [], mean: 0, std: 0, count: 0 };
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dim; i++) unit[i] = query[i] * inv;
    const bytes = this.bytes();
    bytes.fill(0, this.queryAt, this.queryAt + 2 * this.stride);
    const queryScale = quantizeQueryInto(unit, 0, dim, bytes, this.queryAt);

    // More candidates than asked for: the scan's scores may order near-ties differently from the exact ones.
    const wanted = Math.max(k * 2, k + 32);
    const heap = new TopK(wanted);
    const live = this.live;
    const scales = this.scales;
    let sum = 0;
    let squares = 0;
    for (let first = 0; first < this.next; first += BLOCK_SLOTS) {
      const count = Math.min(BLOCK_SLOTS, this.next - first);
      this.kernel(this.rowAt(first), this.queryAt, count, this.stride, this.outAt);
      // Views are made after the call: nothing grows the memory during a scan.
      const out = new Int32Array(this.memory.buffer, this.outAt, count);
      for (let s = 0; s < count; s++) {
        const slot = first + s;
        // Freed slots have zero codes and scale: they add nothing to the sums.
        const score = out[s] * scales[slot] * queryScale;
        sum += score;
        squares += score * score;
        if (score > heap.min && live[slot] === 1 && (!accept || accept(slot))) heap.push(slot, score);
      }
    }
    const mean = sum / this.liveCount;
    const std = Math.sqrt(Math.max(0, squares / this.liveCount - mean * mean));
    const candidates = heap.sorted().slots;
    const exact = candidates.map((slot) => ({ slot, score: this.dotWith(slot, unit) })).sort((a, b) => b.score - a.score).slice(0, k);
    return { slots: exact.map((h) => h.slot), scores: exact.map((h) => h.score), mean, std, count: this.liveCount };
  }

  private allocate(length: number): number {
    if (this.dimension === 0) this.dimension = length;
    if (length !== this.dimension) throw new DimensionMismatchError(length, this.dimension);
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.next++;
    this.ensureCapacity(slot + 1);
    this.live[slot] = 1;
    this.liveCount++;
    return slot;
  }

  /** New slots at the end (free slots are skipped here; loading starts from an empty store anyway). */
  private appendSlots(count: number, dim: number): number {
    if (this.dimension === 0) this.dimension = dim;
    if (dim !== this.dimension) throw new DimensionMismatchError(dim, this.dimension);
    const first = this.next;
    if (count === 0) return first;
    this.next += count;
    this.ensureCapacity(this.next);
    this.live.fill(1, first, first + count);
    this.liveCount += count;
    return first;
  }

  private rowAt(slot: number): number {
    return this.slotsAt + slot * this.stride;
  }

  private bytes(): Int8Array {
    if (!this.memory) throw new Error("The vector store holds no vectors");
    if (this.view === null || this.view.buffer !== this.memory.buffer) this.view = new Int8Array(this.memory.buffer);
    return this.view;
  }
  private view: Int8Array | null = null;

  /** Room for `slots` slots, grown a block at a time (WebAssembly memory grows in place; views are renewed). */
  private ensureCapacity(slots: number, exact = false): void {
    if (slots <= this.capacity) return;
    // Grown by half again each time: every growth of this (external) memory nudges the garbage collector,
    // and a block at a time meant a hundred of them while indexing a large vault. Untouched pages cost no RSS.
    const wanted = exact ? slots : Math.max(slots, Math.floor(this.capacity * 1.5));
    const capacity = Math.ceil(wanted / BLOCK_SLOTS) * BLOCK_SLOTS;
    if (!this.memory) {
      this.stride = rowBytes(this.dimension);
      this.outAt = align16(this.queryAt + 2 * this.stride);
      this.slotsAt = align16(this.outAt + BLOCK_SLOTS * 4);
      this.memory = new WebAssembly.Memory({ initial: Math.ceil((this.slotsAt + capacity * this.stride) / PAGE) });
      const kernel = dotKernel(this.memory);
      this.kernel = kernel.dots;
      this.normKernel = kernel.norms;
      this.mixKernel = kernel.mix;
      this.kernelIsSimd = kernel.simd;
    } else {
      const needed = Math.ceil((this.slotsAt + capacity * this.stride) / PAGE);
      const pages = this.memory.buffer.byteLength / PAGE;
      if (needed > pages) this.memory.grow(needed - pages);
    }
    this.view = null;
    this.scales = resized(this.scales, capacity);
    this.live = resized(this.live, capacity);
    this.capacity = capacity;
  }
}

function align16(n: number): number {
  return (n + 15) & ~15;
}
