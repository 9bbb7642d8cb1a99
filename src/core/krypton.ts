import type { Agent } from "./agents/agent";
import { createAgents } from "./agents/create-agents";
import type { NoteOperations } from "./notes/note-operations";
import { createNoteOperations } from "./notes/note-operations-impl";
import type { ChatServiceApi } from "./chat/chat-types";
import { ChatService } from "./chat/chat-service";
import type { ConversationStoreApi } from "./chat/conversation-types";
import { ConversationStore } from "./chat/conversation-store";
import type { VaultIndexApi } from "./indexing/vault-index-api";
import { VaultIndex } from "./indexing/vault-index";
import type { ChatModel } from "./ports/chat-model";
import type { Embedder } from "./ports/embedder";
import type { Host } from "./ports/host";
import { policedVault } from "./notes/read-policy";
import { McpClientManager } from "./mcp-client/mcp-client-manager";
import type { StdioTransportFactory } from "./mcp-client/transports";
import { chatModelUnavailableReason, createChatModel, createEmbedder } from "./providers/provider-factory";
import { createChatModelFor, parseModelRef } from "./providers/model-ref";
import { settingsSecrets, type KryptonSettings } from "./settings";
import { redactingLogger } from "./ports/logger";
import { registerNoteTools } from "./tools/note-tools";
import { registerAgentTools } from "./tools/agent-tools";
import { AgentAnswerer } from "./agent-loop/agent-answerer";
import { AgentService } from "./agent-loop/agent-service";
import { createWebSearch } from "./web/tavily-search";
import { ToolRegistry } from "./tools/tool-registry";
import { WorkflowService } from "./workflows/workflow-service";
import { registerWorkflowTool } from "./workflows/workflow-tool";
import { FlashcardService } from "./flashcards/flashcard-service";
import { registerFlashcardTool } from "./flashcards/flashcard-tool";
import { createFlashcardAgent } from "./flashcards/flashcard-agent";
import { QuizService } from "./quiz/quiz-service";
import { GoalService } from "./goals/goal-service";
import { createGoalAgent } from "./goals/goal-agent";
import { registerGoalTool } from "./goals/goal-tool";
import { createQuizAgent } from "./quiz/quiz-agent";
import { IntentRouter } from "./agents/agent-router";

/**
 * Krypton's core, wired once per vault. The Obsidian plugin, the CLI and the MCP server all use this
 * object, so there is one search API, one chat pipeline, one set of agents and one tool registry.
 */
export interface KryptonCore {
  readonly host: Host;
  settings(): KryptonSettings;
  /** Swaps providers for new settings; an embedder change re-embeds on the next sync. */
  applySettings(next: KryptonSettings): void;
  readonly index: VaultIndexApi;
  readonly chat: ChatServiceApi;
  readonly conversations: ConversationStoreApi;
  readonly operations: NoteOperations;
  readonly agents: Agent[];
  readonly tools: ToolRegistry;
  /** Agent mode (the tool loop) over `tools`, built-in and MCP; answers chat turns sent with `agent: true`. */
  readonly agent: AgentService;
  readonly workflows: WorkflowService;
  /**
   * The user's MCP servers (settings.mcpServers): `ensure(settings().mcpServers)` connects them and puts
   * their tools into `tools` as "server:tool"; `instructions()` for the system prompt; `listTools()` by server.
   */
  readonly mcp: McpClientManager;
  readonly flashcards: FlashcardService;
  readonly goals: GoalService;
  /** Null when no chat model is configured. */
  chatModel(): ChatModel | null;
  /** Null when embeddings are off: the index is keyword-only. */
  embedder(): Embedder | null;
  /**
   * The host found the embedding server unreachable (the CLI's probe, before it opens the index): from now
   * on this core runs without an embedder, keyword-only, and its index gives this reason wherever it says
   * why (status, search results, chat notices). Saved vectors are kept for a later run.
   */
  runWithoutEmbedder(reason: string): void;
  close(): Promise<void>;
}

export interface KryptonOptions {
  /** Starts stdio MCP servers (Node hosts: src/node/mcp-stdio-transport.ts); absent on mobile. */
  mcpStdio?: StdioTransportFactory;
}

