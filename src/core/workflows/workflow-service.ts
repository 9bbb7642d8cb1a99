import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { createChatModelFor, parseModelRef, type ModelRef } from "../providers/model-ref";
import { listOllamaModels } from "../providers/ollama/ollama-chat-model";
import type { KryptonSettings } from "../settings";
import type { ToolRegistry } from "../tools/tool-registry";
import { errorMessage } from "../util/errors";
import { flowBlocksIn, parseFlowJson } from "./flow-block";
import { runFlow, type FlowRunResult, type FlowStep } from "./flow-engine";
import { createFlowModelRunner, type ToolTaskRunner } from "./flow-model-runner";
import type { Flow } from "./flow-schema";
import { validateFlow, type FlowValidation } from "./flow-validate";
import { text } from "./flow-values";

export interface WorkflowServiceDeps {
  host: Host;
  settings: () => KryptonSettings;
  tools: ToolRegistry;
  /** Names of the MCP servers configured in settings and their `server:tool` names, once discovered. */
  mcpToolNames?: () => readonly string[];
  /** The agent loop, for task agents that use tools. */
  runToolTask?: ToolTaskRunner;
  /** Tests: model clients without the settings' URLs. */
  modelFor?: (ref: ModelRef) => ChatModel | null;
}

export interface ParsedFlowSource {
  /** The flow's JSON value, or null with a message saying why it could not be read. */
  json: unknown;
  error: string | null;
}

/**
 * Workflows for every host (command, chat `/run`, CLI `krypton flow`, MCP `run_workflow`): read a flow
 * from a note or a .json text, validate it against what this host knows, run it with the user's models.
 */
export class WorkflowService {
  constructor(private readonly deps: WorkflowServiceDeps) {}

  /** A note's first ```krypton-flow block, or a .json file's whole text. */
  parseSource(source: string, fileName: string): ParsedFlowSource {
    let jsonText = source;
    if (!fileName.toLowerCase().endsWith(".json")) {
      const [block] = flowBlocksIn(source);
      if (!block) return { json: null, error: `${fileName} has no \`\`\`krypton-flow block` };
      jsonText = block.json;
    }
    const parsed = parseFlowJson(jsonText);
    return parsed.ok ? { json: parsed.value, error: null } : { json: null, error: `${fileName}: ${parsed.message}` };
  }

  /** Structure only (no network): for drawing and for editors that validate as the user types. */
  validateStructure(json: unknown): FlowValidation {
    return validateFlow(json, { knownTools: this.knownTools() });
  }

  private knownTools(): Set<string> {
    return new Set([...this.deps.tools.list().map((t) => t.name), ...(this.deps.mcpToolNames?.() ?? [])]);
  }

  /**
   * Full validation: the structure, then the tools this host has and the Ollama models installed (asked
   * once, only when the flow names an Ollama model; if Ollama cannot be asked, that check is skipped with a warning).
   */
  async validate(json: unknown, signal?: AbortSignal): Promise<FlowValidation> {
    const structural = validateFlow(json);
    if (!structural.flow) return structural;
    const env: { knownTools: ReadonlySet<string>; ollamaModels?: string[] } = { knownTools: this.knownTools() };
    const warnings: FlowValidation["warnings"] = [];
    if (usesOllama(structural.flow) && !this.deps.modelFor) {
      const settings = this.deps.settings();
      try {
        env.ollamaModels = await listOllamaModels({ baseUrl: settings.ollamaUrl, fetch: this.deps.host.fetch, clock: this.deps.host.clock, timeoutMs: Math.min(settings.requestTimeoutMs, 5_000) }, signal);
      } catch (err) {
        warnings.push({ pointer: "/", message: `could not check which Ollama models are installed: ${errorMessage(err)}` });
      }
    }
    const full = validateFlow(json, env);
    return { ...full, warnings: [...full.warnings, ...warnings] };
  }

  /** Runs a validated flow on a text input. */
  run(flow: Flow, input: string, options: { signal?: AbortSignal; onStep?: (step: FlowStep, phase: "start" | "end") => void } = {}): Promise<FlowRunResult> {
    const modelFor = this.deps.modelFor ?? ((ref: ModelRef) => createChatModelFor(this.deps.settings(), this.deps.host, ref));
    const runner = createFlowModelRunner(flow, { modelFor, runToolTask: this.deps.runToolTask });
    return runFlow(flow, text(input), runner, { clock: this.deps.host.clock, signal: options.signal, onStep: options.onStep });
  }
}

function usesOllama(flow: Flow): boolean {
  const refs = [flow.defaultModel, ...flow.agents.map((a) => a.model)].filter((m): m is string => m !== undefined);
  return refs.some((m) => {
    const ref = parseModelRef(m);
    return !("error" in ref) && ref.provider === "ollama";
  });
}
