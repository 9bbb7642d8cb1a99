import type { IndexStatus } from "../../core/indexing/index-status";
import { flag } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_OK } from "../errors";
import { formatCount, type Output } from "../output";
import { openIndex, openVaultSession } from "../vault-session";
import { checkPositionals, withAbortOnInterrupt } from "./command-helpers";

export const indexCommand: Command = {
  name: "index",
  summary: "Build or update the vault's index (<vault>/.krypton)",
  usage: "krypton index <vault> [--rebuild] [--json]",
  details: [
    "Only notes that changed since the last run are read again, and only changed chunks are re-embedded.",
    "Without a reachable embedder the index is built keyword-only; vectors are added on a later run.",
    "",
    "Examples:",
    "  krypton index ~/Notes",
    "  krypton index ~/Notes --no-embeddings --json",
  ].join("\n"),
  options: {
    rebuild: { type: "boolean", description: "Throw the index away and build it from scratch" },
    json: { type: "boolean", description: "Print the index status as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const session = await openVaultSession(args.positionals[0], args, ctx);
    try {
      const started = Date.now();
      const status = await withAbortOnInterrupt(ctx, (signal) =>
        openIndex(session, ctx.output, { signal, rebuild: flag(args, "rebuild"), warnReadOnly: false }),
      );
      if (flag(args, "json")) ctx.output.json(status);
      else if (!status.readOnly) printSummary(ctx.output, status, Date.now() - started);
      if (status.readOnly) {
        // Two writers would corrupt the index: the other one (Obsidian, another CLI) keeps it up to date.
        ctx.output.error("the index was not updated: another Krypton process (Obsidian or a CLI) is writing it; try again when it is done");
        return EXIT_FAILURE;
      }
      return status.state === "error" ? EXIT_FAILURE : EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

function printSummary(output: Output, status: IndexStatus, elapsedMs: number): void {
  const vectors = status.keywordOnly
    ? "keyword-only (no embeddings)"
    : `${formatCount(status.embedded)} embedded with ${status.embedder ?? "?"}`;
  output.line(
    `Indexed ${formatCount(status.notes)} notes: ${formatCount(status.chunks)} chunks, ${vectors} (${(elapsedMs / 1000).toFixed(1)} s).`,
  );
  if (status.failures.length > 0) output.line(`${formatCount(status.failures.length)} notes could not be indexed (see warnings).`);
}
