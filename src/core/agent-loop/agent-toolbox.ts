import { z } from "zod";
import type { ToolCall, ToolSpec } from "../ports/chat-model";
import { jsonSchemaOf } from "../model/ask-json";
import { ToolError, type ToolContext, type ToolDefinition, type ToolPreview } from "../tools/tool";
import { toToolError, validateArguments, type ToolRegistry } from "../tools/tool-registry";
import { AGENT_BUILTIN_TOOLS } from "../tools/agent-tools";
import { untilAborted } from "../ports/clock";
import { errorMessage, isAbortError } from "../util/errors";
import type { ConfirmPort } from "./agent-types";
import { clip } from "../util/text";

/** A tool result goes back to the model cut at this length: small local models have small windows. */
export const TOOL_RESULT_MAX_CHARS = 12_000;

export interface ToolRun {
  text: string;
  isError: boolean;
  outcome: "ok" | "error" | "denied";
}

export interface AgentToolboxOptions {
  registry: ToolRegistry;
  /** A preset's allowed tools; omitted: every built-in agent tool plus every tool of the user's MCP servers. */
  allowed?: readonly string[];
  /** Where the vault is (hosts that know); vault_path is never asked of the model. */
  context?: Omit<ToolContext, "signal">;
  /**
   * Sees each call's structured output, which the model never gets (a workflow reads remarks from it): a
   * successful call's, or a failed search's keyword-only reason as `{ keywordOnly }`.
   */
  onOutput?: (tool: ToolDefinition, structured: Record<string, unknown>) => void;
}

/**
 * The registry's tools as the agent sees them: filtered (agent tools, a preset's list, availability),
 * as provider tool specs (vault_path hidden, safe wire names), and run with the user's confirmation for
 * anything that is not read-only. The registry still does every check and the actual work.
 */
export class AgentToolbox {
  readonly tools: ToolDefinition[];
  private readonly byWire = new Map<string, ToolDefinition>();
  private readonly wireOf = new Map<string, string>();
  private readonly specCache: ToolSpec[];

  constructor(private readonly options: AgentToolboxOptions) {
    const allowed = options.allowed ? new Set(options.allowed) : null;
    const builtin = new Set<string>(AGENT_BUILTIN_TOOLS);
    this.tools = options.registry
      .list({ agent: true })
      .filter((t) => (allowed ? allowed.has(t.name) : builtin.has(t.name) || t.remote !== undefined))
      .filter((t) => t.isAvailable?.() !== false);
    for (const tool of this.tools) {
      // Providers restrict function names (Gemini: no ":"): MCP's "server:tool" travels as its wire alias.
      const wire = tool.remote?.wireName ?? tool.name.replace(/[^A-Za-z0-9_-]/g, "__");
      this.byWire.set(wire, tool);
      this.wireOf.set(tool.name, wire);
    }
    this.specCache = this.tools.map((tool) => ({ name: this.wireOf.get(tool.name) ?? tool.name, description: tool.description, parameters: parametersOf(tool) }));
  }

  names(): string[] {
    return this.tools.map((t) => t.name);
  }

  /** Specs for native tool calling (wire names). */
  specs(): ToolSpec[] {
    return this.specCache;
  }

  /** A tool by its real or wire name. */
  find(name: string): ToolDefinition | undefined {
    return this.tools.find((t) => t.name === name) ?? this.byWire.get(name);
  }

  needsConfirmation(tool: ToolDefinition): boolean {
    return tool.annotations?.readOnlyHint !== true;
  }

  /**
   * Runs one call. Never throws except on Stop: failures, unknown tools and refusals come back as error
   * results the model can act on. Write tools run only after `confirm` said yes (or the tool was allowed
   * for the conversation); a denial writes nothing.
   */
  async run(call: ToolCall, run: { signal?: AbortSignal; confirm?: ConfirmPort; approvals: Set<string> }): Promise<ToolRun> {
    const tool = this.find(call.name);
    if (!tool) {
      return fail(`Unknown tool: ${call.name}. Available tools: ${this.names().join(", ")}`);
    }
    const context: ToolContext = { ...this.options.context, caller: "agent", signal: run.signal, visibleTools: this.names() };
    let input: Record<string, unknown>;
    try {
      input = validateArguments(tool, stripVaultPath(call.arguments));
    } catch (err) {
      return fail(`${errorMessage(err)}. Call ${tool.name} again with corrected arguments.`);
    }
    try {
      let approved: ToolPreview | undefined;
      if (this.needsConfirmation(tool)) {
        approved = tool.preview ? await tool.preview(input, context) : { title: `Run ${tool.name}`, preview: JSON.stringify(input, null, 2) };
        if (!run.approvals.has(tool.name)) {
          if (!run.confirm) {
            return denied(`${tool.name} changes the vault and needs the user's approval, which cannot be asked here. Nothing was changed. Answer without it.`);
          }
          const decision = await run.confirm({ tool: tool.name, arguments: input, title: approved.title, preview: approved.preview }, run.signal);
          if (decision === "deny") {
            return denied(`The user declined ${tool.name} (${approved.title}). Nothing was changed. Do not try it again; answer with what you have.`);
          }
          if (decision === "conversation") run.approvals.add(tool.name);
        }
      }
      const output = await untilAborted(this.options.registry.call(tool.name, input, { ...context, approved }), run.signal);
      this.options.onOutput?.(tool, output.structured);
      return { text: clip(output.text, TOOL_RESULT_MAX_CHARS), isError: false, outcome: "ok" };
    } catch (err) {
      if (run.signal?.aborted || (isAbortError(err) && !(err instanceof ToolError))) throw err;
      const error = toToolError(err, tool.name);
      // "No notes match": the search still matched by keywords only, and the run says so as for found notes.
      if (error.keywordOnly) this.options.onOutput?.(tool, { keywordOnly: error.keywordOnly });
      return fail(error.message);
    }
  }
}

function fail(text: string): ToolRun {
  return { text, isError: true, outcome: "error" };
}

function denied(text: string): ToolRun {
  return { text, isError: true, outcome: "denied" };
}

/** In agent mode the vault is implicit: a vault_path the model adds anyway is dropped, not checked. */
function stripVaultPath(args: Record<string, unknown>): Record<string, unknown> {
  if (!args || typeof args !== "object" || !("vault_path" in args)) return args;
  const { vault_path: _dropped, ...rest } = args;
  return rest;
}

const parameterCache = new WeakMap<ToolDefinition, Record<string, unknown>>();

/** The tool's input as JSON Schema, without vault_path. */
export function parametersOf(tool: ToolDefinition): Record<string, unknown> {
  const cached = parameterCache.get(tool);
  if (cached) return cached;
  const shape = { ...tool.inputSchema };
  delete shape["vault_path"];
  const schema =
    tool.inputJsonSchema && Object.keys(tool.inputSchema).length === 0 ? tool.inputJsonSchema : jsonSchemaOf(z.object(shape));
  parameterCache.set(tool, schema);
  return schema;
}

