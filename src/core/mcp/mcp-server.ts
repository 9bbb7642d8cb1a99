import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../ports/logger";
import { ToolError, type ToolContext, type ToolDefinition } from "../tools/tool";
import { toToolError, type ToolRegistry } from "../tools/tool-registry";

export interface McpServerInfo {
  name: string;
  version: string;
}

export interface CreateMcpServerOptions {
  /** Per-call context from the host (where the vault is, its symlink check); the signal comes from the request. */
  context?: () => Omit<ToolContext, "signal">;
  logger?: Logger;
  /**
   * The host stopping the server: ends every call under way, as a client's own cancel does. Aborted with a
   * ShuttingDownError, the answers say "… was cancelled: " and its reason ("Krypton is shutting down").
   */
  signal?: AbortSignal;
}

/** What clients see of a tool: the MCP `Tool` shape, also served by the plain JSON endpoint GET /mcp/tools. */
export type ToolDescription = Pick<Tool, "name" | "title" | "description" | "inputSchema" | "outputSchema" | "annotations">;

export const MCP_INSTRUCTIONS =
  "Krypton serves one Obsidian vault. search_notes finds notes, read_note returns a note's markdown, " +
  "summarize_notes summarizes a note or a topic, create_note writes a new note (never overwriting one). " +
  "Paths are vault-relative (\"Folder/Note.md\").";

/**
 * An MCP server (SDK 1.x) whose tools are exactly the registry's. Host-neutral: the SDK's server module
 * imports no Node builtins, so this runs in Obsidian as well as in Node; transports are the host's part.
 *
 * Tools are installed as tools/list and tools/call handlers on the underlying protocol server instead of
 * McpServer.registerTool: registerTool validates arguments itself and answers with the SDK's wording
 * ("Input validation error: ..."), while the registry's check gives the same actionable message
 * ("Missing required parameter: topic") on every host. Create one server per connection (or per
 * request in stateless HTTP): the SDK binds a server to one transport.
 */
export function createMcpServer(registry: ToolRegistry, info: McpServerInfo, options: CreateMcpServerOptions = {}): McpServer {
  const mcp = new McpServer({ name: info.name, version: info.version }, { instructions: MCP_INSTRUCTIONS });
  const server = mcp.server;
  server.registerCapabilities({ tools: { listChanged: false } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: describeTools(registry) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    // Ends with the client's cancel or the host's stop, whose reason the answer names (by hand:
    // AbortSignal.any is missing from older Electrons).
    const call = new AbortController();
    const stop = (event: Event) => call.abort((event.target as AbortSignal).reason);
    for (const signal of [extra.signal, options.signal]) {
      if (signal?.aborted) call.abort(signal.reason);
      signal?.addEventListener("abort", stop, { once: true });
    }
    try {
      assertServed(registry, name);
      const output = await registry.call(name, request.params.arguments ?? {}, { ...options.context?.(), signal: call.signal });
      return { content: [{ type: "text", text: output.text }], structuredContent: output.structured };
    } catch (err) {
      const error = toToolError(err, name);
      if (error.code === "failed") options.logger?.warn(`MCP tool ${name} failed: ${error.message}`);
      return { content: [{ type: "text", text: error.message }], isError: true, ...(error.structured ? { structuredContent: error.structured } : {}) };
    } finally {
      for (const signal of [extra.signal, options.signal]) signal?.removeEventListener("abort", stop);
    }
  });
  return mcp;
}

/**
 * The tools Krypton serves to MCP clients: the registry's own, never a tool of the user's remote MCP
 * servers (those are for Krypton's agent; re-exporting them would hand someone else's server, and the
 * user's credentials for it, to every client of the bridge).
 */
export function servedTools(registry: ToolRegistry): ToolDefinition[] {
  return registry.list().filter((tool) => !tool.remote);
}

/** Refuses a remote tool exactly like an unknown one (same message, same 404 on the JSON endpoint). */
export function assertServed(registry: ToolRegistry, name: string): void {
  if (!registry.get(name)?.remote) return;
  const available = servedTools(registry).map((t) => t.name);
  throw new ToolError(`Unknown tool: ${name.slice(0, 80)}. Available tools: ${available.join(", ")}`, "unknown-tool");
}

/** The served tools with JSON Schemas generated from their zod shapes. */
export function describeTools(registry: ToolRegistry): ToolDescription[] {
  return servedTools(registry).map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.inputSchema, "input") as Tool["inputSchema"],
    outputSchema: jsonSchemaOf(tool.outputSchema, "output") as Tool["outputSchema"],
    ...(tool.annotations ? { annotations: { title: tool.title, ...tool.annotations } } : {}),
  }));
}

function jsonSchemaOf(shape: z.ZodRawShape, io: "input" | "output"): Record<string, unknown> {
  const schema = z.toJSONSchema(z.object(shape), { io, target: "draft-7" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}
