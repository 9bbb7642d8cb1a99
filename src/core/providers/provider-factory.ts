import type { ChatModel } from "../ports/chat-model";
import type { Embedder } from "../ports/embedder";
import type { Host } from "../ports/host";
import type { KryptonSettings } from "../settings";
import { GeminiChatModel } from "./gemini/gemini-chat-model";
import { DEFAULT_GEMINI_EMBEDDING_MODEL, GeminiEmbedder } from "./gemini/gemini-embedder";
import { OllamaChatModel } from "./ollama/ollama-chat-model";
import { createOllamaEmbedder } from "./ollama/ollama-embedder";
import type { RetryPolicy } from "./retry";

/** Knobs that are not user settings: tests inject tiny backoffs here. */
export interface ProviderOptions {
  retry?: RetryPolicy;
}

/** The chat model chosen in settings, or null when it cannot be used (see chatModelUnavailableReason). */
export function createChatModel(settings: KryptonSettings, host: Host, options: ProviderOptions = {}): ChatModel | null {
  return createChatModelNamed(settings, host, settings.chatModel, options);
}

/** A chat model of the configured chat provider with another model name (the reranker model). */
export function createChatModelNamed(settings: KryptonSettings, host: Host, modelName: string, options: ProviderOptions = {}): ChatModel | null {
  const model = modelName.trim();
  if (!model) return null;
  const common = { fetch: host.fetch, clock: host.clock, timeoutMs: settings.requestTimeoutMs, retry: options.retry };
  if (settings.chatProvider === "gemini") {
    if (!settings.geminiApiKey.trim()) return null;
    return new GeminiChatModel({ ...common, apiKey: settings.geminiApiKey.trim(), baseUrl: settings.geminiBaseUrl, model });
  }
  return new OllamaChatModel({ ...common, baseUrl: settings.ollamaUrl, model, maxContext: settings.ollamaMaxContext });
}

/**
 * Why createChatModel returned null, in plain words; null when a chat model is configured. On the command
 * line the fix is an environment variable or a flag (keys kept in Obsidian's secret storage are not in
 * data.json, so the CLI never sees them).
 */
export function chatModelUnavailableReason(settings: KryptonSettings, hostKind: "obsidian" | "cli" = "obsidian"): string | null {
  if (!settings.chatModel.trim()) {
    return hostKind === "cli" ? "No chat model is selected: pass --chat-model or set KRYPTON_CHAT_MODEL." : "No chat model is selected: choose one in Krypton's settings.";
  }
  if (settings.chatProvider === "gemini" && !settings.geminiApiKey.trim()) {
    return `Gemini is selected for chat but there is no Gemini API key: ${geminiKeyFix(hostKind)}.`;
  }
  return null;
}

/** How to give this host a Gemini key: the CLI reads it from the environment, never from Obsidian's secret storage. */
export function geminiKeyFix(hostKind: "obsidian" | "cli"): string {
  return hostKind === "cli" ? "set GEMINI_API_KEY" : "add one in Krypton's settings";
}

/** The embedder chosen in settings; null when embeddings are off (keyword-only index) or Gemini has no key. */
export function createEmbedder(settings: KryptonSettings, host: Host, options: ProviderOptions = {}): Embedder | null {
  if (settings.embeddingProvider === "none") return null;
  if (settings.embeddingProvider === "gemini") {
    if (!settings.geminiApiKey.trim()) return null;
    return new GeminiEmbedder({
      apiKey: settings.geminiApiKey.trim(),
      baseUrl: settings.geminiBaseUrl,
      model: settings.embeddingModel.trim() || DEFAULT_GEMINI_EMBEDDING_MODEL,
      fetch: host.fetch,
      clock: host.clock,
      timeoutMs: settings.requestTimeoutMs,
      retry: options.retry,
    });
  }
  if (!settings.embeddingModel.trim()) return null;
  return createOllamaEmbedder(settings, host);
}

/** Why createEmbedder returned null, in plain words; null when an embedder is configured. */
export function embedderUnavailableReason(settings: KryptonSettings): string | null {
  if (settings.embeddingProvider === "none") return "Embeddings are turned off: search uses keywords only.";
  if (settings.embeddingProvider === "gemini" && !settings.geminiApiKey.trim()) {
    return "Gemini is selected for embeddings but there is no Gemini API key: add one in Krypton's settings.";
  }
  if (!settings.embeddingModel.trim()) return "No embedding model is selected: choose one in Krypton's settings.";
  return null;
}
