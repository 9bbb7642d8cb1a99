import { timedRuns } from "../../bench/bench-kit";

describe("timedRuns", () => {
  it("runs each index once, in order, awaiting an async run before the next, and keeps the times after the warm-up", async () => {
    const log: string[] = [];
    const times = await timedRuns(5, 2, async (i) => {
      log.push(`start ${i}`);
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`end ${i}`);
    });
    expect(log).toEqual([0, 1, 2, 3, 4].flatMap((i) => [`start ${i}`, `end ${i}`]));
    expect(times).toHaveLength(3);
    for (const t of times) expect(t).toBeGreaterThanOrEqual(0);
  });

  it("times synchronous runs too", async () => {
    const seen: number[] = [];
    expect(await timedRuns(3, 0, (i) => seen.push(i))).toHaveLength(3);
    expect(seen).toEqual([0, 1, 2]);
  });
});
