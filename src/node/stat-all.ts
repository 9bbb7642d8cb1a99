import * as fs from "node:fs";
import { Worker } from "node:worker_threads";

/**
 * The mtime and size of every note of a vault listing (FsVault.listNotes), for change detection: one stat
 * per note, no note read.
 *
 * - Read into two arrays (NaN mtime: not a file): holding 100,000 Stats objects until the end cost 180 MB.
 * - A stat answered from the page cache (a vault used lately) costs a few microseconds made synchronously,
 *   several times that through the pool's callbacks: stats are made synchronously in short slices that
 *   yield to the event loop, and once slices are slow (the stats go to the disk) the rest goes through a
 *   window of callback stats, which the pool overlaps.
 * - From WORKER_FROM notes on, all this runs in a worker thread: 100,000 stats are a third of a second of
 *   CPU that a one-shot search would otherwise spend on its only thread, beside loading the index.
 */
export interface NoteStats {
  mtime: Float64Array;
  size: Float64Array;
}

/** Listings this long are stat'ed in a worker (starting one costs tens of milliseconds). */
export const WORKER_FROM = 5_000;
const SLOW_SLICE_MS = 8;

export interface StatOptions {
  /** A slice of synchronous stats slower than this (twice in a row) moves the rest to callback stats. */
  slowSliceMs?: number;
  /** Run in a worker thread: default from WORKER_FROM paths on. */
  worker?: boolean;
}

export async function statAll(paths: readonly string[], options: StatOptions = {}): Promise<NoteStats> {
  const slowSliceMs = options.slowSliceMs ?? SLOW_SLICE_MS;
  if (options.worker ?? paths.length >= WORKER_FROM) {
    const stats = await statInWorker(paths, slowSliceMs).catch(() => null);
    // A worker that cannot start (a restricted host) or fails: the same work on this thread.
    if (stats) return stats;
  }
  return statEach(paths, fs, slowSliceMs);
}

/**
 * The stats themselves. Self-contained: it uses only its parameters and globals, because the worker runs
 * it from its source text (statInWorker).
 */
async function statEach(paths: readonly string[], files: Pick<typeof fs, "statSync" | "stat">, slowSliceMs: number): Promise<NoteStats> {
  const syncSlice = 256;
  const callbackWindow = 64;
  const mtime = new Float64Array(paths.length).fill(NaN);
  const size = new Float64Array(paths.length);
  const record = (i: number, stat: { isFile(): boolean; mtimeMs: number; size: number } | undefined) => {
    if (!stat?.isFile()) return;
    mtime[i] = stat.mtimeMs;
    size[i] = stat.size;
  };
  let next = 0;
  let slowSlices = 0;
  while (next < paths.length) {
    const started = performance.now();
    const end = Math.min(paths.length, next + syncSlice);
    for (; next < end; next++) {
      try {
        record(next, files.statSync(paths[next], { throwIfNoEntry: false }));
      } catch {
        // Unreadable (permissions, a loop of links): not listed, as a failed callback stat.
      }
    }
    // Two slow slices in a row: the disk answers, not the cache (one alone can be the machine being busy).
    slowSlices = performance.now() - started > slowSliceMs ? slowSlices + 1 : 0;
    if (slowSlices >= 2) break;
    await new Promise((resume) => setImmediate(resume));
  }
  if (next >= paths.length) return { mtime, size };
  await new Promise<void>((done) => {
    let pending = paths.length - next;
    const start = (i: number) =>
      files.stat(paths[i], (err, stat) => {
        if (!err) record(i, stat);
        if (--pending === 0) done();
        else if (next < paths.length) start(next++);
      });
    for (const stop = Math.min(paths.length, next + callbackWindow); next < stop; ) start(next++);
  });
  return { mtime, size };
}

/** statEach in a worker thread; the two arrays come back transferred, not copied. Rejects when the worker cannot run. */
export function statInWorker(paths: readonly string[], slowSliceMs: number): Promise<NoteStats> {
  const source = [
    'const { parentPort, workerData } = require("node:worker_threads");',
    `const statEach = ${statEach.toString()};`,
    'statEach(workerData.paths, require("node:fs"), workerData.slowSliceMs).then((s) => parentPort.postMessage(s, [s.mtime.buffer, s.size.buffer]));',
  ].join("\n");
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { paths, slowSliceMs } });
    worker.once("message", (stats: NoteStats) => {
      resolve(stats);
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the stat worker stopped (exit ${code})`)));
  });
}
