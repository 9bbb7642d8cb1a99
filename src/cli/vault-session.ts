import { stat, readdir } from "node:fs/promises";
import * as path from "node:path";
import { everyNoteExcludedText, folderInTheWayText, type IndexStatus } from "../core/indexing/index-status";
import { createKrypton, type KryptonCore } from "../core/krypton";
import type { Logger } from "../core/ports/logger";
import type { KryptonSettings } from "../core/settings";
import type { McpServerStatus } from "../core/mcp-client/mcp-client-manager";
import { createStdioTransportFactory } from "../node/mcp-stdio-transport";
import { dataDirOf, dataDirWriteProblem } from "../node/fs-data-dir";
import { createNodeHost } from "../node/node-host";
import type { ParsedArgs } from "./args";
import type { CommandContext } from "./command";
import { loadCliConfig, mcpSecretVariable, type CliConfig } from "./config";
import { probeTcp, withConnectTimeout } from "./connect-timeout-fetch";
import { CliError, UsageError } from "./errors";
import { countOf, formatCount, progressLine, type Output } from "./output";

/** One vault opened by a command: the core from createKrypton on the Node host, with the CLI's settings. */
export interface VaultSession {
  root: string;
  config: CliConfig;
  core: KryptonCore;
  /** Set when the embedding server did not accept a connection: this run is keyword-only. */
  readonly embedderUnreachable: string | null;
  /**
   * SessionOptions.probeEmbedder, for a command that knows only once the core is wired whether it will
   * search (a flow: WorkflowService.needsIndex; ask and chat: IndexPreparation). Before the index opens; once per session (later calls
   * keep what the first found).
   */
  probeEmbedder(): Promise<void>;
  close(): Promise<void>;
}

export interface SessionOptions {
  /**
   * Check first that the embedding server accepts connections, and run keyword-only when it does not.
   * A one-shot command must not spend seconds in retries against a server that is not running; the
   * index keeps its vectors and fills in the missing ones on a later run. Off for the long-running MCP
   * server, whose index retries in the background.
   */
  probeEmbedder?: boolean;
}

/** Checks the vault path, reads the settings and wires the core. Nothing is indexed yet. */
export async function openVaultSession(
  vaultArg: string | undefined,
  args: ParsedArgs,
  ctx: CommandContext,
  options: SessionOptions = { probeEmbedder: true },
): Promise<VaultSession> {
  const root = await checkVaultPath(vaultArg, ctx.cwd);
  const config = await loadCliConfig(root, ctx.env, args);
  ctx.output.addSecrets(config.secrets);
  for (const warning of config.warnings) ctx.output.warn(warning);

  const host = createNodeHost(root, {
    configDir: config.configDir,
    processLabel: ctx.commandName ? `krypton ${ctx.commandName}` : "krypton",
    logger: cliLogger(ctx.output, ctx.env, args),
    fetch: withConnectTimeout((input, init) => fetch(input, init), { timeoutMs: config.connectTimeoutMs }),
  });
  // Stdio MCP servers start in the vault folder, like a relative path in their configuration expects.
  const core = createKrypton(host, config.settings, { mcpStdio: createStdioTransportFactory({ cwd: root }) });
  let closed = false;
  let embedderUnreachable: string | null = null;
  let probed = false;
  const session: VaultSession = {
    root,
    config,
    core,
    get embedderUnreachable() {
      return embedderUnreachable;
    },
    async probeEmbedder() {
      if (probed) return;
      probed = true;
      embedderUnreachable = await embedderConnectProblem(config.settings, config.connectTimeoutMs);
      // Only this run goes without embeddings: the core keeps the user's settings and reports the reason.
      if (embedderUnreachable) core.runWithoutEmbedder(embedderUnreachable);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await core.close();
    },
  };
  if (options.probeEmbedder) await session.probeEmbedder();
  return session;
}

/**
 * Connects the enabled MCP servers from the settings (once; later calls return at once) so their tools join
 * the registry beside the built-ins. Each server that fails is one warning on stderr (its HTTP status or
 * stderr tail, never a secret) and the others keep working. Agent mode calls this before its first turn;
 * a later call warns again about a server still failing, so `krypton chat` passes its WarnOnce's output.
 */
export async function connectMcpServers(session: VaultSession, output: Output): Promise<McpServerStatus[]> {
  const servers = session.config.settings.mcpServers;
  if (!servers.some((s) => s.enabled)) return [];
  for (const server of servers.filter((s) => s.enabled)) {
    for (const [key, value] of [...Object.entries(server.headers), ...Object.entries(server.env)]) {
      if (value === "") output.warn(`MCP server ${server.name}: ${key} is empty (Obsidian keeps it in its secret storage); set ${mcpSecretVariable(server.name, key)}`);
    }
  }
  const statuses = await session.core.mcp.ensure(servers);
  for (const status of statuses) {
    if (status.state === "failed" || status.state === "unsupported") output.warn(`MCP server ${status.error ?? status.name}`);
  }
  return statuses;
}

