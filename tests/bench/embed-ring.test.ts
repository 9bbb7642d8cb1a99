import { newEmbedRing, readFromRing, RING_SLOTS, SLOT_VECTORS, writeToRing } from "../../bench/embed-ring";
import { DIM } from "../../bench/bench-kit";

const vector = (seed: number): Float32Array => Float32Array.from({ length: DIM }, (_, i) => Math.fround(Math.sin(seed * 31 + i)));

describe("the bench's embedding ring (stand-in embedder → indexing thread)", () => {
  it("gives the vectors back as plain arrays of the same numbers and frees the slot, so slots are reused", () => {
    const ring = newEmbedRing();
    // More batches than slots, each read back before the next is written (as the index consumes them).
    for (let batch = 0; batch < RING_SLOTS * 3; batch++) {
      const sent = [vector(batch), vector(batch + 1000)];
      const slot = writeToRing(ring, sent);
      const got = readFromRing(ring, slot, sent.length);
      expect(got.every((row) => Array.isArray(row) && row.length === DIM)).toBe(true);
      expect(got).toEqual(sent.map((v) => Array.from(v)));
    }
  });

  it("keeps batches in flight apart, and refuses a batch larger than a slot", () => {
    const ring = newEmbedRing();
    const slots = [0, 1, 2].map((b) => writeToRing(ring, [vector(b)]));
    expect(new Set(slots).size).toBe(3);
    expect(readFromRing(ring, slots[1], 1)).toEqual([Array.from(vector(1))]);
    expect(readFromRing(ring, slots[0], 1)).toEqual([Array.from(vector(0))]);
    expect(() => writeToRing(ring, Array.from({ length: SLOT_VECTORS + 1 }, (_, i) => vector(i)))).toThrow(/over the ring/);
  });
});
