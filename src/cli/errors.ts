import { AgentError } from "../core/notes/agent-error";
import { ProviderError } from "../core/providers/provider-error";
import { NoteExistsError, NoteNotFoundError } from "../core/ports/vault";

/** Exit codes: 0 done, 1 the command could not do its job, 2 the command line itself was wrong, 130 Ctrl+C. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;

/** A failure the CLI explains in one line; the message is shown as is (no stack trace). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The command line was wrong (unknown option, missing argument, bad value): exit code 2, with a pointer to --help. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
    this.name = "UsageError";
  }
}

/**
 * One line a person can act on, for any error. Known error types carry messages written for users;
 * anything else (a bug) gets its message, and KRYPTON_DEBUG=1 shows the stack.
 */
export function describeError(err: unknown): string {
  if (err instanceof CliError || err instanceof AgentError || err instanceof NoteNotFoundError || err instanceof NoteExistsError) {
    return err.message;
  }
  if (err instanceof ProviderError) return err.message;
  const path = (err as { path?: unknown } | null)?.path;
  const reason = fsReason(err);
  if (reason && typeof path === "string") return `${reason}: ${path}`;
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** A file system error's reason in words ("is a folder, not a file"), or null for other errors and unknown codes. */
export function fsReason(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && Object.prototype.hasOwnProperty.call(FS_REASONS, code) ? FS_REASONS[code] : null;
}

const FS_REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or folder",
  ENOTDIR: "not a folder",
  EISDIR: "is a folder, not a file",
  ENOSPC: "no space left on the disk",
  EROFS: "the file system is read-only",
  EMFILE: "too many open files",
};
