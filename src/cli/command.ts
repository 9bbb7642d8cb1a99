import type { Readable, Writable } from "node:stream";
import type { OptionSpecs, ParsedArgs } from "./args";
import type { Env } from "./config";
import type { Output } from "./output";

/** What every command gets from main.ts: parsed arguments plus the process's streams and environment. */
export interface CommandContext {
  env: Env;
  cwd: string;
  output: Output;
  stdin: Readable & { isTTY?: boolean };
  /** The raw stdout, for readline's prompt on a terminal. Results still go through `output`. */
  stdout: Writable & { isTTY?: boolean };
  interrupts: Interrupts;
  /** The command being run ("index"): names this process in the index lock ("krypton index"). */
  commandName?: string;
}

/** One `krypton <name>` command, in its own file under src/cli/commands/. */
export interface Command {
  name: string;
  /** One line for `krypton --help`. */
  summary: string;
  /** "krypton search <vault> <query> [options]" */
  usage: string;
  /** More lines for `krypton <name> --help` (examples, exit codes). */
  details?: string;
  options: OptionSpecs;
  /** Resolves to the exit code. Throws CliError for failures explained in one line. */
  run(args: ParsedArgs, ctx: CommandContext): Promise<number>;
}

/**
 * Ctrl+C routing. While an answer streams, Ctrl+C stops that answer (the command registers a handler);
 * with nothing registered, or on a second Ctrl+C while the first is still being handled, the process exits.
 */
export interface Interrupts {
  /** Handles the next Ctrl+C instead of exiting; returns a function that removes the handler. */
  push(handler: () => void): () => void;
  /** Delivers one Ctrl+C (from the process signal, or from readline in raw terminal mode). */
  fire(): void;
}

export function createInterrupts(exit: () => void): Interrupts {
  const handlers: (() => void)[] = [];
  let firedAt = 0;
  return {
    push(handler) {
      handlers.push(handler);
      return () => {
        const i = handlers.lastIndexOf(handler);
        if (i >= 0) handlers.splice(i, 1);
      };
    },
    fire() {
      const handler = handlers[handlers.length - 1];
      const now = Date.now();
      // Two presses within a second: the user wants out, whatever is running.
      if (!handler || now - firedAt < 1000) return exit();
      firedAt = now;
      handler();
    },
  };
}

/** Options every command accepts. */
export const COMMON_OPTIONS: OptionSpecs = {
  help: { type: "boolean", short: "h", description: "Show help for this command" },
  verbose: { type: "boolean", short: "v", description: "Log more detail to stderr" },
};
