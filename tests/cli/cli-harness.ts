/**
 * Runs the real, bundled CLI in a child process, the way a user does after `npm ci`.
 *
 *   beforeAll(() => buildCli(), 120_000);
 *   const r = await runCli(["search", vault.root, "gradient", "--json"], { env: { KRYPTON_OLLAMA_URL: ollama.url } });
 *   expect(r.code).toBe(0); JSON.parse(r.stdout)
 *
 * buildCli runs `node esbuild.config.mjs cli` (which writes dist/cli.cjs) under a lock, then copies the
 * bundle to a private file: jest runs test files in parallel workers, and a worker must never execute
 * a dist/cli.cjs that another worker is rewriting at that moment.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempDirForFile } from "../support/temp-dirs";
import { promisify } from "node:util";

export const REPO_ROOT = join(__dirname, "..", "..");
const LOCK = join(REPO_ROOT, "dist", ".cli-build.lock");
let bundlePath: string | null = null;

export async function buildCli(): Promise<string> {
  if (bundlePath) return bundlePath;
  await fs.mkdir(join(REPO_ROOT, "dist"), { recursive: true });
  await acquireLock();
  try {
    await promisify(execFile)(process.execPath, [join(REPO_ROOT, "esbuild.config.mjs"), "cli"], { cwd: REPO_ROOT });
    const dir = tempDirForFile("krypton-cli-");
    const copy = join(dir, "cli.cjs");
    await fs.copyFile(join(REPO_ROOT, "dist", "cli.cjs"), copy);
    bundlePath = copy;
    return copy;
  } finally {
    await fs.rm(LOCK, { recursive: true, force: true });
  }
}

async function acquireLock(): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      await fs.mkdir(LOCK);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
      const stat = await fs.stat(LOCK).catch(() => null);
      // A lock left by a crashed run: builds take seconds, not minutes.
      if (stat && Date.now() - stat.mtimeMs > 120_000) await fs.rm(LOCK, { recursive: true, force: true });
      if (Date.now() - started > 180_000) throw new Error("timed out waiting for another CLI build");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export interface RunOptions {
  /** Added to a clean environment (PATH and HOME only; no KRYPTON_* or keys leak in from the shell). */
  env?: Record<string, string>;
  /** Written to stdin, then stdin is closed. */
  input?: string;
  cwd?: string;
  /** Kill the child after this long (a hang is a failure, not a stuck test run). */
  timeoutMs?: number;
  /** Run through bin/krypton.cjs (the `npx krypton` entry) instead of the private copy. */
  viaBin?: boolean;
  /**
   * The largest file the child may write, in KB (the shell's `ulimit -f`): a write past it fails with EFBIG,
   * as on a full disk, after the part that fits is written.
   */
  fileSizeLimitKb?: number;
  /** Called with the child once it runs (to send SIGINT, or write to stdin step by step). */
  onSpawn?: (child: import("node:child_process").ChildProcessWithoutNullStreams) => void;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment every run starts from: nothing from the developer's shell that could change settings. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    // An address where nothing listens: a test that forgets to point the CLI at a test server fails fast.
    KRYPTON_OLLAMA_URL: "http://127.0.0.1:9",
    KRYPTON_GEMINI_BASE_URL: "http://127.0.0.1:9",
    KRYPTON_TAVILY_BASE_URL: "http://127.0.0.1:9",
    ...extra,
  };
}

/** Children of the harnesses (runCli, tests/support's startCli) that have not exited yet. */
const running = new Set<ChildProcess>();

/** Counts a child as running until it closes, so stopLeftoverChildren can end it. */
export function trackChild(child: ChildProcess): void {
  running.add(child);
  child.once("close", () => running.delete(child));
}

/**
 * Kills (SIGKILL) every child still running and waits until each has closed: after a test that failed
 * partway, its server or chat would otherwise outlive it and keep jest's worker from exiting.
 * useCliTestBed runs it after each test.
 */
export async function stopLeftoverChildren(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once("close", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

export async function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const entry = options.viaBin ? join(REPO_ROOT, "bin", "krypton.cjs") : await buildCli();
  const command = options.fileSizeLimitKb === undefined ? [process.execPath, entry, ...args] : ["/bin/sh", "-c", `ulimit -f ${options.fileSizeLimitKb} && exec "$0" "$@"`, process.execPath, entry, ...args];
  const child = spawn(command[0], command.slice(1), {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  trackChild(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
  options.onSpawn?.(child);
  if (options.input !== undefined) child.stdin.end(options.input);
  else if (!options.onSpawn) child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
