import * as legacySse from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { FetchLike } from "../ports/http";
import type { McpServerConfig } from "./server-config";

/** A transport ready for Client.connect, with what the host can tell about a failure. */
export interface OpenedTransport {
  transport: Transport;
  kind: "stdio" | "streamable-http" | "sse";
  /** The last lines the server wrote to stderr (stdio), for the error message when it fails to start. */
  stderrTail?(): string;
}

/**
 * Starts a stdio server (a local process). Node only: the host injects it (src/node/mcp-stdio-transport.ts
 * for the CLI and the desktop plugin); absent on mobile, where stdio servers are reported as desktop-only.
 */
export type StdioTransportFactory = (server: McpServerConfig) => Promise<OpenedTransport>;

/**
 * The SDK marks its SSE client deprecated (the 2024-11-05 transport), yet many servers still speak only
 * that, and issue 9 asks for the fallback; it is reached through this typed alias so that the one place
 * that needs it says so.
 */
const LegacySseClient = (legacySse as unknown as { SSEClientTransport: new (url: URL, options: { requestInit?: RequestInit; fetch?: FetchLike }) => Transport })
  .SSEClientTransport;

/**
 * The HTTP transports run on every platform (the SDK's modules import no Node builtin) and send through
 * the host's fetch (inside Obsidian the CORS-safe one). `headers` carry the bearer token; they are never logged.
 */
export function openHttpTransport(server: McpServerConfig, kind: "streamable-http" | "sse", fetch: FetchLike): OpenedTransport {
  const url = new URL(server.url);
  const requestInit: RequestInit = { headers: { ...server.headers } };
  if (kind === "sse") {
    // The SDK sends requestInit's headers with the stream's GET as well as with each POST.
    return { transport: new LegacySseClient(url, { requestInit, fetch }), kind };
  }
  return { transport: new StreamableHTTPClientTransport(url, { requestInit, fetch }), kind };
}

/** The HTTP status in an SDK transport error, when there is one. */
export function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof StreamableHTTPError || err instanceof legacySse.SseError) return err.code;
  const match = /HTTP (\d{3})|\((\d{3})\)|status (\d{3})/i.exec(err instanceof Error ? err.message : "");
  const code = Number(match?.[1] ?? match?.[2] ?? match?.[3]);
  return Number.isFinite(code) && code > 0 ? code : undefined;
}

/** A Streamable HTTP endpoint that answers 404/405 to the POST is an older server: try legacy SSE. */
export function shouldFallBackToSse(err: unknown): boolean {
  const status = httpStatusOf(err);
  return status === 404 || status === 405;
}
