import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FetchLike } from "../ports/http";
import { AbortedError, errorMessage, isAbortError } from "../util/errors";
import { redact } from "../util/redact";
import { SerialQueue } from "../util/serial-queue";
import { serverStartProblem, type McpServerConfig } from "./server-config";
import { httpStatusOf, openHttpTransport, shouldFallBackToSse, type OpenedTransport, type StdioTransportFactory } from "./transports";

export interface ConnectOptions {
  fetch: FetchLike;
  stdio?: StdioTransportFactory;
  clientInfo: { name: string; version: string };
  timeoutMs: number;
  signal?: AbortSignal;
  /** Values to cut out of every error message (headers, env values). */
  secrets: readonly string[];
}

/** A tools/list that never ends (a server repeating its cursor) stops here. */
const MAX_TOOL_PAGES = 100;

/** Why a server could not be used, in words the settings tab and the CLI show as they are. */
export class McpServerError extends Error {
  constructor(
    message: string,
    readonly server: string,
    readonly kind: "unsupported" | "failed",
  ) {
    super(message);
    this.name = "McpServerError";
  }
}

/**
 * One live connection to one of the user's MCP servers: the SDK client, its tool list (all pages, kept
 * current on notifications/tools/list_changed) and its instructions.
 */
export class McpConnection {
  private tools: Tool[] = [];
  private readonly refreshes = new SerialQueue();
  private closed = false;
  private readonly changeListeners = new Set<() => void>();
  private closeReason: string | null = null;

  private constructor(
    readonly config: McpServerConfig,
    private readonly client: Client,
    private readonly opened: OpenedTransport,
    private readonly secrets: readonly string[],
  ) {}

  /** Connects (stdio, or Streamable HTTP falling back to legacy SSE on 404/405) and lists the tools. */
  static async connect(config: McpServerConfig, options: ConnectOptions): Promise<McpConnection> {
    const { client, opened } = await connectClient(config, options);
    const connection = new McpConnection(config, client, opened, options.secrets);
    client.onclose = () => {
      if (!connection.closed) connection.closeReason = withStderr("the server closed the connection", opened);
      connection.closed = true;
      connection.emit();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void connection.refreshTools().catch(() => undefined);
    });
    try {
      await connection.refreshTools(options.signal, options.timeoutMs);
    } catch (err) {
      await connection.close();
      throw new McpServerError(redact(`${config.name}: listing tools failed: ${describeFailure(err, opened)}`, options.secrets), config.name, "failed");
    }
    return connection;
  }

  get name(): string {
    return this.config.name;
  }

  get transportKind(): OpenedTransport["kind"] {
    return this.opened.kind;
  }

  /** Null while connected; otherwise why the connection ended (with the stderr tail of a stdio server). */
  get failure(): string | null {
    return this.closed ? (this.closeReason ?? "closed") : null;
  }

  listTools(): readonly Tool[] {
    return this.tools;
  }

  /** The server's instructions for the model (MCP initialize result), if it sent any. */
  instructions(): string | undefined {
    return this.client.getInstructions()?.trim() || undefined;
  }

  /** Called when the tool list changed or the connection ended. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Reads every page of tools/list (nextCursor); concurrent refreshes run one after the other. */
  refreshTools(signal?: AbortSignal, timeout?: number): Promise<void> {
    return this.refreshes.run(async () => {
      if (this.closed) return;
      const all: Tool[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout });
        all.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined || seen.has(cursor)) break;
        seen.add(cursor);
      }
      const byName = new Map(all.map((t) => [t.name, t]));
      this.tools = [...byName.values()];
      this.emit();
    });
  }

  /**
   * Calls a tool with the arguments as given (the server validates them). Stop aborts the request and the
   * SDK sends notifications/cancelled to the server; a timeout does the same. Resolves with the raw result,
   * isError included; rejects with an abort error on Stop, McpServerError otherwise.
   */
  async callTool(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; timeoutMs: number }): Promise<CallToolResult> {
    if (this.closed) throw new McpServerError(`MCP server ${this.name} is not connected (${this.failure ?? "closed"})`, this.name, "failed");
    try {
      const result = await this.client.callTool({ name, arguments: args }, undefined, { signal: options.signal, timeout: options.timeoutMs });
      return result as CallToolResult;
    } catch (err) {
      // The SDK rejects a cancelled request with an McpError; Krypton has one abort error.
      if (options.signal?.aborted || isAbortError(err)) throw new AbortedError(`${this.name}:${name} was cancelled`);
      if (err instanceof McpError && err.code === Number(ErrorCode.RequestTimeout)) {
        throw new McpServerError(`${this.name}:${name} did not answer within ${Math.round(options.timeoutMs / 1000)} s (cancelled)`, this.name, "failed");
      }
      throw new McpServerError(redact(`${this.name}:${name} failed: ${describeFailure(err, this.opened)}`, this.secrets), this.name, "failed");
    }
  }

  async close(): Promise<void> {
    if (this.closed && this.closeReason !== null) return;
    this.closed = true;
    this.closeReason ??= "closed";
    try {
      await this.client.close();
    } catch {
      // already gone
    }
  }

  private emit(): void {
    for (const listener of this.changeListeners) listener();
  }
}