/** An absolute, existing, readable folder, or a one-line CliError saying what is wrong with it. */
export async function checkVaultPath(vaultArg: string | undefined, cwd: string): Promise<string> {
  if (vaultArg === undefined || vaultArg.trim() === "") throw new UsageError("missing <vault>: the path of your vault folder");
  const root = path.resolve(cwd, vaultArg);
  let info;
  try {
    info = await stat(root);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new CliError(`vault not found: ${vaultArg} (no such folder)`);
    if (code === "EACCES" || code === "EPERM") throw new CliError(`cannot open vault ${vaultArg}: permission denied`);
    throw new CliError(`cannot open vault ${vaultArg}: ${code ?? String(err)}`);
  }
  if (!info.isDirectory()) throw new CliError(`not a vault: ${vaultArg} is a file, not a folder`);
  try {
    await readdir(root);
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new CliError(`cannot read vault ${vaultArg}: ${code === "EACCES" || code === "EPERM" ? "permission denied" : (code ?? String(err))}`);
  }
  return root;
}

/**
 * What a command does with the index, which decides what a missing embedder means for it: "search" (search,
 * ask and chat that search, flashcards --topic: they search by keywords, and an embedder that is down is
 * said by their results, in the words of every host: core/search/keyword-only.ts), "index" (notes are
 * indexed by keywords and get their vectors later), "none" (it does not search: status, ask and chat
 * without retrieval; no warning).
 */
export type IndexUse = "search" | "index" | "none";

export interface OpenIndexOptions {
  signal?: AbortSignal;
  /** Default "search". */
  use?: IndexUse;
  /** Throw the persisted index away and build from scratch. */
  rebuild?: boolean;
  /** Warn when another process holds the index's writer lock (the caller may explain it better itself). */
  warnReadOnly?: boolean;
  /**
   * Never take the writer lock (search, status): the saved index is loaded, notes changed since are applied
   * in memory only, nothing is embedded or saved. A crash or `| head` can then never leave a lock behind.
   */
  readOnly?: boolean;
}

/**
 * Loads the persisted index and brings it up to date (only what changed is re-chunked and re-embedded),
 * drawing a progress bar on a TTY. Warnings (keyword-only, unreadable notes) go to stderr.
 */
export async function openIndex(session: VaultSession, output: Output, options: OpenIndexOptions = {}): Promise<IndexStatus> {
  const index = session.core.index;
  const stop = index.onStatus((status) => {
    if (status.state === "indexing" || status.state === "loading") output.progress(progressLine(status));
  });
  let status: IndexStatus;
  try {
    if (options.rebuild) await index.rebuild(options.signal);
    else await index.open(options.signal, { readOnly: options.readOnly === true });
    await index.idle();
    status = index.status();
  } finally {
    stop();
    output.clearProgress();
  }
  reportIndexProblems(session, status, output, { use: options.use ?? "search", warnReadOnly: options.warnReadOnly ?? true });
  return status;
}

