/**
 * How the bench's stand-in embedder hands vectors from its worker thread to the indexing thread: through a
 * ring of shared slots, copied out into plain arrays of numbers (what the real embedders give the index:
 * JSON decoded, see Embedder.embed) when the index takes them (OffThreadEmbedder.embed says why then).
 * Posting the arrays themselves would not do: V8 deserializes any message over 100 KB (a batch is ~400 KB)
 * straight into the old generation, so every batch became garbage that only a full collection frees, which
 * no real embedder causes. Posting a typed array would make an array buffer per batch (V8 external memory),
 * which no real embedder does either.
 */
import { DIM } from "./bench-kit";

/** Slots in the ring: more than the batches the index keeps in flight, so the worker never waits long. */
export const RING_SLOTS = 8;
/** Vectors one slot holds (the stand-in's batch size). */
export const SLOT_VECTORS = 64;

export interface EmbedRing {
  /** Float32 values, RING_SLOTS × SLOT_VECTORS × DIM. */
  values: SharedArrayBuffer;
  /** Per slot 0 (free) or 1 (holds a batch not yet copied out), then a counter bumped at each release. */
  flags: SharedArrayBuffer;
}

export function newEmbedRing(): EmbedRing {
  return {
    values: new SharedArrayBuffer(RING_SLOTS * SLOT_VECTORS * DIM * 4),
    flags: new SharedArrayBuffer((RING_SLOTS + 1) * 4),
  };
}

/** The float values of `vectors` vectors at the start of a slot (the slot layout lives here alone). */
function slotValues(ring: EmbedRing, slot: number, vectors: number): Float32Array {
  return new Float32Array(ring.values, slot * SLOT_VECTORS * DIM * 4, vectors * DIM);
}

/** Worker side: takes a free slot (waiting for one to be released if need be) and writes the vectors in. */
export function writeToRing(ring: EmbedRing, vectors: readonly Float32Array[]): number {
  if (vectors.length > SLOT_VECTORS) throw new Error(`a batch of ${vectors.length} vectors is over the ring's ${SLOT_VECTORS}`);
  const flags = new Int32Array(ring.flags);
  for (;;) {
    const released = Atomics.load(flags, RING_SLOTS);
    for (let slot = 0; slot < RING_SLOTS; slot++) {
      if (Atomics.compareExchange(flags, slot, 0, 1) !== 0) continue;
      const values = slotValues(ring, slot, vectors.length);
      vectors.forEach((v, r) => values.set(v, r * DIM));
      return slot;
    }
    Atomics.wait(flags, RING_SLOTS, released, 1_000);
  }
}

/** Indexing side: copies a slot's vectors out into plain arrays and releases the slot. */
export function readFromRing(ring: EmbedRing, slot: number, count: number): number[][] {
  const values = slotValues(ring, slot, count);
  const out = new Array<number[]>(count);
  for (let r = 0; r < count; r++) {
    const row = new Array<number>(DIM);
    for (let i = 0; i < DIM; i++) row[i] = values[r * DIM + i];
    out[r] = row;
  }
  const flags = new Int32Array(ring.flags);
  Atomics.store(flags, slot, 0);
  Atomics.add(flags, RING_SLOTS, 1);
  Atomics.notify(flags, RING_SLOTS);
  return out;
}
