import type { ChatMessage, ChatModel } from "../ports/chat-model";
import type { Host } from "../ports/host";
import { ProviderError } from "../providers/provider-error";
import { settingsSecrets, type AgentPreset, type KryptonSettings } from "../settings";
import type { ToolRegistry } from "../tools/tool-registry";
import { toolsNeedIndex, type ToolContext } from "../tools/tool";
import { runAgentLoop } from "./agent-loop";
import { DEFAULT_PERSONA } from "./agent-prompts";
import { AgentToolbox } from "./agent-toolbox";
import type { AgentLoopEvent, AgentLoopResult, ConfirmPort, ExchangeEntry, LoopStep } from "./agent-types";
import { countOf } from "../util/text";

export interface AgentServiceDeps {
  host: Host;
  settings: () => KryptonSettings;
  registry: ToolRegistry;
  chatModel: () => ChatModel | null;
  /**
   * A model for a preset's "provider/model" (split at the first "/"); throws a ProviderError in plain
   * words when the reference is wrong or the provider unusable. Injected so this module stays free of
   * the provider SDKs (see krypton.ts).
   */
  modelFor?: (ref: string) => ChatModel;
  /** Why there is no chat model, in plain words for this host. */
  noModelReason?: () => string | null;
  /** Where the vault is, for hosts that know (CLI); vault_path stays implicit for the model anyway. */
  toolContext?: () => Omit<ToolContext, "signal">;
  /** Extra system text from connected MCP servers (their instructions, already capped). */
  instructions?: () => readonly string[];
}

export interface AgentAnswerOptions {
  conversationId?: string;
  signal?: AbortSignal;
  confirm?: ConfirmPort;
}

/** What the last turn of a conversation did, for /steps and /log. */
export interface AgentTurnRecord {
  steps: LoopStep[];
  exchange: ExchangeEntry[];
  usage: AgentLoopResult["usage"];
  /** The limit that ended the turn before the model finished (AgentLoopResult.limit), for /log. */
  limit?: string;
}

/**
 * Agent mode for every host: picks the preset (persona, `provider/model`, allowed tools), builds the
 * toolbox from the one registry and runs the loop. Keeps per-conversation state the loop must not lose
 * between turns: tools the user allowed for the conversation, and the last turn's steps and exchange.
 */
export class AgentService {
  private readonly approvals = new Map<string, Set<string>>();
  private readonly lastTurns = new Map<string, AgentTurnRecord>();
  private readonly noNativeTools = new Set<string>();

  constructor(private readonly deps: AgentServiceDeps) {}

  /** The preset in use, or null for the defaults. */
  preset(): AgentPreset | null {
    const s = this.deps.settings();
    return s.agentPreset ? (s.agentPresets.find((p) => p.name === s.agentPreset) ?? null) : null;
  }

  /** The model the agent thinks with: the preset's `provider/model`, else the chat model. Throws a plain ProviderError. */
  model(): ChatModel {
    const preset = this.preset();
    if (preset?.model && this.deps.modelFor) {
      try {
        return this.deps.modelFor(preset.model);
      } catch (err) {
        throw new ProviderError("not-configured", `Agent preset "${preset.name}": ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const model = this.deps.chatModel();
    if (!model) {
      throw new ProviderError("not-configured", this.deps.noModelReason?.() ?? "No chat model is configured: choose one in Krypton's settings.");
    }
    return model;
  }

  toolbox(): AgentToolbox {
    const preset = this.preset();
    return new AgentToolbox({
      registry: this.deps.registry,
      allowed: preset && preset.tools.length > 0 ? preset.tools : undefined,
      context: this.deps.toolContext?.(),
    });
  }

  /**
   * The agent's tools (the preset's, or the defaults) may need the vault index: a host that opens the index
   * only when needed (the CLI) opens it for agent mode only then. The user's MCP servers' tools never do.
   */
  needsIndex(): boolean {
    return toolsNeedIndex(this.toolbox().tools);
  }

  /** One agent turn as loop events; ends with "done". Throws ProviderError when no model can run. */
  async *answer(question: string, history: ChatMessage[], options: AgentAnswerOptions = {}): AsyncGenerator<AgentLoopEvent, AgentLoopResult> {
    const settings = this.deps.settings();
    const model = this.model();
    const key = options.conversationId ?? "";
    let approvals = this.approvals.get(key);
    if (!approvals) this.approvals.set(key, (approvals = new Set()));
    const loop = runAgentLoop({
      model,
      toolbox: this.toolbox(),
      question,
      history: history.filter((m) => m.role === "user" || m.role === "assistant"),
      persona: this.preset()?.persona,
      instructions: this.deps.instructions?.(),
      clock: this.deps.host.clock,
      maxSteps: settings.agentMaxSteps,
      timeoutMs: settings.agentTimeoutMs,
      signal: options.signal,
      confirm: options.confirm,
      approvals,
      noNativeTools: this.noNativeTools,
      secrets: settingsSecrets(settings),
    });
    while (true) {
      const next = await loop.next();
      if (next.done) return next.value;
      // Recorded before "done" goes out: a consumer may stop iterating right after it.
      if (next.value.type === "done") {
        const { steps, exchange, usage, limit } = next.value.result;
        this.lastTurns.set(key, { steps, exchange, usage, ...(limit ? { limit } : {}) });
      }
      yield next.value;
    }
  }

  lastTurn(conversationId?: string): AgentTurnRecord | null {
    return this.lastTurns.get(conversationId ?? "") ?? null;
  }

  /** The tools the agent has now, grouped: "built-in" or the MCP server's name. */
  describeTools(): { group: string; name: string; description: string; write: boolean }[] {
    const toolbox = this.toolbox();
    return toolbox.tools.map((t) => ({ group: t.remote?.server ?? "built-in", name: t.name, description: t.description, write: toolbox.needsConfirmation(t) }));
  }

  /** /config: model, persona, limits, tools by group. Never a key. */
  describeConfig(): string {
    const settings = this.deps.settings();
    const preset = this.preset();
    let model: string;
    try {
      model = this.model().id;
    } catch (err) {
      model = `(not usable: ${err instanceof Error ? err.message : String(err)})`;
    }
    const groups = new Map<string, number>();
    for (const t of this.describeTools()) groups.set(t.group, (groups.get(t.group) ?? 0) + 1);
    const persona = (preset?.persona.trim() || DEFAULT_PERSONA).replace(/\s+/g, " ");
    return [
      `Preset: ${preset ? preset.name : "(default)"}`,
      `Model: ${model}`,
      `Persona: ${persona.length > 160 ? `${persona.slice(0, 159)}…` : persona}`,
      `Limits: ${countOf(settings.agentMaxSteps, "step")}, ${Math.round(settings.agentTimeoutMs / 1000)} s per turn`,
      `Tools: ${[...groups].map(([g, n]) => `${g} (${n})`).join(", ") || "none"}`,
    ].join("\n");
  }
}
