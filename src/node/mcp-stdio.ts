import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer, type McpServerInfo } from "../core/mcp/mcp-server";
import { silentLogger, type Logger } from "../core/ports/logger";
import type { VaultLocation } from "../core/tools/tool";
import type { ToolRegistry } from "../core/tools/tool-registry";
import { DEFAULT_SERVER_INFO } from "./mcp-http-server";
import { trackPendingRequests } from "./mcp-pending-requests";
import { nodeVaultLocation } from "./path-symlink-guard";

export interface McpStdioOptions {
  /** The served vault for path checks; `vaultRoot` builds the Node one (with the symlink check). */
  vault?: VaultLocation;
  vaultRoot?: string;
  serverInfo?: McpServerInfo;
  /** Must not write to stdout: stdout carries the protocol. */
  logger?: Logger;
  stdin?: Readable;
  stdout?: Writable;
}

export interface McpStdioHandle {
  /** Resolves when the client closes stdin (or close() is called). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves the registry's tools over stdio, the way Claude Desktop starts local servers
 * (`npx krypton mcp <vault>`). Everything but protocol messages must go to stderr.
 */
export async function serveMcpStdio(registry: ToolRegistry, options: McpStdioOptions = {}): Promise<McpStdioHandle> {
  const stdin = options.stdin ?? process.stdin;
  const logger = options.logger ?? silentLogger;
  const vault = options.vault ?? (options.vaultRoot ? nodeVaultLocation(options.vaultRoot) : undefined);
  const server = createMcpServer(registry, options.serverInfo ?? DEFAULT_SERVER_INFO, { context: () => ({ vault }), logger });
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  transport.onerror = (err) => logger.warn(`MCP stdio: ${err.message.split("\n")[0]}`);
  // `printf '<calls>' | krypton mcp` closes stdin right after the last request: answer what is pending
  // before closing, or the caller gets nothing back.
  const pending = trackPendingRequests(transport);
  const onEnd = () => void pending.settled().then(close);
  const close = async () => {
    stdin.off("end", onEnd);
    await server.close().catch(() => {});
    resolveClosed();
  };
  // The client closing our stdin is the end of the session.
  stdin.once("end", onEnd);
  await server.connect(transport);
  pending.attach();
  logger.info("MCP server ready on stdio");
  return { closed, close };
}
