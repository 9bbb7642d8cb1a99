import { version } from "../../../package.json";
import { generateMcpToken } from "../../core/mcp/mcp-token";
import { McpBridgeStartError, startMcpHttpServer } from "../../node/mcp-http-server";
import { serveMcpStdio } from "../../node/mcp-stdio";
import { flag } from "../args";
import type { Command, CommandContext } from "../command";
import { CONFIG_OPTIONS } from "../config";
import { CliError, describeError, EXIT_OK } from "../errors";
import { openVaultSession, type VaultSession } from "../vault-session";
import { checkPositionals } from "./command-helpers";

/**
 * `krypton mcp <vault>`: the vault's tools (create_note, search_notes, summarize_notes, read_note) for MCP
 * clients. stdio by default (Claude Desktop starts it as a subprocess: stdout carries only protocol
 * messages, everything else goes to stderr); `--http` serves the same bridge as the Obsidian plugin.
 */
export const mcpCommand: Command = {
  name: "mcp",
  summary: "Serve Krypton's tools to MCP clients (stdio, or HTTP with --http)",
  usage: "krypton mcp <vault> [--http] [--port P] [--token T]",
  details: [
    "stdio (default): for clients that start the server themselves, e.g. Claude Desktop:",
    '  { "mcpServers": { "krypton": { "command": "npx", "args": ["krypton", "mcp", "/path/to/vault"] } } }',
    "",
    "--http: listens on http://127.0.0.1:<port>/mcp (Streamable HTTP), /sse + /messages (legacy SSE),",
    "GET /mcp/tools and POST /mcp/tools/call (plain JSON). Every request needs",
    "`Authorization: Bearer <token>`. The port is --port, MCP_PORT or the plugin's setting (27123); the token",
    "is KRYPTON_MCP_TOKEN, the plugin's token or --token (visible to other users in `ps`: prefer the",
    "environment). Without one a token is generated and printed once to stderr.",
    "",
    "The index is loaded in the background; search_notes says so until it is ready.",
  ].join("\n"),
  options: {
    http: { type: "boolean", description: "Serve HTTP on 127.0.0.1 instead of stdio" },
    port: { type: "string", value: "P", description: "HTTP port (default 27123; env MCP_PORT)" },
    token: { type: "string", value: "T", description: "Bearer token for HTTP (env KRYPTON_MCP_TOKEN); generated when absent" },
    ...CONFIG_OPTIONS,
  },
  async run(args, ctx) {
    checkPositionals(args.positionals, 1);
    const session = await openVaultSession(args.positionals[0], args, ctx, { probeEmbedder: false });
    // Serve at once: Claude Desktop gives up on a server that does not answer `initialize` quickly.
    const stopIndexing = new AbortController();
    const indexing = session.core.index.open(stopIndexing.signal).then(
      () => undefined,
      (err: unknown) => {
        if (!stopIndexing.signal.aborted) ctx.output.warn(`the index could not be opened: ${describeError(err)}`);
      },
    );
    try {
      if (flag(args, "http")) await serveHttp(session, ctx);
      else await serveStdio(session, ctx);
      return EXIT_OK;
    } finally {
      // The client is gone: stop indexing now (what is done is saved) instead of finishing a long sync first.
      stopIndexing.abort();
      await indexing;
      await session.close();
    }
  },
};

async function serveStdio(session: VaultSession, ctx: CommandContext): Promise<void> {
  const handle = await serveMcpStdio(session.core.tools, {
    vaultRoot: session.root,
    serverInfo: { name: "krypton", version },
    logger: session.core.host.logger,
    stdin: ctx.stdin,
    stdout: ctx.stdout,
  });
  const release = ctx.interrupts.push(() => void handle.close());
  await handle.closed;
  release();
}

async function serveHttp(session: VaultSession, ctx: CommandContext): Promise<void> {
  const settings = session.config.settings;
  let token = settings.mcpToken;
  if (!token) {
    token = generateMcpToken();
    ctx.output.revealOnce(`krypton: MCP token (shown once; set KRYPTON_MCP_TOKEN to keep it): ${token}`);
  }
  ctx.output.addSecrets([token]);
  let handle;
  try {
    handle = await startMcpHttpServer({
      registry: session.core.tools,
      port: settings.mcpPort,
      token,
      allowedOrigins: settings.mcpAllowedOrigins,
      vaultRoot: session.root,
      serverInfo: { name: "krypton", version },
      logger: session.core.host.logger,
    });
  } catch (err) {
    if (err instanceof McpBridgeStartError) throw new CliError(err.message);
    throw err;
  }
  ctx.output.info(`krypton: MCP bridge on ${handle.url} (Ctrl+C to stop)`);
  await new Promise<void>((resolve) => {
    const release = ctx.interrupts.push(() => {
      release();
      resolve();
    });
  });
  await handle.close();
}