async function connectClient(config: McpServerConfig, options: ConnectOptions): Promise<{ client: Client; opened: OpenedTransport }> {
  const fail = (message: string, kind: "unsupported" | "failed" = "failed") => new McpServerError(redact(`${config.name}: ${message}`, options.secrets), config.name, kind);
  const attempt = async (opened: OpenedTransport) => {
    const client = new Client(options.clientInfo, { capabilities: {} });
    try {
      await client.connect(opened.transport, { signal: options.signal, timeout: options.timeoutMs });
      return { client, opened };
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  };

  if (config.transport === "stdio") {
    if (!options.stdio) throw fail("stdio servers run on desktop and in the CLI only", "unsupported");
    const problem = serverStartProblem(config);
    if (problem) throw new McpServerError(problem, config.name, "failed");
    let opened: OpenedTransport;
    try {
      opened = await options.stdio(config);
    } catch (err) {
      throw fail(`cannot start "${config.command}": ${errorMessage(err)}`);
    }
    try {
      return await attempt(opened);
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw fail(`could not start: ${describeFailure(err, opened)}`);
    }
  }

  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw fail(`"${config.url}" is not a valid URL`);
  }
  if (config.transport === "sse") {
    const opened = openHttpTransport(config, "sse", options.fetch);
    try {
      return await attempt(opened);
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw fail(`cannot connect to ${url.origin}${url.pathname} (legacy SSE): ${describeFailure(err, opened)}`);
    }
  }
  const streamable = openHttpTransport(config, "streamable-http", options.fetch);
  try {
    return await attempt(streamable);
  } catch (err) {
    if (isAbortError(err)) throw err;
    if (!shouldFallBackToSse(err)) throw fail(`cannot connect to ${url.origin}${url.pathname}: ${describeFailure(err, streamable)}`);
    const sse = openHttpTransport(config, "sse", options.fetch);
    try {
      return await attempt(sse);
    } catch (sseErr) {
      if (isAbortError(sseErr)) throw sseErr;
      throw fail(
        `cannot connect to ${url.origin}${url.pathname}: Streamable HTTP answered HTTP ${httpStatusOf(err)}, legacy SSE: ${describeFailure(sseErr, sse)}`,
      );
    }
  }
}

/** One line saying what went wrong: the HTTP status with a hint, or the error, plus a stdio server's stderr tail. */
function describeFailure(err: unknown, opened: OpenedTransport): string {
  const status = httpStatusOf(err);
  let message = errorMessage(err);
  if (status === 401 || status === 403) message = `HTTP ${status}: the server refused the credentials (check the Authorization header)`;
  else if (status !== undefined && !message.includes(String(status))) message = `HTTP ${status}: ${message}`;
  const code = (err as { code?: unknown }).code;
  if (code === "ENOENT" || /ENOENT/.test(message)) message += ' (command not found: give its full path, or turn on "Use login-shell path")';
  if (err instanceof McpError && err.code === Number(ErrorCode.ConnectionClosed)) message = "the server exited or closed the connection";
  return withStderr(message, opened);
}

function withStderr(message: string, opened: OpenedTransport): string {
  const tail = opened.stderrTail?.().trim();
  return tail ? `${message}; stderr: ${tail}` : message;
}

