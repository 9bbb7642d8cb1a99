import { runAgentLoop } from "../agent-loop/agent-loop";
import { AgentToolbox } from "../agent-loop/agent-toolbox";
import type { ConfirmPort } from "../agent-loop/agent-types";
import type { ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { createChatModelFor, parseModelRef, type ModelRef } from "../providers/model-ref";
import { listOllamaModels } from "../providers/ollama/ollama-chat-model";
import { geminiKeyFix } from "../providers/provider-factory";
import type { KryptonSettings } from "../settings";
import { toolsNeedIndex, type ToolDefinition } from "../tools/tool";
import type { ToolRegistry } from "../tools/tool-registry";
import { AbortedError, errorMessage } from "../util/errors";
import { oneLine } from "../util/text";
import { flowBlocksIn, parseFlowJson } from "./flow-block";
import { runFlow, type FlowRunResult, type FlowStep } from "./flow-engine";
import { createFlowModelRunner, type ToolTaskRunner } from "./flow-model-runner";
import type { Flow } from "./flow-schema";
import { validateFlow, type FlowIssue, type FlowValidation } from "./flow-validate";
import { text } from "./flow-values";

export interface WorkflowServiceDeps {
  host: Host;
  settings: () => KryptonSettings;
  tools: ToolRegistry;
  /** Names of the MCP servers configured in settings and their `server:tool` names, once discovered. */
  mcpToolNames?: () => readonly string[];
  /** Connects the MCP servers configured in settings, so their tools are in the registry. */
  ensureMcpTools?: () => Promise<void>;
  /** Tests: model clients without the settings' URLs. */
  modelFor?: (ref: ModelRef) => ChatModel | null;
}

export interface WorkflowRunOptions {
  signal?: AbortSignal;
  onStep?: (step: FlowStep, phase: "start" | "end") => void;
  /** Asks the user before a write tool runs (allow once / for the run / deny). */
  confirm?: ConfirmPort;
  /** The flow notes already running around this run (ToolContext.workflows), for its tasks' tool calls. */
  running?: readonly string[];
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
    return parseFlowSource(source, fileName);
  }

  /**
   * A flow note named the way a person would in `/run`: a vault path (with or without ".md"), a note name,
   * or a flow's id. Notes are read through the core's vault, which applies the one read policy.
   */
  async findFlowNote(ref: string): Promise<{ path: string; json: unknown } | { error: string }> {
    const wanted = ref.trim().replace(/\.md$/i, "").toLowerCase();
    if (!wanted) return { error: "name the workflow: /run <note or flow id> <input>" };
    const notes = await this.deps.host.vault.listNotes();
    const base = (p: string) => p.replace(/\.md$/i, "").split("/").pop()!.toLowerCase();
    const byPath = notes.find((n) => n.path.replace(/\.md$/i, "").toLowerCase() === wanted) ?? notes.find((n) => base(n.path) === wanted);
    const candidates = byPath ? [byPath] : notes;
    for (const note of candidates) {
      if (!byPath && note.size > 1_000_000) continue;
      let content: string;
      try {
        content = await this.deps.host.vault.readNote(note.path);
      } catch (err) {
        if (byPath) return { error: errorMessage(err) };
        continue;
      }
      if (!byPath && !content.includes("krypton-flow")) continue;
      const parsed = this.parseSource(content, note.path);
      if (byPath) return parsed.error ? { error: parsed.error } : { path: note.path, json: parsed.json };
      const id = (parsed.json as { id?: unknown } | null)?.id;
      if (!parsed.error && typeof id === "string" && id.toLowerCase() === wanted) return { path: note.path, json: parsed.json };
    }
    return { error: `no workflow named "${ref.trim()}": give a note's path or name, or a flow id` };
  }

  /** `/run`'s lookup: the flow note named by `ref`, fully validated; or why it cannot run (with the problems). */
  async flowNamed(ref: string, signal?: AbortSignal): Promise<{ flow: Flow; path: string } | { error: string; issues: FlowIssue[] }> {
    const found = await this.findFlowNote(ref);
    if ("error" in found) return { error: found.error, issues: [] };
    const validation = await this.validate(found.json, signal);
    if (!validation.flow || validation.errors.length > 0) return { error: `${found.path} is not a valid workflow`, issues: validation.errors };
    return { flow: validation.flow, path: found.path };
  }

  /** Structure only (no network): for drawing and for editors that validate as the user types. */
  validateStructure(json: unknown): FlowValidation {
    return validateFlow(json, { knownTools: this.knownTools() });
  }

  /**
   * A task of the flow may call a tool that needs the vault index (ToolDefinition.needsIndex: search_notes,
   * summarize_notes, run_workflow…), so a host that opens the index only when needed (the CLI) opens it for
   * this flow. One whose tools only read, list or write notes does not; the user's MCP servers' tools never do.
   */
  needsIndex(flow: Flow): boolean {
    return flow.agents.some((a) => a.type === "task" && toolsNeedIndex(this.toolsNamed(a.params.toolNames ?? [])));
  }

  /** The tools a task's toolNames allow: by name, or all of an MCP server's tools by the server's name. */
  private toolsNamed(names: readonly string[]): ToolDefinition[] {
    const wanted = new Set(names);
    return this.deps.tools.list({ agent: true }).filter((t) => wanted.has(t.name) || (t.remote !== undefined && wanted.has(t.remote.server)));
  }

  private knownTools(): Set<string> {
    return new Set([...this.deps.tools.list({ agent: true }).map((t) => t.name), ...(this.deps.mcpToolNames?.() ?? [])]);
  }

  /**
   * Full validation: the structure, then the tools this host has and the Ollama models installed (asked
   * once, only when the flow names an Ollama model; if Ollama cannot be asked, that check is skipped with a warning).
   */
  async validate(json: unknown, signal?: AbortSignal): Promise<FlowValidation> {
    const structural = validateFlow(json);
    if (!structural.flow) return structural;
    // Tools named in the flow are checked after the configured MCP servers have listed theirs.
    if ((structural.flow.tools?.length ?? 0) > 0 || structural.flow.agents.some((a) => a.type === "task" && (a.params.toolNames?.length ?? 0) > 0)) {
      await this.deps.ensureMcpTools?.();
    }
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
    // A warning, not an error: the key may be set by the time the flow runs (the CLI's environment).
    const gemini = geminiReference(structural.flow);
    if (gemini && !this.deps.modelFor && !this.deps.settings().geminiApiKey.trim()) {
      warnings.push({ pointer: gemini.pointer, message: `no Gemini API key is configured, so agents using ${gemini.model} cannot run until you ${geminiKeyFix(this.deps.host.platform.kind)}` });
    }
    const full = validateFlow(json, env);
    return { ...full, warnings: [...full.warnings, ...warnings] };
  }

  /**
   * Runs a validated flow on a text input. Task agents with `toolNames` run the agent loop over those tools
   * only; a write tool asks `confirm` (absent: every write is refused and the model is told).
   */
  async run(flow: Flow, input: string, options: WorkflowRunOptions = {}): Promise<FlowRunResult> {
    const modelFor = this.deps.modelFor ?? ((ref: ModelRef) => createChatModelFor(this.deps.settings(), this.deps.host, ref));
    const withTools = usesTools(flow);
    if (withTools) await this.deps.ensureMcpTools?.();
    // Each distinct remark once, as a host's WarnOnce would say them: a later search may fail for another reason.
    const remarks: string[] = [];
    const remark = (text: string) => {
      if (!remarks.includes(text)) remarks.push(text);
    };
    const runner = createFlowModelRunner(flow, { modelFor, hostKind: this.deps.host.platform.kind, runToolTask: withTools ? (request) => this.runToolTask(request, options, remark) : undefined });
    const result = await runFlow(flow, text(input), runner, { clock: this.deps.host.clock, signal: options.signal, onStep: options.onStep });
    return remarks.length > 0 ? { ...result, keywordOnlyRemarks: remarks } : result;
  }

  /**
   * One task through the agent loop, limited to the task's tools (a server name stands for all its tools).
   * A search tool tells the model when it matched by keywords only; the run's result says it to the user
   * (`remark`), in the tool's words. Only Krypton's own tools search this vault: a remote one's says nothing.
   */
  private async runToolTask(request: Parameters<ToolTaskRunner>[0], options: WorkflowRunOptions, remark: (text: string) => void): ReturnType<ToolTaskRunner> {
    const allowed = this.toolsNamed(request.toolNames).map((t) => t.name);
    const onOutput = (tool: ToolDefinition, structured: Record<string, unknown>) => {
      if (!tool.remote && typeof structured.keywordOnly === "string" && structured.keywordOnly) remark(structured.keywordOnly);
    };
    const toolbox = new AgentToolbox({ registry: this.deps.tools, allowed, onOutput, context: { workflows: options.running } });
    const persona = request.messages.find((m) => m.role === "system")?.content;
    const question = request.messages.filter((m) => m.role === "user").map((m) => m.content).join("\n\n");
    const loop = runAgentLoop({
      model: request.model,
      toolbox,
      question,
      persona,
      clock: this.deps.host.clock,
      maxSteps: request.maxIterations,
      // The same wall-clock limit as a turn of agent mode (Settings → Agent mode): one setting for every agent loop.
      timeoutMs: this.deps.settings().agentTimeoutMs,
      sampling: request.sampling,
      signal: request.signal,
      confirm: options.confirm ?? (() => Promise.resolve("deny")),
    });
    for (;;) {
      const next = await loop.next();
      if (next.done) {
        const { answer, usage, endReason, limit } = next.value;
        if (endReason === "stopped") throw new AbortedError();
        const tokens = usage.promptTokens + usage.completionTokens;
        return endReason === "answer" || !limit ? { text: answer, tokens } : { text: answer, tokens, limit: { reason: endReason, text: limit } };
      }
      const event = next.value;
      if (event.type === "step" && event.step.isError) {
        const { tool, outcome, result } = event.step;
        request.toolError(`${tool.name} ${outcome === "denied" ? "was not run" : "failed"}: ${oneLine(result, 300)}`);
      }
    }
  }
}

