import { readFileSync, unlinkSync } from "node:fs";
import { hostname } from "node:os";
import { resolve, sep } from "node:path";
import type { ProcessPort } from "../core/ports/process";

/**
 * The process port on Node (CLI, standalone MCP server; the Obsidian desktop app uses the same checks).
 * Liveness is `process.kill(pid, 0)`: ESRCH means no such process, EPERM means it runs under another user.
 */
export function isProcessAlive(pid: number): boolean | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ESRCH") return false;
    if (code === "EPERM") return true;
    return null;
  }
}

export function createNodeProcess(dataDir: string, label: string): ProcessPort {
  return {
    pid: process.pid,
    hostName: hostname(),
    label,
    isAlive: isProcessAlive,
    releaseOnExit: (path, owner) => exitCleanup.add(resolve(dataDir, path), owner),
  };
}

/**
 * Files to remove when the process ends, whichever way: a normal exit or process.exit() (which EPIPE on a
 * closed pipe leads to), an uncaught error, SIGTERM or SIGHUP. Removal is synchronous (an 'exit' handler
 * cannot wait) and only when the file still names this process's owner id (another process may have
 * taken the lock over meanwhile).
 */
const exitCleanup = (() => {
  const files = new Map<string, Set<string>>();
  let installed = false;

  const runAll = () => {
    for (const [file, owners] of files) {
      try {
        const text = readFileSync(file, "utf8");
        const owner = (JSON.parse(text) as { owner?: unknown }).owner;
        if (typeof owner === "string" && owners.has(owner)) unlinkSync(file);
      } catch {
        // Gone already, or unreadable: nothing of ours to remove.
      }
    }
    files.clear();
  };

  const onSignal = (signal: "SIGTERM" | "SIGHUP") => {
    runAll();
    // Die of the signal as if nobody had listened (exit code 128 + n), unless someone else handles it.
    if (process.listenerCount(signal) === 1) {
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    }
  };

  const install = () => {
    if (installed) return;
    installed = true;
    process.on("exit", runAll);
    for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);
  };

  // With nothing left to remove the listeners go too: inside Obsidian this module lives in the app's own
  // process, and a plugin unload (which releases the lock) must not leave them there, one set per reload.
  const uninstall = () => {
    if (!installed) return;
    installed = false;
    process.removeListener("exit", runAll);
    for (const signal of ["SIGTERM", "SIGHUP"] as const) process.removeListener(signal, onSignal);
  };

  return {
    add(file: string, owner: string): () => void {
      if (file.includes(`${sep}..${sep}`)) throw new Error(`Unexpected path: ${file}`);
      install();
      let owners = files.get(file);
      if (!owners) files.set(file, (owners = new Set()));
      owners.add(owner);
      return () => {
        const set = files.get(file);
        set?.delete(owner);
        if (set && set.size === 0) files.delete(file);
        if (files.size === 0) uninstall();
      };
    },
  };
})();
