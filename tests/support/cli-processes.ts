/**
 * The real, bundled CLI as separate processes, for faults that only processes have: kill -9 at a chosen
 * moment, several writers at once, a hang that must end. Builds on tests/cli/cli-harness.ts (same bundle,
 * same clean environment).
 *
 *   beforeAll(() => buildCli(), 120_000);
 *   const chat = await startCli(["chat", vault.root, "--mode", "none"], { env });
 *   chat.write("tell me a story\n");
 *   await chat.waitFor(() => chat.stdout.includes("five"));   // the 5th streamed token was shown
 *   chat.kill();                                              // SIGKILL: no cleanup runs in the child
 *   const r = await chat.exited();                            // { code: null, signal: "SIGKILL", ... }
 *
 *   const results = await runParallel(10, (i) => ["ask", vault.root, `q${i}`, "--conversation", id], { env });
 *
 * `entry` runs another copy of the bundle, and `uid`/`gid` run it as another user (a non-root user sees a
 * read-only folder as read-only). stdin stays open until endInput(): a command that reads it (chat, a stdio
 * MCP server) waits, so a test that gives no input ends it right after the start.
 *
 * Every wait is bounded: a process that outlives its bound is killed and the wait fails with its output,
 * so a hang is a failing test with a reason, never a stuck run.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { buildCli, cleanEnv, trackChild, REPO_ROOT, type RunResult } from "../cli/cli-harness";

export interface StartOptions {
  /** Added to the clean environment (see cleanEnv). */
  env?: Record<string, string>;
  cwd?: string;
  /** The bundle to run (default: the private copy from buildCli). */
  entry?: string;
  uid?: number;
  gid?: number;
  /** Hard bound on the process's life: it is killed after this (default 60 s). */
  lifetimeMs?: number;
}

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly pid: number;
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  write(text: string): void;
  endInput(): void;
  /** Resolves once `test` is true (checked on every output chunk and every 20 ms); rejects after timeoutMs with the output. */
  waitFor(test: () => boolean | Promise<boolean>, timeoutMs?: number, what?: string): Promise<void>;
  /** Sends a signal (default SIGKILL: the child gets no chance to clean up). */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves when the process has exited; kills it and rejects when that takes longer than timeoutMs (default 60 s). */
  exited(timeoutMs?: number): Promise<RunResult>;
}

export async function startCli(args: string[], options: StartOptions = {}): Promise<CliProcess> {
  const entry = options.entry ?? (await buildCli());
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv(options.env),
    stdio: ["pipe", "pipe", "pipe"],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid } : {}),
  });
  trackChild(child);
  let stdout = "";
  let stderr = "";
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    notify();
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    notify();
  });
  const lifetime = setTimeout(() => child.kill("SIGKILL"), options.lifetimeMs ?? 60_000);
  const exit = new Promise<RunResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(lifetime);
      notify();
      resolve({ code, signal, stdout, stderr });
    });
  });
  const describe = () => `\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;

  return {
    child,
    pid: child.pid ?? -1,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    write: (text) => child.stdin.write(text),
    endInput: () => child.stdin.end(),
    waitFor: (test, timeoutMs = 15_000, what = "condition") =>
      new Promise<void>((resolve, reject) => {
        let settled = false;
        const finish = (err?: Error) => {
          if (settled) return;
          settled = true;
          listeners.delete(check);
          clearInterval(poll);
          clearTimeout(timer);
          if (err) reject(err);
          else resolve();
        };
        const check = () => {
          Promise.resolve(test()).then(
            (ok) => ok && finish(),
            (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
          );
        };
        const poll = setInterval(check, 20);
        const timer = setTimeout(() => finish(new Error(`waited ${timeoutMs} ms for ${what}${describe()}`)), timeoutMs);
        listeners.add(check);
        check();
      }),
    kill: (signal = "SIGKILL") => {
      child.kill(signal);
    },
    exited: (timeoutMs = 60_000) =>
      new Promise<RunResult>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`the process did not exit within ${timeoutMs} ms (killed)${describe()}`));
        }, timeoutMs);
        exit.then(
          (r) => {
            clearTimeout(timer);
            resolve(r);
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      }),
  };
}

/** Starts n CLI processes at once (stdin closed) and waits for all, each bounded by timeoutMs. */
export async function runParallel(
  n: number,
  argsFor: (i: number) => string[],
  options: StartOptions & { timeoutMs?: number } = {},
): Promise<RunResult[]> {
  const procs = await Promise.all(Array.from({ length: n }, (_, i) => startCli(argsFor(i), options)));
  for (const p of procs) p.endInput();
  return Promise.all(procs.map((p) => p.exited(options.timeoutMs ?? 60_000)));
}

/** Resolves when `test` holds, polling every 20 ms; rejects after timeoutMs (for conditions outside a process: files, servers). */
export async function waitUntil(test: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = "condition"): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await test()) return;
    if (Date.now() - started > timeoutMs) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
