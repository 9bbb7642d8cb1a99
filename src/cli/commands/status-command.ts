import type { IndexStatus } from "../../core/indexing/index-status";
import type { KryptonSettings } from "../../core/settings";
import { flag } from "../args";
import type { Command } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { EXIT_FAILURE, EXIT_OK } from "../errors";
import { countOf, formatCount, type Output } from "../output";
import { openIndex, openVaultSession, type VaultSession } from "../vault-session";
import { checkPositionals, withAbortOnInterrupt } from "./command-helpers";

export const statusCommand: Command = {
  name: "status",
  summary: "Show the index and the settings in use",
  usage: "krypton status <vault> [--json]",
  details: [
    "Loads the saved index and applies what changed since in memory (it never writes the index or takes",
    "its lock), then reports notes, chunks, how many have vectors, the embedder, and notes that could not",
    "be indexed.",
  ].join("\n"),
  options: {
    json: { type: "boolean", description: "Print {vault, settings, index} as JSON" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const session = await openVaultSession(args.positionals[0], args, ctx);
    try {
      const status = await withAbortOnInterrupt(ctx, (signal) => openIndex(session, ctx.output, { signal, use: "none", readOnly: true }));
      if (flag(args, "json")) ctx.output.json({ vault: session.root, settings: publicSettings(session), index: status });
      else printStatus(ctx.output, session, status);
      return status.state === "error" ? EXIT_FAILURE : EXIT_OK;
    } finally {
      await session.close();
    }
  },
};

/** The settings that explain the status; keys and the token only as "set"/"not set". */
function publicSettings(session: VaultSession) {
  const s: KryptonSettings = session.config.settings;
  return {
    dataJson: session.config.dataJsonPath,
    embedderUnreachable: session.embedderUnreachable,
    ollamaUrl: s.ollamaUrl,
    chatProvider: s.chatProvider,
    chatModel: s.chatModel,
    embeddingProvider: s.embeddingProvider,
    embeddingModel: s.embeddingModel,
    defaultMode: s.defaultMode,
    geminiApiKey: s.geminiApiKey ? "set" : "not set",
    tavilyApiKey: s.tavilyApiKey ? "set" : "not set",
    excludePatterns: s.excludePatterns,
  };
}

function printStatus(output: Output, session: VaultSession, status: IndexStatus): void {
  const s = publicSettings(session);
  const embeddings = session.embedderUnreachable
    ? `${s.embeddingProvider}:${s.embeddingModel} — ${session.embedderUnreachable}`
    : s.embeddingProvider === "none"
      ? "off (keyword-only)"
      : `${s.embeddingProvider}:${s.embeddingModel}${status.keywordOnly ? ` — unavailable${status.embedderError ? `: ${status.embedderError}` : ""}` : ""}`;
  const rows: [string, string][] = [
    ["Vault", session.root],
    ["Settings", s.dataJson ?? "defaults (no plugin data.json)"],
    ["Index", `${status.state}${status.keywordOnly ? ", keyword-only" : ""}`],
    ["Notes", formatCount(status.notes)],
    ["Chunks", `${formatCount(status.chunks)} (${formatCount(status.embedded)} with vectors)`],
    ["Embeddings", embeddings],
    ["Vectors from", status.embedder ?? "none"],
    ["Chat", `${s.chatProvider}:${s.chatModel}`],
    ["Ollama", s.ollamaUrl],
    ["Gemini key", s.geminiApiKey],
    ["Tavily key", s.tavilyApiKey],
  ];
  const skipped = [status.failures.length > 0 ? countOf(status.failures.length, "note") : "", status.skippedFolders ? countOf(status.skippedFolders.length, "linked folder") : ""];
  if (skipped.some(Boolean)) rows.push(["Skipped", `${skipped.filter(Boolean).join(", ")} (see warnings)`]);
  if (status.rebuiltReason) rows.push(["Rebuilt", status.rebuiltReason]);
  if (status.heldBy) rows.push(["Written by", status.heldBy]);
  if ((status.partial?.length ?? 0) > 0) rows.push(["In part", `${countOf(status.partial?.length ?? 0, "note")} over a per-note limit (see warnings)`]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  for (const [k, v] of rows) output.line(`${`${k}:`.padEnd(width)} ${v}`);
}
