import { z } from "zod";
import { AgentError } from "../notes/agent-error";
import { isAbortError, ProviderError } from "../providers/provider-error";
import { NoteChangedError, NoteExistsError, NoteNotFoundError } from "../ports/vault";
import { ToolError, type ToolContext, type ToolDefinition, type ToolOutput } from "./tool";
import { errorMessage, ShuttingDownError } from "../util/errors";
import { clip } from "../util/text";
import { readScalarStrings, zodShapeKinds, type ScalarKind } from "../util/quoted-scalars";

/**
 * The one list of tools Krypton exposes (MCP over HTTP and stdio, the plain JSON endpoints, the CLI).
 * call() is the only way a tool runs: it validates the arguments against the tool's zod shape and turns
 * every failure into a ToolError whose message a person can act on. No stack trace ever leaves here.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private gate: ToolCallGate | null = null;

  register(tool: ToolDefinition): void {
    if (this.tools.has(tool.name)) throw new Error(`Tool already registered: ${tool.name}`);
    this.tools.set(tool.name, tool);
  }

  /** Tools for outside callers; `{ agent: true }` adds the agent-only ones (see ToolDefinition.agentOnly). */
  list(options: { agent?: boolean } = {}): ToolDefinition[] {
    const all = [...this.tools.values()];
    return options.agent ? all : all.filter((tool) => !tool.agentOnly);
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  /** Removes a tool (MCP servers that went away); true when it was there. */
  unregister(name: string): boolean {
    return this.tools.delete(name);
  }

  /** A remote tool by its provider-safe wire alias ("server__tool"). */
  getByWireName(wireName: string): ToolDefinition | undefined {
    for (const tool of this.tools.values()) if (tool.remote?.wireName === wireName) return tool;
    return undefined;
  }

  /**
   * Puts `gate` around every call from now on (see ToolCallGate). One gate per registry: a second would be
   * a second policy for the same calls. Returns its removal.
   */
  setGate(gate: ToolCallGate): () => void {
    if (this.gate) throw new Error("This tool registry already has a gate");
    this.gate = gate;
    return () => {
      if (this.gate === gate) this.gate = null;
    };
  }

  /** Runs a tool by name. Resolves with its output or rejects with a ToolError, never anything else. */
  async call(name: string, args: unknown, context: ToolContext = {}): Promise<ToolOutput<Record<string, unknown>>> {
    const agent = context.caller === "agent";
    const found = typeof name === "string" ? this.tools.get(name) : undefined;
    const tool = found && (!found.agentOnly || agent) ? found : undefined;
    if (!tool) {
      const available = this.list({ agent }).map((t) => t.name);
      throw new ToolError(`Unknown tool: ${clip(String(name), 80)}. Available tools: ${available.join(", ")}`, "unknown-tool");
    }
    const input = validateArguments(tool, args ?? {});
    try {
      const run = () => tool.run(input, context);
      return await (this.gate ? this.gate(tool, input, run, context) : run());
    } catch (err) {
      throw toToolError(err, tool.name, context.signal);
    }
  }
}

/**
 * A host's policy around tool calls (waiting for the index: see gateOnIndex): it runs after the arguments
 * were checked (`input`) and decides when `run` goes; `context` is the call's (its signal says when the caller gave
 * up). Set on the registry, it applies to every caller alike, tools calling tools included (a workflow's
 * steps inside run_workflow).
 */
export type ToolCallGate = (
  tool: ToolDefinition,
  input: Record<string, unknown>,
  run: () => Promise<ToolOutput<Record<string, unknown>>>,
  context: ToolContext,
) => Promise<ToolOutput<Record<string, unknown>>>;

