import { vectorProblem } from "./vector-check";

/**
 * The embedding vectors, kept outside Orama: fixed-size blocks of one Float32Array each (no number[]
 * copies, no reallocation of one huge buffer as the vault grows), unit-normalized on the way in, so a
 * dot product is the cosine. Search is a brute-force scan with four accumulators, which at vault sizes
 * (≤ a few 100k chunks) is as fast as an approximate index and exact.
 */
const BLOCK_SLOTS = 4096;

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

export class VectorStore {
  private blocks: Float32Array[] = [];
  private live = new Uint8Array(0);
  private free: number[] = [];
  private next = 0;
  private liveCount = 0;
  private dimension = 0;

  get dim(): number {
    return this.dimension;
  }

  /** Slots that hold a vector. */
  get size(): number {
    return this.liveCount;
  }

  /** Drops every vector and fixes the dimension for the ones to come. */
  reset(dim = 0): void {
    this.blocks = [];
    this.live = new Uint8Array(0);
    this.free = [];
    this.next = 0;
    this.liveCount = 0;
    this.dimension = dim;
  }

  /** Stores a vector (copied and normalized) and returns its slot. */
  add(vector: ArrayLike<number>): number {
    if (this.dimension > 0 && vector.length !== this.dimension) throw new DimensionMismatchError(vector.length, this.dimension);
    const problem = vectorProblem(vector, 0);
    if (problem) throw new Error(`Refusing to store an unusable vector (${problem})`);
    const slot = this.allocate(vector.length);
    const target = this.vectorAt(slot);
    let norm = 0;
    for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
    const inv = norm > 0 && Number.isFinite(norm) ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < vector.length; i++) target[i] = vector[i] * inv;
    return slot;
  }

  /**
   * Stores a vector that is already unit length (read back from disk): a plain copy of
   * source[from .. from + dim). An element loop, because a subarray per vector costs more than the copy.
   */
  addNormalized(source: Float32Array, from: number, dim: number): number {
    const slot = this.allocate(dim);
    const block = this.blocks[Math.floor(slot / BLOCK_SLOTS)];
    const offset = (slot % BLOCK_SLOTS) * dim;
    for (let i = 0; i < dim; i++) block[offset + i] = source[from + i];
    return slot;
  }

  /**
   * Stores `count` unit-length vectors lying back to back in `source` (a shard read from disk) in
   * consecutive new slots, copied block-wise; returns the first slot (vector i is in first + i).
   */
  addNormalizedMany(source: Float32Array, count: number, dim: number): number {
    if (count === 0) return this.next;
    if (this.dimension === 0) this.dimension = dim;
    if (dim !== this.dimension) throw new DimensionMismatchError(dim, this.dimension);
    // New slots at the end (free slots are skipped here; loading starts from an empty store anyway).
    const first = this.next;
    this.next += count;
    this.ensureCapacity(this.next - 1);
    let done = 0;
    while (done < count) {
      const slot = first + done;
      const inBlock = slot % BLOCK_SLOTS;
      const n = Math.min(count - done, BLOCK_SLOTS - inBlock);
      this.blocks[Math.floor(slot / BLOCK_SLOTS)].set(source.subarray(done * dim, (done + n) * dim), inBlock * dim);
      this.live.fill(1, slot, slot + n);
      done += n;
    }
    this.liveCount += count;
    return first;
  }

  private allocate(length: number): number {
    if (this.dimension === 0) this.dimension = length;
    if (length !== this.dimension) {
      throw new DimensionMismatchError(length, this.dimension);
    }
    const slot = this.free.length > 0 ? (this.free.pop() as number) : this.next++;
    this.ensureCapacity(slot);
    this.live[slot] = 1;
    this.liveCount++;
    return slot;
  }

  /** Frees a slot (its vector is zeroed so scans score it 0 and skip it). */
  remove(slot: number): void {
    if (slot < 0 || slot >= this.next || this.live[slot] === 0) return;
    this.vectorAt(slot).fill(0);
    this.live[slot] = 0;
    this.liveCount--;
    this.free.push(slot);
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.next && this.live[slot] === 1;
  }

  /** A view (not a copy) of the normalized vector in a slot. */
  vectorAt(slot: number): Float32Array {
    const block = this.blocks[Math.floor(slot / BLOCK_SLOTS)];
    const offset = (slot % BLOCK_SLOTS) * this.dimension;
    return block.subarray(offset, offset + this.dimension);
  }

  /**
   * The k most similar live slots to a query (normalized here), optionally filtered. The filter runs
   * only for slots good enough to enter the top k, so it may be slow-ish.
   */
  search(query: ArrayLike<number>, k: number, accept?: (slot: number) => boolean): VectorHits {
    const dim = this.dimension;
    if (dim === 0 || k <= 0 || this.liveCount === 0 || query.length !== dim) return { slots: [], scores: [], mean: 0, std: 0, count: 0 };
    const q = new Float32Array(dim);
    let norm = 0;
    for (let i = 0; i < dim; i++) norm += query[i] * query[i];
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < dim; i++) q[i] = query[i] * inv;

    const heap = new TopK(k);
    const tail = dim - (dim % 4);
    const live = this.live;
    // Freed slots are zero vectors: they add nothing to the sums.
    let sum = 0;
    let squares = 0;
    for (let b = 0; b < this.blocks.length; b++) {
      const data = this.blocks[b];
      const first = b * BLOCK_SLOTS;
      const count = Math.min(BLOCK_SLOTS, this.next - first);
      for (let s = 0; s < count; s++) {
        const off = s * dim;
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        let a3 = 0;
        for (let i = 0; i < tail; i += 4) {
          a0 += data[off + i] * q[i];
          a1 += data[off + i + 1] * q[i + 1];
          a2 += data[off + i + 2] * q[i + 2];
          a3 += data[off + i + 3] * q[i + 3];
        }
        for (let i = tail; i < dim; i++) a0 += data[off + i] * q[i];
        const score = a0 + a1 + a2 + a3;
        sum += score;
        squares += score * score;
        if (score > heap.min) {
          const slot = first + s;
          if (live[slot] === 1 && (!accept || accept(slot))) heap.push(slot, score);
        }
      }
    }
    const mean = sum / this.liveCount;
    return { ...heap.sorted(), mean, std: Math.sqrt(Math.max(0, squares / this.liveCount - mean * mean)), count: this.liveCount };
  }

  private ensureCapacity(slot: number): void {
    while (this.blocks.length * BLOCK_SLOTS <= slot) this.blocks.push(new Float32Array(BLOCK_SLOTS * this.dimension));
    if (this.live.length <= slot) {
      const grown = new Uint8Array(Math.max(BLOCK_SLOTS, this.blocks.length * BLOCK_SLOTS));
      grown.set(this.live);
      this.live = grown;
    }
  }
}

