// Real MCP servers built with the SDK, standing in for the user's own servers (GitHub, a search API, ...)
// that Krypton's MCP client connects to. One tool set, served over stdio (fixtures/remote-stdio-server.ts),
// Streamable HTTP and legacy SSE on 127.0.0.1.
import { randomUUID } from "node:crypto";
import { startLoopbackServer } from "../../support/servers/loopback-server";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";

export interface DemoServerOptions {
  name?: string;
  instructions?: string;
  /** tools/list page size: pagination with nextCursor. */
  pageSize?: number;
  /** Extra filler tools "tool_1".."tool_N" (to make several pages). */
  fillerTools?: number;
  /** What the server saw, for assertions (same process only; the stdio fixture reports on stderr/files). */
  events?: string[];
  /** Called when a "slow" call was cancelled by the client (notifications/cancelled). */
  onCancelled?: () => void;
  /** Adds "exit_now", which ends the process (stdio fixture only: never in the test runner's process). */
  allowExit?: boolean;
  /** Adds "find_items", whose JSON Schema has number, integer, boolean and string fields; it answers with the arguments it received. */
  typedTool?: boolean;
}

/** find_items's input: scalar types as servers write them (a type list too), a string, a nested object. */
const TYPED_TOOL: Tool = {
  name: "find_items",
  description: "Finds items; answers with the arguments it received",
  inputSchema: {
    type: "object",
    properties: {
      limit: { type: "integer" },
      score: { type: "number" },
      exact: { type: "boolean" },
      page: { type: ["integer", "null"] },
      query: { type: "string" },
      code: { type: ["string", "number"] },
      filter: { type: "object", properties: { year: { type: "integer" } } },
    },
  },
};

/** A tiny 1x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

export function createDemoServer(options: DemoServerOptions = {}): Server {
  const events = options.events ?? [];
  const tools: Tool[] = [
    {
      name: "echo",
      description: "Echoes the text back",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true },
    },
    { name: "slow", description: "Waits until cancelled", inputSchema: { type: "object", properties: {} } },
    { name: "media", description: "Returns an image, audio and resources", inputSchema: { type: "object", properties: {} } },
    { name: "broken", description: "Always reports an error", inputSchema: { type: "object", properties: {} } },
    { name: "add_tool", description: "Adds the tool late_tool and announces it", inputSchema: { type: "object", properties: {} } },
    { name: "show_env", description: "Returns one environment variable of the server process", inputSchema: { type: "object", properties: { name: { type: "string" } } } },
    { name: "get.weather/now", description: "A name providers would refuse", inputSchema: { type: "object", properties: {} } },
    ...(options.typedTool ? [TYPED_TOOL] : []),
    ...(options.allowExit ? [{ name: "exit_now", description: "Writes to stderr and ends the process", inputSchema: { type: "object" as const, properties: {} } }] : []),
    ...Array.from({ length: options.fillerTools ?? 0 }, (_, i) => ({ name: `tool_${i + 1}`, description: `Filler ${i + 1}`, inputSchema: { type: "object" as const, properties: {} } })),
  ];
  const server = new Server(
    { name: options.name ?? "demo", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } }, ...(options.instructions ? { instructions: options.instructions } : {}) },
  );
  const pageSize = options.pageSize ?? 1000;
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    events.push(`list:${request.params?.cursor ?? ""}`);
    const start = Number(request.params?.cursor ?? 0);
    const page = tools.slice(start, start + pageSize);
    const next = start + pageSize < tools.length ? String(start + pageSize) : undefined;
    return { tools: page, ...(next ? { nextCursor: next } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = request.params.arguments ?? {};
    events.push(`call:${request.params.name}:${JSON.stringify(args)}`);
    switch (request.params.name) {
      case "echo":
        return { content: [{ type: "text", text: `echo: ${String(args.text)}` }], structuredContent: { echoed: args.text } };
      case "slow":
        await new Promise<void>((resolve) => {
          if (extra.signal.aborted) return resolve();
          extra.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        events.push("cancelled:slow");
        options.onCancelled?.();
        return { content: [{ type: "text", text: "too late" }] };
      case "media":
        return {
          content: [
            { type: "image", data: PNG, mimeType: "image/png" },
            { type: "audio", data: "AAAA", mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "file:///notes/a.txt", mimeType: "text/plain", text: "resource text" } },
            { type: "resource", resource: { uri: "file:///blob.bin", mimeType: "application/octet-stream", blob: "AAAAAAAA" } },
            { type: "resource_link", uri: "https://example.org/doc", name: "doc" },
          ],
        };
      case "broken":
        return { content: [{ type: "text", text: "the widget is jammed" }], isError: true };
      case "add_tool":
        if (!tools.some((t) => t.name === "late_tool")) tools.push({ name: "late_tool", description: "Appeared later", inputSchema: { type: "object", properties: {} } });
        await server.sendToolListChanged();
        return { content: [{ type: "text", text: "added" }] };
      case "show_env":
        return { content: [{ type: "text", text: process.env[String(args.name)] ?? "(unset)" }] };
      case "exit_now":
        if (!options.allowExit) return { content: [{ type: "text", text: "not allowed" }], isError: true };
        process.stderr.write("panic: lost the upstream connection\n");
        setTimeout(() => process.exit(3), 10);
        return { content: [{ type: "text", text: "exiting" }] };
      case "find_items":
        return { content: [{ type: "text", text: JSON.stringify(args) }] };
      case "get.weather/now":
        return { content: [{ type: "text", text: "sunny" }] };
      default:
        if (/^tool_\d+$/.test(request.params.name) || request.params.name === "late_tool") return { content: [{ type: "text", text: request.params.name }] };
        return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
    }
  });
  return server;
}

export interface DemoHttpServer {
  /** Streamable HTTP endpoint (sessions, so list_changed reaches the client over the GET stream). */
  streamableUrl: string;
  /** A legacy-only server: POST answers 405, GET opens the SSE stream (the fallback case). */
  legacyUrl: string;
  /** Every Authorization header received (to prove the bearer header is sent). */
  authHeaders: string[];
  events: string[];
  cancelled: number;
  close(): Promise<void>;
}

