import type { Writable } from "node:stream";
import { version } from "../../package.json";
import { parseArgs } from "./args";
import { COMMON_OPTIONS, createInterrupts, type Command, type CommandContext } from "./command";
import { askCommand } from "./commands/ask-command";
import { chatCommand } from "./commands/chat-command";
import { flowCommand } from "./commands/flow-command";
import { indexCommand } from "./commands/index-command";
import { mcpCommand } from "./commands/mcp-command";
import { mcpServersCommand } from "./commands/mcp-servers-command";
import { searchCommand } from "./commands/search-command";
import { statusCommand } from "./commands/status-command";
import type { Env } from "./config";
import { CliError, describeError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./errors";
import { commandHelp, mainHelp } from "./help";
import { createOutput, type Stream } from "./output";

export const COMMANDS: readonly Command[] = [indexCommand, searchCommand, statusCommand, askCommand, chatCommand, mcpCommand, mcpServersCommand, flowCommand];

export interface CliIo {
  stdout: Stream & Writable;
  stderr: Stream;
  stdin: CommandContext["stdin"];
  env: Env;
  cwd: string;
  /** Subscribes to Ctrl+C (SIGINT). */
  onSignal(handler: () => void): void;
  /** Ends the process at once (a second Ctrl+C). */
  forceExit(): void;
}

/** Runs one `krypton …` invocation and resolves to its exit code. Errors become one line on stderr. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const output = createOutput(io.stdout, io.stderr, io.env);
  const debug = io.env.KRYPTON_DEBUG === "1" || io.env.KRYPTON_DEBUG === "true";
  const [first, ...rest] = argv;

  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    const command = topic ? COMMANDS.find((c) => c.name === topic) : undefined;
    output.out(command ? commandHelp(command, { ...command.options, ...COMMON_OPTIONS }) : mainHelp(COMMANDS, version));
    return EXIT_OK;
  }
  if (first === "--version" || first === "-V" || first === "version") {
    output.line(version);
    return EXIT_OK;
  }

  const command = COMMANDS.find((c) => c.name === first);
  if (!command) {
    const hint = first.startsWith("-") ? "" : nearestCommand(first);
    output.error(`unknown command "${first}"${hint}; run \`krypton --help\` for the list`);
    return EXIT_USAGE;
  }

  const interrupts = createInterrupts(() => io.forceExit());
  io.onSignal(() => interrupts.fire());
  const ctx: CommandContext = { env: io.env, cwd: io.cwd, output, stdin: io.stdin, stdout: io.stdout, interrupts, commandName: command.name };
  const options = { ...command.options, ...COMMON_OPTIONS };
  try {
    const args = parseArgs(rest, options);
    if (args.options.help === true) {
      output.out(commandHelp(command, options));
      return EXIT_OK;
    }
    return await command.run(args, ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      output.error(`${command.name}: ${err.message}; see \`krypton ${command.name} --help\``);
      return err.exitCode;
    }
    output.error(describeError(err));
    if (debug && err instanceof Error && err.stack) output.info(err.stack);
    return err instanceof CliError ? err.exitCode : EXIT_FAILURE;
  }
}

function nearestCommand(name: string): string {
  const match = COMMANDS.find((c) => c.name.startsWith(name.slice(0, 2).toLowerCase()));
  return match ? ` (did you mean "${match.name}"?)` : "";
}
