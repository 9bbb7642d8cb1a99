/** Shared pieces of the benchmark: sizes, result records, timing statistics, the event-loop lag probe. */
import { appendFileSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

export type Scale = "small" | "full";

/** Corpus sizes per scale. "full" is what the README reports; "small" is a 1–2 minute smoke run. */
export const SIZES = {
  full: { queryChunks: 100_000, reloadChunks: 30_000, oramaPersistChunks: 10_000, restartNotes: 10_000, chatNotes: 10_000 },
  small: { queryChunks: 10_000, reloadChunks: 3_000, oramaPersistChunks: 2_000, restartNotes: 1_000, chatNotes: 1_000 },
} as const;

export const DIM = 768;

/** A child process hands its result to the parent as one stdout line starting with this. */
export const RESULT_PREFIX = "BENCH_RESULT ";
/** The id the benchmark's zero-latency embedder reports: the same as the Ollama embedder of the chat run,
 *  so an index built with it serves the chat measurement without re-embedding. */
export const EMBEDDER_ID = "ollama:nomic-embed-text";

export interface BenchContext {
  scale: Scale;
  seed: number;
  /** Scratch folder shared by the measurements of one run (vaults, built indexes). */
  workDir: string;
  /** Path of the bench script itself, to run helpers in fresh processes. */
  script: string;
  log(message: string): void;
}

export interface TargetResult {
  id: string;
  /** The requirement in words, e.g. "hybrid top-10 p50 at 100k chunks ≤ 1.3× brute force". */
  target: string;
  measured: number | null;
  unit: string;
  /** null when it could not be decided (e.g. the measurement failed). */
  pass: boolean | null;
  note?: string;
}

export interface FailureRecord {
  what: string;
  error: string;
}

export type Figures = Record<string, number | string | boolean | null>;

export interface MeasurementOutput {
  figures: Figures;
  targets: TargetResult[];
  failures: FailureRecord[];
}

export interface MeasurementResult extends MeasurementOutput {
  name: string;
  durationMs: number;
}

export interface Measurement {
  name: string;
  describe: string;
  run(ctx: BenchContext): Promise<MeasurementOutput>;
}

export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return {
    n: s.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)),
    min: round(s[0] ?? NaN),
    max: round(s[s.length - 1] ?? NaN),
  };
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function rssMb(): number {
  return round(process.memoryUsage().rss / 1_048_576, 1);
}

/** Runs a full GC when node was started with --expose-gc (npm run bench does that). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

export interface LagReport {
  /** Longest gap between two 1 ms interval ticks: the longest the event loop (main thread) was blocked. */
  maxStallMs: number;
  p99GapMs: number;
  ticks: number;
  peakRssMb: number;
  /** Gaps of 100 ms or more (how often, not only how long, the thread froze). */
  stallsOver100: number;
  /** What the work was doing when the longest stall ended (when the caller said: `doing`). */
  maxStallDuring?: string;
}

/** File that startLagProbe appends every stall of 50 ms or more to (bench/README.md, "Finding a stall"). */
const STALL_LOG = process.env.KRYPTON_BENCH_STALL_LOG;

/** The project's stall target: no main-thread stall of 100 ms or more (a freeze a user feels). */
export const STALL_LIMIT_MS = 100;
/** File that startLagProbe appends the process's memory to about twice a second (bench/README.md, "Finding a memory peak"). */
const MEMORY_LOG = process.env.KRYPTON_BENCH_MEMORY_LOG;

/** This thread's CPU time and run-queue wait so far, ms (Linux; null elsewhere): was a stall work or waiting for a core? */
function threadSchedMs(): { cpu: number; wait: number } | null {
  try {
    const [cpu, wait] = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
    return { cpu: cpu / 1e6, wait: wait / 1e6 };
  } catch {
    return null;
  }
}

/**
 * Measures main-thread stalls: a setInterval(…, 1) probe records the gaps between its ticks while the work
 * runs. A gap of 80 ms means something held the thread for about 80 ms (what a user would feel as a freeze).
 */

export function startLagProbe(doing?: () => string): { stop(): LagReport } {
  const gaps: number[] = [];
  let last = performance.now();
  let peakRss = process.memoryUsage().rss;
  let ticks = 0;
  let longest = 0;
  let longestDuring: string | undefined;
  let sched = STALL_LOG ? threadSchedMs() : null;
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    // Diagnosis: each long stall, stamped in the clock of --cpu-prof profiles (µs) and in ms since the
    // process started (the clock of --trace-gc), to find what ran then, with how much of it this thread ran
    // and how much it waited for a core (another thread or process had it).
    if (STALL_LOG) {
      const was = sched;
      sched = threadSchedMs();
      if (now - last >= 50) {
        const split = was && sched ? ` cpu ${(sched.cpu - was.cpu).toFixed(0)} wait ${(sched.wait - was.wait).toFixed(0)}` : "";
        appendFileSync(STALL_LOG, `${process.hrtime.bigint() / 1000n} ${(now - last).toFixed(0)} ${doing?.() ?? ""}${split} at ${now.toFixed(0)}\n`);
      }
    }
    if (now - last > longest) {
      longest = now - last;
      longestDuring = doing?.();
    }
    last = now;
    if (++ticks % 25 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
    if (MEMORY_LOG && ticks % 500 === 0) {
      const m = process.memoryUsage();
      const mb = (n: number): string => (n / 1_048_576).toFixed(0);
      appendFileSync(MEMORY_LOG, `${(now / 1000).toFixed(1)} rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} ${doing?.() ?? ""}\n`);
    }
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      gaps.push(performance.now() - last);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      const s = [...gaps].sort((a, b) => a - b);
      return {
        maxStallMs: round(s[s.length - 1] ?? 0),
        p99GapMs: round(s[Math.floor(s.length * 0.99)] ?? 0),
        ticks,
        peakRssMb: round(peakRss / 1_048_576, 1),
        stallsOver100: gaps.filter((g) => g >= 100).length,
        ...(longestDuring !== undefined ? { maxStallDuring: longestDuring } : {}),
      };
    },
  };
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

export function target(id: string, text: string, measured: number | null, unit: string, pass: boolean | null, note?: string): TargetResult {
  const t: TargetResult = { id, target: text, measured: measured === null ? null : round(measured), unit, pass };
  if (note) t.note = note;
  return t;
}

export function now(): number {
  return performance.now();
}

/** Runs `run(i)` for i = 0 … count-1 one after the other and times each; the first `warmup` times are dropped. */
export async function timedRuns(count: number, warmup: number, run: (i: number) => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    const result = run(i);
    // A synchronous run is timed without the extra turn an await would add.
    if (result instanceof Promise) await result;
    if (i >= warmup) times.push(now() - t0);
  }
  return times;
}