/** Checks arguments against the tool's shape; the first problem becomes the error message. */
export function validateArguments(tool: ToolDefinition, args: unknown): Record<string, unknown> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new ToolError(`Arguments for ${tool.name} must be a JSON object`, "invalid-input");
  }
  // Remote tools bring a JSON Schema, not a zod shape: their own server validates, after the same reading of quoted scalars.
  if (tool.inputJsonSchema && Object.keys(tool.inputSchema).length === 0) {
    const properties = isObject(tool.inputJsonSchema.properties) ? tool.inputJsonSchema.properties : {};
    return readScalarStrings(args as Record<string, unknown>, (key) => (Object.prototype.hasOwnProperty.call(properties, key) ? jsonSchemaKind(properties[key]) : undefined));
  }
  const shape = tool.inputSchema;
  const input = readScalarStrings(args as Record<string, unknown>, zodShapeKinds(shape));
  const parsed = z.object(tool.inputSchema).safeParse(input);
  if (parsed.success) return parsed.data;
  throw new ToolError(describeIssue(parsed.error.issues[0], input), "invalid-input");
}

/**
 * The same for a JSON Schema property: type "number", "integer" or "boolean", or a list of types with one of
 * them ("number" wins over "boolean"). A list that allows a string too keeps the string as written.
 */
function jsonSchemaKind(property: unknown): ScalarKind | undefined {
  if (!isObject(property)) return undefined;
  const types = Array.isArray(property.type) ? property.type : [property.type];
  if (types.includes("string")) return undefined;
  if (types.includes("number") || types.includes("integer")) return "number";
  return types.includes("boolean") ? "boolean" : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeIssue(issue: z.core.$ZodIssue, args: Record<string, unknown>): string {
  const key = issue.path.map(String).join(".");
  const value = issue.path.length > 0 ? args[String(issue.path[0])] : args;
  const missing = value === undefined || value === null || (typeof value === "string" && value.trim() === "" && issue.code === "too_small");
  if (missing && key) return `Missing required parameter: ${key}`;
  switch (issue.code) {
    case "invalid_type":
      return `Invalid parameter ${key}: expected ${issue.expected === "int" ? "a whole number" : `a ${issue.expected}`}, got ${describeValue(value)}`;
    case "invalid_value":
      return `Invalid parameter ${key}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${describeValue(value)}`;
    case "too_small":
      return issue.origin === "string"
        ? `Invalid parameter ${key}: must be at least ${String(issue.minimum)} characters`
        : `Invalid parameter ${key}: must be at least ${String(issue.minimum)}`;
    case "too_big":
      return issue.origin === "string"
        ? `Invalid parameter ${key}: must be at most ${String(issue.maximum)} characters`
        : `Invalid parameter ${key}: must be at most ${String(issue.maximum)}`;
    default:
      return `Invalid parameter ${key || "arguments"}: ${issue.message}`;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(clip(value, 40));
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return `a ${typeof value}`;
}

/**
 * Known failures keep their (already safe) message; anything else is reduced to one line, no stack.
 * `signal` is the call's: when Krypton stopping aborted it (ShuttingDownError), the answer says why, whatever the tool threw.
 */
export function toToolError(err: unknown, toolName: string, signal?: AbortSignal): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof NoteNotFoundError) return new ToolError(err.message, "not-found");
  if (err instanceof NoteChangedError) return new ToolError(err.message, "refused");
  if (err instanceof NoteExistsError) return new ToolError(`${err.message}; Krypton never overwrites a note`, "refused");
  if (err instanceof AgentError) {
    const code = err.code === "not-found" ? "not-found" : err.code === "invalid-input" ? "invalid-input" : "failed";
    return new ToolError(err.message, code, { keywordOnly: err.keywordOnly });
  }
  if (isAbortError(err)) {
    const shutdown = err instanceof ShuttingDownError ? err : signal?.reason instanceof ShuttingDownError ? signal.reason : null;
    return new ToolError(shutdown ? `${toolName} was cancelled: ${shutdown.message}` : `${toolName} was cancelled`, "failed");
  }
  if (err instanceof ProviderError) return new ToolError(err.message, "failed");
  if (err instanceof Error && err.name === "VaultPathError") return new ToolError(err.message, "refused");
  const message = errorMessage(err);
  const firstLine = message.split("\n")[0]?.trim();
  return new ToolError(firstLine ? `${toolName} failed: ${clip(firstLine, 300)}` : `${toolName} failed`, "failed");
}


/** Declares a tool with its input type inferred from the schema, typed for the registry's plain list. */
export function defineTool<S extends z.ZodRawShape, O extends Record<string, unknown>>(tool: ToolDefinition<S, O>): ToolDefinition {
  return tool;
}
