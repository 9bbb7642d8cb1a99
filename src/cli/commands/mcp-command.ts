import { generateMcpToken, mcpTokenProblem } from "../../core/mcp/mcp-token";
import { DEFAULT_INDEX_FRESHNESS, DEFAULT_INDEX_WAIT_MS, gateOnIndex, IndexFreshness } from "../../core/tools/index-freshness";
import type { ToolRegistry } from "../../core/tools/tool-registry";
import { normalizeOrigin } from "../../node/mcp-http-guards";
import { DEFAULT_SERVER_INFO, McpBridgeStartError, startMcpHttpServer } from "../../node/mcp-http-server";
import { serveMcpStdio } from "../../node/mcp-stdio";
import { flag, listOption, parseIntStrict, stringOption, type ParsedArgs } from "../args";
import type { Command, CommandContext } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { CliError, describeError, EXIT_OK, UsageError } from "../errors";
import { openVaultSession, type VaultSession } from "../vault-session";
import { checkPositionals } from "./command-helpers";

/**
 * `krypton mcp <vault>`: the vault's tools (create_note, search_notes, summarize_notes, read_note) for MCP
 * clients. stdio by default (Claude Desktop starts it as a subprocess: stdout carries only protocol
 * messages, everything else goes to stderr); `--http` serves the same bridge as the Obsidian plugin.
 * It may run while Obsidian has the vault open: it then only reads the index (Obsidian holds the writer
 * lock) and re-scans the vault before a search when the last scan is a few seconds old.
 */
export const mcpCommand: Command = {
  name: "mcp",
  summary: "Serve Krypton's tools to MCP clients (stdio, or HTTP with --http)",
  usage: "krypton mcp <vault> [--http [--port P] [--token T] [--allow-origin O]...]",
  details: [
    "stdio (default): for clients that start the server themselves, e.g. Claude Desktop:",
    '  { "mcpServers": { "krypton": { "command": "krypton", "args": ["mcp", "/path/to/vault"] } } }',
    "",
    "--http: listens on http://127.0.0.1:<port>/mcp (Streamable HTTP), /sse + /messages (legacy SSE),",
    "GET /mcp/tools and POST /mcp/tools/call (plain JSON). Every request needs",
    "`Authorization: Bearer <token>`. The port is --port, MCP_PORT or the plugin's setting (27123); the token",
    "is KRYPTON_MCP_TOKEN, the plugin's token or --token (visible to other users in `ps`: prefer the",
    "environment; at least 16 characters). Without one a token is generated and printed once to stderr.",
    "Browser pages are refused unless their origin is allowed (--allow-origin, or the plugin's list).",
    "",
    "The index is loaded in the background: a search (search_notes, summarize_notes, or one a run_workflow",
    "step makes) waits up to 2.5 s for it, then says the index is not ready yet. While Obsidian has the vault",
    "open this server only reads the index and re-scans the vault before searches, so notes changed in",
    "Obsidian are found.",
  ].join("\n"),
  options: {
    http: { type: "boolean", description: "Serve HTTP on 127.0.0.1 instead of stdio" },
    port: { type: "string", value: "P", description: "HTTP port (default 27123; env MCP_PORT); needs --http" },
    token: { type: "string", value: "T", description: "Bearer token for HTTP (env KRYPTON_MCP_TOKEN); generated when absent; needs --http" },
    "allow-origin": {
      type: "string",
      value: "ORIGIN",
      repeatable: true,
      description: "Browser origin allowed to call the HTTP server, e.g. https://app.example (repeatable); needs --http",
    },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const http = flag(args, "http");
    const extraOrigins = checkHttpOptions(args, ctx, http);
    const session = await openVaultSession(args.positionals[0], args, ctx, { probeEmbedder: false });
    // Serve at once: Claude Desktop gives up on a server that does not answer `initialize` quickly.
    const stopIndexing = new AbortController();
    const indexing = session.core.index.open(stopIndexing.signal).then(
      (status) => {
        if (status.readOnly) {
          ctx.output.info(
            status.writeError
              ? `krypton: ${status.writeError}: the index is kept in memory only, re-scanning before searches`
              : `krypton: ${status.heldBy ?? "another Krypton process"} is updating this index: reading it, re-scanning before searches`,
          );
        }
      },
      (err: unknown) => {
        if (!stopIndexing.signal.aborted) ctx.output.warn(`the index could not be opened: ${describeError(err)}`);
      },
    );
    const clock = session.core.host.clock;
    const freshness = new IndexFreshness((signal) => session.core.index.sync(signal), {
      maxAgeMs: syncAfterMs(ctx),
      clock,
      logger: session.core.host.logger,
      signal: stopIndexing.signal,
    });
    // On the core's registry, which workflows call too: a step's search waits for the index as a client's does.
    // With a re-scan: no vault events reach this process (Obsidian's bridge waits for the load only).
    const ungate = gateOnIndex(session.core.tools, {
      index: session.core.index,
      maxWaitMs: DEFAULT_INDEX_WAIT_MS,
      clock,
      signal: stopIndexing.signal,
      freshness,
    });
    try {
      if (http) await serveHttp(session, session.core.tools, extraOrigins, ctx);
      else await serveStdio(session, session.core.tools, ctx);
      return EXIT_OK;
    } finally {
      ungate();
      // The client is gone: stop indexing now (what is done is saved) instead of finishing a long sync first.
      stopIndexing.abort();
      await indexing;
      await session.close();
    }
  },
};

