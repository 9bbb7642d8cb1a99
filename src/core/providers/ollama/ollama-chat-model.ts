import { Ollama } from "ollama/browser";
import type { ChatEvent, ChatModel, ChatRequest, ModelCapabilities } from "../../ports/chat-model";
import { textOnlyTurn } from "../text-turn";
import type { Clock } from "../../ports/clock";
import type { FetchLike } from "../../ports/http";
import { collectText, guardedCall, guardedTextStream } from "../guarded-stream";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry";
import { ollamaError } from "./ollama-errors";
import { stripThinking } from "./strip-thinking";

export interface OllamaChatModelOptions {
  /** "http://localhost:11434" */
  baseUrl: string;
  model: string;
  fetch: FetchLike;
  clock: Clock;
  /** Longest silence allowed: before the first token and between tokens. */
  timeoutMs: number;
  retry?: RetryPolicy;
}

export function normalizeBaseUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

/** Chat through Ollama's /api/chat, streamed, via `ollama/browser` with the host's fetch. */
export class OllamaChatModel implements ChatModel {
  readonly id: string;
  private readonly baseUrl: string;

  constructor(private readonly options: OllamaChatModelOptions) {
    this.id = `ollama:${options.model}`;
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
  }

  stream(request: ChatRequest): AsyncIterable<string> {
    const { model, clock, fetch, timeoutMs } = this.options;
    return guardedTextStream({
      clock,
      fetch,
      timeoutMs,
      signal: request.signal,
      retry: this.options.retry ?? DEFAULT_RETRY_POLICY,
      open: async (guard) => {
        const client = new Ollama({ host: this.baseUrl, fetch: guard.fetch });
        const parts = await client.chat({
          model,
          messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
          stream: true,
          ...(request.jsonSchema ? { format: request.jsonSchema } : request.json ? { format: "json" } : {}),
          ...(request.temperature !== undefined ? { options: { temperature: request.temperature } } : {}),
        });
        return stripThinking(
          (async function* () {
            for await (const part of parts) yield part.message?.content ?? "";
          })(),
        );
      },
      mapError: (err, guard) => ollamaError(err, guard, this.baseUrl, model),
    });
  }

  complete(request: ChatRequest): Promise<string> {
    return collectText(this.stream(request));
  }

  turn(request: ChatRequest): AsyncIterable<ChatEvent> {
    return textOnlyTurn(this.stream(request));
  }

  capabilities(): Promise<ModelCapabilities> {
    return Promise.resolve({ tools: false });
  }
}

/** Installed model names from /api/tags ("llama3.1:8b", "nomic-embed-text:latest"). */
export function listOllamaModels(options: Omit<OllamaChatModelOptions, "model">, signal?: AbortSignal): Promise<string[]> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  return guardedCall({
    clock: options.clock,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal,
    retry: options.retry ?? DEFAULT_RETRY_POLICY,
    call: async (guard) => {
      const client = new Ollama({ host: baseUrl, fetch: guard.fetch });
      const tags = await client.list();
      return tags.models.map((m) => m.name);
    },
    mapError: (err, guard) => ollamaError(err, guard, baseUrl),
  });
}

/** The running Ollama's version string (for "Test connection"). */
export function ollamaVersion(options: Omit<OllamaChatModelOptions, "model">, signal?: AbortSignal): Promise<string> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  return guardedCall({
    clock: options.clock,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal,
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    call: async (guard) => (await new Ollama({ host: baseUrl, fetch: guard.fetch }).version()).version,
    mapError: (err, guard) => ollamaError(err, guard, baseUrl),
  });
}

/** True when `wanted` is among the installed names ("llama3.1" means "llama3.1:latest", as in Ollama). */
export function ollamaHasModel(installed: string[], wanted: string): boolean {
  const norm = (n: string) => (n.includes(":") ? n : `${n}:latest`);
  return installed.some((m) => norm(m) === norm(wanted));
}
