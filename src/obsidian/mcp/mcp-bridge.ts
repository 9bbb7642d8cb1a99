import type { KryptonSettings } from "../../core/settings";
import type { Logger } from "../../core/ports/logger";
import type { ToolRegistry } from "../../core/tools/tool-registry";
import { mcpTokenProblem } from "../../core/mcp/mcp-token";
// Types only: the module itself (Node's http, the MCP SDK's server side) is loaded when the bridge starts.
import type { McpHttpServerHandle, McpHttpServerOptions } from "../../node/mcp-http-server";
import { errorMessage, type StopReason } from "../../core/util/errors";
import { SerialQueue } from "../../core/util/serial-queue";

export type BridgeState =
  | { kind: "off" }
  | { kind: "starting" }
  | { kind: "running"; port: number; url: string }
  | { kind: "error"; message: string }
  | { kind: "unsupported"; message: string };

export type StartMcpHttpServer = (options: McpHttpServerOptions) => Promise<McpHttpServerHandle>;

export interface McpBridgeDeps {
  registry: () => ToolRegistry;
  settings: () => KryptonSettings;
  /** The vault's folder on disk (desktop); undefined when unknown. */
  vaultRoot: () => string | undefined;
  logger: Logger;
  /** Platform.isDesktopApp: Node's http exists only there. */
  isDesktop: () => boolean;
  /** Loads the Node server module; tests may inject their own. */
  loadServer?: () => Promise<StartMcpHttpServer>;
}

/** Loads src/node/mcp-http-server.ts on demand (esbuild bundles it as a lazily evaluated module). */
async function loadNodeServer(): Promise<StartMcpHttpServer> {
  const mod = await import("../../node/mcp-http-server");
  return mod.startMcpHttpServer;
}

/**
 * The MCP bridge's lifecycle inside Obsidian: start, stop and restart without restarting the app,
 * one operation at a time, with a state the settings tab and the command show in plain words.
 */
export class McpBridge {
  private state: BridgeState = { kind: "off" };
  private handle: McpHttpServerHandle | null = null;
  /** start/stop/restart one at a time. */
  private readonly ops = new SerialQueue();
  private readonly listeners = new Set<(state: BridgeState) => void>();

  constructor(private readonly deps: McpBridgeDeps) {}

  current(): BridgeState {
    return this.state;
  }

  isRunning(): boolean {
    return this.state.kind === "running";
  }

  onState(listener: (state: BridgeState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): Promise<BridgeState> {
    return this.serialize(() => this.doStart());
  }

  /** `reason` is what calls under way are told: the plugin unloading by default, "bridge-off" for the setting. */
  stop(reason?: StopReason): Promise<BridgeState> {
    return this.serialize(() => this.doStop(reason));
  }

  restart(): Promise<BridgeState> {
    return this.serialize(async () => {
      await this.doStop("bridge-restart");
      return this.doStart();
    });
  }

  /** The settings tab's status line. */
  statusLine(): string {
    return describeBridgeState(this.state);
  }

  private serialize(op: () => Promise<BridgeState>): Promise<BridgeState> {
    return this.ops.run(op);
  }

  private async doStart(): Promise<BridgeState> {
    if (this.handle) return this.state;
    if (!this.deps.isDesktop()) {
      return this.set({ kind: "unsupported", message: "The MCP bridge runs on desktop only" });
    }
    const settings = this.deps.settings();
    const tokenProblem = mcpTokenProblem(settings.mcpToken);
    if (tokenProblem) return this.set({ kind: "error", message: tokenProblem });
    this.set({ kind: "starting" });
    try {
      const start = await (this.deps.loadServer ?? loadNodeServer)();
      const vaultRoot = this.deps.vaultRoot();
      this.handle = await start({
        registry: this.deps.registry,
        host: "127.0.0.1",
        port: settings.mcpPort,
        token: settings.mcpToken,
        allowedOrigins: settings.mcpAllowedOrigins,
        ...(vaultRoot ? { vaultRoot } : {}),
        logger: this.deps.logger,
      });
      return this.set({ kind: "running", port: this.handle.port, url: this.handle.url });
    } catch (err) {
      this.handle = null;
      const message = errorMessage(err);
      this.deps.logger.warn(`MCP bridge did not start: ${message}`);
      return this.set({ kind: "error", message });
    }
  }

  private async doStop(reason?: StopReason): Promise<BridgeState> {
    const handle = this.handle;
    this.handle = null;
    if (handle) {
      try {
        await handle.close(reason);
      } catch (err) {
        this.deps.logger.warn("MCP bridge did not close cleanly", err);
      }
    }
    return this.set({ kind: "off" });
  }

  private set(state: BridgeState): BridgeState {
    this.state = state;
    for (const listener of this.listeners) listener(state);
    return state;
  }
}

export function describeBridgeState(state: BridgeState): string {
  switch (state.kind) {
    case "off":
      return "Stopped";
    case "starting":
      return "Starting…";
    case "running":
      return `Running at ${state.url}`;
    case "error":
      return `Not running: ${state.message}`;
    case "unsupported":
      return state.message;
  }
}
