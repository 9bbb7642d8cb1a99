import { execFile } from "node:child_process";

/** A login shell that hangs (a prompt in .zprofile, a slow network mount) must not hold up the server's start. */
export const LOGIN_SHELL_TIMEOUT_MS = 5_000;
const MARK = "__KRYPTON_PATH__";

let cached: Promise<string | null> | null = null;

/**
 * PATH as the user's login shell sets it (`$SHELL -lc 'echo $PATH'`), asked once per process. Obsidian
 * started from the macOS Dock inherits launchd's minimal PATH (/usr/bin:/bin:/usr/sbin:/sbin), so `npx`,
 * `uvx` or Homebrew tools are not found ("spawn npx ENOENT"). Null on Windows, without $SHELL, or when
 * the shell fails or takes longer than the timeout. The value is markered so noise that profile scripts
 * print does not end up in PATH.
 */
export function loginShellPath(options: { shell?: string; timeoutMs?: number; fresh?: boolean } = {}): Promise<string | null> {
  if (options.fresh || options.shell) return askShell(options.shell ?? process.env.SHELL, options.timeoutMs ?? LOGIN_SHELL_TIMEOUT_MS);
  cached ??= askShell(process.env.SHELL, options.timeoutMs ?? LOGIN_SHELL_TIMEOUT_MS);
  return cached;
}

function askShell(shell: string | undefined, timeoutMs: number): Promise<string | null> {
  if (process.platform === "win32" || !shell) return Promise.resolve(null);
  return new Promise((resolve) => {
    execFile(shell, ["-lc", `printf '${MARK}%s${MARK}' "$PATH"`], { timeout: timeoutMs, encoding: "utf8", env: process.env }, (err, stdout) => {
      if (err) return resolve(null);
      const match = new RegExp(`${MARK}(.*?)${MARK}`, "s").exec(stdout);
      const value = match?.[1]?.trim();
      resolve(value ? value : null);
    });
  });
}

/** The login shell's entries first (that is what the user's terminal finds), then any others not already there. */
export function mergePaths(first: string | null | undefined, second: string | null | undefined, delimiter = ":"): string {
  const out: string[] = [];
  for (const part of [...(first ?? "").split(delimiter), ...(second ?? "").split(delimiter)]) {
    if (part && !out.includes(part)) out.push(part);
  }
  return out.join(delimiter);
}