/**
 * HTTP-only options without --http would be silently ignored (a stdio server has no port or token):
 * refuse them, and refuse an unusable token or origin before anything is opened. Returns the extra origins.
 */
function checkHttpOptions(args: ParsedArgs, ctx: CommandContext, http: boolean): string[] {
  const origins = listOption(args, "allow-origin");
  if (!http) {
    const given = ["port", "token", "allow-origin"].filter((name) => args.options[name] !== undefined).map((name) => `--${name}`);
    if (given.length > 0) throw new UsageError(`${given.join(", ")} ${given.length === 1 ? "applies" : "apply"} only with --http (stdio has no port, token or origins)`);
    return [];
  }
  const flagToken = stringOption(args, "token");
  const envToken = ctx.env.KRYPTON_MCP_TOKEN?.trim() ? ctx.env.KRYPTON_MCP_TOKEN : undefined;
  const token = flagToken ?? envToken;
  if (token !== undefined) {
    const problem = mcpTokenProblem(token);
    if (problem) throw new UsageError(`${flagToken !== undefined ? "--token" : "KRYPTON_MCP_TOKEN"}: ${problem}`);
  }
  for (const origin of origins) {
    if (normalizeOrigin(origin) === null) {
      throw new UsageError(`--allow-origin needs one origin like https://app.example (scheme, host and port; "*" is never allowed), got "${origin}"`);
    }
  }
  return origins;
}

/** KRYPTON_MCP_SYNC_AFTER_MS tunes how stale the index may get before a search re-scans (0: always; tests). */
function syncAfterMs(ctx: CommandContext): number {
  const raw = ctx.env.KRYPTON_MCP_SYNC_AFTER_MS?.trim();
  return raw ? parseIntStrict(raw, "KRYPTON_MCP_SYNC_AFTER_MS", 0, 3_600_000) : DEFAULT_INDEX_FRESHNESS.maxAgeMs;
}

async function serveStdio(session: VaultSession, tools: ToolRegistry, ctx: CommandContext): Promise<void> {
  const handle = await serveMcpStdio(tools, {
    vaultRoot: session.root,
    serverInfo: DEFAULT_SERVER_INFO,
    logger: session.core.host.logger,
    stdin: ctx.stdin,
    stdout: ctx.stdout,
  });
  const release = ctx.interrupts.push(() => void handle.close());
  await handle.closed;
  release();
}

async function serveHttp(session: VaultSession, tools: ToolRegistry, extraOrigins: string[], ctx: CommandContext): Promise<void> {
  const settings = session.config.settings;
  let token = settings.mcpToken;
  const generated = !token;
  if (!token) token = generateMcpToken();
  ctx.output.addSecrets([token]);
  let handle;
  try {
    handle = await startMcpHttpServer({
      registry: tools,
      port: settings.mcpPort,
      token,
      allowedOrigins: [...settings.mcpAllowedOrigins, ...extraOrigins],
      vaultRoot: session.root,
      serverInfo: DEFAULT_SERVER_INFO,
      logger: session.core.host.logger,
    });
  } catch (err) {
    if (err instanceof McpBridgeStartError && err.code === "port-in-use") {
      throw new CliError(`${err.message}: another program (or a running Obsidian bridge) listens there; choose another with --port P or MCP_PORT`);
    }
    if (err instanceof McpBridgeStartError) throw new CliError(err.message);
    throw err;
  }
  // Only now: a token printed before a failed start would be a token for nothing.
  if (generated) ctx.output.revealOnce(`krypton: MCP token (shown once; set KRYPTON_MCP_TOKEN to keep it): ${token}`);
  ctx.output.info(`krypton: MCP bridge on ${handle.url} (Ctrl+C to stop)`);
  await new Promise<void>((resolve) => {
    const release = ctx.interrupts.push(() => {
      release();
      resolve();
    });
  });
  await handle.close();
}
