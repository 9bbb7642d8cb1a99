import type { z } from "zod";

export interface ToolContext {
  signal?: AbortSignal;
}

export interface ToolOutput<T> {
  /** Matches the tool's outputSchema (MCP structuredContent: always an object). */
  structured: T;
  /** Human-readable rendering (MCP text content, CLI output). */
  text: string;
}

/**
 * One capability exposed to outside callers (MCP today, the agent mode later).
 * Input schemas are zod raw shapes, the form the MCP SDK takes.
 */
export interface ToolDefinition<S extends z.ZodRawShape = z.ZodRawShape, O extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  outputSchema: z.ZodRawShape;
  run(input: z.infer<z.ZodObject<S>>, context: ToolContext): Promise<ToolOutput<O>>;
}

/** An error whose message a person can act on ("Missing required parameter: topic"). Safe to show to clients. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}