export function createKrypton(hostIn: Host, initialSettings: KryptonSettings, options: KryptonOptions = {}): KryptonCore {
  let settings = initialSettings;
  // Every reader below (index, chat, agents, tools, workflows) sees the vault through the one read policy,
  // and every log line loses the secrets of the current settings, whatever the host's logger does.
  const host: Host = {
    ...hostIn,
    vault: policedVault(hostIn.vault, () => settings),
    logger: redactingLogger(hostIn.logger, () => settingsSecrets(settings)),
  };
  let chatModel = createChatModel(settings, host);
  let embedderUnreachable: string | undefined;
  const embedderFor = (s: KryptonSettings) => (embedderUnreachable === undefined ? createEmbedder(s, host) : null);
  let embedder = embedderFor(settings);
  const getSettings = () => settings;
  const getChatModel = () => chatModel;
  const getEmbedder = () => embedder;

  const index = new VaultIndex({ host, settings: getSettings, embedder: getEmbedder, embedderUnreachable: () => embedderUnreachable });
  const conversations = new ConversationStore(host.data, host.clock, host.logger);
  const operations = createNoteOperations({ host, settings: getSettings, index, chatModel: getChatModel });
  const flashcards = new FlashcardService({ host, settings: getSettings, index, chatModel: getChatModel });
  const quiz = new QuizService({ host, settings: getSettings, chatModel: getChatModel, flashcards });
  const goals = new GoalService({ host, settings: getSettings, index });
  // The quiz first: while one runs, every message of its conversation is an answer. Then flashcards, whose
  // requests ("make flashcards about X") would otherwise read as "make a note about X".
  // One router for all of them: with the classifier on, a message costs one model call whichever agent takes it.
  const router = new IntentRouter({ settings: getSettings, chatModel: getChatModel, logger: host.logger });
  const agents = [
    createQuizAgent({ quiz, router, logger: host.logger }),
    createFlashcardAgent({ flashcards, router, logger: host.logger }),
    createGoalAgent({ goals, router, logger: host.logger }),
    ...createAgents({ host, settings: getSettings, operations, chatModel: getChatModel, router }),
  ];
  const tools = new ToolRegistry();
  registerNoteTools(tools, { operations, vault: host.vault, settings: getSettings });
  registerAgentTools(tools, {
    vault: host.vault,
    clock: host.clock,
    settings: getSettings,
    webSearch: () => (settings.tavilyApiKey.trim() ? createWebSearch(settings, host) : null),
  });
  const mcp = new McpClientManager({
    registry: tools,
    fetch: host.fetch,
    stdio: options.mcpStdio,
    logger: host.logger,
    callTimeoutMs: () => settings.mcpToolTimeoutMs,
  });
  const agent = new AgentService({
    host,
    settings: getSettings,
    registry: tools,
    chatModel: getChatModel,
    modelFor(text) {
      const ref = parseModelRef(text);
      if ("error" in ref) throw new Error(ref.error);
      const model = createChatModelFor(settings, host, ref);
      if (!model) throw new Error(`${text} is not usable: add the provider's key in Krypton's settings`);
      return model;
    },
    noModelReason: () => chatModelUnavailableReason(settings, host.platform.kind),
    instructions: () => {
      const text = mcp.instructions();
      return text ? [text] : [];
    },
  });
  const chat = new ChatService({
    host,
    settings: getSettings,
    index,
    chatModel: getChatModel,
    conversations,
    agents: () => (settings.agentsEnabled ? agents : []),
    // Agent mode answers after the intent agents declined and before plain/RAG chat.
    answerers: (defaults) => [...defaults.slice(0, -1), new AgentAnswerer(agent), ...defaults.slice(-1)],
  });
  // Flows may name an MCP server configured in settings (its tools come with it), never start one.
  const workflows = new WorkflowService({
    host,
    settings: getSettings,
    tools,
    mcpToolNames: () => settings.mcpServers.map((s) => s.name),
    ensureMcpTools: async () => void (await mcp.ensure(settings.mcpServers)),
  });
  registerWorkflowTool(tools, workflows);
  registerFlashcardTool(tools, flashcards);
  registerGoalTool(tools, goals);

  return {
    host,
    settings: getSettings,
    applySettings(next) {
      settings = next;
      chatModel = createChatModel(next, host);
      embedder = embedderFor(next);
    },
    index,
    chat,
    conversations,
    operations,
    agents,
    tools,
    agent,
    workflows,
    mcp,
    flashcards,
    goals,
    chatModel: getChatModel,
    embedder: getEmbedder,
    runWithoutEmbedder(reason) {
      embedderUnreachable = reason;
      embedder = null;
    },
    close: async () => {
      await mcp.close();
      await index.close();
    },
  };
}
