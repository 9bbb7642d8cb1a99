import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { version as pluginVersion } from "../../manifest.json";
import { assertServed, createMcpServer, describeTools, type McpServerInfo } from "../core/mcp/mcp-server";
import { mcpTokenProblem } from "../core/mcp/mcp-token";
import { redactingLogger, silentLogger, type Logger } from "../core/ports/logger";
import type { VaultLocation } from "../core/tools/tool";
import type { ToolRegistry } from "../core/tools/tool-registry";
import { toToolError } from "../core/tools/tool-registry";
import { LegacySseTransport } from "./mcp-legacy-sse";
import { trackPendingRequests, type PendingRequests } from "./mcp-pending-requests";
import { bearerTokenChecker, loopbackHostChecker, originChecker, RateLimiter, readBody, type RateLimit } from "./mcp-http-guards";
import { nodeVaultLocation } from "./path-symlink-guard";
import { errorMessage, ShuttingDownError, type StopReason } from "../core/util/errors";

/**
 * The MCP bridge over HTTP on 127.0.0.1 (desktop plugin and `krypton mcp --http`):
 *   POST /mcp              Streamable HTTP, stateless: each POST gets a fresh server and transport, so
 *                          there is no session state to leak, expire or hijack, and tools need none.
 *                          GET/DELETE /mcp answer 405, which clients read as "no standalone stream".
 *   GET /sse, POST /messages   the legacy HTTP+SSE transport for older clients (sessions, capped).
 *   GET /mcp/tools, POST /mcp/tools/call {tool, arguments}   plain JSON for scripts.
 * Every request passes, in order: rate limit (429), Host (403), Origin (403), bearer token (401), and
 * for POSTs a JSON content type (415) and a body limit (413). Nothing here logs headers, so the token
 * never reaches a log.
 */

export interface McpHttpLimits {
  /** Largest request body; bigger ones get 413 without being buffered. */
  maxBodyBytes: number;
  /** Time for a client to send the request headers. */
  headersTimeoutMs: number;
  /** Time for a client to send the whole request (headers and body). */
  requestTimeoutMs: number;
  rateLimit: RateLimit;
  /** Open legacy SSE connections at once. */
  maxSseSessions: number;
  /** A comment line on idle legacy SSE streams this often, so proxies and clients do not drop them. */
  sseKeepAliveMs: number;
  /** On close, how long the answers of cancelled calls may take to go out before the connections are cut. */
  closeGraceMs: number;
}

export const DEFAULT_MCP_HTTP_LIMITS: McpHttpLimits = {
  maxBodyBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  rateLimit: { burst: 60, perSecond: 5 },
  maxSseSessions: 16,
  sseKeepAliveMs: 15_000,
  closeGraceMs: 2_000,
};

export interface McpHttpServerOptions {
  /** The core's tool registry, or a function returning the current one. */
  registry: ToolRegistry | (() => ToolRegistry);
  /** The bridge only ever listens on loopback; any other value is refused. */
  host?: "127.0.0.1";
  /** 0 picks a free port (tests). */
  port: number;
  /** Bearer token clients must send; required (at least 16 characters). */
  token: string;
  /** Browser origins allowed to call the bridge ("https://app.example"); none by default. */
  allowedOrigins?: readonly string[];
  /** The served vault for path checks; `vaultRoot` builds the Node one (with the symlink check). */
  vault?: VaultLocation;
  vaultRoot?: string;
  logger?: Logger;
  serverInfo?: McpServerInfo;
  limits?: Partial<McpHttpLimits>;
}

export interface McpHttpServerHandle {
  port: number;
  /** The Streamable HTTP endpoint, "http://127.0.0.1:<port>/mcp". */
  url: string;
  /** Stops serving; calls under way are answered "… was cancelled: <why>" (STOP_REASONS; default: shutting down). */
  close(reason?: StopReason): Promise<void>;
}

