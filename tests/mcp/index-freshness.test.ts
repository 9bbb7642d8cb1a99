// The index gate on the tool registry, on a hand-driven clock (no real waiting): the standalone server's
// re-scan before a search, and every host's bounded wait for an index that is still loading.
import { z } from "zod";
import type { IndexState, IndexStatus } from "../../src/core/indexing/index-status";
import { clockFromTimers, type Clock } from "../../src/core/ports/clock";
import { gateOnIndex, IndexFreshness, type IndexGateOptions } from "../../src/core/tools/index-freshness";
import type { ToolDefinition } from "../../src/core/tools/tool";
import { defineTool, ToolRegistry } from "../../src/core/tools/tool-registry";
import { ShuttingDownError } from "../../src/core/util/errors";

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

/** An index's state as the gate sees it (status and its changes); the test moves it. */
function indexState(initial: IndexState) {
  let state = initial;
  const listeners = new Set<(status: IndexStatus) => void>();
  const status = () => ({ state }) as IndexStatus;
  return {
    index: {
      status,
      onStatus: (listener: (s: IndexStatus) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    set(next: IndexState) {
      state = next;
      for (const listener of listeners) listener(status());
    },
    listeners: () => listeners.size,
  };
}

const READY = indexState("ready").index;

/** What a tool declares to the gate: ToolDefinition.needsIndex and ToolDefinition.changesVault. */
type Declared = Pick<ToolDefinition, "needsIndex" | "changesVault">;

/** The built-in tools' declarations the gate goes by (the real ones are checked in tests/core/workflows/flow-tools.test.ts). */
const BUILT_IN: Record<string, Declared> = { search_notes: { needsIndex: "reads" }, summarize_notes: { needsIndex: "reads" }, read_note: {}, create_note: { changesVault: true } };

/** A registry with tools that only say their name (and what the index's state was when they ran), declared as `declared` says. */
function gatedTools(options: Omit<IndexGateOptions, "clock"> & { clock: Clock }, declared: Record<string, Declared> = BUILT_IN) {
  const tools = new ToolRegistry();
  for (const [name, { needsIndex, changesVault }] of Object.entries(declared)) {
    tools.register(
      defineTool({
        name,
        title: name,
        description: name,
        inputSchema: { q: z.string().min(1).optional() },
        outputSchema: {},
        ...(needsIndex ? { needsIndex } : {}),
        ...(changesVault ? { changesVault } : {}),
        run: async () => ({ structured: {}, text: `${name} (${options.index.status().state})` }),
      }),
    );
  }
  const ungate = gateOnIndex(tools, options);
  return { tools, ungate };
}

describe("with a re-scan before searches (the standalone server)", () => {
  it("syncs before a search when the last sync is older than maxAgeMs, and not again within it", async () => {
    const { clock, advance } = manualClock();
    const { sync, calls } = controlledSync();
    const freshness = new IndexFreshness(sync, { maxAgeMs: 2_000, clock });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 5_000, clock, freshness });
    const first = tools.call("search_notes", {});
    await flush();
    expect(calls).toHaveLength(1);
    calls[0].resolve();
    await first;
    await advance(1_000);
    await tools.call("search_notes", {});
    expect(calls).toHaveLength(1); // one second old: fresh enough
    await advance(1_000);
    const third = tools.call("search_notes", {});
    await flush();
    expect(calls).toHaveLength(2);
    calls[1].resolve();
    await third;
  });

  it("a slow scan (a large vault) is repeated only after ten times its own duration, so searches rarely wait for one", async () => {
    const { clock, advance } = manualClock();
    const { sync, calls } = controlledSync();
    const freshness = new IndexFreshness(sync, { maxAgeMs: 2_000, clock });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 60_000, clock, freshness });
    const first = tools.call("search_notes", {});
    await advance(3_000); // the scan takes 3 s
    calls[0].resolve();
    await first;
    await advance(20_000);
    await tools.call("search_notes", {});
    expect(calls).toHaveLength(1); // 20 s after a 3 s scan: not due yet
    await advance(10_000);
    const again = tools.call("search_notes", {});
    await flush();
    expect(calls).toHaveLength(2); // 30 s = 10 × 3 s
    calls[1].resolve();
    await again;
  });

  it("calls arriving during a sync share it instead of starting another", async () => {
    const { clock } = manualClock();
    const { sync, calls } = controlledSync();
    const freshness = new IndexFreshness(sync, { maxAgeMs: 0, clock });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 5_000, clock, freshness });
    const a = tools.call("search_notes", {});
    const b = tools.call("summarize_notes", {});
    await flush();
    expect(calls).toHaveLength(1);
    calls[0].resolve();
    await Promise.all([a, b]);
  });

  it("waits at most maxWaitMs from the sync's start, then answers from what is indexed", async () => {
    const { clock, advance, pending } = manualClock();
    const { sync, calls } = controlledSync();
    const freshness = new IndexFreshness(sync, { maxAgeMs: 0, clock });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 1_000, clock, freshness });
    let done = false;
    const call = tools.call("search_notes", {}).then(() => (done = true));
    await advance(999);
    expect(done).toBe(false);
    await advance(1);
    await call;
    expect(done).toBe(true);
    // A later call during the same slow sync does not wait again, and starts no second sync.
    await tools.call("search_notes", {});
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
    const freshness = new IndexFreshness(sync, { maxAgeMs: 0, clock, logger });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 1_000, clock, freshness });
    const call = tools.call("search_notes", {});
    await flush();
    calls[0].reject(new Error("disk gone\n    at stack"));
    expect((await call).text).toBe("search_notes (ready)");
    expect(warnings).toEqual(["Index sync before a tool call failed: disk gone"]);
  });

  it("syncs before search_notes and summarize_notes only, after validation, and create_note marks the index stale", async () => {
    const { clock, advance } = manualClock();
    let syncs = 0;
    const freshness = new IndexFreshness(async () => void syncs++, { maxAgeMs: 60_000, clock });
    const { tools, ungate } = gatedTools({ index: READY, maxWaitMs: 1_000, clock, freshness });
    await expect(tools.call("search_notes", { q: "" })).rejects.toThrow("Missing required parameter: q");
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
    expect(() => gateOnIndex(tools, { index: READY, maxWaitMs: 1_000, clock, freshness })).toThrow("already has a gate");
    ungate();
    await tools.call("create_note", { q: "x" });
    await tools.call("search_notes", { q: "x" });
    expect(syncs).toBe(2);
  });

  it("goes by what a tool declares, not by its name: a tool that changes the vault marks the index behind, create_note without the declaration does not", async () => {
    const { clock, advance } = manualClock();
    let syncs = 0;
    const freshness = new IndexFreshness(async () => void syncs++, { maxAgeMs: 60_000, clock });
    const { tools } = gatedTools(
      { index: READY, maxWaitMs: 1_000, clock, freshness },
      { search_notes: { needsIndex: "reads" }, append_to_deck: { changesVault: true }, create_note: {} },
    );
    await tools.call("search_notes", {});
    expect(syncs).toBe(1);
    await tools.call("create_note", {});
    await advance(1);
    await tools.call("search_notes", {});
    expect(syncs).toBe(1); // not declared: the name alone says nothing
    await tools.call("append_to_deck", {});
    await advance(1);
    await tools.call("search_notes", {});
    expect(syncs).toBe(2);
  });

  it("a tool that calls a tool through the registry (run_workflow's steps) passes the same gate", async () => {
    const { clock } = manualClock();
    let syncs = 0;
    const freshness = new IndexFreshness(async () => void syncs++, { maxAgeMs: 60_000, clock });
    const { tools } = gatedTools({ index: READY, maxWaitMs: 1_000, clock, freshness }, { search_notes: { needsIndex: "reads" } });
    tools.register(
      defineTool({ name: "run_workflow", title: "w", description: "w", inputSchema: {}, outputSchema: {}, run: async (_input, context) => tools.call("search_notes", {}, context) }),
    );
    expect((await tools.call("run_workflow", {})).text).toBe("search_notes (ready)");
    expect(syncs).toBe(1);
  });
});

