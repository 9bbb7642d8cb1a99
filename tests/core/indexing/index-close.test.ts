import { promises as fs } from "node:fs";
import { join } from "node:path";
import { clockFromTimers, type Clock } from "../../../src/core/ports/clock";
import type { Embedder } from "../../../src/core/ports/embedder";
import { silentLogger } from "../../../src/core/ports/logger";
import { ProviderError } from "../../../src/core/providers/provider-error";
import { createOllamaEmbedder } from "../../../src/core/providers/ollama/ollama-embedder";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { IndexStore } from "../../../src/core/indexing/index-store";
import { chunkId } from "../../../src/core/indexing/index-records";
import { chunkNote } from "../../../src/core/indexing/markdown-chunker";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import { WorkSlicer } from "../../../src/core/indexing/work-slicer";
import { nodeClock } from "../../../src/node/node-clock";
import { createNodeHost } from "../../../src/node/node-host";
import { startOllamaServer } from "../../support/servers/ollama-server";
import { makeHarness, type Harness, FAST } from "./index-harness";

/**
 * close() must stop work started without a signal (the CLI and the MCP server open the index that way):
 * a stalled embedder or a long retry pause may not keep a process alive. Each test would hang until
 * jest's timeout if close() waited for the work instead of cancelling it.
 */
const NOTES: Record<string, string> = {};
for (let i = 0; i < 12; i++) NOTES[`Notes/n${i}.md`] = `# Note ${i}\n\nText about topic${i} and shared words.\n`;

/** An embedder that never answers and ignores the abort signal (the worst case). */
class StalledEmbedder implements Embedder {
  readonly id = "stall:16";
  readonly batchSize = 4;
  calls = 0;
  private called: (() => void) | null = null;
  readonly firstCall = new Promise<void>((resolve) => (this.called = resolve));
  embed(): Promise<Float32Array[]> {
    this.calls++;
    this.called?.();
    return new Promise<Float32Array[]>(() => undefined);
  }
}

/** Node timers, counting the ones still pending (a pending timer keeps a Node process alive). */
function countingClock(): { clock: Clock; pending: () => number } {
  const live = new Set<ReturnType<typeof setTimeout>>();
  const setTimer = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      live.delete(t);
      fn();
    }, ms);
    live.add(t);
    return () => {
      clearTimeout(t);
      live.delete(t);
    };
  };
  return {
    clock: clockFromTimers(Date.now, setTimer),
    pending: () => live.size,
  };
}