/** The index's problems and degraded modes (keyword-only, read-only, notes skipped or indexed in part) as warnings on stderr. */
export function reportIndexProblems(session: VaultSession, status: IndexStatus, output: Output, options: { use: IndexUse; warnReadOnly: boolean }): void {
  const { use } = options;
  if (status.lockNotice) output.warn(status.lockNotice);
  for (const folder of status.foldersInTheWay ?? []) output.warn(folderInTheWayText(folder));
  if (status.everyNoteExcludedBy) output.warn(everyNoteExcludedText(status.everyNoteExcludedBy));
  if (status.rebuiltReason) output.warn(`the index was rebuilt: ${status.rebuiltReason}`);
  const embeddingsOn = session.config.settings.embeddingProvider !== "none";
  // A process that does not write the index does not embed either: its missing vectors are no embedder's fault.
  const notEmbedding = status.readOnly === true && !status.embedderError;
  if (use === "none") {
    // Nothing is searched: a missing embedder changes nothing for this command.
  } else if (notEmbedding && !options.warnReadOnly) {
    // The caller explains the read-only state itself (index waits for the holder): no keyword-only guesswork.
  } else if (use !== "index" && embeddingsOn && notEmbedding && !status.writeError && status.chunks > status.embedded) {
    const missing = status.chunks - status.embedded;
    // `krypton index` would only fail on a data folder it cannot write: say that instead of sending the user there.
    const cannotSave = status.embedded === 0 ? dataDirWriteProblem(dataDirOf(session.root)) : null;
    output.warn(
      cannotSave
        ? keywordOnlyWarning(`${cannotSave}, so no index with embeddings can be saved`, use)
        : status.embedded === 0
        ? keywordOnlyWarning(
            status.rebuiltReason
              ? `the saved index could not be used (run \`krypton index ${session.root}\` to repair it)`
              : `the saved index has no embeddings yet (run \`krypton index ${session.root}\`)`,
            use,
          )
        : `${formatCount(missing)} of ${countOf(status.chunks, "chunk")} changed since the last \`krypton index\` and ${missing === 1 ? "is" : "are"} searched by keywords only`,
    );
  } else if (use === "search" && status.embedderError) {
    // Said by the results of the searches (keywordOnlyReason), as on every host: not twice.
  } else if (status.keywordOnly && embeddingsOn && !notEmbedding) {
    output.warn(keywordOnlyWarning(status.embedderError ?? "no embedder is reachable", use));
  }
  if (status.writeError && options.warnReadOnly) {
    // What cannot be saved is not embedded either: without saved vectors, searches go by keywords (said
    // here unless the embedder's own failure says it with the results).
    const byKeywords = use !== "none" && embeddingsOn && !status.embedderError && status.embedded === 0 && status.chunks > 0;
    output.warn(`${status.writeError}: the index is kept in memory only and not saved${byKeywords ? "; searching by keywords only" : ""}`);
  } else if (status.readOnly && !status.readOnlyByChoice && options.warnReadOnly) {
    output.warn(`the index is being updated by ${status.heldBy ?? "another Krypton process"}: using the saved index as it is`);
  }
  for (const p of (status.partial ?? []).slice(0, 5)) output.warn(`${p.path}: ${p.error}`);
  if ((status.partial?.length ?? 0) > 5) output.warn(`... and ${countOf((status.partial?.length ?? 0) - 5, "more note")} indexed in part`);
  const failures = status.failures;
  const shown = failures.slice(0, 5);
  for (const f of shown) output.warn(`skipped ${f.path}: ${f.error}`);
  if (failures.length > shown.length) output.warn(`... and ${countOf(failures.length - shown.length, "more note")} skipped`);
  // Every one: a user has few such links, and each hides a whole folder of notes.
  for (const f of status.skippedFolders ?? []) output.warn(`skipped ${f.path}/: ${f.error}`);
}

/**
 * Why there are no vectors, then what that means for the command: a search goes by keywords; an index run
 * indexes by keywords, keeps the vectors it has, and a later run adds the missing ones (the embedder is
 * asked only for chunks without a vector).
 */
export function keywordOnlyWarning(why: string, use: Exclude<IndexUse, "none">): string {
  return use === "index"
    ? `${why}; notes are indexed by keywords only (saved vectors are kept), and a later \`krypton index\` adds the missing vectors once the model is reachable`
    : `${why}; searching by keywords only`;
}

/** "Ollama is not reachable at URL (connection refused)", or null when the embedding server accepts connections. */
async function embedderConnectProblem(settings: KryptonSettings, timeoutMs: number): Promise<string | null> {
  let name: string;
  let base: string;
  if (settings.embeddingProvider === "ollama" && settings.embeddingModel.trim()) {
    name = "Ollama";
    base = settings.ollamaUrl;
  } else if (settings.embeddingProvider === "gemini" && settings.geminiApiKey.trim()) {
    name = "Gemini";
    base = settings.geminiBaseUrl;
  } else {
    return null;
  }
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return `the ${name} URL is not valid (${base})`;
  }
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  try {
    await probeTcp(url.hostname.replace(/^\[|\]$/g, ""), port, timeoutMs);
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why =
      code === "ECONNREFUSED"
        ? "connection refused: is it running?"
        : code === "ETIMEDOUT"
          ? `no answer within ${timeoutMs} ms`
          : code === "ENOTFOUND" || code === "EAI_AGAIN"
            ? "unknown host"
            : (code ?? "cannot connect");
    return `${name} is not reachable at ${base} (${why})`;
  }
}

/** Core log lines on stderr: errors by default, more with --verbose, everything with KRYPTON_DEBUG=1. */
function cliLogger(output: Output, env: CommandContext["env"], args: ParsedArgs): Logger {
  const debug = env.KRYPTON_DEBUG === "1" || env.KRYPTON_DEBUG === "true";
  const level = debug ? 0 : args.options.verbose === true ? 1 : 3;
  const write = (at: number, name: string, message: string, data?: unknown) => {
    if (at < level) return;
    const detail = data === undefined ? "" : ` ${data instanceof Error ? data.message : safeJson(data)}`;
    output.info(`krypton ${name}: ${message}${detail}`);
  };
  return {
    debug: (m, d) => write(0, "debug", m, d),
    info: (m, d) => write(1, "info", m, d),
    warn: (m, d) => write(2, "warn", m, d),
    error: (m, d) => write(3, "error", m, d),
  };
}

function safeJson(data: unknown): string {
  try {
    return JSON.stringify(data);
  } catch {
    return String(data);
  }
}