/** A note's first ```krypton-flow block, or a .json file's whole text; needs nothing of a host (the CLI reads it before opening a vault). */
export function parseFlowSource(source: string, fileName: string): ParsedFlowSource {
  let jsonText = source;
  let firstLine = 0;
  if (!fileName.toLowerCase().endsWith(".json")) {
    const blocks = flowBlocksIn(source);
    const [block] = blocks;
    if (!block) return { json: null, error: `${fileName} has no \`\`\`krypton-flow block` };
    // A workflow note is one flow: running the first of several would run one the user may not have meant.
    if (blocks.length > 1) {
      const lines = blocks.map((b) => b.line); // 1-based line of each opening fence
      return {
        json: null,
        error: `${fileName} has ${blocks.length} \`\`\`krypton-flow blocks (at lines ${lines.slice(0, -1).join(", ")} and ${lines[lines.length - 1]}), and a workflow note holds one: move each other flow into a note of its own`,
      };
    }
    jsonText = block.json;
    firstLine = block.line;
  }
  const parsed = parseFlowJson(jsonText, firstLine);
  return parsed.ok ? { json: parsed.value, error: null } : { json: null, error: `${fileName}: ${parsed.message}` };
}

/**
 * A task of the flow runs with tools (the agent loop), which work on a vault's notes. Whether they need the
 * index too is WorkflowService.needsIndex (it asks the tools).
 */
export function usesTools(flow: Flow): boolean {
  return flow.agents.some((a) => a.type === "task" && (a.params.toolNames?.length ?? 0) > 0);
}

/** The first `gemini/…` model the flow names, with its pointer; null when it names none. */
function geminiReference(flow: Flow): { pointer: string; model: string } | null {
  const refs: [string, string | undefined][] = [["/defaultModel", flow.defaultModel], ...flow.agents.map((a, i): [string, string | undefined] => [`/agents/${i}/model`, a.model])];
  for (const [pointer, model] of refs) {
    if (model === undefined) continue;
    const ref = parseModelRef(model);
    if (!("error" in ref) && ref.provider === "gemini") return { pointer, model };
  }
  return null;
}

function usesOllama(flow: Flow): boolean {
  const refs = [flow.defaultModel, ...flow.agents.map((a) => a.model)].filter((m): m is string => m !== undefined);
  return refs.some((m) => {
    const ref = parseModelRef(m);
    return !("error" in ref) && ref.provider === "ollama";
  });
}
