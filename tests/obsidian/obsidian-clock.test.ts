import { createObsidianClock } from "../../src/obsidian/host/obsidian-clock";

// The window's timers, as Obsidian's guidelines ask (popout-safe); Node's timers stand in for them here.
const win = { setTimeout: setTimeout as unknown as Window["setTimeout"], clearTimeout: clearTimeout as unknown as Window["clearTimeout"] };

test("timers run, can be cancelled, and sleep honours abort", async () => {
  const clock = createObsidianClock(win);
  const order: string[] = [];
  const cancel = clock.setTimer(() => order.push("cancelled"), 1);
  clock.setTimer(() => order.push("ran"), 1);
  cancel();
  await clock.sleep(5);
  await clock.yieldToHost();
  expect(order).toEqual(["ran"]);
  const aborter = new AbortController();
  const sleeping = clock.sleep(60_000, aborter.signal);
  aborter.abort();
  await expect(sleeping).rejects.toMatchObject({ name: "AbortError" });
});