describe("without a re-scan (Obsidian: vault events keep the index current)", () => {
  it("a search that arrives while the index loads waits for the load, then answers; other tools and a loaded index never wait", async () => {
    const { clock, pending } = manualClock();
    const state = indexState("loading");
    const { tools } = gatedTools({ index: state.index, maxWaitMs: 2_500, clock });
    expect((await tools.call("read_note", {})).text).toBe("read_note (loading)");
    let answer = "";
    const call = tools.call("search_notes", { q: "x" }).then((out) => (answer = out.text));
    await flush();
    expect(answer).toBe("");
    state.set("indexing"); // loaded: the first sync goes on in the background, and searches answer
    await call;
    expect(answer).toBe("search_notes (indexing)");
    expect(pending()).toBe(0);
    expect(state.listeners()).toBe(0);
    expect((await tools.call("summarize_notes", {})).text).toBe("summarize_notes (indexing)");
  });

  it("goes by what a tool declares, not by its name: only a tool that reads the index waits; one that runs tools (run_workflow) leaves it to them", async () => {
    const { clock } = manualClock();
    const state = indexState("loading");
    const { tools } = gatedTools({ index: state.index, maxWaitMs: 2_500, clock }, { flashcards_by_topic: { needsIndex: "reads" }, search_notes: {}, run_workflow: { needsIndex: "through-tools" } });
    expect((await tools.call("search_notes", {})).text).toBe("search_notes (loading)");
    expect((await tools.call("run_workflow", {})).text).toBe("run_workflow (loading)");
    let answer = "";
    const call = tools.call("flashcards_by_topic", {}).then((out) => (answer = out.text));
    await flush();
    expect(answer).toBe("");
    state.set("ready");
    await call;
    expect(answer).toBe("flashcards_by_topic (ready)");
  });

  it("waits at most maxWaitMs, then the tool itself says the index is still loading", async () => {
    const { clock, advance, pending } = manualClock();
    const state = indexState("loading");
    const { tools } = gatedTools({ index: state.index, maxWaitMs: 2_500, clock });
    let answer = "";
    const call = tools.call("search_notes", {}).then((out) => (answer = out.text));
    await advance(2_499);
    expect(answer).toBe("");
    await advance(1);
    await call;
    expect(answer).toBe("search_notes (loading)");
    expect(pending()).toBe(0);
    expect(state.listeners()).toBe(0);
  });

  it("a caller who gives up ends the wait; so does the host shutting down, with a clear error", async () => {
    const { clock, pending } = manualClock();
    const state = indexState("loading");
    const host = new AbortController();
    const { tools } = gatedTools({ index: state.index, maxWaitMs: 2_500, clock, signal: host.signal });
    const caller = new AbortController();
    const cancelled = tools.call("search_notes", {}, { signal: caller.signal });
    await flush();
    caller.abort();
    await expect(cancelled).rejects.toThrow("search_notes was cancelled");
    const stopped = tools.call("summarize_notes", {});
    await flush();
    host.abort();
    await expect(stopped).rejects.toThrow("summarize_notes was cancelled: Krypton is shutting down");
    expect(pending()).toBe(0);
    expect(state.listeners()).toBe(0);
    // After shutdown, a late call does not wait at all.
    await expect(tools.call("search_notes", {})).rejects.toThrow("Krypton is shutting down");
  });

  it("a server stopping before its host (krypton mcp --http) ends the wait with the same shutdown wording", async () => {
    const { clock } = manualClock();
    const host = new AbortController();
    const { tools } = gatedTools({ index: indexState("loading").index, maxWaitMs: 2_500, clock, signal: host.signal });
    const server = new AbortController();
    const stopped = tools.call("search_notes", {}, { signal: server.signal });
    await flush();
    server.abort(new ShuttingDownError());
    await expect(stopped).rejects.toThrow(/^search_notes was cancelled: Krypton is shutting down$/);
  });
});
