import type { Chunk } from "../../../src/core/indexing/chunk";
import type { ChunkHit } from "../../../src/core/search/search-types";
import { ChatService, type ChatServiceDeps } from "../../../src/core/chat/chat-service";
import type { ChatEvent, SendOptions } from "../../../src/core/chat/chat-types";
import { ConversationStore } from "../../../src/core/chat/conversation-store";
import type { Agent } from "../../../src/core/agents/agent";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import type { ChatModel } from "../../../src/core/ports/chat-model";
import type { Host } from "../../../src/core/ports/host";
import type { Logger } from "../../../src/core/ports/logger";
import { OllamaChatModel } from "../../../src/core/providers/ollama/ollama-chat-model";
import { createOllamaEmbedder } from "../../../src/core/providers/ollama/ollama-embedder";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { createWebSearch } from "../../../src/core/web/tavily-search";
import { createNodeHost } from "../../../src/node/node-host";
import { startOllamaServer, type OllamaTestServer } from "../../support/servers/ollama-server";
import { DEFAULT_TAVILY_KEY, startTavilyServer, type TavilyTestServer } from "../../support/servers/tavily-server";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { FAST_RETRY } from "../providers/provider-fixtures";

/** A search hit for a chunk of `path` (ids from path + start line, like the index). */
export function hit(path: string, text: string, extra: Partial<Chunk> = {}, score = 0.8): ChunkHit {
  const chunk: Chunk = {
    id: `${path}#${extra.startLine ?? 1}`,
    path,
    title: path.replace(/\.md$/, "").split("/").pop()!,
    aliases: [],
    tags: [],
    headings: [],
    startLine: 1,
    endLine: 3,
    text,
    textHash: "h",
    ...extra,
  };
  return { chunk, score, keywordScore: score, vectorScore: score, snippet: "" };
}


/** A logger that remembers what it was told (to check that failures are logged and keys are not). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string, data?: unknown) => {
    lines.push(`${level} ${message}${data === undefined ? "" : ` ${JSON.stringify(data)}`}`);
  };
  return { lines, debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

export interface ChatHarness {
  vault: TempVault;
  host: Host;
  ollama: OllamaTestServer;
  tavily: TavilyTestServer;
  logger: ReturnType<typeof recordingLogger>;
  /** Mutable: tests change fields before a send. */
  settings: KryptonSettings;
  index: VaultIndex;
  store: ConversationStore;
  agents: Agent[];
  /** Replace to test "no chat model" or another provider. */
  model: ChatModel | null;
  service: ChatService;
  send(message: string, options: Partial<SendOptions>): Promise<ChatEvent[]>;
  /** The last prompt the model received (its final user message). */
  lastPrompt(): string;
  cleanup(): Promise<void>;
}

/**
 * A ChatService on real parts: a temp vault, the real VaultIndex with the real Ollama embedder, the
 * real Ollama chat model and Tavily search, all talking to loopback protocol servers.
 */
export async function makeChatHarness(
  files: Record<string, string>,
  options: { openIndex?: boolean; mobile?: boolean; deps?: Partial<ChatServiceDeps> } = {},
): Promise<ChatHarness> {
  const vault = await makeTempVault(files);
  const [ollama, tavily] = await Promise.all([startOllamaServer({ embeddingDim: 64 }), startTavilyServer()]);
  const logger = recordingLogger();
  const base = createNodeHost(vault.root, { logger });
  const host: Host = { ...base, platform: { kind: "cli", mobile: options.mobile ?? false } };
  const settings: KryptonSettings = {
    ...DEFAULT_SETTINGS,
    excludePatterns: [],
    mcpAllowedOrigins: [],
    ollamaUrl: ollama.url,
    tavilyBaseUrl: tavily.url,
    tavilyApiKey: DEFAULT_TAVILY_KEY,
    requestTimeoutMs: 2_000,
    similarityThreshold: 0.05,
  };
  const embedder = createOllamaEmbedder({ baseUrl: ollama.url, model: "nomic-embed-text", fetch: host.fetch, clock: host.clock, timeoutMs: 2_000 });
  const index = new VaultIndex({
    host,
    settings: () => settings,
    embedder: () => embedder,
    options: { debounceMs: 5, retry: FAST_RETRY, embedRetryAfterMs: 0, queryTimeoutMs: 2_000 },
  });
  if (options.openIndex !== false) await index.open();
  const store = new ConversationStore(host.data, host.clock, logger);
  const agents: Agent[] = [];
  const harness: ChatHarness = {
    vault,
    host,
    ollama,
    tavily,
    logger,
    settings,
    index,
    store,
    agents,
    model: null,
    service: null as unknown as ChatService,
    async send(message, sendOptions) {
      const events: ChatEvent[] = [];
      for await (const e of harness.service.send(message, { mode: "none", ...sendOptions })) events.push(e);
      return events;
    },
    lastPrompt() {
      const chats = ollama.requestsTo("chat");
      const body = chats[chats.length - 1]?.body as { messages: { role: string; content: string }[] } | undefined;
      // The user message (context and question); the language instruction follows it.
      return body?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
    },
    async cleanup() {
      await index.close();
      await Promise.all([ollama.close(), tavily.close()]);
      await vault.cleanup();
    },
  };
  harness.model = new OllamaChatModel({
    baseUrl: ollama.url,
    model: settings.chatModel,
    fetch: host.fetch,
    clock: host.clock,
    timeoutMs: settings.requestTimeoutMs,
    retry: FAST_RETRY,
  });
  harness.service = new ChatService({
    host,
    settings: () => settings,
    index,
    chatModel: () => harness.model,
    conversations: store,
    agents: () => agents,
    webSearch: () => createWebSearch(settings, host, FAST_RETRY),
    ...options.deps,
  });
  return harness;
}

export function ofType<T extends ChatEvent["type"]>(events: ChatEvent[], type: T): Extract<ChatEvent, { type: T }>[] {
  return events.filter((e): e is Extract<ChatEvent, { type: T }> => e.type === type);
}

export function doneOf(events: ChatEvent[]): Extract<ChatEvent, { type: "done" }> {
  const done = ofType(events, "done");
  if (done.length !== 1 || events[events.length - 1] !== done[0]) throw new Error(`expected exactly one final done event, got ${JSON.stringify(events.map((e) => e.type))}`);
  return done[0];
}
