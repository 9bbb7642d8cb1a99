import { clockFromTimers } from "../../../src/core/ports/clock";
import { nodeClock } from "../../../src/node/node-clock";

/** A host whose timers fire only when the test says: what runs in one host turn is visible. */
function manualTimers() {
  const due: (() => void)[] = [];
  const clock = clockFromTimers(
    () => 0,
    (fn) => {
      due.push(fn);
      return () => undefined;
    },
  );
  /** One host turn: the timers due now fire, then their promise continuations run. */
  const turn = async () => {
    const now = due.splice(0);
    for (const fn of now) fn();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { clock, due, turn };
}

describe("yieldToHost", () => {
  it("resumes work that yielded together one per host turn, in order, with one timer pending at a time", async () => {
    const { clock, due, turn } = manualTimers();
    const resumed: string[] = [];
    const chain = (name: string) => clock.yieldToHost().then(() => resumed.push(name));
    const all = Promise.all([chain("embed 1"), chain("embed 2"), chain("save")]);
    expect(due).toHaveLength(1);
    await turn();
    expect(resumed).toEqual(["embed 1"]);
    expect(due).toHaveLength(1);
    await turn();
    expect(resumed).toEqual(["embed 1", "embed 2"]);
    // Work that yields again meanwhile waits behind the ones already waiting.
    const again = chain("embed 1 again");
    await turn();
    await turn();
    expect(resumed).toEqual(["embed 1", "embed 2", "save", "embed 1 again"]);
    expect(due).toHaveLength(0);
    await Promise.all([all, again]);
    // Nothing waiting: the next yield starts a timer of its own.
    const late = chain("late");
    expect(due).toHaveLength(1);
    await turn();
    await late;
    expect(resumed.at(-1)).toBe("late");
  });

  it("lets the host's own timers run between two slices of work that yielded together (Node)", async () => {
    const order: string[] = [];
    const hostTimer = setInterval(() => order.push("host"), 1);
    try {
      await Promise.all(
        ["a", "b", "c"].map(async (name) => {
          await nodeClock.yieldToHost();
          order.push(name);
        }),
      );
      await new Promise((r) => setTimeout(r, 5));
    } finally {
      clearInterval(hostTimer);
    }
    const work = order.filter((x) => x !== "host");
    expect(work).toEqual(["a", "b", "c"]);
    // Between "a" and "b", and between "b" and "c", the host had a turn.
    expect(order.slice(order.indexOf("a"), order.indexOf("b"))).toContain("host");
    expect(order.slice(order.indexOf("b"), order.indexOf("c"))).toContain("host");
  });
});