/** Why the bridge did not start, in words the settings tab can show ("port 27123 is in use"). */
export class McpBridgeStartError extends Error {
  constructor(
    message: string,
    readonly code: "port-in-use" | "permission-denied" | "invalid-options" | "failed",
  ) {
    super(message);
    this.name = "McpBridgeStartError";
  }
}

/** What clients see in `initialize` (serverInfo): the plugin's release from manifest.json, the same in every host. */
export const DEFAULT_SERVER_INFO: McpServerInfo = { name: "krypton", version: pluginVersion };

type ErrnoError = Error & { code?: string };
type Refusal = { status: number; message: string; headers?: Record<string, string> };

export async function startMcpHttpServer(options: McpHttpServerOptions): Promise<McpHttpServerHandle> {
  const limits: McpHttpLimits = { ...DEFAULT_MCP_HTTP_LIMITS, ...options.limits };
  if (options.host !== undefined && options.host !== "127.0.0.1") {
    throw new McpBridgeStartError("The MCP bridge only listens on 127.0.0.1", "invalid-options");
  }
  const tokenProblem = mcpTokenProblem(options.token);
  if (tokenProblem) throw new McpBridgeStartError(tokenProblem, "invalid-options");
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    throw new McpBridgeStartError(`The MCP port must be a whole number from 1 to 65535, got ${String(options.port)}`, "invalid-options");
  }

  // Nothing logged here carries headers, but a client could still put the token in a URL path.
  const logger = redactingLogger(options.logger ?? silentLogger, () => [options.token]);
  const registry = typeof options.registry === "function" ? options.registry : () => options.registry as ToolRegistry;
  const vault = options.vault ?? (options.vaultRoot ? nodeVaultLocation(options.vaultRoot) : undefined);
  const info = options.serverInfo ?? DEFAULT_SERVER_INFO;
  // Fires on close: every call under way ends, and its client gets that answer ("… was cancelled: Krypton is
  // shutting down", or why else it closed, as from every host) rather than a cut connection.
  const stopping = new AbortController();
  const newMcpServer = () => createMcpServer(registry(), info, { context: () => ({ vault }), logger, signal: stopping.signal });
  /** Requests whose answer is their own response (Streamable HTTP, the JSON endpoints), until it is sent. */
  const answering = new Set<Promise<void>>();

  let boundPort = options.port;
  const authorized = bearerTokenChecker(options.token);
  const hostAllowed = loopbackHostChecker(() => boundPort);
  const origins = originChecker(options.allowedOrigins ?? []);
  const limiter = new RateLimiter(limits.rateLimit);
  /** Open legacy SSE streams; their calls are answered on the stream, so each counts its unanswered requests. */
  const sseSessions = new Map<string, { transport: LegacySseTransport; pending: PendingRequests }>();

  const refuse = (req: http.IncomingMessage, res: http.ServerResponse, r: Refusal) => {
    if (r.status !== 429) logger.warn(`MCP bridge refused ${req.method ?? "?"} ${pathOf(req)}: ${r.status} ${r.message}`);
    sendError(res, pathOf(req), r);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Content-Type-Options", "nosniff");
    const path = pathOf(req);
    if (!limiter.take(req.socket.remoteAddress ?? "unknown")) {
      return refuse(req, res, { status: 429, message: "Too many requests; slow down", headers: { "Retry-After": String(limiter.retryAfterSeconds()) } });
    }
    if (!hostAllowed(req.headers.host)) return refuse(req, res, { status: 403, message: "Host header not allowed: use 127.0.0.1 or localhost with the bridge's port" });
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.allows(origin)) return refuse(req, res, { status: 403, message: "Origin not allowed; add it to the bridge's allowed origins" });
      res.setHeader("Access-Control-Allow-Origin", origin);
      res.setHeader("Vary", "Origin");
      res.setHeader("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version");
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
          "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
          "Access-Control-Max-Age": "600",
        });
        res.end();
        return;
      }
    }
    if (!authorized(req.headers.authorization)) {
      return refuse(req, res, { status: 401, message: "Missing or wrong bearer token", headers: { "WWW-Authenticate": 'Bearer realm="krypton"' } });
    }

    if (path === "/mcp") {
      if (req.method !== "POST") return refuse(req, res, { status: 405, message: "Use POST (this server is stateless)", headers: { Allow: "POST" } });
      const body = await readJson(req, res);
      if (body === undefined) return;
      const server = newMcpServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close().catch(() => {});
        void server.close().catch(() => {});
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    if (path === "/sse") {
      if (req.method !== "GET") return refuse(req, res, { status: 405, message: "Use GET", headers: { Allow: "GET" } });
      if (sseSessions.size >= limits.maxSseSessions) return refuse(req, res, { status: 503, message: "Too many open SSE connections" });
      const transport = new LegacySseTransport("/messages", res, limits.sseKeepAliveMs);
      const id = transport.sessionId;
      const pending = trackPendingRequests(transport);
      sseSessions.set(id, { transport, pending });
      res.on("close", () => sseSessions.delete(id));
      await newMcpServer().connect(transport);
      pending.attach();
      return;
    }
    if (path === "/messages") {
      if (req.method !== "POST") return refuse(req, res, { status: 405, message: "Use POST", headers: { Allow: "POST" } });
      const transport = sseSessions.get(new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("sessionId") ?? "")?.transport;
      if (!transport) return refuse(req, res, { status: 404, message: "Unknown or closed SSE session; reconnect to /sse" });
      const body = await readJson(req, res);
      if (body === undefined) return;
      if (!transport.receive(body)) return sendJsonRpcError(res, 400, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      res.writeHead(202, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("Accepted");
      return;
    }
    if (path === "/mcp/tools") {
      if (req.method !== "GET") return refuse(req, res, { status: 405, message: "Use GET", headers: { Allow: "GET" } });
      return sendJson(res, 200, { tools: describeTools(registry()) });
    }
    if (path === "/mcp/tools/call") {
      if (req.method !== "POST") return refuse(req, res, { status: 405, message: "Use POST", headers: { Allow: "POST" } });
      const body = await readJson(req, res);
      if (body === undefined) return;
      return callToolOverJson(body, res, registry(), vault, stopping.signal);
    }
    return refuse(req, res, { status: 404, message: "Not found. Endpoints: POST /mcp, GET /sse, POST /messages, GET /mcp/tools, POST /mcp/tools/call" });
  };

  /** The parsed JSON body, or undefined after answering 413/415/400 (as a JSON-RPC error on MCP paths). */
  const readJson = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<unknown> => {
    const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") {
      refuse(req, res, { status: 415, message: "Content-Type must be application/json", headers: { Connection: "close" } });
      readBody(req, 0).catch(() => {});
      return undefined;
    }
    const body = await readBody(req, limits.maxBodyBytes);
    if (body.kind === "aborted") {
      res.destroy();
      return undefined;
    }
    if (body.kind === "too-large") {
      refuse(req, res, { status: 413, message: `Request body is larger than ${limits.maxBodyBytes} bytes`, headers: { Connection: "close" } });
      return undefined;
    }
    try {
      return JSON.parse(body.text) as unknown;
    } catch {
      if (isMcpPath(pathOf(req))) sendJsonRpcError(res, 400, -32700, "Parse error: the request body is not valid JSON");
      else sendJson(res, 400, { error: "The request body is not valid JSON" });
      return undefined;
    }
  };

  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
      // Node checks the two timeouts above on this interval (30 s by default).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 2))),
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      if (req.method === "POST" && (pathOf(req) === "/mcp" || pathOf(req) === "/mcp/tools/call")) {
        const sent = new Promise<void>((resolve) => res.once("close", () => resolve()));
        answering.add(sent);
        void sent.then(() => answering.delete(sent));
      }
      handle(req, res).catch((err: unknown) => {
        // One broken request must not take the bridge down: answer it and carry on.
        logger.error(`MCP bridge request failed: ${errorMessage(err).split("\n")[0]}`);
        if (!res.headersSent) sendError(res, pathOf(req), { status: 500, message: "Internal error" });
        else res.destroy();
      });
    },
  );
  server.on("clientError", (err: ErrnoError, socket) => {
    if (!socket.writable) return void socket.destroy();
    const timedOut = err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code === "ERR_HTTP_HEADERS_TIMEOUT";
    socket.end(timedOut ? "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n" : "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: ErrnoError) => {
      server.off("listening", onListening);
      if (err.code === "EADDRINUSE") reject(new McpBridgeStartError(`port ${options.port} is in use`, "port-in-use"));
      else if (err.code === "EACCES") reject(new McpBridgeStartError(`port ${options.port} needs special permission; choose a port above 1024`, "permission-denied"));
      else reject(new McpBridgeStartError(`The MCP bridge could not start: ${err.message}`, "failed"));
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen({ port: options.port, host: "127.0.0.1", exclusive: true });
  });
  server.on("error", (err) => logger.error(`MCP bridge server error: ${err.message}`));
  boundPort = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${boundPort}/mcp`;
  logger.info(`MCP bridge listening on ${url}`);

  let closing: Promise<void> | undefined;
  return {
    port: boundPort,
    url,
    close: (reason) =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        stopping.abort(new ShuttingDownError(reason));
        // The calls just cancelled answer at once; a tool that ignores its signal does not hold the close up.
        let stopWaiting = () => {};
        const grace = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, limits.closeGraceMs);
          stopWaiting = () => (clearTimeout(timer), resolve());
        });
        const sseAnswers = [...sseSessions.values()].map((session) => session.pending.settled());
        await Promise.race([Promise.all([...answering, ...sseAnswers]), grace]);
        stopWaiting();
        for (const { transport } of sseSessions.values()) void transport.close().catch(() => {});
        sseSessions.clear();
        server.closeAllConnections();
        await closed;
        logger.info("MCP bridge stopped");
      })()),
  };
}

async function callToolOverJson(
  body: unknown,
  res: http.ServerResponse,
  registry: ToolRegistry,
  vault: VaultLocation | undefined,
  stopping: AbortSignal,
): Promise<void> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return sendJson(res, 400, { error: 'The body must be a JSON object: {"tool": "...", "arguments": {...}}' });
  }
  const { tool, arguments: args } = body as { tool?: unknown; arguments?: unknown };
  if (typeof tool !== "string" || tool === "") return sendJson(res, 400, { error: "Missing required field: tool" });
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const stop = () => controller.abort(stopping.reason);
  if (stopping.aborted) stop();
  stopping.addEventListener("abort", stop, { once: true });
  try {
    assertServed(registry, tool);
    const output = await registry.call(tool, args ?? {}, { signal: controller.signal, vault });
    sendJson(res, 200, { tool, result: output.structured, text: output.text });
  } catch (err) {
    const error = toToolError(err, tool);
    const status = { "unknown-tool": 404, "not-found": 404, "invalid-input": 400, refused: 403, failed: 500 }[error.code];
    sendJson(res, status, { error: error.message, code: error.code, ...(error.keywordOnly ? { keywordOnly: error.keywordOnly } : {}) });
  } finally {
    stopping.removeEventListener("abort", stop);
  }
}

function pathOf(req: http.IncomingMessage): string {
  const raw = req.url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

function isMcpPath(path: string): boolean {
  return path === "/mcp" || path === "/messages" || path === "/sse";
}

function sendError(res: http.ServerResponse, path: string, r: Refusal): void {
  if (res.headersSent) return void res.destroy();
  for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
  if (isMcpPath(path)) sendJsonRpcError(res, r.status, -32000, r.message);
  else sendJson(res, r.status, { error: r.message });
}

function sendJsonRpcError(res: http.ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: "2.0", id: null, error: { code, message } });
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return void res.destroy();
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}
