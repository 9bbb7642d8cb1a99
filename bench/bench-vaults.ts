/**
 * Synthetic vaults on disk and Krypton indexes over them, shared by the measurements of one run.
 * Preparing an index happens in a separate process so that the process being measured carries no
 * leftovers (heap, caches) from building it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { Embedder, EmbeddingVector } from "../src/core/ports/embedder";
import { silentLogger } from "../src/core/ports/logger";
import { AbortedError } from "../src/core/util/errors";
import { VaultIndex } from "../src/core/indexing/vault-index";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../src/core/settings";
import { createNodeHost } from "../src/node/node-host";
import { HashEmbedder, hashEmbedding } from "../tests/support/hash-embedder";
import { densify } from "./dense-embedding";
import { newEmbedRing, readFromRing, SLOT_VECTORS } from "./embed-ring";
import type { IndexStatus } from "../src/core/indexing/index-status";
import { type BenchContext, DIM, EMBEDDER_ID, type LagReport, now, round, startLagProbe, stats } from "./bench-kit";
import { generateVault, type SyntheticVault, type VaultSpec, writeVault } from "./synthetic-vault";

const VAULT_MARKER = ".bench-vault.json";
const INDEX_MARKER = ".bench-index-ready";

export interface VaultOnDisk {
  dir: string;
  spec: VaultSpec;
  notes: number;
  chunks: number;
  queries: string[];
}

export function benchSettings(overrides: Partial<KryptonSettings> = {}): KryptonSettings {
  return { ...DEFAULT_SETTINGS, embeddingProvider: "ollama", embeddingModel: "nomic-embed-text", ...overrides };
}

/** The zero-latency 768-dim embedder, reporting the same id as the Ollama embedder. */
export function zeroLatencyEmbedder(): DenseHashEmbedder {
  return new DenseHashEmbedder({ dim: DIM, id: EMBEDDER_ID, batchSize: 64 });
}

/**
 * HashEmbedder's vectors are sparse (a bag of words hashed into 768 slots: mostly zeros). Real embeddings
 * are dense, which matters for any text format (naive Orama's JSON persistence is 5× larger and fails
 * sooner with dense vectors), so the benchmark adds a small deterministic dense component.
 */
export class DenseHashEmbedder extends HashEmbedder {
  /** Texts embedded so far. Counted, not kept: HashEmbedder.texts would hold every chunk's text (100k
   *  strings at full size) alive in the measured process, which no real embedder does. */
  embeddedTexts = 0;

  override embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.calls++;
    if (signal?.aborted) return Promise.reject(new AbortedError());
    this.embeddedTexts += texts.length;
    return Promise.resolve(texts.map((text) => densify(hashEmbedding(text, this.dim), text)));
  }
}

/**
 * The zero-latency embedder with its arithmetic in a worker thread, for the measurements of main-thread
 * stalls while building: a real embedder (Ollama) computes in its own process, and the stand-in's work
 * (tens of ms per batch of 64 texts on this thread) is no stall of Krypton's. The vectors are the same.
 */
