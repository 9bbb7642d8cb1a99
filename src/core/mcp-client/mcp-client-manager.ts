import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FetchLike } from "../ports/http";
import { silentLogger, type Logger } from "../ports/logger";
import { ToolError, type ToolDefinition } from "../tools/tool";
import type { ToolRegistry } from "../tools/tool-registry";
import { errorMessage, isAbortError } from "../util/errors";
import { SerialQueue } from "../util/serial-queue";
import { McpConnection, McpServerError } from "./mcp-connection";
import { redact } from "../util/redact";
import { serverConfigProblem, serverSecrets, type McpServerConfig } from "./server-config";
import { assignWireNames, qualifiedToolName } from "./tool-names";
import { resultText } from "./tool-result";
import type { StdioTransportFactory } from "./transports";
import { clip, countOf } from "../util/text";

export const MCP_CONNECT_TIMEOUT_MS = 30_000;
export const MCP_CALL_TIMEOUT_MS = 60_000;
/** Each server's instructions go into the agent's system prompt, cut to this length; all of them together to the second. */
export const MCP_INSTRUCTIONS_MAX_CHARS = 1_500;
export const MCP_INSTRUCTIONS_TOTAL_MAX_CHARS = 4_000;

export interface McpClientManagerOptions {
  /** The one tool registry: each connected server's tools are registered there as "server:tool". */
  registry: ToolRegistry;
  /** The host's fetch (Obsidian: the CORS-safe one). */
  fetch: FetchLike;
  /** Starts stdio servers; absent on mobile (such servers are then reported as desktop-only). */
  stdio?: StdioTransportFactory;
  logger?: Logger;
  clientInfo?: { name: string; version: string };
  connectTimeoutMs?: number;
  /** Per tool call; read at each call so a settings change applies at once. */
  callTimeoutMs?: () => number;
}

export type McpServerState = "disabled" | "connecting" | "ready" | "failed" | "unsupported";

export interface McpServerStatus {
  name: string;
  transport: McpServerConfig["transport"];
  state: McpServerState;
  /** How the server is reached now ("stdio", "streamable-http" or "sse" after a fallback). */
  connectedVia?: "stdio" | "streamable-http" | "sse";
  /** Why it failed: the HTTP status or the stdio server's stderr tail. */
  error?: string;
  toolCount: number;
}

/** A remote tool as /tools and the settings tab list it. */
export interface RemoteToolSummary {
  /** "server:tool", the registry name. */
  name: string;
  tool: string;
  wireName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

export interface McpServerTools {
  server: string;
  state: McpServerState;
  error?: string;
  tools: RemoteToolSummary[];
}

export type McpTestResult =
  | { ok: true; transport: "stdio" | "streamable-http" | "sse"; tools: { name: string; description: string }[]; instructions?: string }
  | { ok: false; error: string; unsupported: boolean };

interface Entry {
  config: McpServerConfig;
  key: string;
  state: McpServerState;
  error?: string;
  connection?: McpConnection;
  stop?: () => void;
  aborter: AbortController;
}

/**
 * The MCP client: connects the user's enabled servers, keeps their tools in the one tool registry (beside
 * the built-ins, marked `remote`, never re-exported by Krypton's own MCP server), and reports each server's
 * state. A server that fails never stops the others. Host-neutral: stdio comes in through `stdio`.
 */
export class McpClientManager {
  private entries = new Map<string, Entry>();
  private readonly registered = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private readonly queue = new SerialQueue();
  private closed = false;
  private readonly logger: Logger;

