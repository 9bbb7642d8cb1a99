import type { IndexStatus } from "../../core/indexing/index-status";
import { flag, parseIntStrict, stringOption } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_OK } from "../errors";
import { countOf, formatCount, type Output } from "../output";
import { openIndex, openVaultSession, type VaultSession } from "../vault-session";
import { checkPositionals, withAbortOnInterrupt } from "./command-helpers";

export const indexCommand: Command = {
  name: "index",
  summary: "Build or update the vault's index (<vault>/.krypton)",
  usage: "krypton index <vault> [--rebuild] [--wait SECONDS] [--json]",
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
    wait: {
      type: "string",
      value: "SECONDS",
      description: "While another Krypton process writes the index, how long to wait for it to do the update (default 120)",
    },
    json: { type: "boolean", description: "Print the index status as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const waitRaw = stringOption(args, "wait");
    const waitSeconds = waitRaw === undefined ? DEFAULT_WAIT_SECONDS : parseIntStrict(waitRaw, "--wait", 0, 86_400);
    const session = await openVaultSession(args.positionals[0], args, ctx);
    try {
      const started = Date.now();
      const rebuild = flag(args, "rebuild");
      let status = await withAbortOnInterrupt(ctx, (signal) => openIndex(session, ctx.output, { signal, rebuild, use: "index", warnReadOnly: false }));
      if (!rebuild && !status.readOnly) status = await withAbortOnInterrupt(ctx, (signal) => checkSavedTexts(session, signal));
      for (const repair of status.repaired ?? []) ctx.output.warn(`the index was damaged: ${repair}`);
      let byHolder: string | null = null;
      if (status.readOnly && !status.writeError && !rebuild && waitSeconds > 0) {
        // Two writers would corrupt the index: the holder (Obsidian, `krypton mcp`, another index run) does the update.
        const holder = status.heldBy ?? "another Krypton process";
        ctx.output.info(`krypton: the index is being written by ${holder}: asked it to update the index; waiting up to ${waitSeconds} s (Ctrl+C to stop)`);
        const handed = await withAbortOnInterrupt(ctx, (signal) => session.core.index.syncViaHolder(signal, waitSeconds * 1000));
        if (handed) {
          status = handed;
          if (handed.readOnly) byHolder = holder;
        }
      }
      if (flag(args, "json")) ctx.output.json(status);
      else if (!status.readOnly || byHolder) printSummary(ctx.output, status, Date.now() - started, byHolder);
      if (status.writeError) {
        ctx.output.error(`the index was not saved: ${status.writeError}`);
        return EXIT_FAILURE;
      }
      if (status.readOnly && !byHolder) {
        const holder = status.heldBy ?? "another Krypton process";
        ctx.output.error(
          rebuild
            ? `the index was not rebuilt: ${holder} is writing it; close it (or stop it) and run --rebuild again`
            : `the index was not updated: ${holder} is writing it and did not update it within ${waitSeconds} s; try again later`,
        );
        return EXIT_FAILURE;
      }
      return status.state === "error" ? EXIT_FAILURE : EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

/**
 * The chunk texts are the one part of the saved index a load does not check: `index` checks them, and the
 * notes of a damaged shard are indexed again (and saved) before the summary.
 */
async function checkSavedTexts(session: VaultSession, signal: AbortSignal): Promise<IndexStatus> {
  await session.core.index.checkSavedTexts(signal);
  await session.core.index.idle();
  return session.core.index.status();
}

/** Long enough for a holder's heartbeat (5 s) plus an ordinary incremental sync with embedding. */
const DEFAULT_WAIT_SECONDS = 120;

function printSummary(output: Output, status: IndexStatus, elapsedMs: number, byHolder: string | null = null): void {
  // The totals in the index, said as such: "with vectors" counts every chunk that has one, not this run's work.
  const vectors = !status.keywordOnly
    ? `${formatCount(status.embedded)} of them with vectors from ${status.embedder ?? "?"}`
    : status.embedded > 0
      ? `keyword-only this run (${formatCount(status.embedded)} with vectors kept from ${status.embedder ?? "an earlier run"})`
      : "keyword-only (no embeddings)";
  output.line(
    `Indexed ${countOf(status.notes, "note")}: ${countOf(status.chunks, "chunk")}, ${vectors} (${(elapsedMs / 1000).toFixed(1)} s)${byHolder ? `, updated by ${byHolder}` : ""}.`,
  );
  if (status.failures.length > 0) output.line(`${countOf(status.failures.length, "note")} could not be indexed (see warnings).`);
  const linked = status.skippedFolders?.length ?? 0;
  if (linked > 0) output.line(`${countOf(linked, "linked folder")} ${linked === 1 ? "was" : "were"} not indexed (see warnings).`);
}
