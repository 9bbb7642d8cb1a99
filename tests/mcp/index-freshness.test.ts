// The standalone server's "re-scan before a search" policy, on a hand-driven clock (no real waiting).
import { z } from "zod";
import { clockFromTimers } from "../../src/core/ports/clock";
import { gateOnFreshIndex, IndexFreshness } from "../../src/core/tools/index-freshness";
import { defineTool, ToolRegistry } from "../../src/core/tools/tool-registry";

/** A clock whose time only moves when the test says so; timers fire as it passes them. */
function manualClock() {
  let t = 0;
  const timers = new Set<{ at: number; fn: () => void }>();
  const clock = clockFromTimers(
    () => t,
    (fn, ms) => {
      const timer = { at: t + ms, fn };
      timers.add(timer);
      return () => timers.delete(timer);
    },
  );
  const advance = async (ms: number) => {
    t += ms;
    for (const timer of [...timers]) if (timer.at <= t) (timers.delete(timer), timer.fn());
    await flush();
  };
  return { clock, advance, pending: () => timers.size };
}

const flush = () => new Promise((r) => setImmediate(r));

/** A sync the test finishes by hand. */
function controlledSync() {
  const calls: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const sync = () => new Promise<void>((resolve, reject) => calls.push({ resolve, reject }));
  return { sync, calls };
}

it("syncs before a call when the last sync is older than maxAgeMs, and not again within it", async () => {
  const { clock, advance } = manualClock();
  const { sync, calls } = controlledSync();
  const fresh = new IndexFreshness(sync, { maxAgeMs: 2_000, maxWaitMs: 5_000, clock });
  const first = fresh.ensureFresh();
  expect(calls).toHaveLength(1);
  calls[0].resolve();
  await first;
  await advance(1_000);
  await fresh.ensureFresh();
  expect(calls).toHaveLength(1); // one second old: fresh enough
  await advance(1_000);
  const third = fresh.ensureFresh();
  expect(calls).toHaveLength(2);
  calls[1].resolve();
  await third;
});

it("a slow scan (a large vault) is repeated only after ten times its own duration, so searches rarely wait for one", async () => {
  const { clock, advance } = manualClock();
  const { sync, calls } = controlledSync();
  const fresh = new IndexFreshness(sync, { maxAgeMs: 2_000, maxWaitMs: 60_000, clock });
  const first = fresh.ensureFresh();
  await advance(3_000); // the scan takes 3 s
  calls[0].resolve();
  await first;
  await advance(20_000);
  await fresh.ensureFresh();
  expect(calls).toHaveLength(1); // 20 s after a 3 s scan: not due yet
  await advance(10_000);
  const again = fresh.ensureFresh();
  expect(calls).toHaveLength(2); // 30 s = 10 × 3 s
  calls[1].resolve();
  await again;
});

it("calls arriving during a sync share it instead of starting another", async () => {
  const { clock } = manualClock();
  const { sync, calls } = controlledSync();
  const fresh = new IndexFreshness(sync, { maxAgeMs: 0, maxWaitMs: 5_000, clock });
  const a = fresh.ensureFresh();
  const b = fresh.ensureFresh();
  expect(calls).toHaveLength(1);
  calls[0].resolve();
  await Promise.all([a, b]);
});

it("waits at most maxWaitMs from the sync's start, then answers from what is indexed", async () => {
  const { clock, advance, pending } = manualClock();
  const { sync, calls } = controlledSync();
  const fresh = new IndexFreshness(sync, { maxAgeMs: 0, maxWaitMs: 1_000, clock });
  let done = false;
  const call = fresh.ensureFresh().then(() => (done = true));
  await advance(999);
  expect(done).toBe(false);
  await advance(1);
  await call;
  expect(done).toBe(true);
  // A later call during the same slow sync does not wait again, and starts no second sync.
  await fresh.ensureFresh();
  expect(calls).toHaveLength(1);
  calls[0].resolve();
  await flush();
  expect(pending()).toBe(0); // no timer left behind
});

it("a failed sync is logged and the call goes on", async () => {
  const { clock } = manualClock();
  const { sync, calls } = controlledSync();
  const warnings: string[] = [];
  const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} };
  const fresh = new IndexFreshness(sync, { maxAgeMs: 0, maxWaitMs: 1_000, clock, logger });
  const call = fresh.ensureFresh();
  calls[0].reject(new Error("disk gone\n    at stack"));
  await call;
  expect(warnings).toEqual(["Index sync before a tool call failed: disk gone"]);
});

it("gateOnFreshIndex syncs before search_notes and summarize_notes only, after validation, and create_note marks the index stale", async () => {
  const { clock, advance } = manualClock();
  let syncs = 0;
  const fresh = new IndexFreshness(async () => void syncs++, { maxAgeMs: 60_000, maxWaitMs: 1_000, clock });
  const tools = new ToolRegistry();
  for (const name of ["search_notes", "summarize_notes", "read_note", "create_note"]) {
    tools.register(
      defineTool({
        name,
        title: name,
        description: name,
        inputSchema: { q: z.string().min(1) },
        outputSchema: {},
        run: async () => ({ structured: {}, text: name }),
      }),
    );
  }
  const ungate = gateOnFreshIndex(tools, fresh);
  await expect(tools.call("search_notes", {})).rejects.toThrow("Missing required parameter: q");
  expect(syncs).toBe(0);
  await tools.call("read_note", { q: "x" });
  expect(syncs).toBe(0);
  await tools.call("search_notes", { q: "x" });
  expect(syncs).toBe(1);
  await tools.call("summarize_notes", { q: "x" });
  expect(syncs).toBe(1); // still fresh
  await tools.call("create_note", { q: "x" });
  await advance(1);
  await tools.call("search_notes", { q: "x" });
  expect(syncs).toBe(2); // our own new note must be searchable at once
  expect(() => gateOnFreshIndex(tools, fresh)).toThrow("already has a gate");
  ungate();
  await tools.call("create_note", { q: "x" });
  await tools.call("search_notes", { q: "x" });
  expect(syncs).toBe(2);
});

it("a tool that calls a tool through the registry (run_workflow's steps) passes the same gate", async () => {
  const { clock } = manualClock();
  let syncs = 0;
  const fresh = new IndexFreshness(async () => void syncs++, { maxAgeMs: 60_000, maxWaitMs: 1_000, clock });
  const tools = new ToolRegistry();
  tools.register(defineTool({ name: "search_notes", title: "s", description: "s", inputSchema: {}, outputSchema: {}, run: async () => ({ structured: {}, text: "found" }) }));
  tools.register(
    defineTool({ name: "run_workflow", title: "w", description: "w", inputSchema: {}, outputSchema: {}, run: async (_input, context) => tools.call("search_notes", {}, context) }),
  );
  gateOnFreshIndex(tools, fresh);
  expect((await tools.call("run_workflow", {})).text).toBe("found");
  expect(syncs).toBe(1);
});