  constructor(private readonly options: McpClientManagerOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * Brings the connections in line with the configured servers: new or changed servers connect, removed or
   * disabled ones close, unchanged live ones stay; a failed one is tried again unless `retryFailed` is
   * false. Resolves when every enabled server is ready or failed. Cheap when nothing changed, so the agent
   * may call `ensure(settings.mcpServers)` before each turn.
   */
  apply(servers: readonly McpServerConfig[], options: { retryFailed?: boolean } = {}): Promise<McpServerStatus[]> {
    return this.queue.run(async () => {
      if (this.closed) return this.status();
      const next = new Map<string, Entry>();
      const toConnect: Entry[] = [];
      for (const config of servers) {
        const key = JSON.stringify(config);
        const current = this.entries.get(config.name);
        if (current && current.key === key && (current.state !== "failed" || options.retryFailed === false)) {
          next.set(config.name, current);
          continue;
        }
        const entry: Entry = { config, key, state: config.enabled ? "connecting" : "disabled", aborter: new AbortController() };
        next.set(config.name, entry);
        if (config.enabled) toConnect.push(entry);
      }
      const gone = [...this.entries.values()].filter((e) => next.get(e.config.name) !== e);
      this.entries = next;
      await Promise.all(gone.map((e) => this.dispose(e)));
      this.syncRegistry();
      await Promise.all(toConnect.map((e) => this.connect(e)));
      return this.status();
    });
  }

  /** Connects what is not connected yet; leaves failed servers alone (for the agent, before a turn). */
  ensure(servers: readonly McpServerConfig[]): Promise<McpServerStatus[]> {
    return this.apply(servers, { retryFailed: false });
  }

  /** Every configured server with its state, in the configured order. */
  status(): McpServerStatus[] {
    return [...this.entries.values()].map((e) => ({
      name: e.config.name,
      transport: e.config.transport,
      state: e.state,
      ...(e.connection && e.state === "ready" ? { connectedVia: e.connection.transportKind } : {}),
      ...(e.error ? { error: e.error } : {}),
      toolCount: e.state === "ready" ? (e.connection?.listTools().length ?? 0) : 0,
    }));
  }

  /** The remote tools grouped by server (for `/tools`, the CLI listing and the settings tab). */
  listTools(): McpServerTools[] {
    return [...this.entries.values()].map((e) => ({
      server: e.config.name,
      state: e.state,
      ...(e.error ? { error: e.error } : {}),
      tools: e.state === "ready" && e.connection ? e.connection.listTools().map((t) => this.summary(e.config.name, t)) : [],
    }));
  }

  /**
   * The servers' instructions for the agent's system prompt, each cut to `perServer` characters and all
   * together to `total`. Empty when no connected server sent any.
   */
  instructions(perServer = MCP_INSTRUCTIONS_MAX_CHARS, total = MCP_INSTRUCTIONS_TOTAL_MAX_CHARS): string {
    const blocks: string[] = [];
    let used = 0;
    for (const e of this.entries.values()) {
      const text = e.state === "ready" ? e.connection?.instructions() : undefined;
      if (!text) continue;
      const block = `Instructions from MCP server "${e.config.name}" (its tools are named ${e.config.name}:<tool>):\n${clip(text, perServer)}`;
      if (used + block.length > total) break;
      blocks.push(block);
      used += block.length;
    }
    return blocks.join("\n\n");
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Connects to one server on its own (the settings tab's "Test"), lists its tools and disconnects. */
  async test(config: McpServerConfig, signal?: AbortSignal): Promise<McpTestResult> {
    const problem = serverConfigProblem(config);
    if (problem) return { ok: false, error: problem, unsupported: false };
    try {
      const connection = await McpConnection.connect(config, this.connectOptions(config, signal));
      try {
        return {
          ok: true,
          transport: connection.transportKind,
          tools: connection.listTools().map((t) => ({ name: t.name, description: t.description ?? "" })),
          ...(connection.instructions() ? { instructions: connection.instructions() } : {}),
        };
      } finally {
        await connection.close();
      }
    } catch (err) {
      return { ok: false, error: redact(errorMessage(err), serverSecrets([config])), unsupported: err instanceof McpServerError && err.kind === "unsupported" };
    }
  }

  /** Closes every connection (stdio servers are stopped) and removes their tools from the registry. */
  close(): Promise<void> {
    this.closed = true;
    return this.queue.run(async () => {
      const all = [...this.entries.values()];
      this.entries = new Map();
      await Promise.all(all.map((e) => this.dispose(e)));
      this.syncRegistry();
    });
  }

  // ------------------------------------------------------------------------------------------ internals

  private async connect(entry: Entry): Promise<void> {
    try {
      const connection = await McpConnection.connect(entry.config, this.connectOptions(entry.config, entry.aborter.signal));
      if (this.entries.get(entry.config.name) !== entry || this.closed) {
        await connection.close();
        return;
      }
      entry.connection = connection;
      entry.state = "ready";
      entry.stop = connection.onChange(() => {
        const failure = connection.failure;
        if (failure && entry.state === "ready") {
          entry.state = "failed";
          entry.error = failure;
          this.logger.warn(`MCP server ${entry.config.name} disconnected: ${failure}`);
        }
        this.syncRegistry();
      });
      this.logger.info(`MCP server ${entry.config.name}: ${countOf(connection.listTools().length, "tool")} (${connection.transportKind})`);
    } catch (err) {
      if (this.entries.get(entry.config.name) !== entry) return;
      entry.state = err instanceof McpServerError && err.kind === "unsupported" ? "unsupported" : "failed";
      entry.error = isAbortError(err) ? "cancelled" : redact(errorMessage(err), serverSecrets([entry.config]));
      this.logger.warn(`MCP server ${entry.error}`);
    }
    this.syncRegistry();
  }

  private connectOptions(config: McpServerConfig, signal?: AbortSignal) {
    return {
      fetch: this.options.fetch,
      stdio: this.options.stdio,
      clientInfo: this.options.clientInfo ?? { name: "krypton", version: "0.1.0" },
      timeoutMs: this.options.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS,
      signal,
      secrets: serverSecrets([config]),
    };
  }

  private async dispose(entry: Entry): Promise<void> {
    entry.aborter.abort();
    entry.stop?.();
    await entry.connection?.close();
  }

  /** Registers exactly the ready servers' tools, with wire names settled over all of them. */
  private syncRegistry(): void {
    const { registry } = this.options;
    for (const name of this.registered) registry.unregister(name);
    this.registered.clear();
    const ready = [...this.entries.values()].filter((e) => e.state === "ready" && e.connection);
    const wires = assignWireNames(ready.flatMap((e) => e.connection!.listTools().map((t) => ({ server: e.config.name, tool: t.name }))));
    for (const entry of ready) {
      for (const tool of entry.connection!.listTools()) {
        const name = qualifiedToolName(entry.config.name, tool.name);
        if (registry.get(name)) continue; // never shadows a tool someone else registered
        registry.register(this.definition(entry, tool, wires.get(name) ?? name));
        this.registered.add(name);
      }
    }
    for (const listener of this.listeners) listener();
  }

  private definition(entry: Entry, tool: Tool, wireName: string): ToolDefinition {
    const server = entry.config.name;
    const name = qualifiedToolName(server, tool.name);
    const annotations = tool.annotations;
    return {
      name,
      title: tool.title ?? annotations?.title ?? tool.name,
      description: `${tool.description?.trim() || tool.name} (MCP server ${server})`,
      inputSchema: {},
      inputJsonSchema: tool.inputSchema,
      outputSchema: {},
      ...(annotations
        ? {
            annotations: {
              readOnlyHint: annotations.readOnlyHint,
              destructiveHint: annotations.destructiveHint,
              idempotentHint: annotations.idempotentHint,
              openWorldHint: annotations.openWorldHint,
            },
          }
        : {}),
      remote: { server, tool: tool.name, wireName },
      run: async (input, context) => {
        const connection = this.entries.get(server)?.connection;
        if (!connection || this.entries.get(server)?.state !== "ready") throw new ToolError(`MCP server ${server} is not connected`, "failed");
        let result;
        try {
          result = await connection.callTool(tool.name, input, { signal: context.signal, timeoutMs: this.options.callTimeoutMs?.() ?? MCP_CALL_TIMEOUT_MS });
        } catch (err) {
          if (err instanceof McpServerError) throw new ToolError(err.message, "failed");
          throw err;
        }
        const text = resultText(result);
        if (result.isError) throw new ToolError(text, "failed");
        const structured = result.structuredContent && typeof result.structuredContent === "object" ? result.structuredContent : {};
        return { structured, text };
      },
    };
  }

  private summary(server: string, tool: Tool): RemoteToolSummary {
    const name = qualifiedToolName(server, tool.name);
    const registered = this.options.registry.get(name);
    return {
      name,
      tool: tool.name,
      wireName: registered?.remote?.wireName ?? name,
      description: tool.description ?? "",
      inputSchema: tool.inputSchema,
      readOnly: tool.annotations?.readOnlyHint === true,
    };
  }
}

