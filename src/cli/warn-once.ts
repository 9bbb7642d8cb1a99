import type { Output } from "./output";

/**
 * The warnings of one command run that are said once: `krypton chat` prepares the index again at each
 * /mode and /agent switch and connects the MCP servers at each /agent on, and every answer may carry the
 * keyword-only reason, but a user should hear a warning once per run. A message already said is not said
 * again; a different message is (a changed situation has other words).
 */
export class WarnOnce {
  private readonly said = new Set<string>();
  /** The run's output with warn() going through here: for code that warns through an Output (openIndex, connectMcpServers). */
  readonly output: Output;

  constructor(output: Output) {
    this.output = Object.create(output) as Output;
    this.output.warn = (message) => {
      if (this.said.has(message)) return;
      this.said.add(message);
      output.warn(message);
    };
  }

  /** Says `message` on stderr unless this run said it already; nothing when there is none. */
  warn(message: string | null | undefined): void {
    if (message) this.output.warn(message);
  }
}