/**
 * Both HTTP flavours on one loopback port. With `token`, every request without "Authorization: Bearer
 * <token>" gets 401.
 */
export async function startDemoHttpServer(options: DemoServerOptions & { token?: string } = {}): Promise<DemoHttpServer> {
  const events: string[] = options.events ?? [];
  const state = { cancelled: 0 };
  const authHeaders: string[] = [];
  const serverOptions = { ...options, events, onCancelled: () => state.cancelled++ };
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const legacy = new Map<string, SSEServerTransport>();

  const httpServer = await startLoopbackServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      authHeaders.push(req.headers.authorization ?? "");
      if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
        return;
      }
      if (url.pathname === "/mcp") {
        const sessionId = req.headers["mcp-session-id"];
        let transport = typeof sessionId === "string" ? streamable.get(sessionId) : undefined;
        if (!transport) {
          if (req.method !== "POST") {
            res.writeHead(400).end("no session");
            return;
          }
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => void streamable.set(id, transport!),
          });
          await createDemoServer(serverOptions).connect(transport);
        }
        await transport.handleRequest(req, res);
        return;
      }
      if (url.pathname === "/legacy") {
        if (req.method !== "GET") {
          res.writeHead(405, { allow: "GET" }).end("Method Not Allowed");
          return;
        }
        const transport = new SSEServerTransport("/legacy/messages", res);
        legacy.set(transport.sessionId, transport);
        res.on("close", () => legacy.delete(transport.sessionId));
        await createDemoServer(serverOptions).connect(transport);
        return;
      }
      if (url.pathname === "/legacy/messages" && req.method === "POST") {
        const transport = legacy.get(url.searchParams.get("sessionId") ?? "");
        if (!transport) {
          res.writeHead(404).end("unknown session");
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end("not found");
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  const base = httpServer.url;
  return {
    streamableUrl: `${base}/mcp`,
    legacyUrl: `${base}/legacy`,
    authHeaders,
    events,
    get cancelled() {
      return state.cancelled;
    },
    close: async () => {
      for (const t of streamable.values()) await t.close().catch(() => undefined);
      for (const t of legacy.values()) await t.close().catch(() => undefined);
      await httpServer.close();
    },
  };
}
