/**
 * The agent loop over real parts: a temp vault on disk, the Node host, the loopback Ollama server and
 * the real Ollama provider (JSON action protocol: plain scripted replies), the one ToolRegistry with the
 * MCP note tools and the agent tools. `scriptedModel` stands in for a model with native tool calls
 * until the providers speak them (it yields the port's ChatEvents, nothing else).
 */
import { AgentToolbox } from "../../../src/core/agent-loop/agent-toolbox";
import { runAgentLoop, type AgentLoopOptions } from "../../../src/core/agent-loop/agent-loop";
import type { AgentLoopEvent, AgentLoopResult, ConfirmDecision, ConfirmRequest } from "../../../src/core/agent-loop/agent-types";
import type { ChatEvent, ChatModel, ChatRequest, ModelCapabilities } from "../../../src/core/ports/chat-model";
import { registerAgentTools } from "../../../src/core/tools/agent-tools";
import { registerNoteTools } from "../../../src/core/tools/note-tools";
import { ToolRegistry } from "../../../src/core/tools/tool-registry";
import { makeAgentsWorld, type AgentsWorld, type WorldOptions } from "../agents/agent-fixtures";

export interface LoopWorld extends AgentsWorld {
  registry: ToolRegistry;
  confirms: ConfirmRequest[];
  /** What the next confirmations answer (in order); "deny" when empty. */
  decisions: ConfirmDecision[];
  run(question: string, extra?: Partial<AgentLoopOptions> & { allowed?: string[] }): Promise<{ result: AgentLoopResult; events: AgentLoopEvent[]; tokens: string }>;
  /** Chat request bodies the Ollama server received. */
  bodies(): { messages: { role: string; content: string }[]; format?: unknown; tools?: unknown }[];
}

/**
 * `nativeTools: false` (default) makes the loopback model one without tool support (its /api/show has no
 * "tools"), so the loop takes the JSON action protocol; true keeps Ollama's native tool calling.
 */
export async function makeLoopWorld(options: WorldOptions & { nativeTools?: boolean } = {}): Promise<LoopWorld> {
  const world = (await makeAgentsWorld({ openIndex: false, ...options })) as LoopWorld;
  if (!options.nativeTools) world.ollama.modelInfo["llama3.1:8b"] = { capabilities: ["completion"] };
  const registry = new ToolRegistry();
  registerNoteTools(registry, { operations: world.operations, vault: world.host.vault, settings: () => world.settings });
  registerAgentTools(registry, { vault: world.host.vault, clock: world.host.clock, settings: () => world.settings, webSearch: () => null });
  world.registry = registry;
  world.confirms = [];
  world.decisions = [];
  world.bodies = () => world.ollama.requestsTo("chat").map((r) => r.body as ReturnType<LoopWorld["bodies"]>[number]);
  world.run = async (question, extra = {}) => {
    const { allowed, ...rest } = extra;
    const toolbox = new AgentToolbox({ registry, allowed });
    const events: AgentLoopEvent[] = [];
    let tokens = "";
    const loop = runAgentLoop({
      model: world.model!,
      toolbox,
      question,
      clock: world.host.clock,
      confirm: (request) => {
        world.confirms.push(request);
        return Promise.resolve(world.decisions.shift() ?? "deny");
      },
      noNativeTools: new Set(),
      ...rest,
    });
    let result: AgentLoopResult | undefined;
    for await (const event of loop) {
      events.push(event);
      if (event.type === "token") tokens += event.text;
      if (event.type === "retract") tokens = tokens.slice(0, tokens.length - event.text.length);
      if (event.type === "done") result = event.result;
    }
    return { result: result!, events, tokens };
  };
  return world;
}

/** A JSON action reply. */
export const call = (tool: string, args: Record<string, unknown> = {}, thought?: string) =>
  JSON.stringify({ action: "call_tool", ...(thought ? { thought } : {}), tool, arguments: args });
export const final = (response: string) => JSON.stringify({ action: "final", response });

/** A model with native tool calls, scripted turn by turn; records every request. */
export class ScriptedToolModel implements ChatModel {
  readonly requests: ChatRequest[] = [];
  constructor(
    readonly id: string,
    private readonly turns: ((request: ChatRequest) => ChatEvent[] | Promise<ChatEvent[]>)[],
    private readonly caps: ModelCapabilities = { tools: true },
  ) {}
  async *turn(request: ChatRequest): AsyncIterable<ChatEvent> {
    this.requests.push({ ...request, messages: request.messages.map((m) => ({ ...m })) });
    const next = this.turns.shift();
    if (!next) throw new Error("ScriptedToolModel: no turn scripted");
    for (const event of await next(request)) yield event;
  }
  async *stream(request: ChatRequest): AsyncIterable<string> {
    for await (const e of this.turn(request)) if (e.type === "text") yield e.text;
  }
  async complete(request: ChatRequest): Promise<string> {
    let out = "";
    for await (const t of this.stream(request)) out += t;
    return out;
  }
  capabilities(): Promise<ModelCapabilities> {
    return Promise.resolve(this.caps);
  }
}
