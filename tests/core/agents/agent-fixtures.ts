/**
 * A real agents set-up for tests: a temp vault on disk, the Node host, the loopback Ollama server, a
 * chat model talking to it over HTTP, the real VaultIndex over hash embeddings, NoteOperations and the
 * agents. Each test scripts the server's answers.
 */
import { createAgents } from "../../../src/core/agents/create-agents";
import { IntentRouter } from "../../../src/core/agents/agent-router";
import type { Agent } from "../../../src/core/agents/agent";
import type { NoteOperations } from "../../../src/core/notes/note-operations";
import { createNoteOperations } from "../../../src/core/notes/note-operations-impl";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import type { ChatModel } from "../../../src/core/ports/chat-model";
import type { Host } from "../../../src/core/ports/host";
import type { Logger } from "../../../src/core/ports/logger";
import type { VaultPort } from "../../../src/core/ports/vault";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { HashEmbedder } from "../../support/hash-embedder";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";

export interface AgentsWorld {
  vault: TempVault;
  host: Host;
  ollama: OllamaTestServer;
  settings: KryptonSettings;
  /** Set to null to simulate "no chat model configured". */
  model: ChatModel | null;
  index: VaultIndex;
  embedder: HashEmbedder;
  operations: NoteOperations;
  /** The router the agents share; study agents a test adds take it too (as createKrypton wires them). */
  router: IntentRouter;
  agents: Agent[];
  logs: { level: string; message: string; data?: unknown }[];
  /** Bodies of the chat requests the server received, in order. */
  chatPrompts(): string[];
  close(): Promise<void>;
}

export interface WorldOptions {
  files?: Record<string, string>;
  settings?: Partial<KryptonSettings>;
  /** Replace the host's vault (e.g. to simulate a race). */
  wrapVault?: (vault: VaultPort) => VaultPort;
  /** Open (index) the vault before the test. Default true. */
  openIndex?: boolean;
  /** Obsidian's config folder name (".obsidian" by default). */
  configDir?: string;
}

export async function makeAgentsWorld(options: WorldOptions = {}): Promise<AgentsWorld> {
  const vault = await makeTempVault(options.files ?? {});
  const ollama = await startOllamaServer();
  const logs: AgentsWorld["logs"] = [];
  const logger: Logger = {
    debug: (message, data) => logs.push({ level: "debug", message, data }),
    info: (message, data) => logs.push({ level: "info", message, data }),
    warn: (message, data) => logs.push({ level: "warn", message, data }),
    error: (message, data) => logs.push({ level: "error", message, data }),
  };
  const nodeHost = createNodeHost(vault.root, { logger, configDir: options.configDir });
  const host: Host = { ...nodeHost, vault: options.wrapVault ? options.wrapVault(nodeHost.vault) : nodeHost.vault };
  const settings: KryptonSettings = {
    ...DEFAULT_SETTINGS,
    ollamaUrl: ollama.url,
    chatProvider: "ollama",
    chatModel: "llama3.1:8b",
    requestTimeoutMs: 5_000,
    ...options.settings,
  };
  const embedder = new HashEmbedder({ dim: 256 });
  const world = {} as AgentsWorld;
  // The real Ollama provider over HTTP to the loopback server; tiny backoffs keep failure tests fast.
  const model = new OllamaChatModel({
    baseUrl: settings.ollamaUrl,
    model: settings.chatModel,
    fetch: host.fetch,
    clock: host.clock,
    timeoutMs: settings.requestTimeoutMs,
    retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  const index = new VaultIndex({ host, settings: () => world.settings, embedder: () => embedder });
  const operations = createNoteOperations({ host, settings: () => world.settings, index, chatModel: () => world.model });
  const router = new IntentRouter({ settings: () => world.settings, chatModel: () => world.model, logger });
  const agents = createAgents({ host, settings: () => world.settings, operations, chatModel: () => world.model, router });
  Object.assign(world, {
    vault,
    host,
    ollama,
    settings,
    model,
    index,
    embedder,
    operations,
    router,
    agents,
    logs,
    chatPrompts: () =>
      ollama.requestsTo("chat").map((r) => ((r.body as { messages: { content: string }[] }).messages ?? []).map((m) => m.content).join("\n")),
    close: async () => {
      await index.close();
      await ollama.close();
      await vault.cleanup();
    },
  });
  if (options.openIndex !== false) await index.open();
  return world;
}

/** Runs the agents in order like the ChatService does; returns the first result (or null) and who gave it. */
export async function routeMessage(
  world: AgentsWorld,
  message: string,
  context: { activeNotePath?: string; signal?: AbortSignal; history?: { role: "user" | "assistant"; content: string }[] } = {},
) {
  const calls: string[] = [];
  for (const agent of world.agents) {
    calls.push(agent.name);
    const result = await agent.tryHandle(message, context.history ?? [], { activeNotePath: context.activeNotePath, signal: context.signal });
    if (result) return { result, agent: agent.name, calls };
  }
  return { result: null, agent: null, calls };
}
