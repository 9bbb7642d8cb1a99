import { TopK } from "../../../src/core/indexing/top-k";
import { seededRandom } from "../../support/seeded-random";

/** The k best by sorting everything: the reference whose scores the heap must keep. */
function bestBySort(scores: number[], k: number): number[] {
  return scores
    .map((score, slot) => ({ slot, score }))
    .sort((a, b) => b.score - a.score || a.slot - b.slot)
    .slice(0, k)
    .map((e) => e.slot);
}

describe("TopK", () => {
  it("keeps the k best of many scores, pushed with or without the caller testing min first", () => {
    const random = seededRandom(11);
    // Few distinct values: many ties at the boundary.
    const scores = Array.from({ length: 3000 }, () => Math.floor(random() * 50) / 10);
    for (const k of [1, 7, 64]) {
      const plain = new TopK(k);
      const tested = new TopK(k);
      scores.forEach((score, slot) => {
        plain.push(slot, score);
        if (score > tested.min) tested.push(slot, score);
      });
      const expectedScores = bestBySort(scores, k).map((slot) => scores[slot]);
      for (const heap of [plain, tested]) {
        const { slots, scores: kept } = heap.sorted();
        expect(kept).toEqual(expectedScores);
        slots.forEach((slot, i) => expect(scores[slot]).toBe(kept[i]));
        expect(new Set(slots).size).toBe(k);
      }
      expect(plain.min).toBe(expectedScores[k - 1]);
    }
  });

  it("keeps nothing when k is 0 and everything when there are fewer than k", () => {
    const none = new TopK(0);
    none.push(1, 5);
    expect(none.sorted().slots).toEqual([]);
    const room = new TopK(10);
    [3, 1, 2].forEach((score, slot) => room.push(slot, score));
    expect(room.sorted()).toEqual({ slots: [0, 2, 1], scores: [3, 2, 1] });
    expect(room.min).toBe(-Infinity);
  });
});
