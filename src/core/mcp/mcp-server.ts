import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../ports/logger";
import type { ToolContext } from "../tools/tool";
import { toToolError, type ToolRegistry } from "../tools/tool-registry";

export interface McpServerInfo {
  name: string;
  version: string;
}

export interface CreateMcpServerOptions {
  /** Per-call context from the host (where the vault is, its symlink check); the signal comes from the request. */
  context?: () => Omit<ToolContext, "signal">;
  logger?: Logger;
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
    try {
      const output = await registry.call(name, request.params.arguments ?? {}, { ...options.context?.(), signal: extra.signal });
      return { content: [{ type: "text", text: output.text }], structuredContent: output.structured };
    } catch (err) {
      const error = toToolError(err, name);
      if (error.code === "failed") options.logger?.warn(`MCP tool ${name} failed: ${error.message}`);
      return { content: [{ type: "text", text: error.message }], isError: true };
    }
  });
  return mcp;
}

/** The registry's tools with JSON Schemas generated from their zod shapes. */
export function describeTools(registry: ToolRegistry): ToolDescription[] {
  return registry.list().map((tool) => ({
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