export class OffThreadEmbedder implements Embedder {
  readonly id = EMBEDDER_ID;
  readonly batchSize = SLOT_VECTORS;
  private readonly worker: Worker;
  /** embed() calls so far. */
  calls = 0;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (at: { slot: number; count: number }) => void; reject: (e: unknown) => void }>();
  private readonly ring = newEmbedRing();

  /** `benchScript`: dist/bench.cjs, beside which the build puts the worker's own small bundle. */
  constructor(benchScript: string) {
    // Its own bundle of a few kilobytes: started from all of dist/bench.cjs, the worker took ~58 MB of the
    // process's RSS, which the peak-memory figures of indexing then counted as Krypton's.
    this.worker = new Worker(join(dirname(benchScript), "bench-embed-worker.cjs"), { workerData: this.ring });
    this.worker.on("message", ({ id, slot, count }: { id: number; slot: number; count: number }) => {
      this.waiting.get(id)?.resolve({ slot, count });
      this.waiting.delete(id);
    });
    const fail = (err: unknown) => {
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the embedding worker stopped (exit ${code})`)));
    this.worker.unref();
  }

  embed(texts: string[], signal?: AbortSignal): Promise<EmbeddingVector[]> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    this.calls++;
    const id = this.nextId++;
    const answered = new Promise<{ slot: number; count: number }>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
    // Copied out of the ring (freeing the slot) in the promise reaction, right before the caller's code runs,
    // as the real embedders decode their JSON: copied in the message handler instead, about a third of all
    // vectors were promoted into the old generation before the caller took them (a young collection can
    // come between a message's handler and the reactions it triggers), garbage only a full collection frees.
    return answered.then(({ slot, count }) => readFromRing(this.ring, slot, count));
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

function specName(spec: VaultSpec): string {
  return spec.chunks !== undefined ? `chunks-${spec.chunks}` : `notes-${spec.notes}`;
}

/** Generates (or reuses, within a run) a vault of the given size under the run's work folder. */
export function ensureVault(ctx: BenchContext, size: { chunks?: number; notes?: number }): VaultOnDisk {
  const spec: VaultSpec = { seed: ctx.seed, ...size, queries: 120 };
  const dir = join(ctx.workDir, `${specName(spec)}-seed${ctx.seed}`);
  const marker = join(dir, VAULT_MARKER);
  if (existsSync(marker)) {
    const saved = JSON.parse(readFileSync(marker, "utf8")) as VaultOnDisk;
    // The folder it is in now, not the one it was generated in (a work dir copied with `cp -a` stays usable).
    if (JSON.stringify(saved.spec) === JSON.stringify(spec)) return { ...saved, dir };
  }
  rmSync(dir, { recursive: true, force: true });
  ctx.log(`generating ${specName(spec)} vault`);
  const vault = generateVault(spec);
  writeVault(dir, vault.notes);
  const info: VaultOnDisk = { dir, spec, notes: vault.notes.length, chunks: vault.chunkCount, queries: vault.queries };
  writeFileSync(marker, JSON.stringify(info));
  return info;
}

/** The vault's notes in memory (for the baselines): regenerated from the seed, identical to the files. */
export function vaultInMemory(v: VaultOnDisk): SyntheticVault {
  return generateVault(v.spec);
}

export function removeIndex(v: VaultOnDisk): void {
  rmSync(join(v.dir, ".krypton"), { recursive: true, force: true });
  rmSync(join(v.dir, INDEX_MARKER), { force: true });
}

/** Makes sure the vault has a complete Krypton index, building it in a child process when it has none. */
export function prepareIndex(ctx: BenchContext, v: VaultOnDisk): void {
  if (existsSync(join(v.dir, INDEX_MARKER))) return;
  ctx.log(`building the Krypton index of ${v.dir} (separate process)`);
  const child = spawnSync(process.execPath, ["--expose-gc", ctx.script, "--prepare-index", v.dir], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (child.status !== 0 || !existsSync(join(v.dir, INDEX_MARKER))) {
    throw new Error(`building the index failed (exit ${child.status ?? child.signal})`);
  }
}

/** Child-process entry of prepareIndex. */
export async function buildIndexHere(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  // The longest main-thread stall of the whole build (the same 1 ms lag probe as the `build` measurement).
  const embedder = new OffThreadEmbedder(process.argv[1]);
  const index = openIndex(dir, embedder);
  // The phase the longest stall happened in (listing, chunking, embedding, saving): where to look first.
  let phase = "opening";
  index.onStatus((s) => (phase = s.progress?.phase ?? s.state));
  const probe = startLagProbe(() => phase);
  const status = await index.open();
  await index.idle();
  await index.close();
  const lag = probe.stop();
  await embedder.close();
  if (status.state === "error") throw new Error("index build ended in state error");
  // maxRSS (KiB): the peak of this whole process, i.e. of building the index.
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const info: PreparedIndexInfo = {
    chunks: status.chunks,
    notes: status.notes,
    embedded: status.embedded,
    seconds: Math.round(performance.now() - t0) / 1000,
    peakRssMb,
    maxStallMs: lag.maxStallMs,
    p99GapMs: lag.p99GapMs,
    stallsOver100: lag.stallsOver100,
    maxStallDuring: lag.maxStallDuring,
  };
  writeFileSync(join(dir, INDEX_MARKER), JSON.stringify(info));
}

/** What the index-building child process recorded; older markers (or indexes built otherwise) lack fields. */
export interface PreparedIndexInfo {
  chunks: number;
  notes?: number;
  embedded?: number;
  seconds?: number;
  peakRssMb?: number;
  /** Longest main-thread stall while building, ms (lag probe). */
  maxStallMs?: number;
  p99GapMs?: number;
  /** Stalls of 100 ms or more while building, and the indexing phase the longest one ended in. */
  stallsOver100?: number;
  maxStallDuring?: string;
}

/** What the index-building child process recorded (prepareIndex), or null when the index was built otherwise. */
export function preparedIndexInfo(v: VaultOnDisk): PreparedIndexInfo | null {
  const file = join(v.dir, INDEX_MARKER);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as PreparedIndexInfo) : null;
}

/** What the plugin-query child (queryIndexHere) reports. */
export interface PluginQueryReport {
  /** From creating the VaultIndex to the index being ready (loaded and synced). */
  openMs: number;
  searches: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
  /** Searches that found nothing (a broken index is fast and proves nothing). */
  empty: number;
  rssMb: number;
}

/**
 * Child-process entry of the plugin query measurement: opens the prepared index the way the plugin does (a
 * VaultIndex on the vault folder, the writer, with the zero-latency embedder for query vectors), waits until
 * it is ready, then times `count` searchNotes calls over the vault's queries after one untimed first search.
 */
export async function queryIndexHere(dir: string, count: number): Promise<PluginQueryReport> {
  const v = JSON.parse(readFileSync(join(dir, VAULT_MARKER), "utf8")) as VaultOnDisk;
  const t0 = performance.now();
  const index = openIndex(dir, zeroLatencyEmbedder());
  await index.open();
  await index.idle();
  const openMs = performance.now() - t0;
  try {
    await index.searchNotes(v.queries[0], { limit: 10 });
    const times: number[] = [];
    let empty = 0;
    for (let i = 0; i < count; i++) {
      const query = v.queries[1 + (i % (v.queries.length - 1))];
      const s0 = performance.now();
      const hits = await index.searchNotes(query, { limit: 10 });
      times.push(performance.now() - s0);
      if (hits.length === 0) empty++;
    }
    const s = stats(times);
    return { openMs: round(openMs, 0), searches: times.length, p50Ms: s.p50, p95Ms: s.p95, maxMs: s.max, empty, rssMb: round(process.memoryUsage().rss / 1_048_576, 0) };
  } finally {
    await index.close();
  }
}

export function markIndexReady(v: VaultOnDisk, chunks: number): void {
  writeFileSync(join(v.dir, INDEX_MARKER), JSON.stringify({ chunks }));
}

export function openIndex(dir: string, embedder: Embedder | null, settings = benchSettings()): VaultIndex {
  const host = createNodeHost(dir, { logger: silentLogger });
  return new VaultIndex({ host, settings: () => settings, embedder: () => embedder });
}

/**
 * Opens the index (with `idle`, until it has also embedded what it found) under the lag probe: how long that
 * took and the main thread's stalls meanwhile.
 */
export async function openUnderProbe(index: VaultIndex, options: { idle?: boolean } = {}): Promise<{ status: IndexStatus; ms: number; lag: LagReport }> {
  const probe = startLagProbe();
  const t0 = now();
  const status = await index.open();
  if (options.idle) await index.idle();
  const ms = now() - t0;
  const lag = probe.stop();
  return { status, ms, lag };
}
