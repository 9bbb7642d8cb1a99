import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
// Node's timers, not the global ones: inside Obsidian the globals are the window's (no unref()).
import { clearInterval, setInterval } from "node:timers";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The legacy HTTP+SSE transport (protocol 2024-11-05) for older MCP clients: GET /sse opens an event
 * stream whose first event names the POST endpoint ("/messages?sessionId=…"); the client POSTs JSON-RPC
 * messages there and the answers arrive on the stream. Written here rather than the SDK's deprecated
 * SSEServerTransport so the bridge owns body reading (1 MB limit) and never echoes a bad body back.
 */
export class LegacySseTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private open = false;
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly endpoint: string,
    private readonly res: ServerResponse,
    /** Interval of ": keepalive" comment lines (ignored by clients); 0 turns them off. */
    private readonly keepAliveMs = 15_000,
  ) {}

  start(): Promise<void> {
    if (this.open) return Promise.reject(new Error("The SSE stream is already open"));
    this.open = true;
    this.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache, no-transform", Connection: "keep-alive" });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}?sessionId=${this.sessionId}\n\n`);
    this.res.on("close", () => this.closed());
    if (this.keepAliveMs > 0) {
      this.keepAlive = setInterval(() => {
        if (this.open && !this.res.writableEnded) this.res.write(": keepalive\n\n");
      }, this.keepAliveMs);
      // A keep-alive timer alone must not keep the process running.
      this.keepAlive.unref();
    }
    return Promise.resolve();
  }

  /** Hands one posted message to the server; false when it is not a JSON-RPC 2.0 message. */
  receive(body: unknown): boolean {
    const parsed = JSONRPCMessageSchema.safeParse(body);
    if (!parsed.success) return false;
    this.onmessage?.(parsed.data);
    return true;
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.open) return Promise.reject(new Error("The SSE stream is closed"));
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.open) this.res.end();
    this.closed();
    return Promise.resolve();
  }

  get isOpen(): boolean {
    return this.open;
  }

  private closed(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    if (!this.open) return;
    this.open = false;
    this.onclose?.();
  }
}