describe("VaultIndex.close() cancels work started without a signal", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness(NOTES);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  const lockFile = () => join(h.vault.root, ".krypton", "index", "write.lock");

  it("during an embedder that stalls and ignores the signal: close resolves, the lock is released, the saved index is whole", async () => {
    const stalled = new StalledEmbedder();
    const index = h.open({ embedder: stalled });
    const opening = index.open(); // no signal, as the CLI and MCP do
    await stalled.firstCall;
    await fs.stat(lockFile()); // held while indexing

    await index.close();
    await expect(opening).rejects.toMatchObject({ name: "AbortError" });
    await expect(fs.stat(lockFile())).rejects.toMatchObject({ code: "ENOENT" });

    // What was chunked before close was saved whole: a restart loads it, finds nothing damaged, re-reads no note.
    const again = h.open({ embedder: null });
    const status = await again.open();
    expect(status).toMatchObject({ state: "ready", notes: 12, embedded: 0 });
    expect(status.rebuiltReason).toBeUndefined();
    expect((await again.searchNotes("topic7")).map((n) => n.path)).toEqual(["Notes/n7.md"]);
  });

  it("during a long retry pause after a 429: close resolves without waiting the pause out", async () => {
    let calls = 0;
    let firstFailure: () => void = () => undefined;
    const failed = new Promise<void>((resolve) => (firstFailure = resolve));
    const limited: Embedder = {
      id: "limited:16",
      batchSize: 4,
      embed: async () => {
        calls++;
        firstFailure();
        throw new ProviderError("rate-limited", "429 Too Many Requests");
      },
    };
    // An hour-long backoff: only cancellation can end it.
    const index = h.open({ embedder: limited, index: { embedConcurrency: 1, retry: { attempts: 5, baseDelayMs: 3_600_000, maxDelayMs: 3_600_000 } } });
    const syncing = index.sync();
    await failed;
    await index.close();
    await expect(syncing).rejects.toMatchObject({ name: "AbortError" });
    expect(calls).toBe(1);
    await expect(fs.stat(lockFile())).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("during a stalled request to a real (loopback) Ollama: the request is dropped and close resolves", async () => {
    const ollama = await startOllamaServer({ embeddingDim: 16 });
    try {
      ollama.script({ route: "embed", stall: true, times: Infinity });
      const embedder = createOllamaEmbedder({
        baseUrl: ollama.url,
        model: "nomic-embed-text",
        fetch: (input, init) => fetch(input, init),
        clock: nodeClock,
        timeoutMs: 3_600_000,
        batchSize: 4,
      });
      const index = h.open({ embedder });
      const opening = index.open();
      for (let i = 0; i < 200 && ollama.requestsTo("embed").length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(ollama.requestsTo("embed").length).toBeGreaterThan(0);
      await index.close();
      await expect(opening).rejects.toMatchObject({ name: "AbortError" });
      await expect(fs.stat(lockFile())).rejects.toMatchObject({ code: "ENOENT" });
    } finally {
      await ollama.close();
    }
  });

  it("leaves no timer behind (the lock heartbeat included), so a Node process can exit", async () => {
    const { clock, pending } = countingClock();
    const host = { ...createNodeHost(h.vault.root, { logger: silentLogger }), clock };
    const settings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [] };
    const index = new VaultIndex({
      host,
      settings: () => settings,
      embedder: () => h.embedder,
      options: { ...FAST, debounceMs: 60_000, lock: { staleMs: 60_000, heartbeatMs: 10 } },
    });
    await index.open();
    // A vault event waiting out its (long) debounce, and heartbeats running.
    index.handleEvent({ type: "modify", path: "Notes/n1.md" });
    await new Promise((r) => setTimeout(r, 40));
    expect(pending()).toBeGreaterThan(0);
    await index.close();
    expect(pending()).toBe(0);
    await new Promise((r) => setTimeout(r, 40)); // a heartbeat in flight must not re-arm itself
    expect(pending()).toBe(0);
    await expect(fs.stat(lockFile())).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a closed index can be opened again and works", async () => {
    const index = h.open();
    await index.open();
    await index.close();
    const status = await index.open();
    expect(status).toMatchObject({ state: "ready", notes: 12 });
    expect((await index.searchNotes("topic3")).map((n) => n.path)[0]).toBe("Notes/n3.md");
    const rebuilt = await index.rebuild();
    expect(rebuilt.notes).toBe(12);
  });
});

describe("stopping in the middle of a long note", () => {
  it("never leaves the note half in the word index", async () => {
    const note = Array.from({ length: 200 }, (_, i) => `## Part ${i}\n\nWord${i} appears only in part ${i}.\n`).join("\n");
    const { chunks, title, aliases, tags } = chunkNote("Long.md", note, { maxChars: 200 });
    expect(chunks.length).toBeGreaterThan(64 * 2); // several insert slices, with a yield between them
    const store = new IndexStore();
    const stop = new AbortController();
    stop.abort();
    const meta = { path: "Long.md", hash: "h", mtime: 1, size: note.length, title, aliases, tags };
    await expect(store.putNote(meta, chunks, new WorkSlicer(nodeClock, stop.signal))).rejects.toMatchObject({ name: "AbortError" });
    const records = store.notes.get("Long.md")!.chunks;
    expect(records.every((r) => r.textSlot >= 0)).toBe(true);
    expect(store.text.size).toBe(chunks.length);
    expect(store.text.searchNow("word150", 5).map((h) => chunkId(h.owner))).toEqual([chunks.find((c) => c.text.includes("Word150 "))!.id]);
  });
});