/** A bounded min-heap keeping the k best (slot, score) pairs. */
class TopK {
  private readonly slots: number[] = [];
  private readonly scores: number[] = [];
  /** Score a newcomer must beat; -Infinity until the heap is full. */
  min = -Infinity;

  constructor(private readonly k: number) {}

  push(slot: number, score: number): void {
    const { slots, scores } = this;
    if (slots.length < this.k) {
      slots.push(slot);
      scores.push(score);
      let i = slots.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (scores[parent] <= scores[i]) break;
        this.swap(i, parent);
        i = parent;
      }
      if (slots.length === this.k) this.min = scores[0];
      return;
    }
    slots[0] = slot;
    scores[0] = score;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < slots.length && scores[l] < scores[m]) m = l;
      if (r < slots.length && scores[r] < scores[m]) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    this.min = scores[0];
  }

  sorted(): { slots: number[]; scores: number[] } {
    const order = this.slots.map((_, i) => i).sort((x, y) => this.scores[y] - this.scores[x]);
    return { slots: order.map((i) => this.slots[i]), scores: order.map((i) => this.scores[i]) };
  }

  private swap(i: number, j: number): void {
    const s = this.slots[i];
    this.slots[i] = this.slots[j];
    this.slots[j] = s;
    const c = this.scores[i];
    this.scores[i] = this.scores[j];
    this.scores[j] = c;
  }
}
