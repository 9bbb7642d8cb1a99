/** Saving a streaming answer: bounded write rate, never two saves at once, nothing after settle(). */
import { PartialAnswerSaver, PARTIAL_SAVE_EVERY_CHARS, PARTIAL_SAVE_EVERY_MS } from "../../../src/core/chat/partial-answer-saver";
import { clockFromTimers } from "../../../src/core/ports/clock";

function fakeClock() {
  let now = 0;
  const clock = clockFromTimers(
    () => now,
    () => () => undefined,
  );
  return { clock, advance: (ms: number) => (now += ms) };
}

describe("PartialAnswerSaver", () => {
  it("saves at most once per interval, or when enough text arrived, and never overlaps saves", async () => {
    const { clock, advance } = fakeClock();
    const saved: string[] = [];
    let finishSave: () => void = () => undefined;
    const saver = new PartialAnswerSaver(clock, (text) => {
      saved.push(text);
      return new Promise<void>((resolve) => (finishSave = resolve));
    });
    let text = "";
    for (let i = 0; i < 10; i++) {
      text += "word ";
      saver.update(text);
      advance(10);
    }
    expect(saved).toEqual([]); // 100 ms of tokens: not yet due
    advance(PARTIAL_SAVE_EVERY_MS);
    saver.update((text += "more "));
    expect(saved).toEqual([text]);
    advance(PARTIAL_SAVE_EVERY_MS);
    saver.update((text += "x".repeat(PARTIAL_SAVE_EVERY_CHARS)));
    expect(saved).toHaveLength(1); // the first save is still running
    finishSave();
    await Promise.resolve();
    await Promise.resolve();
    saver.update((text += "y"));
    expect(saved).toHaveLength(2); // due by time, and the size alone would make it due
    const settled = saver.settle();
    finishSave();
    await settled;
    advance(PARTIAL_SAVE_EVERY_MS * 10);
    saver.update((text += "after the end"));
    expect(saved).toHaveLength(2);
  });

  it("a failed save is reported and the next one is tried", async () => {
    const { clock, advance } = fakeClock();
    const errors: unknown[] = [];
    let calls = 0;
    const saver = new PartialAnswerSaver(
      clock,
      () => (++calls === 1 ? Promise.reject(new Error("disk full")) : Promise.resolve()),
      (err) => errors.push(err),
    );
    advance(PARTIAL_SAVE_EVERY_MS);
    saver.update("a");
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(errors).toEqual([new Error("disk full")]);
    advance(PARTIAL_SAVE_EVERY_MS);
    saver.update("ab");
    await saver.settle();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });
});
