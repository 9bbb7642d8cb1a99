import type { Content } from "@google/genai/web";
import type { ChatEvent, ChatMessage, ChatModel, ChatRequest, ModelCapabilities } from "../../ports/chat-model";
import { textOnlyTurn } from "../text-turn";
import type { Clock } from "../../ports/clock";
import type { FetchLike } from "../../ports/http";
import { collectText, guardedCall, guardedTextStream } from "../guarded-stream";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../retry";
import { geminiClient, normalizeGeminiBaseUrl } from "./gemini-client";
import { geminiError } from "./gemini-errors";

export interface GeminiOptions {
  apiKey: string;
  baseUrl: string;
  fetch: FetchLike;
  clock: Clock;
  /** Longest silence allowed: before the first token and between tokens. */
  timeoutMs: number;
  retry?: RetryPolicy;
}

/** System messages become Gemini's systemInstruction; assistant turns are "model" turns. */
export function toGeminiContents(messages: ChatMessage[]): { system: string | undefined; contents: Content[] } {
  const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
  const contents: Content[] = messages
    .filter((m) => m.role !== "system")
    .map((m) => ({ role: m.role === "assistant" ? "model" : "user", parts: [{ text: m.content }] }));
  return { system: system || undefined, contents };
}

/** Chat through Gemini's streamGenerateContent (SSE) with `@google/genai`'s browser build. */
export class GeminiChatModel implements ChatModel {
  readonly id: string;

  constructor(private readonly options: GeminiOptions & { model: string }) {
    this.id = `gemini:${options.model}`;
  }

  stream(request: ChatRequest): AsyncIterable<string> {
    const { model, apiKey, clock, fetch, timeoutMs } = this.options;
    const baseUrl = normalizeGeminiBaseUrl(this.options.baseUrl);
    const { system, contents } = toGeminiContents(request.messages);
    return guardedTextStream({
      clock,
      fetch,
      timeoutMs,
      signal: request.signal,
      retry: this.options.retry ?? DEFAULT_RETRY_POLICY,
      open: async (guard) => {
        const chunks = await geminiClient(apiKey, baseUrl, guard.fetch).models.generateContentStream({
          model,
          contents,
          config: {
            abortSignal: guard.signal,
            ...(system ? { systemInstruction: system } : {}),
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
            ...(request.json || request.jsonSchema ? { responseMimeType: "application/json" } : {}),
            ...(request.jsonSchema ? { responseJsonSchema: request.jsonSchema } : {}),
          },
        });
        return (async function* () {
          for await (const chunk of chunks) yield chunk.text ?? "";
        })();
      },
      mapError: (err, guard) => geminiError(err, guard, baseUrl, apiKey, model),
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

/** Model ids ("gemini-2.5-flash") that can chat or embed, for the settings dropdowns. */
export function listGeminiModels(options: GeminiOptions, purpose: "chat" | "embedding", signal?: AbortSignal): Promise<string[]> {
  const baseUrl = normalizeGeminiBaseUrl(options.baseUrl);
  return guardedCall({
    clock: options.clock,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
    signal,
    retry: options.retry ?? DEFAULT_RETRY_POLICY,
    call: async (guard) => {
      const names: string[] = [];
      const pager = await geminiClient(options.apiKey, baseUrl, guard.fetch).models.list({ config: { abortSignal: guard.signal } });
      for await (const m of pager) {
        const methods = m.supportedActions ?? [];
        const wanted = purpose === "chat" ? "generateContent" : "embedContent";
        if (methods.length === 0 || methods.includes(wanted)) names.push((m.name ?? "").replace(/^models\//, ""));
      }
      return names.filter(Boolean);
    },
    mapError: (err, guard) => geminiError(err, guard, baseUrl, options.apiKey),
  });
}
