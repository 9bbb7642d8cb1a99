import * as path from "node:path";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { McpServerConfig } from "../core/mcp-client/server-config";
import type { OpenedTransport, StdioTransportFactory } from "../core/mcp-client/transports";
import { loginShellPath, mergePaths } from "./login-shell-path";

/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2_000;

export interface StdioFactoryOptions {
  /** Where relative commands and files resolve (the CLI: the vault folder). */
  cwd?: string;
  /** Replaces the login-shell lookup (tests). */
  loginPath?: () => Promise<string | null>;
}

/**
 * Starts stdio MCP servers for the CLI and the desktop plugin. The child gets the SDK's safe default
 * environment (HOME, LOGNAME, PATH, SHELL, TERM, USER), PATH merged with the login shell's when the server
 * asks for it, then the server's own env. Its stderr is piped and its tail kept for error messages (never
 * printed: a server may log its own secrets there).
 */
export function createStdioTransportFactory(options: StdioFactoryOptions = {}): StdioTransportFactory {
  return async (server: McpServerConfig): Promise<OpenedTransport> => {
    const env = await environmentFor(server, options.loginPath ?? (() => loginShellPath()));
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env, stderr: "pipe", cwd: options.cwd });
    let tail = "";
    transport.stderr?.on("data", (chunk: Buffer | string) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    return { transport, kind: "stdio", stderrTail: () => lastLines(tail, 10) };
  };
}

export async function environmentFor(server: McpServerConfig, loginPath: () => Promise<string | null>): Promise<Record<string, string>> {
  const env = getDefaultEnvironment();
  if (server.useLoginShellPath) {
    const shellPath = await loginPath();
    if (shellPath) env.PATH = mergePaths(shellPath, env.PATH, path.delimiter);
  }
  return { ...env, ...server.env };
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split(/\r?\n/).slice(-count).join("\n");
}
