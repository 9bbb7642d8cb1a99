/**
 * The settings tab's "Test connection" buttons and model dropdowns. Each answer is one sentence in plain
 * words saying exactly what failed (unreachable, key rejected, model not pulled), never a stack trace or a key.
 */
import type { Host } from "../ports/host";
import type { KryptonSettings, ProviderId } from "../settings";
import { TavilySearch } from "../web/tavily-search";
import { listGeminiModels, type GeminiOptions } from "./gemini/gemini-chat-model";
import { listOllamaModels, ollamaHasModel, ollamaVersion } from "./ollama/ollama-chat-model";
import { pullCommand } from "./ollama/ollama-errors";
import { ProviderError } from "./provider-error";
import { NO_RETRY } from "./retry";
import { errorMessage } from "../util/errors";
import { countOf } from "../util/text";

export type ConnectionTarget = ProviderId | "tavily";

export interface ConnectionResult {
  ok: boolean;
  /** One plain-words sentence for the settings tab. */
  message: string;
  /** Models the service offers (Ollama, Gemini), when it answered. */
  models?: string[];
}

export type ModelListResult = { ok: true; models: string[] } | { ok: false; message: string };

/** A button press should answer fast and not retry: the user is waiting for a verdict. */
const TEST_TIMEOUT_MS = 10_000;

function callOptions(settings: KryptonSettings, host: Host) {
  return { fetch: host.fetch, clock: host.clock, timeoutMs: Math.min(settings.requestTimeoutMs, TEST_TIMEOUT_MS), retry: NO_RETRY };
}

function geminiOptions(settings: KryptonSettings, host: Host): GeminiOptions {
  return { ...callOptions(settings, host), apiKey: settings.geminiApiKey.trim(), baseUrl: settings.geminiBaseUrl };
}

function messageOf(err: unknown): string {
  if (err instanceof ProviderError) return err.message;
  return `Unexpected error: ${errorMessage(err)}`;
}

export async function testConnection(
  settings: KryptonSettings,
  host: Host,
  target: ConnectionTarget,
  signal?: AbortSignal,
): Promise<ConnectionResult> {
  try {
    if (target === "ollama") return await testOllama(settings, host, signal);
    if (target === "gemini") return await testGemini(settings, host, signal);
    return await testTavily(settings, host, signal);
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  }
}

async function testOllama(settings: KryptonSettings, host: Host, signal?: AbortSignal): Promise<ConnectionResult> {
  const options = { ...callOptions(settings, host), baseUrl: settings.ollamaUrl };
  const version = await ollamaVersion(options, signal);
  const models = await listOllamaModels(options, signal);
  const needed = [
    settings.chatProvider === "ollama" ? settings.chatModel.trim() : "",
    settings.embeddingProvider === "ollama" ? settings.embeddingModel.trim() : "",
  ].filter(Boolean);
  const missing = needed.filter((m) => !ollamaHasModel(models, m));
  if (missing.length > 0) {
    const list = missing.map((m) => `'${m}'`).join(" and ");
    const commands = missing.map((m) => `\`${pullCommand(m)}\``).join(", then ");
    return {
      ok: false,
      models,
      message: `Ollama ${version} is running, but model ${list} ${missing.length > 1 ? "are" : "is"} not installed: run ${commands}.`,
    };
  }
  const ready = needed.length ? `; ${needed.map((m) => `'${m}'`).join(" and ")} ready` : "";
  return { ok: true, models, message: `Connected to Ollama ${version}: ${countOf(models.length, "model")} installed${ready}.` };
}

async function testGemini(settings: KryptonSettings, host: Host, signal?: AbortSignal): Promise<ConnectionResult> {
  if (!settings.geminiApiKey.trim()) return { ok: false, message: "No Gemini API key: add one in settings (get it from Google AI Studio)." };
  const options = geminiOptions(settings, host);
  const chat = await listGeminiModels(options, "chat", signal);
  const embedding = await listGeminiModels(options, "embedding", signal);
  const models = [...new Set([...chat, ...embedding])];
  const needed = [
    settings.chatProvider === "gemini" ? settings.chatModel.trim() : "",
    settings.embeddingProvider === "gemini" ? settings.embeddingModel.trim() : "",
  ].filter(Boolean);
  const missing = needed.filter((m) => !models.includes(m.replace(/^models\//, "")));
  if (missing.length > 0) {
    const list = missing.map((m) => `'${m}'`).join(" and ");
    return {
      ok: false,
      models,
      message: `The Gemini key works, but model ${list} ${missing.length > 1 ? "are" : "is"} not available to it: check the model name in settings.`,
    };
  }
  return { ok: true, models, message: `Connected to Gemini: the key works and ${countOf(models.length, "model")} ${models.length === 1 ? "is" : "are"} available.` };
}

async function testTavily(settings: KryptonSettings, host: Host, signal?: AbortSignal): Promise<ConnectionResult> {
  if (!settings.tavilyApiKey.trim()) return { ok: false, message: "No Tavily API key: add one in settings (get it from app.tavily.com)." };
  // One tiny search (one credit) is the only call that proves the key works.
  const search = new TavilySearch({ ...callOptions(settings, host), apiKey: settings.tavilyApiKey, baseUrl: settings.tavilyBaseUrl, maxResults: 1 });
  await search.search("Obsidian", signal);
  return { ok: true, message: "Connected to Tavily: the key works." };
}

/** Model names for a settings dropdown: chat models or embedding models of one provider. */
export async function listModels(
  settings: KryptonSettings,
  host: Host,
  provider: ProviderId,
  purpose: "chat" | "embedding",
  signal?: AbortSignal,
): Promise<ModelListResult> {
  try {
    if (provider === "ollama") {
      const models = await listOllamaModels({ ...callOptions(settings, host), baseUrl: settings.ollamaUrl }, signal);
      // Ollama does not say which models embed; names are a good hint and the user can still type any name.
      const embeds = (m: string) => /embed|bge|minilm|e5|gte|arctic/i.test(m);
      const preferred = models.filter((m) => (purpose === "embedding" ? embeds(m) : !embeds(m)));
      return { ok: true, models: preferred.length ? preferred : models };
    }
    if (!settings.geminiApiKey.trim()) return { ok: false, message: "No Gemini API key: add one in settings." };
    return { ok: true, models: await listGeminiModels(geminiOptions(settings, host), purpose, signal) };
  } catch (err) {
    return { ok: false, message: messageOf(err) };
  }
}
