/**
 * The real CLI as a separate process that a test can watch and kill mid-way (kill -9 during indexing, a
 * lock holder that dies), unlike runCli which waits for the end.
 *
 *   const run = startCli(["index", vault.root], { env });
 *   await run.until(() => ollama.requestsTo("embed").length >= 2);
 *   run.child.kill("SIGKILL");
 *   const { signal } = await run.exited;
 *
 * `uid`/`gid` run it as another user (a non-root user sees a read-only folder as read-only).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { buildCli, cleanEnv, trackChild, type RunResult } from "../cli/cli-harness";

export interface KillableCli {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<RunResult>;
  /** Resolves once `condition` holds (checked every 10 ms); rejects after timeoutMs or if the process ends first. */
  until(condition: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** The bundle to run (default: the private copy from buildCli). */
  entry?: string;
  uid?: number;
  gid?: number;
  /** Killed with SIGKILL after this long: a hang fails the test instead of stalling the run. */
  timeoutMs?: number;
  /** Leave stdin open (a stdio MCP server ends when its stdin closes). */
  keepStdinOpen?: boolean;
}

export function startCli(args: string[], options: StartOptions = {}): Promise<KillableCli> {
  return (async () => {
    const entry = options.entry ?? (await buildCli());
    const child = spawn(process.execPath, [entry, ...args], {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid } : {}),
    });
    trackChild(child);
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    if (!options.keepStdinOpen) child.stdin.end();
    let ended = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    const exited = new Promise<RunResult>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => {
        ended = true;
        clearTimeout(timer);
        resolve({ code, signal, stdout: out, stderr: err });
      });
    });
    return {
      child,
      stdout: () => out,
      stderr: () => err,
      exited,
      async until(condition, timeoutMs = 30_000) {
        const started = Date.now();
        for (;;) {
          if (await condition()) return;
          if (ended) throw new Error(`the CLI ended before the condition held; stderr: ${err}`);
          if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms; stderr: ${err}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      },
    };
  })();
}
